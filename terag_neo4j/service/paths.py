"""The service's URL paths as every client builds them (standard library only: the CLI's remote
commands import this without httpx or pydantic).

An id goes into a path as one segment with every character but letters, digits, '-', '_' and
'~' percent-encoded, dots included: an HTTP client or proxy removes a literal `..` segment
(`/documents/../../x` becomes `/x`) and may do so after decoding `%2F`, so a document id could
otherwise name a namespace, and `#`, `?` and `%` would cut or change the path. The server decodes
each segment back (uvicorn unquotes the path before routing), so any id round-trips.
"""

from __future__ import annotations

from urllib.parse import quote


def segment(value: str) -> str:
    """`value` as one path segment that no client, proxy or server can split or collapse."""
    return quote(value, safe="").replace(".", "%2E")


def namespace_path(namespace: str, tail: str = "") -> str:
    return f"/v1/namespaces/{segment(namespace)}{tail}"


def document_path(namespace: str, document: str) -> str:
    return namespace_path(namespace, f"/documents/{segment(document)}")


def why_path(namespace: str, passage: str) -> str:
    return namespace_path(namespace, f"/passages/{segment(passage)}/why")


def job_path(job_id: str) -> str:
    return f"/v1/jobs/{segment(job_id)}"
