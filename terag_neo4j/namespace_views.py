"""What the library shows of a namespace beyond a retrieval: a page of its documents, a
concept's neighbourhood (for a viewer), why a passage was or was not retrieved, and the strict
deletion of one document by id; and a namespace's archive, exported and imported
(`ArchiveMethods`, which `TeragClient` inherits).

`TeragClient` and `AsyncTeragClient` expose these as methods; the service's routes and MCP tools
call those methods, so each operation is written once, here, with its Cypher in `cypher/`.

The neighbourhood grows one hop at a time from Python, so the bounds are parameters of a fixed
query (Cypher cannot take a path length as a parameter), and it stops as soon as the node budget
is spent instead of expanding a hub's whole neighbourhood first. Every query filters on the
namespace: a walk never leaves it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from neo4j.exceptions import ClientError

from terag_neo4j.core.results import (
    DocumentInfo,
    DocumentPage,
    GraphEdge,
    GraphNode,
    Neighbourhood,
    Overview,
    TopConcept,
    WhyConcept,
    WhyRetrieved,
)
from terag_neo4j.errors import NotFound, echo
from terag_neo4j.indexing.namespace_import import ImportReport, import_archive
from terag_neo4j.retrieval.walk_paths import walk_paths
from terag_neo4j.store import (
    GraphStoreError,
    check_namespace,
    gds,
    held_call,
    neo4j_errors,
    one_line,
)
from terag_neo4j.store.namespace_export import export_stream, terag_version, write_file

if TYPE_CHECKING:
    from terag_neo4j.config import Settings
    from terag_neo4j.core.results import RetrievalResult
    from terag_neo4j.retrieval.reranked import RerankedRetriever
    from terag_neo4j.store import GraphStore, NamespaceInfo


class TeragClient(Protocol):
    """What these views use of `TeragClient` (which calls them: named here, not imported)."""

    settings: Settings
    store: GraphStore

    def retrieve(
        self, query: str, top_k: int | None = None, namespace: str | None = None
    ) -> RetrievalResult: ...

    def stats(self, namespace: str | None = None) -> NamespaceInfo: ...

    @property
    def retriever(self) -> RerankedRetriever: ...


def documents(client: TeragClient, namespace: str | None, offset: int, limit: int) -> DocumentPage:
    """A page of the namespace's documents, by id, with their passage counts."""
    namespace = namespace or client.settings.namespace
    store = client.store
    store.require_namespace(namespace)
    rows = store.read("documents_page", namespace=namespace, offset=offset, limit=limit)
    total = store.read("document_count", namespace=namespace)[0]["total"]
    docs = [
        DocumentInfo(
            id=r["id"], title=r["title"] or "", passages=r["passages"], source=r["source"],
            pages=r["pages"],
        )
        for r in rows
    ]  # fmt: skip
    return DocumentPage(namespace=namespace, documents=docs, total=int(total))


def ensure_namespace(client: TeragClient, namespace: str) -> tuple[bool, NamespaceInfo]:
    """Whether the namespace existed, and its counts; a new one is created empty."""
    store = client.store
    existed = store.namespaces.exists(namespace)
    if not existed:
        store.namespaces.bump_version(namespace)  # creates it under its write lock
    return existed, client.stats(namespace)


def overview(client: TeragClient, namespace: str, limit: int) -> Overview:
    store = client.store
    store.require_namespace(namespace)
    top = store.read("top_concepts", namespace=namespace, limit=limit)
    state = store.read("namespace_version", namespace=namespace)
    row = state[0] if state else {}
    return Overview(
        namespace=namespace,
        top_concepts=[TopConcept(**row) for row in top],
        embedding_model=row.get("embedding_model"),
        embedding_dimensions=row.get("embedding_dimensions"),
        ingesting=bool(row.get("ingesting")),
    )


def delete_document(client: TeragClient, namespace: str, document_id: str) -> int:
    """Remove the document with this id; `NotFound` when the namespace has none (unlike
    `TeragClient.delete`, which also takes a path and returns 0 for a miss)."""
    store = client.store
    store.require_namespace(namespace)
    if not store.documents.present(namespace, [document_id]):
        raise NotFound(f"no document {echo(document_id)} in namespace {namespace!r}")
    return int(store.documents.delete(namespace, document_id))


def why(
    client: TeragClient, namespace: str | None, passage_id: str, question: str, top_k: int
) -> WhyRetrieved:
    """Run the retrieval as `retrieve` does, then explain one passage: its rank, its seed weight
    in the restart vector, the linked concepts that point at it, and the walk's strongest paths
    to it (`walk_paths`: bridges included, at most `WHY_MAX_NODES` nodes)."""
    namespace = namespace or client.settings.namespace
    res = client.retrieve(question, top_k=top_k, namespace=namespace)
    by_node = {m.node: m for m in res.matches if m.node >= 0}
    rows = client.store.read(
        "why_passage", namespace=namespace, passage=passage_id, nodes=list(by_node)
    )
    if not rows:
        raise NotFound(f"no passage {echo(passage_id)} in namespace {namespace!r}")
    node = int(rows[0]["node"])
    rank = next((i for i, p in enumerate(res.passages, 1) if p.id == passage_id), None)
    # The restart vector holds concept seeds and passage seeds; a passage's own node id can
    # only be there as a flat-ranking seed
    seed = sum(float(w) for n, w in res.restart if int(n) == node)
    linked = [by_node[n] for n in rows[0]["linked"] if n in by_node]
    linked.sort(key=lambda m: (-m.weight, m.name))
    paths, left_out = walk_paths(client.store, client.retriever.rc, res, namespace, node)
    return WhyRetrieved(
        namespace=namespace,
        passage_id=passage_id,
        question=question,
        top_k=top_k,
        rank=rank,
        score=res.passages[rank - 1].score if rank else None,
        score_kind=res.score_kind,
        seed_weight=seed,
        concepts=[
            WhyConcept(name=m.name, weight=m.weight, frequency=m.frequency, match=m.match)
            for m in linked
        ],
        paths=paths,
        paths_left_out=left_out,
    )


