"""`GraphStore`: the connection core with one component per job of the graph, each built on it.

Generic work (sessions, `read`, `execute`, `write_tx`, `require_namespace`, the namespace lock)
is the core's (`StoreCore`, sessions.py); a job's queries are its component's, reached as an
attribute: `store.passages.write(...)`, `store.documents.delete(...)`, `store.namespaces.all()`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from terag_neo4j.store.budget_state import BudgetState
from terag_neo4j.store.cooccurrence import Cooccurrence
from terag_neo4j.store.document_sync import Documents
from terag_neo4j.store.embedding_model import EmbeddingModelPin
from terag_neo4j.store.namespaces import Namespaces
from terag_neo4j.store.passages import Passages
from terag_neo4j.store.search import SearchIndexes
from terag_neo4j.store.sessions import StoreCore
from terag_neo4j.store.synonyms import Synonyms

T = TypeVar("T")


class _Part(Generic[T]):
    """A component of the store, made from it on first use and kept on it: the components hold
    nothing but the store, so the store's constructor stays StoreCore's."""

    def __init__(self, make: Callable[[GraphStore], T]) -> None:
        self.make = make

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, store: GraphStore, owner: type | None = None) -> T:
        part = self.make(store)
        store.__dict__[self.name] = part  # the instance's attribute answers from now on
        return part


class GraphStore(StoreCore):
    """One Neo4j database: every query of the project goes through an instance of this."""

    # Passages and their concepts, in one transaction per batch; grounding's links
    passages = _Part(Passages)
    # Documents kept in step with their files: present, moved, stale, deleted
    documents = _Part(Documents)
    # Each namespace's own full-text and vector index
    search_indexes = _Part(SearchIndexes)
    # Listing, describing, dropping namespaces; their version, lease and run records
    namespaces = _Part(lambda store: Namespaces(store, store.search_indexes))
    # Budget mode's core passages and their merge state
    budget = _Part(BudgetState)
    # Concept vectors and SYNONYM edges
    synonyms = _Part(Synonyms)
    # The lazy CO_OCCURRENCE builder
    cooccurrence = _Part(Cooccurrence)
    # The embedding model's vector size a namespace's index holds
    embedding_model = _Part(EmbeddingModelPin)

    def ensure_schema(self) -> None:
        """The schema, after repairing the CO_OCCURRENCE pairs that would refuse its constraint
        (`Cooccurrence.ensure_schema`)."""
        self.cooccurrence.ensure_schema()
