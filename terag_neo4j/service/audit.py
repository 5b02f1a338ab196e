"""One structured line per write on logger `terag_neo4j.audit`: the action, the surface
(`transport`: http or mcp), the key's id (the digest prefix of `Principal.name`, never the key),
the namespace, the documents (ids, at most `MAX_IDS`, and their count), the status and the
outcome; refused writes too. An MCP tool's write (`add_text`, `delete_document`) writes its line
through `audited`, with the action and status the same HTTP write would have.

`Observe` writes the line after the response, from what the request showed (method, route,
path parameters, status). What only the route knows (the ids in a JSON body or an upload, the
namespace of a job) the route hands over with `audit_note`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from terag_neo4j.service.auth import authenticate
from terag_neo4j.service.http_errors import ServiceError

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.types import Scope

log = logging.getLogger("terag_neo4j.audit")

MAX_IDS = 20
MAX_ID_CHARS = 200
# The writes, by method and route template (tests check each is a route of the app, and that
# every other POST or DELETE route only reads)
WRITES: dict[tuple[str, str], str] = {
    ("POST", "/v1/namespaces"): "namespace.create",
    ("DELETE", "/v1/namespaces/{namespace}"): "namespace.drop",
    ("POST", "/v1/namespaces/{namespace}/documents"): "documents.add",
    ("POST", "/v1/namespaces/{namespace}/documents/upload"): "documents.upload",
    ("DELETE", "/v1/namespaces/{namespace}/documents/{document_id:path}"): "documents.delete",
    ("DELETE", "/v1/jobs/{job_id}"): "job.cancel",
    ("POST", "/v1/namespaces/{namespace}/import"): "namespace.import",
}
_NOTE = "terag_audit"
# Set on a request's scope when its refusal writes no line: the front door's throttle of
# requests without a key (else each refused write would log one, at the caller's pace)
UNAUDITED = "terag.unaudited"


def write_action(method: str, route: str) -> str | None:
    if method == "GET":
        return None
    return WRITES.get((method, route))


def audit_note(
    request: Request, namespace: str | None = None, documents: Sequence[str] | None = None
) -> None:
    """What the audit line of this request should name beyond its path: the namespace (a job's,
    a created one's) and the documents' ids."""
    note: dict[str, Any] = {}
    if namespace is not None:
        note["namespace"] = namespace
    if documents is not None:
        note["documents"] = list(documents)
    request.state.terag_audit = note


def _key_id(scope: Scope) -> str | None:
    app = scope.get("app")
    keys = getattr(getattr(app, "state", None), "keys", None)
    if keys is None:
        return None
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    try:
        return authenticate(keys, headers).name
    except ServiceError:
        return None  # no key, or an unknown one


def audit_write(scope: Scope, action: str, status: int) -> None:
    if scope.get(UNAUDITED):
        return
    state = scope.get("state")
    note: dict[str, Any] = (state or {}).get(_NOTE) or {}
    params: dict[str, Any] = scope.get("path_params") or {}
    namespace = note.get("namespace", params.get("namespace"))
    ids: list[str] = list(note.get("documents", ()))
    if "document_id" in params:
        ids = [str(params["document_id"])]
    job = str(params["job_id"]) if "job_id" in params else None
    write_line(action, _key_id(scope), namespace, ids, status, job=job)


def write_line(
    action: str,
    key: str | None,
    namespace: str | None,
    ids: Sequence[str],
    status: int,
    job: str | None = None,
    transport: str = "http",
) -> None:
    """The one audit line of a write, whichever surface (HTTP or MCP) took it."""
    fields: dict[str, Any] = {
        "event": "write",
        "action": action,
        "transport": transport,
        "key": key,
        "namespace": namespace[:MAX_ID_CHARS] if namespace is not None else None,
        "documents": [i[:MAX_ID_CHARS] for i in ids[:MAX_IDS]],
        "documents_count": len(ids),
        "status": status,
        "outcome": "ok" if status < 400 else "refused" if status < 500 else "failed",
    }
    if job is not None:
        fields["job"] = job[:MAX_ID_CHARS]
    log.info("write %s", _summary(fields), extra={"fields": fields})


@dataclass
class McpWrite:
    """What an MCP write's audit line says beyond its action: the key once known, the status
    (the HTTP status the same call gets: an error's `status`, else 200 or what the tool sets)."""

    key: str | None = None
    status: int = 200


@contextmanager
def audited(action: str, namespace: str, ids: Sequence[str]) -> Iterator[McpWrite]:
    """One audit line for an MCP tool's write (`WRITES` names the HTTP ones), refused or not:
    the tool sets the key when it knows it; an exception's `status` (500 without one) is the
    line's."""
    line = McpWrite()
    try:
        yield line
    except BaseException as e:
        line.status = int(getattr(e, "status", 500))
        raise
    finally:
        write_line(action, line.key, namespace, ids, line.status, transport="mcp")


def _summary(fields: dict[str, Any]) -> str:
    # JSON, so an id with a line break or quote cannot forge another log line in text mode
    return json.dumps(fields, ensure_ascii=True)
