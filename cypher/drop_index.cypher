// Drops one of a namespace's own indexes (namespace_indexes.cypher); a missing one is fine.
DROP INDEX $name IF EXISTS
