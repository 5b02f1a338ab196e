// Step 3, after deletes: pairs that no passage shares any more go.
UNWIND $pairs AS pair
MATCH ()-[r:CO_OCCURRENCE {pair: pair}]->()
USING INDEX SEEK r:CO_OCCURRENCE(pair)
WITH r WHERE r.count <= 0
DELETE r
