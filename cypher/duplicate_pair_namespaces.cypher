// Namespaces with more than one CO_OCCURRENCE edge for a concept pair (what concurrent lazy builds
// of earlier versions could leave). Scans every pair: run only when the pair key's uniqueness
// constraint cannot be created.
MATCH (a:Concept)-[r:CO_OCCURRENCE]->()
WITH a.namespace AS namespace, r.pair AS pair, count(*) AS edges
WHERE edges > 1
RETURN DISTINCT namespace
