"""Indexing: documents -> passages -> concepts -> Neo4j."""
