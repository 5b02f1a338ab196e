"""The embedder a namespace's passages and questions need: the model the namespace was built with,
with the prefixes it was built with.

A namespace records its embedding model and its query and passage prefixes at its first ingest
(`store/embedding_model.py`); vectors of another model, or of the same model with other
prefixes, do not compare with its passages' as well. TERAG_EMBEDDING_MODEL and
TERAG_EMBEDDING_QUERY_PREFIX/_PASSAGE_PREFIX pick those of new namespaces; one built with
another model is searched with that model, loaded by `load` (the client's, once per model), or
refused where there is no `load`; one built with other prefixes is embedded with its own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from terag_neo4j.embeddings import AnyEmbedder, CachedEmbedder, Embedder, model_id
from terag_neo4j.embeddings.spec import model_prefixes
from terag_neo4j.store import check_embedding_model

log = logging.getLogger(__name__)
Prefixes = tuple[str, str]  # (query, passage)


def recorded_prefixes(row: Mapping[str, Any] | None) -> Prefixes | None:
    """The (query, passage) prefixes a namespace's `namespace_version` row recorded; None for a
    namespace built before prefixes were recorded (or not built yet)."""
    if not row:
        return None
    query, passage = row.get("embedding_query_prefix"), row.get("embedding_passage_prefix")
    if query is None and passage is None:
        return None
    return str(query or ""), str(passage or "")


def prefixes_of(embedder: AnyEmbedder) -> Prefixes:
    inner = embedder.embedder if isinstance(embedder, CachedEmbedder) else embedder
    return getattr(inner, "query_prefix", ""), getattr(inner, "passage_prefix", "")


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
        # Embedders of a model with a namespace's prefixes, sharing the model's weights
        self._twins: dict[tuple[str, Prefixes], AnyEmbedder] = {}
        self._lock = threading.Lock()

    def for_namespace(self, namespace: str, row: Mapping[str, Any] | None) -> AnyEmbedder:
        """The embedder whose vectors compare with the namespace's passages, from its
        `namespace_version` row (None: not built yet): the model it recorded (ours for one
        built before models were recorded) with the prefixes it recorded (its model family's
        for one built before prefixes were recorded)."""
        recorded = row.get("embedding_model") if row else None
        if recorded is None:
            return self.ours
        base = self._model(namespace, str(recorded))
        prefixes = recorded_prefixes(row)
        return self._with_prefixes(base, prefixes or model_prefixes(str(recorded)))

    def _model(self, namespace: str, recorded: str) -> AnyEmbedder:
        if recorded == self.model:
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

    def _with_prefixes(self, base: AnyEmbedder, prefixes: Prefixes) -> AnyEmbedder:
        if prefixes == prefixes_of(base) or not hasattr(base, "with_prefixes"):
            return base
        key = (model_id(base.model_name), prefixes)
        with self._lock:
            if key not in self._twins:
                log.info(
                    "embedding with the prefixes a namespace recorded, query %r and passage %r "
                    "(TERAG_EMBEDDING_QUERY_PREFIX/_PASSAGE_PREFIX apply to new namespaces)",
                    *prefixes,
                )
                self._twins[key] = base.with_prefixes(*prefixes)
            return self._twins[key]

    def close(self) -> None:
        """Close the prefixed embedders' caches (the weights are their models' embedders')."""
        with self._lock:
            twins, self._twins = list(self._twins.values()), {}
        for twin in twins:
            if isinstance(twin, CachedEmbedder):
                twin.close()


def embed_query(embedder: AnyEmbedder, query: str) -> list[float]:
    """The question's vector, computed afresh: questions are not worth a row each in the
    persistent embedding cache (which is for passages and concept names)."""
    model = embedder.embedder if isinstance(embedder, CachedEmbedder) else embedder
    if isinstance(model, Embedder):  # with the model's query prefix
        return [float(x) for x in model.embed_query(query)]
    return [float(x) for x in model.embed([query])[0]]
