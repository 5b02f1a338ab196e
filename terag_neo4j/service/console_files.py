"""The console's files, served from the package with a Content-Security-Policy that lets the
page load nothing but its own files and call nothing but this service."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from fastapi import Response

from terag_neo4j.service.http_errors import ServiceError

PACKAGE = "terag_neo4j.service"
FOLDER = "console"
CONSOLE_PREFIX = "/console/"
# Everything from this origin only, no inline script or style, no plugins, not framed, no
# forms posted anywhere: a page that holds a key in session storage runs nothing it did not ship
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
}


@cache
def shipped() -> dict[str, bytes]:
    """The console's files by their path under /console/, read once from the package: a request
    can name only one of these, never a path on disk."""
    out: dict[str, bytes] = {}

    def walk(node: Any, prefix: str) -> None:
        for child in node.iterdir():
            name = prefix + child.name
            if child.is_dir():
                walk(child, name + "/")
            elif "." + child.name.rpartition(".")[2] in TYPES:
                out[name] = child.read_bytes()

    walk(resources.files(PACKAGE).joinpath(FOLDER), "")
    return out


def file_response(name: str) -> Response:
    body = shipped().get(name)
    if body is None:
        raise ServiceError(404, f"no console file {name!r}")
    return Response(
        body,
        media_type=TYPES["." + name.rpartition(".")[2]],
        headers={
            "Content-Security-Policy": CSP,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "X-Frame-Options": "DENY",
            # Revalidated on each load: a new version of the service serves its own page
            "Cache-Control": "no-cache",
        },
    )
