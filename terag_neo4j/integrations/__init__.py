"""Integrations with other ecosystems: LangChain (`langchain`), neo4j-graphrag (`graphrag`)."""
