"""The older release's half of `terag bench-upgrade`, run by that release's own Python (its venv,
its installed `terag_neo4j`, nothing of this checkout on the path; the bench copies this file
out of the package first, so no module beside it shadows one of that release's).

Given a spec (JSON: the namespace, its documents, the questions, a job queue and the job
namespace's documents), it indexes the namespace, records each question's top-10, its counts,
fingerprint and document ids, runs one service job to its end through that release's job
store (submit, claim, the group's index, group_done: what its worker does) and leaves a second
job queued; it prints what it recorded as one JSON object. Only the API every release since the
job store has kept is used.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.service.job_store import JobStore

OWNER = "upgrade-old-worker"
LEASE_S = 120.0


def _docs(rows: list[dict[str, Any]]) -> list[Document]:
    return [Document(**r) for r in rows]


def run(spec: dict[str, Any]) -> dict[str, Any]:
    settings = Settings()
    ns, job_ns = str(spec["namespace"]), str(spec["job_namespace"])
    out: dict[str, Any] = {}
    with TeragClient(settings, namespace=ns) as client:
        report = client.index(_docs(spec["documents"]), progress=False)
        out["indexed"] = report.passages_total
        out["top10"] = [
            [p.id for p in client.retrieve(q, top_k=10).passages] for q in spec["questions"]
        ]
        info = client.stats()
        out["stats"] = {
            "passages": info.passages,
            "concepts": info.concepts,
            "documents": info.documents,
            "has_passage": info.has_passage,
        }
        out["fingerprint"] = client.store.namespaces.fingerprint(ns)
        page = client.documents(limit=1000)
        out["documents"] = sorted(d.id for d in page.documents)
        jobs = JobStore(client.store, queue=str(spec["queue"]))
        jobs.ensure_schema()
        job = jobs.submit(job_ns, _docs(spec["job_documents"]), "upgrade", settings.chunk_tokens)
        claimed = jobs.claim(OWNER, LEASE_S)
        if claimed is None or claimed.id != job.id:
            raise SystemExit("the older release could not claim its own job")
        group, estimate = jobs.next_group(job.id, 0, 64, 1000)
        done = client.index(group, namespace=job_ns, progress=False)
        state = jobs.group_done(job.id, OWNER, 0, len(group), estimate, done)
        finished = jobs.get(job.id)
        out["finished_job"] = {
            "id": job.id,
            "state": state,
            "view": finished.view().model_dump() if finished is not None else None,
        }
        queued = jobs.submit(
            job_ns, _docs(spec["queued_documents"]), "upgrade", settings.chunk_tokens
        )
        out["queued_job"] = queued.id
    return out


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    Path(argv[2]).write_text(json.dumps(run(spec)), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
