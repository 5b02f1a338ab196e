"""An ingest job's node as read back from Neo4j (`job_store`), and the view of it the service
answers with: its progress in passages, counted as groups are written and estimated for the
rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from terag_neo4j.service.schemas import Job


def _time(v: Any) -> str | None:
    """A Neo4j datetime as ISO 8601 to the second (UTC), as the service shows times."""
    if v is None:
        return None
    native = v.to_native() if hasattr(v, "to_native") else v
    return str(native.isoformat(timespec="seconds"))


@dataclass(frozen=True)
class StoredJob:
    """A job's node as read back: its view, and what the worker and the routes decide on."""

    row: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.row["id"])

    @property
    def namespace(self) -> str:
        return str(self.row["namespace"])

    @property
    def kind(self) -> str:
        """'ingest' (documents) or 'import' (a namespace archive); jobs from before imports
        have no kind and are ingests."""
        return str(self.row.get("kind") or "ingest")

    @property
    def archive(self) -> str:
        return str(self.row.get("archive") or "")

    @property
    def spool_host(self) -> str:
        return str(self.row.get("spool_host") or "")

    @property
    def expired(self) -> bool:
        return self.row.get("expired") is not None

    @property
    def documents_done(self) -> int:
        return int(self.row.get("documents_done") or 0)

    @property
    def documents_total(self) -> int:
        return int(self.row.get("documents_total") or 0)

    @property
    def preempted(self) -> int:
        return int(self.row.get("preempted") or 0)

    @property
    def attempts(self) -> int:
        return int(self.row.get("attempts") or 0)

    def view(self) -> Job:
        r = self.row
        unfinished = r["state"] in ("queued", "running")
        # Passages are counted as each group is indexed, and within the group in hand as its
        # batches are written; the rest is estimated from its size until then (exact once the
        # job has run through).
        group = int(r.get("group_done") or 0) if unfinished else 0
        done = int(r.get("passages_done") or 0) + group
        rest = max(0, int(r.get("estimate_total") or 0) - int(r.get("estimate_done") or 0))
        if unfinished and r.get("group_total") is not None:
            # the group's real count replaces its estimate
            rest += int(r["group_total"]) - group - int(r.get("group_estimate") or 0)
            rest = max(0, rest)
        return Job(
            id=self.id,
            namespace=self.namespace,
            kind="import" if self.kind == "import" else "ingest",
            state=r["state"],
            documents_total=self.documents_total,
            documents_done=self.documents_done,
            passages_total=done + (rest if unfinished else 0),
            passages_done=done,
            passages_new=int(r.get("passages_new") or 0),
            passages_unchanged=int(r.get("passages_unchanged") or 0),
            passages_replaced=int(r.get("passages_replaced") or 0),
            input_tokens=int(r.get("input_tokens") or 0),
            output_tokens=int(r.get("output_tokens") or 0),
            tokens_unknown=int(r.get("tokens_unknown") or 0),
            errors=list(r.get("errors") or []),
            created=_time(r.get("created")) or "",
            started=_time(r.get("started")),
            finished=_time(r.get("finished")),
            document=r.get("document") if unfinished else None,
        )
