"""The FastAPI application: routes under /v1, MCP at /mcp, one runtime per process."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI
from starlette.routing import Route

from terag_neo4j.service import (
    http_errors,
    routes_archives,
    routes_console,
    routes_documents,
    routes_graph,
    routes_health,
    routes_jobs,
    routes_namespaces,
    routes_query,
)
from terag_neo4j.service.archives import ExportSlots
from terag_neo4j.service.bodies import BodyGate
from terag_neo4j.service.connections import (
    BACKLOG,
    SPARE_FDS,
    guarded_protocol,
    raise_file_limit,
)
from terag_neo4j.service.jobs import JobRegistry
from terag_neo4j.service.metrics import Metrics
from terag_neo4j.service.middleware import FrontDoor, RequireKey
from terag_neo4j.service.observability import ObservedFastAPI, configure_logging
from terag_neo4j.service.parsing import ParsePool
from terag_neo4j.service.runtime import Runtime
from terag_neo4j.service.settings import ServiceSettings, check_exposure

if TYPE_CHECKING:
    from terag_neo4j.client import TeragClient
    from terag_neo4j.config import Settings

log = logging.getLogger(__name__)

DESCRIPTION = """\
TERAG on Neo4j as a service: index documents into namespaces and retrieve passages by
personalised PageRank over their concept graph. Send an API key as `Authorization: Bearer KEY`
or `X-API-Key: KEY` when the service has keys (TERAG_API_KEYS); a key reaches only its
namespaces. Errors are `{"error": {"type", "message"}}`. MCP (streamable HTTP) is at `/mcp`.
"""


def create_app(
    service: ServiceSettings | None = None,
    settings: Settings | None = None,
    client: TeragClient | None = None,
) -> FastAPI:
    """The service app. `client` hands in a ready `TeragClient` (tests, embedding); otherwise
    one is built from `settings` (default: the environment) when the app starts."""
    service = service or ServiceSettings()
    keys = service.keyring()
    check_exposure(service, keys)
    # With several keys each gets a share of the workers, so one cannot starve the others
    runtime = Runtime(service, settings, client, shared=len(keys) > 1)
    jobs = JobRegistry(runtime, service)
    # Uploaded files are read in worker processes, off the event loop (see parsing.py)
    parsing = ParsePool(
        service.parse_workers,
        service.parse_timeout_s,
        service.queue_timeout_s,
        shared=len(keys) > 1,
    )
    # Large JSON bodies are read and decoded under their own bounds (see bodies.py)
    bodies = BodyGate(
        service.queue_timeout_s, shared=len(keys) > 1, timeout_s=service.parse_timeout_s
    )

    from terag_neo4j.service.mcp_tools import build_mcp

    mcp = build_mcp(runtime, jobs, keys)
    # Each call answered as its own SSE stream, which carries the call's progress notifications
    # (the streamed ask); a single JSON answer would drop them
    mcp_http = mcp.streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=False, host=service.host
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        runtime.start()
        jobs.start()
        parsing.start()
        bodies.start()
        try:
            async with mcp.session_manager.run():
                yield
        finally:
            bodies.close()
            parsing.close()
            jobs.close()
            runtime.close()

    app = ObservedFastAPI(
        title="terag-neo4j",
        description=DESCRIPTION,
        version="1",
        lifespan=lifespan,
        docs_url="/docs" if service.api_docs else None,
        redoc_url="/redoc" if service.api_docs else None,
    )
    app.state.keys = keys
    app.state.runtime = runtime
    app.state.jobs = jobs
    app.state.parsing = parsing
    app.state.bodies = bodies
    app.state.exports = ExportSlots(shared=len(keys) > 1)
    app.state.service = service
    app.state.metrics = Metrics(app.state) if service.metrics else None
    http_errors.install(app)
    for r in (
        routes_health.router,
        routes_namespaces.router,
        routes_archives.router,
        routes_documents.router,
        routes_jobs.router,
        routes_query.router,
        routes_graph.router,
        routes_console.api,
        routes_console.router,
    ):
        app.include_router(r)
    # The SDK's handler, behind our key check, as a route of this app (a Mount would redirect
    # /mcp to /mcp/, which MCP clients do not follow for POST)
    handler = next(r for r in mcp_http.routes if isinstance(r, Route) and r.path == "/mcp")
    app.router.routes.append(
        Route("/mcp", RequireKey(handler.endpoint, keys), methods=["GET", "POST", "DELETE"])
    )
    if app.state.metrics is not None:
        app.router.routes.append(
            Route("/metrics", app.state.metrics.endpoint, include_in_schema=False)
        )
    # Host, Origin, key, scope, rate and body size, before any body is read (inside CORS, so
    # a browser allowed by TERAG_CORS_ORIGINS can read the refusals)
    app.add_middleware(FrontDoor, service=service, keys=keys)
    if service.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=service.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "X-API-Key", "Content-Type"],
        )
    return app


# On SIGTERM, requests in flight get this long to finish; past it they are cancelled. Without a
# bound, one request waiting on a Neo4j that stopped answering held the exit for the driver's
# read timeout (133 s), past an orchestrator's usual 30 s before SIGKILL.
SHUTDOWN_GRACE_S = 10
EXIT_WAIT_S = 5.0  # then for the interpreter's own exit (its worker threads joined)


def server_options(service: ServiceSettings) -> dict[str, Any]:
    """uvicorn's settings for the service: its guarded HTTP/1.1 protocol (`connections`), no
    WebSocket protocol, the file limit raised, and the shutdown grace."""
    files = raise_file_limit()
    protocol = guarded_protocol(service.max_connections_per_client, max(64, files - SPARE_FDS))
    return {
        "host": service.host,
        "port": service.port,
        "log_level": "info",
        "log_config": None,  # uvicorn's lines go to the root handlers, in the one format
        "proxy_headers": False,
        "timeout_graceful_shutdown": SHUTDOWN_GRACE_S,
        "http": protocol,
        # No WebSocket route: an upgrade is answered as the plain request it is, and the
        # connection stays this protocol's, whose end gives its slot back
        "ws": "none",
        "backlog": BACKLOG,
    }


def serve(service: ServiceSettings, settings: Settings | None = None, **uvicorn_kw: Any) -> None:
    """Run the service with uvicorn until interrupted."""
    import uvicorn

    configure_logging(service.log_format)
    app = create_app(service, settings)
    code = 0
    try:
        uvicorn.run(app, **{**server_options(service), **uvicorn_kw})
    except KeyboardInterrupt:  # a SIGINT uvicorn did not take (at start); SIGTERM ends in uvicorn
        code = 130
        raise
    finally:
        _exit_within(EXIT_WAIT_S, code)


def _exit_within(seconds: float, code: int) -> None:
    """End the process `seconds` from now if its normal exit has not: the interpreter joins
    every worker thread first, and one blocked in a call to a Neo4j that stopped answering
    would hold it for the driver's read timeout. Nothing is lost by not waiting: an unfinished
    transaction rolls back when its connection drops, and an unfinished ingest job resumes
    under its lease."""

    def leave() -> None:
        time.sleep(seconds)
        log.warning("stopping without the calls still waiting on Neo4j")
        logging.shutdown()
        os._exit(code)

    threading.Thread(target=leave, name="terag-exit", daemon=True).start()
