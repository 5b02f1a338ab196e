// A namespace's own search indexes over its own passages, which carry the label __LABEL__:
// Lucene BM25 over title and text (folded: no accents) with English stemming, and a vector
// index of the passage embeddings. Their statistics and graphs hold this namespace alone, so
// another namespace's writes, deletes and segment merges never move its scores. Vectors are
// not quantised: Lucene quantises each segment with its own ranges, so a flush or a merge
// (a restart brings them about) moved cosine scores by up to 2e-3, and the ranking with them.
// __LABEL__ is spliced in by store/search.py (an index definition takes no parameter for its
// label); it is `Passage_<namespace>`, and a namespace name is letters, digits, '_' and '-'.
CREATE FULLTEXT INDEX $text_index IF NOT EXISTS FOR (p:`__LABEL__`) ON EACH [p.ft_title, p.ft_text]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE VECTOR INDEX $vector_index IF NOT EXISTS FOR (p:`__LABEL__`) ON p.embedding
  OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false}}
