"""`GraphStore`: the connection core with one component per job of the graph, each built on it.

Generic work (sessions, `read`, `execute`, `write_tx`, `require_namespace`, the namespace lock)
is the core's (`StoreCore`, sessions.py); a job's queries are its component's, reached as an
attribute: `store.passages.write(...)`, `store.documents.delete(...)`, `store.namespaces.all()`.
"""

from __future__ import annotations

from functools import cached_property

from terag_neo4j.store.budget_state import BudgetState
from terag_neo4j.store.cooccurrence import Cooccurrence
from terag_neo4j.store.document_sync import Documents
from terag_neo4j.store.embedding_model import EmbeddingModelPin
from terag_neo4j.store.namespaces import Namespaces
from terag_neo4j.store.passages import Passages
from terag_neo4j.store.search import SearchIndexes
from terag_neo4j.store.sessions import StoreCore
from terag_neo4j.store.synonyms import Synonyms


class GraphStore(StoreCore):
    """One Neo4j database: every query of the project goes through an instance of this."""

    # The components hold nothing but the core, so each is made on first use: the store's
    # constructor stays StoreCore's.

    @cached_property
    def passages(self) -> Passages:
        # Passages and their concepts, in one transaction per batch; grounding's links.
        return Passages(self)

    @cached_property
    def documents(self) -> Documents:
        # Documents kept in step with their files: present, moved, stale, deleted.
        return Documents(self)

    @cached_property
    def search_indexes(self) -> SearchIndexes:
        # Each namespace's own full-text and vector index.
        return SearchIndexes(self)

    @cached_property
    def namespaces(self) -> Namespaces:
        # Listing, describing, dropping namespaces; their version, lease and run records.
        return Namespaces(self, self.search_indexes)

    @cached_property
    def budget(self) -> BudgetState:
        # Budget mode's core passages and their merge state.
        return BudgetState(self)

    @cached_property
    def synonyms(self) -> Synonyms:
        # Concept vectors and SYNONYM edges.
        return Synonyms(self)

    @cached_property
    def cooccurrence(self) -> Cooccurrence:
        # The lazy CO_OCCURRENCE builder.
        return Cooccurrence(self)

    @cached_property
    def embedding_model(self) -> EmbeddingModelPin:
        # The embedding model's vector size a namespace's index holds.
        return EmbeddingModelPin(self)

    def ensure_schema(self) -> None:
        """The schema, after repairing the CO_OCCURRENCE pairs that would refuse its constraint
        (`Cooccurrence.ensure_schema`)."""
        self.cooccurrence.ensure_schema()
