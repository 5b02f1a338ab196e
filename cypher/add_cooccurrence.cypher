// One CO_OCCURRENCE per unordered concept pair, stored from the smaller uid to the larger and read
// both ways; `count` = number of passages the pair shares. Pairs are found by their `pair` key
// (a relationship index) rather than by expanding two concepts: frequent concepts have thousands
// of co-occurrences. Step 1: change the counts of existing pairs and report which existed.
UNWIND $rows AS row
MATCH ()-[r:CO_OCCURRENCE {pair: row.pair}]->()
USING INDEX SEEK r:CO_OCCURRENCE(pair)
SET r.count = r.count + row.delta
RETURN row.pair AS pair
