// The dimensions of the concept vector index (schema.cypher), which each namespace's passage
// index shares (store/search.py): an embedding model must make vectors of this size, or they
// would be written without being indexed.
SHOW VECTOR INDEXES YIELD name, options
WHERE name = 'terag_concept_vector'
RETURN name, options.indexConfig['vector.dimensions'] AS dimensions
