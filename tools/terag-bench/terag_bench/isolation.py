"""`terag bench-isolation`: does one namespace's ranking move when another is written, deleted,
dropped, or the server restarts?

Namespace A holds dataset A (the namespace `terag bench-index` builds); its top-10 passages
and scores are recorded for the first `--limit` questions, then again after each event in a
namespace B of its own: dataset B's corpus indexed, half of it deleted, B dropped, and (with
`--restart`, on the managed local server) a restart. Each row counts the questions whose top-10
changed order, changed membership, and the largest score change. Isolated namespaces give
zeros everywhere.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from terag_neo4j.config import Settings

log = logging.getLogger(__name__)
TOP = 10
Ranking = list[tuple[str, float]]


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-isolation",
        help="whether namespace A's top-10 moves when namespace B is indexed, deleted, dropped",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("dataset_a", metavar="A", help="dataset whose bench namespace is watched")
    s.add_argument("dataset_b", metavar="B", help="dataset indexed into a namespace of its own")
    s.add_argument("--limit", type=int, default=50, help="questions of A (default 50)")
    s.add_argument("--b-passages", type=int, default=None, help="first N passages of B only")
    s.add_argument(
        "--restart", action="store_true", help="also restart the managed local Neo4j at the end"
    )
    s.add_argument("--out", default="bench/results", help="output folder")
    s.set_defaults(func=cmd_bench_isolation)


def compare(before: list[Ranking], after: list[Ranking]) -> dict[str, Any]:
    """How many rankings changed order, membership, and the largest score change."""
    order = members = 0
    delta = 0.0
    for b, a in zip(before, after, strict=True):
        ids_b, ids_a = [p for p, _ in b], [p for p, _ in a]
        order += ids_b != ids_a
        members += set(ids_b) != set(ids_a)
        common = dict(a)
        delta = max([delta, *(abs(common[p] - s) for p, s in b if p in common)])
    return {"order_changed": order, "members_changed": members, "max_score_delta": delta}


def cmd_bench_isolation(args: argparse.Namespace) -> int:
    from terag_bench.datasets import load_dataset
    from terag_bench.ingest import index_namespace
    from terag_bench.runinfo import write_result
    from terag_neo4j.client import TeragClient
    from terag_neo4j.local import neo4j as local

    a = load_dataset(args.dataset_a, limit=args.limit)
    b = load_dataset(args.dataset_b, max_passages=args.b_passages)
    ns_a = index_namespace(a.name, "spacy")
    ns_b = f"isolation_{b.name}"
    settings = Settings().with_overrides(namespace=ns_a, extractor="spacy")
    if settings.neo4j_uri is None:
        local.start(settings)  # the managed local server: a no-op when it already runs
    questions = [q.question for q in a.questions]

    def rankings(client: TeragClient) -> list[Ranking]:
        return [
            [(p.id, p.score) for p in client.retrieve(q, top_k=TOP).passages] for q in questions
        ]

    rows: list[dict[str, Any]] = []
    with TeragClient(settings) as client:
        client.index(a.documents, progress=False)  # a no-op when the bench namespace is built
        before = rankings(client)
        if client.store.namespaces.exists(ns_b):
            client.drop(ns_b)
        docs = b.documents
        client.index(docs, namespace=ns_b, progress=True)
        rows.append(
            {"event": f"B indexed ({len(docs)} passages)", **compare(before, rankings(client))}
        )
        for d in docs[::2]:
            client.delete(d.id, namespace=ns_b)
        rows.append({"event": "half of B deleted", **compare(before, rankings(client))})
        client.drop(ns_b)
        rows.append({"event": "B dropped", **compare(before, rankings(client))})
        rows.append({"event": "same questions again", **compare(before, rankings(client))})
    if args.restart:
        local.stop(settings)
        local.start(settings)
        with TeragClient(settings) as client:
            rows.append({"event": "Neo4j restarted", **compare(before, rankings(client))})
    result = {"a": a.name, "b": b.name, "questions": len(questions), "top": TOP, "rows": rows}
    path = write_result(Path(args.out), f"isolation_{a.name}_{b.name}", result)
    print(f"namespace {ns_a}, {len(questions)} questions, top-{TOP}; B = {b.name}")
    print(f"{'event':32} {'order changed':>14} {'members changed':>16} {'max |score change|':>19}")
    for r in rows:
        print(
            f"{r['event']:32} {r['order_changed']:>14} {r['members_changed']:>16} "
            f"{r['max_score_delta']:>19.3g}"
        )
    print(f"wrote {path}")
    return 0
