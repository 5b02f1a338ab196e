// How many documents a namespace holds (the total beside a page of `documents_page`).
MATCH (p:Passage {namespace: $namespace})
RETURN count(DISTINCT p.doc_id) AS total
