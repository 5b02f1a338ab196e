// The dimensions of the passage and concept vector indexes (schema.cypher): an embedding model
// must make vectors of this size, or they would be written without being indexed.
SHOW VECTOR INDEXES YIELD name, options
WHERE name IN ['terag_passage_vector', 'terag_concept_embedding']
RETURN name, options.indexConfig['vector.dimensions'] AS dimensions
