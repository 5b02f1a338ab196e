"""`terag-bench final-rank-features`: the learned final ranking's training data, zero LLM tokens.

For each set, every question is asked once of the set's bench namespace (spaCy graph, the
default embedder, default knobs) and what the final stage sees is kept (`learned.Inputs`, through
the retriever's probe), with a label for every passage either ranking or the walk returned:
1 for a gold passage; on a set without gold passages (medical, novel) its answer coverage
(`scoring.answer_coverage`), a hit at 0.75. One JSON line per question, in
`OUT/final_rank/<set>.jsonl`; `final-rank-train` reads them.

Which questions may train the shipped model: all of a `*_train100` set; of a dev set, those
whose id hashes even (`split`), the others are kept apart. Medical and novel: their `Fact
Retrieval` questions (the figure the product is held to), the first `--coverage-limit`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
DEFAULT_SETS = (
    "hotpotqa_hipporag_train100",
    "musique_hipporag_train100",
    "hotpotqa",
    "musique",
    "2wikimultihopqa",
    "medical",
    "novel",
)
LABEL_DEPTH = 50  # each flat ranking's passages labelled (enough for its own R@5 and RRF's)


def split(dataset: str, qid: str) -> str:
    """`train` or `holdout`: every question of a training set trains; a dev set's half."""
    if dataset.endswith("_train100"):
        return "train"
    return "train" if hashlib.sha256(qid.encode()).digest()[0] % 2 == 0 else "holdout"


def register_cli(subparsers: Any) -> None:
    from terag_bench.subcommands import COMMANDS

    s = subparsers.add_parser(
        "bench-final-rank-features",
        help=COMMANDS["bench-final-rank-features"],
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument(
        "datasets",
        nargs="*",
        default=list(DEFAULT_SETS),
        metavar="DATASET",
        help="set names, each optionally NAME:QUESTIONS:PASSAGES (default: the seven sets)",
    )
    s.add_argument("--limit", type=int, help="only the first N questions of each set")
    s.add_argument(
        "--coverage-limit",
        type=int,
        default=300,
        help="fact questions of a set without gold passages (default 300)",
    )
    s.add_argument(
        "--max-passages",
        type=int,
        help="cut each QA set's corpus to N passages, its questions' gold passages kept (the "
        "cut corpus's own namespace, as `terag bench --max-passages`); for a loaded machine",
    )
    s.add_argument("--out", type=Path, default=Path("bench") / "results")
    s.set_defaults(func=cmd_features)


def parse_spec(
    spec: str, limit: int | None, most: int | None
) -> tuple[str, int | None, int | None]:
    """`NAME`, or `NAME:QUESTIONS:PASSAGES` (that set's own --limit and --max-passages)."""
    name, _, rest = spec.partition(":")
    if not rest:
        return name, limit, most
    try:
        q, p = (int(v) for v in rest.split(":"))
    except ValueError:
        raise SystemExit(f"{spec!r}: expected NAME or NAME:QUESTIONS:PASSAGES") from None
    return name, q, p


def cmd_features(args: argparse.Namespace) -> int:
    from terag_neo4j.config import Settings

    settings = Settings()
    if settings.neo4j_uri is None:
        from terag_neo4j.local.neo4j_process import start

        start(settings)
    folder = args.out / "final_rank"
    folder.mkdir(parents=True, exist_ok=True)
    for spec in args.datasets:
        name, limit, most = parse_spec(spec, args.limit, args.max_passages)
        path = folder / f"{name}.jsonl"
        n = dump(settings, name, path, limit, args.coverage_limit, most)
        print(f"{name}: {n} questions; wrote {path}")
    return 0


def dump(
    settings: Any,
    name: str,
    path: Path,
    limit: int | None,
    coverage_limit: int,
    max_passages: int | None = None,
) -> int:
    from terag_bench.datasets import load_dataset, namespace_for
    from terag_bench.scoring import answer_coverage
    from terag_bench.variants import DEFAULT_KNOBS
    from terag_neo4j.client import TeragClient
    from terag_neo4j.retrieval.learned import Inputs

    ds = load_dataset(name, limit=limit, max_passages=max_passages)
    questions = ds.questions
    if ds.kind == "coverage":
        questions = [q for q in questions if q.type == "Fact Retrieval"][:coverage_limit]
    ns = namespace_for(ds, "spacy")
    knobs = {**DEFAULT_KNOBS, "final_rank": "walk"}
    s = settings.with_overrides(preset="default", retrieval=knobs, top_k=5, query_cache_size=0)
    t0 = time.perf_counter()
    with TeragClient(s, namespace=ns, extractor="spacy") as client, path.open("w") as out:
        client.store.require_namespace(ns)
        r = client.retriever
        seen: list[Inputs] = []
        r.probe = seen.append
        for q in questions:
            seen.clear()
            res = r.retrieve(q.question, top_k=5, namespace=ns, mode="pagerank")
            if not seen:  # no restart node: the retrieval fell back to dense, no final stage
                out.write(json.dumps({"id": q.id, "fallback": [p.id for p in res.passages]}))
                out.write("\n")
                continue
            x = seen[0]
            nodes = sorted(
                {n for n, _ in x.walk}
                | {n for n, _ in x.text[:LABEL_DEPTH]}
                | {n for n, _ in x.vector[:LABEL_DEPTH]}
            )
            rows = client.store.read("passages_by_node", nodes=nodes)
            ids = {int(row["node"]): str(row["id"]) for row in rows}
            if ds.kind == "coverage":
                text = {int(row["node"]): str(row["text"] or "") for row in rows}
                labels = {n: answer_coverage(q.answers[0], [text[n]]) for n in text}
            else:
                gold = set(q.gold_ids)
                labels = {n: float(ids[n] in gold) for n in ids}
            record = {
                "id": q.id,
                "split": split(ds.name, q.id),
                "kind": ds.kind,
                "gold": len(q.gold_ids),
                "inputs": x.to_json(),
                "labels": {str(n): round(v, 4) for n, v in labels.items() if v > 0},
                "ids": {str(n): i for n, i in ids.items()},
            }
            out.write(json.dumps(record) + "\n")
    log.info("%s: %d questions in %.0f s", name, len(questions), time.perf_counter() - t0)
    return len(questions)
