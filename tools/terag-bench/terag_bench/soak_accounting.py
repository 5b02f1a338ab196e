"""`terag bench-soak`'s accounting: every request and its outcome, the documents accepted
(`Ledger`), the numbers they come to against what the namespaces hold (`account`), and the
printed summary (`table`)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Request:
    """One request: its kind (retrieve, upload, poll, ...), which service, when it started
    (seconds into the soak), how long it took, and its outcome: "ok", or the error's kind (an
    HTTP status, or the client exception's class)."""

    kind: str
    service: int
    start: float
    seconds: float
    outcome: str


@dataclass
class Ledger:
    """Every request started and ended, and every document accepted; thread-safe."""

    requests: list[Request] = field(default_factory=list)
    started: int = 0
    accepted: dict[str, set[str]] = field(default_factory=dict)  # namespace -> document ids
    # Every id ever sent: a job the service took whose 202 the client never read (a timeout, a
    # kill -9 mid-reply) stores documents the client did not see accepted, which is no loss
    submitted: dict[str, set[str]] = field(default_factory=dict)
    resent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self) -> None:
        with self.lock:
            self.started += 1

    def end(self, request: Request) -> None:
        with self.lock:
            self.requests.append(request)

    def submit(self, namespace: str, ids: Sequence[str]) -> None:
        with self.lock:
            self.submitted.setdefault(namespace, set()).update(ids)

    def accept(self, namespace: str, ids: Sequence[str]) -> None:
        with self.lock:
            self.accepted.setdefault(namespace, set()).update(ids)


def error_kind(status: int | None, exc: BaseException | None = None) -> str:
    """An outcome's kind: "ok" for 2xx, "HTTP <status>", or the exception's class name."""
    if exc is not None:
        return type(exc).__name__
    assert status is not None
    return "ok" if 200 <= status < 300 else f"HTTP {status}"


def account(
    ledger: Ledger, stored: dict[str, dict[str, int]], unfinished_jobs: int
) -> dict[str, Any]:
    """The soak's numbers from what was sent and what the namespaces hold (`stored`: namespace ->
    document id -> its passages). A document is stored once when it is listed and has exactly
    one passage (each soak document is one short passage)."""
    from terag_bench.scoring import percentile_ms

    reqs = ledger.requests
    by_kind: dict[str, list[Request]] = {}
    for r in reqs:
        by_kind.setdefault(r.kind, []).append(r)
    errors = Counter(f"{r.kind}: {r.outcome}" for r in reqs if r.outcome != "ok")
    accepted = {ns: set(ids) for ns, ids in ledger.accepted.items()}
    n_accepted = sum(len(ids) for ids in accepted.values())
    stored_ids = {ns: set(docs) for ns, docs in stored.items()}
    missing = sorted(
        f"{ns}/{d}" for ns, ids in accepted.items() for d in ids - stored_ids.get(ns, set())
    )
    submitted = {ns: set(ids) for ns, ids in ledger.submitted.items()}
    for ns, ids in accepted.items():
        submitted.setdefault(ns, set()).update(ids)
    # Stored but never sent: a document from nowhere (that would be a bug, unlike a reply lost)
    unexpected = sorted(
        f"{ns}/{d}" for ns, ids in stored_ids.items() for d in ids - submitted.get(ns, set())
    )
    reply_lost = sorted(
        f"{ns}/{d}"
        for ns, ids in stored_ids.items()
        for d in (ids & submitted.get(ns, set())) - accepted.get(ns, set())
    )
    twice = sorted(f"{ns}/{d}" for ns, docs in stored.items() for d, n in docs.items() if n != 1)
    ok = [r.seconds for r in reqs if r.outcome == "ok"]
    return {
        "requests": len(reqs),
        "requests_never_ended": ledger.started - len(reqs),
        "errors": sum(errors.values()),
        "errors_by_kind": dict(errors.most_common()),
        "p50_ms": percentile_ms(ok, 50),
        "p99_ms": percentile_ms(ok, 99),
        "per_kind": {
            k: {
                "requests": len(rs),
                "errors": sum(r.outcome != "ok" for r in rs),
                "p50_ms": percentile_ms([r.seconds for r in rs if r.outcome == "ok"], 50),
                "p99_ms": percentile_ms([r.seconds for r in rs if r.outcome == "ok"], 99),
            }
            for k, rs in sorted(by_kind.items())
        },
        "documents_submitted": sum(len(ids) for ids in submitted.values()),
        "documents_accepted": n_accepted,
        "documents_stored": sum(len(ids) for ids in stored_ids.values()),
        "documents_missing": missing[:20],
        "documents_missing_count": len(missing),
        "documents_unexpected": unexpected[:20],
        "documents_unexpected_count": len(unexpected),
        "documents_stored_reply_lost": reply_lost[:20],
        "documents_stored_reply_lost_count": len(reply_lost),
        "documents_not_stored_once": twice[:20],
        "documents_not_stored_once_count": len(twice),
        "documents_resent": ledger.resent,
        "jobs_unfinished": unfinished_jobs,
        "lost_nothing": (
            ledger.started == len(reqs)
            and not missing
            and not unexpected
            and not twice
            and unfinished_jobs == 0
        ),
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        f"soak: {result.get('traffic_s')} s of traffic, {result['keys']} keys, two services; "
        f"faults: {', '.join(f['what'] + ' at ' + str(f['at_s']) + ' s' for f in result.get('faults', []))}",
        f"requests {result.get('requests')}, never ended {result.get('requests_never_ended')}, "
        f"errors {result.get('errors')}, p50 {result.get('p50_ms')} ms, p99 {result.get('p99_ms')} ms",
    ]
    for kind, k in (result.get("per_kind") or {}).items():
        lines.append(
            f"  {kind:>9}: {k['requests']} requests, {k['errors']} errors, "
            f"p50 {k['p50_ms']} ms, p99 {k['p99_ms']} ms"
        )
    for kind, n in (result.get("errors_by_kind") or {}).items():
        lines.append(f"  error {kind}: {n}")
    lines.append(
        f"documents submitted {result.get('documents_submitted')}, accepted "
        f"{result.get('documents_accepted')}, stored {result.get('documents_stored')} (missing "
        f"{result.get('documents_missing_count')}, from nowhere "
        f"{result.get('documents_unexpected_count')}, stored though the 202 was lost "
        f"{result.get('documents_stored_reply_lost_count')}, "
        f"not once {result.get('documents_not_stored_once_count')}, resent "
        f"{result.get('documents_resent')}), jobs unfinished {result.get('jobs_unfinished')}"
    )
    for p in result.get("rss_by_process") or []:
        lines.append(
            f"  service {p['service']} pid {p['pid']}: RSS {p['start_mib']} MiB when ready, "
            f"{p['end_mib']} MiB at its end"
        )
    lines.append(f"load {result['load_average_start']} -> {result['load_average_end']}")
    return "\n".join(lines)
