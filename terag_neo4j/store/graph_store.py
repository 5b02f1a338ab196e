"""`GraphStore`: the connection core with one component per job of the graph, each built on it.

Generic work (sessions, `read`, `execute`, `write_tx`, `require_namespace`, the namespace lock)
is the core's (`StoreCore`, sessions.py); a job's queries are its component's, reached as an
attribute: `store.passages.write(...)`, `store.documents.delete(...)`, `store.namespaces.all()`.
"""

from __future__ import annotations

from neo4j import Driver

from terag_neo4j.store.budget_state import BudgetState
from terag_neo4j.store.cooccurrence import Cooccurrence
from terag_neo4j.store.document_sync import Documents
from terag_neo4j.store.embedding_model import EmbeddingModelPin
from terag_neo4j.store.namespaces import Namespaces
from terag_neo4j.store.passages import Passages
from terag_neo4j.store.search import SearchIndexes
from terag_neo4j.store.sessions import COOCCURRENCE_DEFAULT, StoreCore
from terag_neo4j.store.synonyms import Synonyms


class GraphStore(StoreCore):
    """One Neo4j database: every query of the project goes through an instance of this."""

    def __init__(
        self,
        driver: Driver,
        database: str = "neo4j",
        write_batch: int = 1000,
        timeout_s: float = 30.0,
        uri: str | None = None,
        cooccurrence: str = COOCCURRENCE_DEFAULT,
        owns_driver: bool = True,
    ) -> None:
        super().__init__(
            driver, database, write_batch, timeout_s, uri, cooccurrence, owns_driver=owns_driver
        )
        # Passages and their concepts, in one transaction per batch; grounding's links
        self.passages = Passages(self)
        # Documents kept in step with their files: present, moved, stale, deleted
        self.documents = Documents(self)
        # Each namespace's own full-text and vector index
        self.search_indexes = SearchIndexes(self)
        # Listing, describing, dropping namespaces; their version, lease and run records
        self.namespaces = Namespaces(self, self.search_indexes)
        # Budget mode's core passages and their merge state
        self.budget = BudgetState(self)
        # Concept vectors and SYNONYM edges
        self.synonyms = Synonyms(self)
        # The lazy CO_OCCURRENCE builder
        self.cooccurrence = Cooccurrence(self)
        # The embedding model's vector size a namespace's index holds
        self.embedding_model = EmbeddingModelPin(self)

    def ensure_schema(self) -> None:
        """The schema, after repairing the CO_OCCURRENCE pairs that would refuse its constraint
        (`Cooccurrence.ensure_schema`)."""
        self.cooccurrence.ensure_schema()
