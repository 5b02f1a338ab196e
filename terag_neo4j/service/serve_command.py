"""`terag serve` (HTTP + MCP at /mcp) and `terag mcp` (MCP over stdio).

Both check their settings before anything heavy is imported or started, then start the managed
local Neo4j when no NEO4J_URI is configured (as `terag server start` does), so one command gives
a working service.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

log = logging.getLogger(__name__)


def register_cli(sub: Any) -> None:
    s = sub.add_parser("serve", help=SERVE_HELP)
    s.add_argument("--host", help="address to bind (default 127.0.0.1, or TERAG_SERVE_HOST)")
    s.add_argument("--port", type=int, help="port (default 8000, or TERAG_SERVE_PORT)")
    s.set_defaults(func=cmd_serve)
    s = sub.add_parser("mcp", help=MCP_HELP)
    s.set_defaults(func=cmd_mcp)


SERVE_HELP = "run the HTTP API and MCP (/mcp) service over every namespace"
MCP_HELP = "serve the MCP tools over stdio (for an agent that starts terag itself)"


def _require_extra() -> None:
    import importlib.util

    from terag_neo4j.errors import DependencyError

    missing = [m for m in ("fastapi", "uvicorn", "mcp") if importlib.util.find_spec(m) is None]
    if missing:
        raise DependencyError(
            f"the service needs {', '.join(missing)}: pip install 'terag-neo4j[service]'"
        )


def _service_settings(args: argparse.Namespace) -> Any:
    _require_extra()
    from terag_neo4j.service.settings import ServiceSettings, check_exposure

    over = {k: getattr(args, k, None) for k in ("host", "port")}
    service = ServiceSettings(**{k: v for k, v in over.items() if v is not None})
    check_exposure(service, service.keyring())  # a refused bind fails before Neo4j starts
    return service


def _neo4j(settings: Any) -> None:
    if settings.neo4j_uri is None:
        from terag_neo4j.local.neo4j_process import start

        info = start(settings)
        log.info("Neo4j at %s", info.uri)


def cmd_serve(args: argparse.Namespace) -> int:
    service = _service_settings(args)
    from terag_neo4j.service.observability import configure_logging

    configure_logging(service.log_format)  # before Neo4j starts: every line in one format
    from terag_neo4j.config import Settings

    settings = Settings()
    _neo4j(settings)
    from terag_neo4j.service.app import serve

    serve(service, settings)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    import os

    _require_extra()
    import anyio

    from terag_neo4j.config import Settings
    from terag_neo4j.service.jobs import JobRegistry
    from terag_neo4j.service.mcp_tools import build_mcp
    from terag_neo4j.service.runtime import Runtime
    from terag_neo4j.service.settings import OPEN, ServiceConfigError, ServiceSettings

    service = ServiceSettings()
    keys = service.keyring()
    principal = OPEN
    key = os.environ.get("TERAG_MCP_KEY")
    if key:
        found = keys.lookup(key)
        if found is None:
            raise ServiceConfigError("TERAG_MCP_KEY is not one of TERAG_API_KEYS")
        principal = found
    settings = Settings()
    _neo4j(settings)  # logs go to stderr: stdout carries the protocol
    runtime = Runtime(service, settings)
    jobs = JobRegistry(runtime, service)
    server = build_mcp(runtime, jobs, keys, stdio_principal=principal)
    runtime.start()
    jobs.start()
    try:
        anyio.run(server.run_stdio_async)
    finally:
        jobs.close()
        runtime.close()
    return 0
