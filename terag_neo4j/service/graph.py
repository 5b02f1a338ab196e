"""Read-only graph views for the service: a namespace's documents, and a concept's
neighbourhood bounded by depth and node count (for a viewer).

The neighbourhood grows one hop at a time from Python, so the bounds are parameters of a fixed
query (Cypher cannot take a path length as a parameter), and it stops as soon as the node budget
is spent instead of expanding a hub's whole neighbourhood first. Every query filters on the
namespace: a walk never leaves it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from terag_neo4j.service.errors import ServiceError
from terag_neo4j.service.schemas import DocumentInfo, Graph, GraphEdge, GraphNode

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient

DOCUMENTS = """
MATCH (p:Passage {namespace: $namespace})
WITH p ORDER BY p.doc_id, p.position
WITH p.doc_id AS id, collect(p.title)[0] AS title, count(*) AS passages,
     collect(p.source)[0] AS source, max(p.page_end) AS pages
RETURN id, title, passages, source, pages
ORDER BY id SKIP $offset LIMIT $limit
"""
DOCUMENT_COUNT = """
MATCH (p:Passage {namespace: $namespace})
RETURN count(DISTINCT p.doc_id) AS total
"""
CONCEPT = """
MATCH (c:Concept {namespace: $namespace})
WHERE c.norm = toLower(trim($concept)) OR toLower(c.name) = toLower(trim($concept))
RETURN elementId(c) AS id, c.name AS name, c.type AS type, c.frequency AS frequency
ORDER BY c.frequency DESC LIMIT 1
"""
# One hop from the frontier over the walk's own edges, inside the namespace
EXPAND = """
UNWIND $ids AS nid
MATCH (n) WHERE elementId(n) = nid
MATCH (n)-[r:HAS_PASSAGE|CO_OCCURRENCE|SYNONYM]-(m)
WHERE m.namespace = $namespace
RETURN elementId(startNode(r)) AS source, elementId(endNode(r)) AS target, type(r) AS rel,
       elementId(m) AS id, CASE WHEN m:Passage THEN 'Passage' ELSE 'Concept' END AS label,
       coalesce(m.name, m.title, m.id) AS name, m.type AS type, m.frequency AS frequency,
       m.id AS passage_id, m.doc_id AS doc_id
LIMIT $limit
"""


def run_read(client: TeragClient, query: str, **params: Any) -> list[dict[str, Any]]:
    from terag_neo4j.store import neo4j_errors

    with neo4j_errors(client.store.uri), client.store.session() as s:
        return s.execute_read(lambda tx: [r.data() for r in tx.run(query, **params)])


def documents(
    client: TeragClient, namespace: str, offset: int, limit: int
) -> tuple[list[DocumentInfo], int]:
    client.store.require_namespace(namespace)
    rows = run_read(client, DOCUMENTS, namespace=namespace, offset=offset, limit=limit)
    total = run_read(client, DOCUMENT_COUNT, namespace=namespace)[0]["total"]
    docs = [
        DocumentInfo(
            id=r["id"],
            title=r["title"] or "",
            passages=r["passages"],
            source=r["source"],
            pages=r["pages"],
        )
        for r in rows
    ]
    return docs, int(total)


def neighbourhood(
    client: TeragClient, namespace: str, concept: str, depth: int, max_nodes: int
) -> Graph:
    client.store.require_namespace(namespace)
    found = run_read(client, CONCEPT, namespace=namespace, concept=concept)
    if not found:
        raise ServiceError(404, f"no concept named {concept!r} in namespace {namespace!r}")
    root = found[0]
    nodes = {
        root["id"]: GraphNode(
            id=root["id"],
            label="Concept",
            name=root["name"] or concept,
            properties={"type": root["type"], "frequency": root["frequency"]},
        )
    }
    edges: dict[tuple[str, str, str], GraphEdge] = {}
    frontier = [root["id"]]
    truncated = False
    for _ in range(depth):
        if not frontier:
            break
        budget = max_nodes - len(nodes)
        # Rows beyond the budget are edges to nodes already seen or nodes we could not keep:
        # ask for a few more than the budget, so "truncated" is known, not guessed.
        rows = run_read(client, EXPAND, namespace=namespace, ids=frontier, limit=budget * 4 + 50)
        nxt: list[str] = []
        for r in rows:
            if r["id"] not in nodes:
                if len(nodes) >= max_nodes:
                    truncated = True
                    continue
                props: dict[str, Any] = (
                    {"passage_id": r["passage_id"], "doc_id": r["doc_id"]}
                    if r["label"] == "Passage"
                    else {"type": r["type"], "frequency": r["frequency"]}
                )
                nodes[r["id"]] = GraphNode(
                    id=r["id"], label=r["label"], name=str(r["name"] or ""), properties=props
                )
                nxt.append(r["id"])
            if r["source"] in nodes and r["target"] in nodes:
                key = (r["source"], r["target"], r["rel"])
                edges[key] = GraphEdge(source=r["source"], target=r["target"], type=r["rel"])
        if len(rows) >= budget * 4 + 50:
            truncated = True
        frontier = nxt
    return Graph(
        namespace=namespace,
        concept=root["name"] or concept,
        nodes=list(nodes.values()),
        edges=list(edges.values()),
        truncated=truncated,
    )
