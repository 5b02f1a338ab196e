"""Integrations with other ecosystems (LangChain)."""
