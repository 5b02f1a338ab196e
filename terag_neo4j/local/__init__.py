"""Local servers the project manages itself (Neo4j, Ollama) without Docker."""
