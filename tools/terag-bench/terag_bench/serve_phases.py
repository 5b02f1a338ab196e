"""The phases of `terag bench-serve` beside the plain client counts: in-process retrieval on the
same questions (the reference for HTTP's overhead), queries while an upload ingests (errors and
consistency), and the soak (errors, lost uploads, memory growth)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

from terag_bench.scoring import percentile_ms
from terag_bench.serve_clients import (
    Call,
    Target,
    listed_documents,
    run_clients,
    summarize,
    upload,
    wait_jobs,
)

log = logging.getLogger(__name__)
Baseline = dict[str, set[tuple[str, ...]]]  # question -> the top-k id lists seen for it


def inprocess(
    namespace: str, questions: Sequence[str], seconds: float, top_k: int, extractor: str
) -> tuple[dict[str, Any], Baseline]:
    """`TeragClient.retrieve` on the questions in turn for `seconds` (one warm-up first)."""
    from terag_neo4j.client import TeragClient
    from terag_neo4j.config import Settings

    lat: list[float] = []
    seen: Baseline = {}
    settings = Settings().with_overrides(namespace=namespace, extractor=extractor)
    with TeragClient(settings) as client:
        client.retrieve(questions[0], top_k=top_k)
        end = time.perf_counter() + seconds
        i = 0
        while time.perf_counter() < end:
            q = questions[i % len(questions)]
            t = time.perf_counter()
            res = client.retrieve(q, top_k=top_k)
            lat.append(time.perf_counter() - t)
            seen.setdefault(q, set()).add(tuple(p.id for p in res.passages))
            i += 1
    row = {
        "queries": len(lat),
        "p50_ms": percentile_ms(lat, 50),
        "p95_ms": percentile_ms(lat, 95),
        "p99_ms": percentile_ms(lat, 99),
    }
    return row, seen


def record(baseline: Baseline, calls: Sequence[Call], namespace: str) -> None:
    for c in calls:
        if c.passages is not None and c.namespace == namespace:
            baseline.setdefault(c.question, set()).add(tuple(p[0] for p in c.passages))


def compare(baseline: Baseline, calls: Sequence[Call], namespace: str) -> dict[str, int]:
    """Answers of `namespace` equal to one already seen for their question, or not."""
    same = differ = unknown = 0
    for c in calls:
        if c.passages is None or c.namespace != namespace:
            continue
        known = baseline.get(c.question)
        if known is None:
            unknown += 1
        elif tuple(p[0] for p in c.passages) in known:
            same += 1
        else:
            differ += 1
    return {"same": same, "different": differ, "not_seen_before": unknown}


def _norm(text: str) -> str:
    return " ".join(text.split())


def expected_passages(docs: Sequence[dict[str, str]]) -> dict[str, str]:
    """Passage id -> text, as the indexer splits the documents (with the same settings)."""
    from terag_neo4j.config import Settings
    from terag_neo4j.core.documents import Document
    from terag_neo4j.indexing.loading import default_tokenizer, split_document

    s = Settings()
    tok = default_tokenizer(s.embedding_model)
    return {
        p.id: _norm(p.text)
        for d in docs
        for p in split_document(
            Document(id=d["id"], text=d["text"], title=d.get("title", "")),
            s.chunk_tokens,
            s.chunk_overlap,
            tok,
        )
    }


def mixed(
    target: Target,
    namespace: str,
    upload_ns: str,
    questions: Sequence[str],
    docs: Sequence[dict[str, str]],
    clients: int,
    seconds: float,
    top_k: int,
    baseline: Baseline,
) -> dict[str, Any]:
    """Clients on `namespace` (read only) and on `upload_ns` while `docs` ingest into the latter.

    A read answer counts as consistent when it is one the same question got before; an answer
    from the namespace being written when every passage is one the indexer makes of the uploaded
    documents, with its whole text (a half-written one would show another text or id)."""
    seed, rest = list(docs[:20]), list(docs[20:])
    wait_jobs(target, [upload(target, upload_ns, seed)], 600)  # something to retrieve from
    texts = expected_passages(docs)
    ingest: dict[str, Any] = {}

    def ingest_now(t0: float) -> None:
        def work() -> None:
            ingest["start_s"] = time.perf_counter() - t0
            job_id = upload(target, upload_ns, rest)
            ingest["job"] = wait_jobs(target, [job_id], 3600)[0]
            ingest["end_s"] = time.perf_counter() - t0

        thread = threading.Thread(target=work, daemon=True)
        thread.start()
        ingest["thread"] = thread

    calls, wall = run_clients(
        target, [namespace, upload_ns], questions, clients, seconds, top_k, ingest_now
    )
    ingest.pop("thread").join()
    job = ingest.get("job", {})
    start, end = float(ingest.get("start_s", 0.0)), float(ingest.get("end_s", wall))
    during = [c for c in calls if start <= c.start <= end]
    bad = [
        c
        for c in calls
        if c.namespace == upload_ns
        and c.passages is not None
        and any(texts.get(p[0]) != _norm(p[2]) for p in c.passages)
    ]
    listed = listed_documents(target, upload_ns)
    missing = [d["id"] for d in docs if listed.get(d["id"], 0) < 1]
    return {
        "clients": clients,
        "seconds": seconds,
        **summarize(calls, wall),
        "queries_during_ingest": len(during),
        "errors_during_ingest": sum(1 for c in during if c.error),
        "read_namespace_answers": compare(baseline, calls, namespace),
        "upload_namespace_queries": sum(1 for c in calls if c.namespace == upload_ns),
        "upload_namespace_inconsistent": len(bad),
        "inconsistent_examples": [
            [(*p[:2], p[2][:120]) for p in c.passages or [] if texts.get(p[0]) != _norm(p[2])]
            for c in bad[:3]
        ],
        "uploaded_documents": len(docs),
        "ingest_s": round(end - start, 1),
        "ingest_state": job.get("state"),
        "ingest_passages_done": job.get("passages_done"),
        "ingest_errors": job.get("errors", []),
        "documents_missing_after": missing[:20],
        "documents_missing_count": len(missing),
    }


def soak(
    target: Target,
    namespace: str,
    upload_ns: str,
    questions: Sequence[str],
    docs: Sequence[dict[str, str]],
    clients: int,
    seconds: float,
    top_k: int,
) -> dict[str, Any]:
    """`clients` for `seconds` while one small document is uploaded every seconds/len(docs);
    afterwards every upload must be listed. RSS is sampled every few seconds."""
    samples: list[tuple[float, float]] = []
    jobs: list[str] = []
    refused: list[str] = []
    stop = threading.Event()

    def background(t0: float) -> None:
        def rss() -> None:
            while not stop.is_set():
                mib = target.rss_mib()
                if mib is not None:
                    samples.append((round(time.perf_counter() - t0, 1), mib))
                stop.wait(5.0)

        def uploads() -> None:
            gap = seconds / (len(docs) + 1)
            for d in docs:
                if stop.wait(gap):
                    return
                try:
                    jobs.append(upload(target, upload_ns, [d]))
                except Exception as e:  # counted: a refused upload is a lost one
                    refused.append(f"{d['id']}: {e}")

        for fn in (rss, uploads):
            threading.Thread(target=fn, daemon=True).start()

    calls, wall = run_clients(target, [namespace], questions, clients, seconds, top_k, background)
    stop.set()
    finished = wait_jobs(target, jobs, 600)
    listed = listed_documents(target, upload_ns)
    lost = [d["id"] for d in docs if listed.get(d["id"], 0) < 1]
    start = samples[0][1] if samples else None
    end = target.rss_mib()
    growth = round((end - start) / start * 100, 1) if start and end else None
    return {
        "clients": clients,
        "seconds": seconds,
        **summarize(calls, wall),
        "uploads": len(docs),
        "uploads_refused": refused,
        "upload_jobs_failed": [j.get("id") for j in finished if j.get("state") != "succeeded"],
        "uploads_lost": len(lost),
        "uploads_lost_ids": lost[:20],
        "rss_start_mib": start,
        "rss_end_mib": end,
        "rss_max_mib": max((s[1] for s in samples), default=None),
        "rss_growth_pct": growth,
        "rss_samples": samples,
    }
