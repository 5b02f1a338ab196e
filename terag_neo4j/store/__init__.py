"""Graph-store stage: everything that reads or writes Neo4j, one job per module.

`GraphStore` (:mod:`~terag_neo4j.store.graph_store`) is the connection core,
:class:`~terag_neo4j.store.sessions.StoreCore` (sessions, retries, the namespace lock and
version, `read`/`execute`/`write_tx`, `require_namespace`), and holds one component per job,
each taking the core in its constructor: `store.passages`
(:mod:`~terag_neo4j.store.passages`, passage writes and grounding's lookups), `store.documents`
(:mod:`~terag_neo4j.store.document_sync`, documents kept in step with their files),
`store.namespaces` (:mod:`~terag_neo4j.store.namespaces`, administration),
`store.search_indexes` (:mod:`~terag_neo4j.store.search`), `store.budget`
(:mod:`~terag_neo4j.store.budget_state`), `store.synonyms` (:mod:`~terag_neo4j.store.synonyms`),
`store.cooccurrence` (:mod:`~terag_neo4j.store.cooccurrence`, the lazy pair builder) and
`store.embedding_model` (:mod:`~terag_neo4j.store.embedding_model`). Reaching Neo4j and its
errors are in :mod:`~terag_neo4j.store.connection`, the Cypher text in
:mod:`~terag_neo4j.store.cypher` (from `cypher/*.cypher`), CO_OCCURRENCE arithmetic in
:mod:`~terag_neo4j.store.pairs`.
"""

from terag_neo4j.errors import one_line
from terag_neo4j.store.connection import (
    ClientClosed,
    GraphStoreError,
    NamespaceNotFound,
    Neo4jAuthError,
    Neo4jTransientError,
    Neo4jUnavailable,
    StatementTimedOut,
    Target,
    connect,
    driver_config,
    held_call,
    neo4j_errors,
    stopping,
    write_refused,
)
from terag_neo4j.store.cypher import cypher_statements, load_cypher
from terag_neo4j.store.embedding_model import EmbeddingModelMismatch, check_embedding_model
from terag_neo4j.store.graph_store import GraphStore
from terag_neo4j.store.ids import InvalidNamespace, check_namespace, concept_uid, passage_uid
from terag_neo4j.store.namespaces import NamespaceInfo
from terag_neo4j.store.passages import WriteStats
from terag_neo4j.store.sessions import NamespaceDropped

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
    "StatementTimedOut",
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
