// Provenance of passages whose text is unchanged but whose place moved (an edit earlier in the
// document shifts its offsets or pages): the properties only, so nothing else is rewritten.
UNWIND $rows AS row
MATCH (p:Passage {uid: row.uid})
SET p.source = row.provenance.source, p.heading_path = row.provenance.heading_path,
    p.page_start = row.provenance.page_start, p.page_end = row.provenance.page_end,
    p.char_start = row.provenance.char_start, p.char_end = row.provenance.char_end
