"""The embedder a namespace's passages and questions need: the model the namespace was built with.

A namespace records its embedding model at its first ingest (`store/embedding_model.py`);
vectors of another model do not compare with its passages'. TERAG_EMBEDDING_MODEL picks the
model of new namespaces; one built with another model is searched with that model, loaded by
`load` (the client's, once per model), or refused where there is no `load`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from terag_neo4j.embeddings import AnyEmbedder, CachedEmbedder, Embedder, model_id
from terag_neo4j.store import check_embedding_model

log = logging.getLogger(__name__)


class NamespaceEmbedders:
    def __init__(
        self,
        ours: AnyEmbedder,
        configured: str,
        load: Callable[[str], AnyEmbedder] | None = None,
    ) -> None:
        self.ours = ours
        self.model = model_id(getattr(ours, "model_name", configured))
        # An embedder of another model, by its name (TeragClient.embedder_for); None: refuse
        self.load = load
        self._noted: set[tuple[str, str]] = set()

    def for_namespace(self, namespace: str, recorded: str | None) -> AnyEmbedder:
        """The embedder whose vectors compare with the namespace's passages: the model it
        recorded (`recorded`; None for one built before models were recorded), else ours."""
        if recorded is None or recorded == self.model:
            return self.ours
        if self.load is None:
            check_embedding_model(namespace, recorded, self.model)  # raises: they differ
            return self.ours
        if (namespace, recorded) not in self._noted:
            self._noted.add((namespace, recorded))
            log.info(
                "namespace %r was built with the embedding model %s: its passages and questions are "
                "embedded with it (TERAG_EMBEDDING_MODEL=%s applies to new namespaces)",
                namespace,
                recorded,
                self.model,
            )
        return self.load(recorded)


def embed_query(embedder: AnyEmbedder, query: str) -> list[float]:
    """The question's vector, computed afresh: questions are not worth a row each in the
    persistent embedding cache (which is for passages and concept names)."""
    model = embedder.embedder if isinstance(embedder, CachedEmbedder) else embedder
    if isinstance(model, Embedder):  # with the model's query prefix
        return [float(x) for x in model.embed_query(query)]
    return [float(x) for x in model.embed([query])[0]]