def _node(r: dict[str, Any]) -> GraphNode:
    props: dict[str, Any] = (
        {"passage_id": r["passage_id"], "doc_id": r["doc_id"]}
        if r["label"] == "Passage"
        else {"type": r["type"], "frequency": r["frequency"]}
    )
    return GraphNode(id=r["id"], label=r["label"], name=str(r["name"] or ""), properties=props)


def neighbourhood(
    client: TeragClient, namespace: str | None, concept: str, depth: int, max_nodes: int
) -> Neighbourhood:
    """A concept's neighbourhood (concepts, passages, the walk's edges), bounded by depth and
    node count."""
    namespace = namespace or client.settings.namespace
    store = client.store
    store.require_namespace(namespace)
    found = store.read("concept_named", namespace=namespace, concept=concept)
    if not found:
        raise NotFound(f"no concept named {echo(concept)} in namespace {namespace!r}")
    root = found[0]
    props = {"type": root["type"], "frequency": root["frequency"]}
    nodes = {root["id"]: GraphNode(root["id"], "Concept", root["name"] or concept, props)}
    edges: dict[tuple[str, str, str], GraphEdge] = {}
    frontier = [root["id"]]
    truncated = False
    for _ in range(depth):
        if not frontier:
            break
        # Rows beyond the budget are edges to nodes already seen or nodes we could not keep:
        # ask for a few more than the budget, so "truncated" is known, not guessed.
        limit = (max_nodes - len(nodes)) * 4 + 50
        rows = store.read("neighbourhood_hop", namespace=namespace, ids=frontier, limit=limit)
        nxt: list[str] = []
        for r in rows:
            if r["id"] not in nodes:
                if len(nodes) >= max_nodes:
                    truncated = True
                    continue
                nodes[r["id"]] = _node(r)
                nxt.append(r["id"])
            if r["source"] in nodes and r["target"] in nodes:
                key = (r["source"], r["target"], r["rel"])
                edges[key] = GraphEdge(source=r["source"], target=r["target"], type=r["rel"])
        if len(rows) >= limit:
            truncated = True
        frontier = nxt
    return Neighbourhood(
        namespace=namespace,
        concept=root["name"] or concept,
        nodes=list(nodes.values()),
        edges=list(edges.values()),
        truncated=truncated,
    )


def drop_namespace(store: GraphStore, ns: str, retriever: RerankedRetriever | None) -> None:
    """`TeragClient.drop`: the GDS projections first (through the retriever when there is one,
    which also forgets the projection it knew), then the graph."""
    with neo4j_errors(store.uri):
        store.require_namespace(ns)
        try:
            if retriever is not None:
                retriever.drop_projections(ns)
            else:  # no query NER, embedder or LLM needed for this
                gds.drop_projections(store, ns)
        except ClientError as e:
            if e.code != "Neo.ClientError.Procedure.ProcedureNotFound":
                raise GraphStoreError(
                    f"could not drop the GDS projections of namespace {ns!r} "
                    f"({one_line(e.message, 160)}); nothing was dropped: try again"
                ) from e
        store.namespaces.drop(ns)


class ArchiveMethods:
    """`TeragClient`'s export and import of a namespace archive (docs/operations.md,
    "Namespace archives"): the file format is store/archive_format.py's, the reads
    store/namespace_export.py's, the writes indexing/namespace_import.py's."""

    store: GraphStore
    settings: Settings
    _namespace_backend: dict[str, str]

    def export_chunks(self, namespace: str | None = None) -> Iterator[bytes]:
        """The namespace's archive, chunk by chunk (what the service streams)."""
        ns = check_namespace(namespace or self.settings.namespace)
        preset = {"preset": self.settings.preset, "overrides": self.settings.retrieval_overrides}
        with neo4j_errors(self.store.uri):
            yield from export_stream(self.store, ns, terag_version(), preset)

    @held_call
    def export_namespace(self, path: str | Path, namespace: str | None = None) -> Path:
        """Write the namespace's archive to `path` (never partly: renamed when whole)."""
        return write_file(self.export_chunks(namespace), Path(path))

    @held_call
    def import_namespace(
        self,
        path: str | Path,
        namespace: str | None = None,
        token: str | None = None,
        progress: Callable[[str, int], None] | None = None,
    ) -> ImportReport:
        """Import an archive into a new or empty namespace (default: the one it came from),
        with no extraction and no embedding; a refused or failed import leaves nothing.
        `token` names the import (a service job passes its id, so the job resumed after a
        crash drops its own leftover at once); `progress(what, rows)` follows each batch."""
        with neo4j_errors(self.store.uri):
            report = import_archive(self.store, Path(path), namespace, token, progress)
        self._namespace_backend.pop(report.namespace, None)
        return report
