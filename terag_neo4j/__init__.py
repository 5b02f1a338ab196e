"""terag-neo4j: Token-Efficient Graph-based RAG (TERAG) on Neo4j with GDS personalised PageRank."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Document", "Settings", "TeragClient", "__version__"]

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.config import Settings
    from terag_neo4j.documents import Document


def __getattr__(name: str) -> Any:
    # Lazy: `import terag_neo4j` must stay cheap for the CLI's --help (no torch, no driver).
    if name == "TeragClient":
        from terag_neo4j.client import TeragClient

        return TeragClient
    if name == "Settings":
        from terag_neo4j.config import Settings

        return Settings
    if name == "Document":
        from terag_neo4j.documents import Document

        return Document
    raise AttributeError(name)
