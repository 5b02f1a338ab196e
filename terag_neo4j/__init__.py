"""terag-neo4j: Token-Efficient Graph-based RAG (TERAG) on Neo4j with GDS personalised PageRank.

The public API, all importable from here:

- clients: `TeragClient`, `AsyncTeragClient`, configured by `Settings` (retrieval knobs:
  `RetrievalConfig`);
- input: `Document` (LangChain documents are accepted too);
- results: `IngestReport`, `RetrievalResult`, `RetrievedPassage` (with its `Provenance`),
  `MatchedConcept`, `AnswerResult` (with its `Citation`s), `NamespaceInfo`, `TokenLedger`;
- LangChain: `TeragRetriever`; neo4j-graphrag (the `graphrag` extra): `TeragGraphRAGRetriever`;
- errors: `TeragError` and its subclasses (every error the package raises is one).

Names load lazily: `import terag_neo4j` loads no driver, torch or model (the CLI's `--help` stays
fast); the first use of a name imports its module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from terag_neo4j.errors import DependencyError, TeragError

__version__ = "0.1.0"

# name -> the module that defines it
_EXPORTS: dict[str, str] = {
    # clients and configuration
    "TeragClient": "terag_neo4j.client",
    "AsyncTeragClient": "terag_neo4j.aio",
    "TeragRemote": "terag_neo4j.service.remote_client",
    "AsyncTeragRemote": "terag_neo4j.service.remote_client",
    "Settings": "terag_neo4j.config",
    "RetrievalConfig": "terag_neo4j.recipes",
    # input and results
    "Document": "terag_neo4j.core.documents",
    "IngestReport": "terag_neo4j.indexing.pipeline",
    "RetrievalResult": "terag_neo4j.core.results",
    "RetrievedPassage": "terag_neo4j.core.results",
    "MatchedConcept": "terag_neo4j.core.results",
    "AnswerResult": "terag_neo4j.core.results",
    "Citation": "terag_neo4j.core.results",
    "Provenance": "terag_neo4j.core.results",
    "ScoreKind": "terag_neo4j.core.results",
    "NamespaceInfo": "terag_neo4j.store",
    "TokenLedger": "terag_neo4j.llm",
    # integrations
    "TeragRetriever": "terag_neo4j.integrations.langchain",
    "TeragGraphRAGRetriever": "terag_neo4j.integrations.graphrag",
    # errors (TeragError and DependencyError are imported above)
    "InputError": "terag_neo4j.core.documents",
    "InputNotFound": "terag_neo4j.core.documents",
    "IngestCancelled": "terag_neo4j.errors",
    "SettingsError": "terag_neo4j.config",
    "KnobError": "terag_neo4j.recipes",
    "RetrievalError": "terag_neo4j.retrieval.retriever",
    "GraphStoreError": "terag_neo4j.store",
    "ClientClosed": "terag_neo4j.store",
    "NamespaceNotFound": "terag_neo4j.store",
    "Neo4jUnavailable": "terag_neo4j.store",
    "Neo4jAuthError": "terag_neo4j.store",
    "Neo4jTransientError": "terag_neo4j.store",
    "NamespaceDropped": "terag_neo4j.store",
    "InvalidNamespace": "terag_neo4j.store",
    "LLMError": "terag_neo4j.llm",
    "LLMUnavailableError": "terag_neo4j.llm",
    "ModelNotFoundError": "terag_neo4j.llm",
    "EmbeddingError": "terag_neo4j.embeddings",
    "NotFound": "terag_neo4j.errors",
    "RemoteError": "terag_neo4j.service.remote_client",
}

# `from terag_neo4j import *` imports every name but the optional extra's retriever
__all__ = [
    "AnswerResult",
    "AsyncTeragClient",
    "AsyncTeragRemote",
    "Citation",
    "ClientClosed",
    "DependencyError",
    "Document",
    "EmbeddingError",
    "GraphStoreError",
    "IngestCancelled",
    "IngestReport",
    "InputError",
    "InputNotFound",
    "InvalidNamespace",
    "KnobError",
    "LLMError",
    "LLMUnavailableError",
    "MatchedConcept",
    "ModelNotFoundError",
    "NamespaceDropped",
    "NamespaceInfo",
    "NamespaceNotFound",
    "Neo4jAuthError",
    "Neo4jTransientError",
    "Neo4jUnavailable",
    "NotFound",
    "Provenance",
    "RemoteError",
    "RetrievalConfig",
    "RetrievalError",
    "RetrievalResult",
    "RetrievedPassage",
    "ScoreKind",
    "Settings",
    "SettingsError",
    "TeragClient",
    "TeragError",
    "TeragRemote",
    "TeragRetriever",
    "TokenLedger",
    "__version__",
]

if TYPE_CHECKING:
    from terag_neo4j.aio import AsyncTeragClient
    from terag_neo4j.client import TeragClient
    from terag_neo4j.config import Settings, SettingsError
    from terag_neo4j.core.documents import Document, InputError, InputNotFound
    from terag_neo4j.core.results import (
        AnswerResult,
        Citation,
        MatchedConcept,
        Provenance,
        RetrievalResult,
        RetrievedPassage,
        ScoreKind,
    )
    from terag_neo4j.embeddings import EmbeddingError
    from terag_neo4j.errors import IngestCancelled, NotFound
    from terag_neo4j.indexing.pipeline import IngestReport
    from terag_neo4j.integrations.graphrag import (
        TeragGraphRAGRetriever as TeragGraphRAGRetriever,
    )
    from terag_neo4j.integrations.langchain import TeragRetriever
    from terag_neo4j.llm import LLMError, LLMUnavailableError, ModelNotFoundError, TokenLedger
    from terag_neo4j.recipes import KnobError, RetrievalConfig
    from terag_neo4j.retrieval.retriever import RetrievalError
    from terag_neo4j.service.remote_client import AsyncTeragRemote, RemoteError, TeragRemote
    from terag_neo4j.store import (
        ClientClosed,
        GraphStoreError,
        InvalidNamespace,
        NamespaceDropped,
        NamespaceInfo,
        NamespaceNotFound,
        Neo4jAuthError,
        Neo4jTransientError,
        Neo4jUnavailable,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'terag_neo4j' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
