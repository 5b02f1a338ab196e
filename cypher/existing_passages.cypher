// Which of these passages are already in the namespace, with their content hash and provenance.
UNWIND $uids AS uid
MATCH (p:Passage {uid: uid})
RETURN p.id AS id, p.hash AS hash,
       p {.source, .heading_path, .page_start, .page_end, .char_start, .char_end} AS provenance
