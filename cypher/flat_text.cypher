// The namespace's best passages for the question's words: Lucene BM25 over title and text with
// English stemming; $lucene is `+nskey:<namespace key> +(<words>)` (retrieval builds it).
CALL db.index.fulltext.queryNodes('terag_passage_text', $lucene, {limit: $top})
YIELD node, score
RETURN id(node) AS node, score
