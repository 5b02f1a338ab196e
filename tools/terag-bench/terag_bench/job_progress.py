"""`terag bench-job-progress`: how soon, and how often, a large document's job shows progress.

One document of many one-line paragraphs of real text (the lines of the Novel corpus's books,
a few words each: 150,000 paragraphs, 3.2 MB by default) goes to a `terag serve` of its own
(spaCy) through the documents route; `GET /v1/jobs/{id}` is polled every second. Reported: when
the job starts running, when its passages total turns from the estimate into the chunked count
(the document is chunked), when `passages_done` first moves, every gap between two moves, the
longest gap, and the documents the job named meanwhile. The target: passages done within 30 s
of the job starting, and more every 30 s after that. Also measured in this process: the seconds
to chunk the same text (what a job does before its first passage). Writes
`<out>/<name>.json`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_OUT = Path("bench") / "results"
FINISHED = ("succeeded", "failed", "cancelled")
TARGET_S = 30.0  # to the first passages done, and between two moves after that
LINES = 150_000
BYTES = 3_200_000
DOC_ID = "novel-lines"


def novel_words(corpus: Path) -> Iterator[str]:
    """The words of the Novel corpus's books, book after book, again from the first when they
    run out."""
    books = sorted(corpus.glob("*.txt"))
    if not books:
        from terag_bench.datasets import DatasetError

        raise DatasetError(f"no .txt books under {corpus}")
    while True:
        for book in books:
            yield from book.read_text(encoding="utf-8", errors="replace").split()


def one_line_paragraphs(corpus: Path, lines: int, size: int, skip: int = 0) -> str:
    """`lines` paragraphs of consecutive words, blank-line separated, each about as long as
    makes the text `size` characters and ended as a sentence (a short line that is not would
    be read as a heading, each its own passage: an export's lines are records, not titles)."""
    per_line = max(1, size // lines - 6)
    words = novel_words(corpus)
    for _ in range(skip):  # another text: passages the extraction cache does not hold
        next(words)
    out = []
    for _ in range(lines):
        line = next(words)
        while len(line) < per_line:
            line += " " + next(words)
        out.append(line if line.endswith((".", "!", "?", ";", ":", ",")) else line + ".")
    return "\n\n".join(out)


def chunk_seconds(text: str) -> dict[str, Any]:
    """What a job does with the document before its first passage: chunk it, timed here."""
    from terag_neo4j.config import Settings
    from terag_neo4j.core.documents import Document
    from terag_neo4j.indexing.loading import default_tokenizer, split_document

    settings = Settings()
    tok = default_tokenizer()
    t = time.perf_counter()
    passages = split_document(
        Document(id=DOC_ID, text=text), settings.chunk_tokens, settings.chunk_overlap, tok
    )
    return {"chunk_s": round(time.perf_counter() - t, 2), "passages": len(passages)}


def gaps(moves: list[dict[str, Any]], running_s: float | None) -> list[float]:
    """Seconds from the job's start to its first move, and between each two moves after."""
    times = ([running_s] if running_s is not None else []) + [m["t_s"] for m in moves]
    return [round(b - a, 1) for a, b in itertools.pairwise(times)]


def summarize(polls: list[dict[str, Any]], stopped_at: float | None) -> dict[str, Any]:
    """The moves of `passages_done` among the polls (each `{"t_s", ...job}`), and their gaps."""
    running = next((p["t_s"] for p in polls if p["state"] != "queued"), None)
    moves: list[dict[str, Any]] = []
    last = 0
    chunked = None
    first_total = polls[0]["passages_total"] if polls else None
    for p in polls:
        if chunked is None and p["passages_total"] != first_total and p["state"] == "running":
            chunked = p["t_s"]
        if p["passages_done"] > last:
            last = p["passages_done"]
            moves.append({k: p[k] for k in ("t_s", "passages_done", "passages_total", "document")})
    between = gaps(moves, running)
    end = polls[-1] if polls else {}
    open_gap = (
        round(end["t_s"] - (moves[-1]["t_s"] if moves else running or 0.0), 1)
        if end and end.get("state") not in FINISHED
        else None
    )
    first_move = moves[0]["t_s"] if moves else None
    longest = max([*between[1:], open_gap or 0.0], default=None) if moves else None
    return {
        "running_s": running,
        "chunked_s": chunked,
        "first_move_s": first_move,
        "first_move_after_start_s": round(first_move - running, 1)
        if first_move is not None and running is not None
        else None,
        "moves": len(moves),
        "max_gap_s": longest,
        "gaps_s": between,
        "open_gap_at_end_s": open_gap,
        "documents_named": sorted({p["document"] for p in polls if p.get("document")}),
        "state": end.get("state"),
        "passages_done": end.get("passages_done"),
        "passages_total": end.get("passages_total"),
        "stopped_at_s": stopped_at,
        "move_log": moves,
    }


def met(s: dict[str, Any]) -> bool:
    first = s["first_move_after_start_s"]
    return first is not None and first <= TARGET_S and (s["max_gap_s"] or 0.0) <= TARGET_S


def poll_job(
    target: Any, job_id: str, every_s: float, stop_after_s: float | None
) -> tuple[list[dict[str, Any]], float | None]:
    """Every poll of the job until it ends; after `stop_after_s` it is cancelled."""
    from terag_neo4j.service.paths import job_path

    polls: list[dict[str, Any]] = []
    t0 = time.monotonic()
    stopped = None
    with target.http() as http:
        while True:
            t = time.monotonic() - t0
            job = http.get(job_path(job_id)).json()
            if polls and job.get("passages_done", 0) > polls[-1].get("passages_done", 0):
                log.info(
                    "%.1f s: %s/%s passages done (%s)",
                    t, job["passages_done"], job["passages_total"], job.get("document"),
                )  # fmt: skip
            polls.append({"t_s": round(t, 2), **job})
            if job.get("state") in FINISHED:
                return polls, stopped
            if stop_after_s is not None and stopped is None and t >= stop_after_s:
                stopped = round(t, 1)
                log.info("%.0f s: cancelling the job (--stop-after)", t)
                http.delete(job_path(job_id))
            time.sleep(every_s)


def submit(target: Any, ns: str, text: str, tries: int = 5) -> str:
    """The document's job id; a 503 (Neo4j busy: a fresh database's schema is still being
    made) is tried again, as its message asks."""
    from terag_bench.serve_clients import BenchServeError, upload

    for i in range(tries):
        try:
            return upload(target, ns, [{"id": DOC_ID, "text": text}])
        except BenchServeError as e:
            if " 503 " not in str(e) or i + 1 == tries:
                raise
            log.warning("submission refused for now, trying again: %s", e)
            time.sleep(2.0)
    raise AssertionError("unreachable")


def run(args: argparse.Namespace) -> dict[str, Any]:
    from terag_bench.serve_clients import drop_namespace, running_service

    corpus = args.corpus or Path(os.environ.get("TERAG_DATASETS", "../shared/datasets")) / (
        "novel/corpus"
    )
    text = one_line_paragraphs(corpus, args.lines, args.bytes, args.skip)
    result: dict[str, Any] = {
        "lines": args.lines,
        "skip_words": args.skip,
        "chars": len(text),
        "bytes": len(text.encode()),
        "corpus": str(corpus),
        "target_s": TARGET_S,
        "load_average_start": list(os.getloadavg()),
        **chunk_seconds(text),
    }
    tag = f"progress{os.getpid()}"
    key, ns = f"{tag}-{secrets.token_urlsafe(24)}", f"{tag}_ns"
    env = {
        "TERAG_JOB_QUEUE": tag,
        "TERAG_API_KEYS": json.dumps({key: {"namespaces": [ns], "access": "write"}}),
    }
    log_path = args.out / f"{args.name}-serve.log"
    with running_service(None, None, key, log_path, args.ready_timeout, extra_env=env) as target:
        try:
            began = time.monotonic()
            job_id = submit(target, ns, text)
            result["submit_s"] = round(time.monotonic() - began, 2)
            polls, stopped = poll_job(target, job_id, args.every, args.stop_after)
        finally:
            drop_namespace(target, ns)
    result.update(summarize(polls, stopped))
    result["load_average_end"] = list(os.getloadavg())
    result["met"] = met(result)
    return result


def table(r: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"document: {r['lines']:,} one-line paragraphs, {r['bytes']:,} bytes, "
            f"{r['passages']:,} passages (chunked in {r['chunk_s']} s here)",
            f"job running at {r['running_s']} s, chunked at {r['chunked_s']} s, first passages "
            f"done at {r['first_move_s']} s ({r['first_move_after_start_s']} s after it started)",
            f"{r['moves']} moves, longest gap {r['max_gap_s']} s (target {TARGET_S:.0f} s): "
            f"{'met' if r['met'] else 'MISSED'}",
            f"ended {r['state']} at {r['passages_done']}/{r['passages_total']} passages"
            + (f" (cancelled at {r['stopped_at_s']} s)" if r["stopped_at_s"] else ""),
            f"documents named: {r['documents_named']}; load {r['load_average_start']} -> "
            f"{r['load_average_end']}",
        ]
    )


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-job-progress",
        help="A 150,000-paragraph document through terag serve: first progress and its gaps",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("--lines", type=int, default=LINES, help=f"paragraphs ({LINES:,})")
    s.add_argument("--bytes", type=int, default=BYTES, help=f"the text's size ({BYTES:,})")
    s.add_argument("--corpus", type=Path, help="folder of .txt books (default: Novel's)")
    s.add_argument(
        "--skip",
        type=int,
        default=0,
        help="start at this word of the corpus, for a text whose extractions no earlier run "
        "cached: past every word earlier runs extracted (lines fall back into step with an "
        "unskipped text within a few lines, so a small skip gives the same passages)",
    )
    s.add_argument("--every", type=float, default=1.0, help="seconds between polls (1)")
    s.add_argument(
        "--stop-after", type=float, help="cancel the job after SECONDS (default: let it end)"
    )
    s.add_argument("--ready-timeout", type=float, default=600.0)
    s.add_argument("--out", type=Path, default=DEFAULT_OUT)
    s.add_argument("--name", default="job_progress", help="result file stem (job_progress)")
    s.set_defaults(func=cmd_bench_job_progress)


def cmd_bench_job_progress(args: argparse.Namespace) -> int:
    from terag_bench.runinfo import write_result
    from terag_neo4j.config import Settings

    if args.lines < 1 or args.bytes < args.lines or args.every <= 0:
        from terag_bench.serve_clients import BenchServeError

        raise BenchServeError("--lines must be at least 1, --bytes at least --lines, --every > 0")
    if Settings().neo4j_uri is None:
        from terag_neo4j.local.neo4j_process import start

        start(Settings())  # the managed local server: a no-op when it already runs
    result = run(args)
    path = write_result(args.out, args.name, result)
    print(table(result))
    print(f"wrote {path}")
    return 0
