// The vector size a namespace's own passage vector index (namespace_indexes.cypher) holds.
SHOW VECTOR INDEXES YIELD name, options
WHERE name = $index
RETURN options.indexConfig['vector.dimensions'] AS dimensions
