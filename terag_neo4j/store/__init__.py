"""Graph-store stage: everything that reads or writes Neo4j, one job per module.

`GraphStore` is composed of mixins over :class:`~terag_neo4j.store.sessions.StoreCore` (sessions,
retries, the namespace lock): :mod:`~terag_neo4j.store.passages` (passage writes),
:mod:`~terag_neo4j.store.budget_state`, :mod:`~terag_neo4j.store.synonyms`,
:mod:`~terag_neo4j.store.cooccurrence` (the lazy pair builder) and
:mod:`~terag_neo4j.store.namespaces` (administration), :mod:`~terag_neo4j.store.document_sync`
(documents kept in step with their files). Reaching Neo4j and its errors are in
:mod:`~terag_neo4j.store.connection`, the Cypher text in :mod:`~terag_neo4j.store.cypher`
(from `cypher/*.cypher`), CO_OCCURRENCE arithmetic in :mod:`~terag_neo4j.store.pairs`.
"""

from terag_neo4j.store.budget_state import BudgetState
from terag_neo4j.store.connection import (
    ClientClosed,
    GraphStoreError,
    NamespaceNotFound,
    Neo4jAuthError,
    Neo4jTransientError,
    Neo4jUnavailable,
    Target,
    connect,
    driver_config,
    held_call,
    neo4j_errors,
    one_line,
    stopping,
    write_refused,
)
from terag_neo4j.store.cooccurrence import CooccurrenceBuilder
from terag_neo4j.store.cypher import cypher_statements, load_cypher
from terag_neo4j.store.document_sync import DocumentSync
from terag_neo4j.store.embedding_model import (
    EmbeddingModelMismatch,
    EmbeddingModelPin,
    check_embedding_model,
)
from terag_neo4j.store.ids import InvalidNamespace, check_namespace, concept_uid, passage_uid
from terag_neo4j.store.namespaces import NamespaceInfo
from terag_neo4j.store.passages import PassageWrites, WriteStats
from terag_neo4j.store.sessions import NamespaceDropped
from terag_neo4j.store.synonyms import Synonyms


class GraphStore(
    PassageWrites, BudgetState, Synonyms, CooccurrenceBuilder, EmbeddingModelPin, DocumentSync
):
    """One Neo4j database: every query of the project goes through an instance of this."""


__all__ = [
    "ClientClosed",
    "EmbeddingModelMismatch",
    "GraphStore",
    "GraphStoreError",
    "InvalidNamespace",
    "NamespaceDropped",
    "NamespaceInfo",
    "NamespaceNotFound",
    "Neo4jAuthError",
    "Neo4jTransientError",
    "Neo4jUnavailable",
    "Target",
    "WriteStats",
    "check_embedding_model",
    "check_namespace",
    "concept_uid",
    "connect",
    "cypher_statements",
    "driver_config",
    "held_call",
    "load_cypher",
    "neo4j_errors",
    "one_line",
    "passage_uid",
    "stopping",
    "write_refused",
]
