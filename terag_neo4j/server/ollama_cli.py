"""`terag ollama start|stop|status`: a background Ollama server that outlives the CLI."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from terag_neo4j.config import Settings
from terag_neo4j.server import ollama as srv


def register_cli(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "ollama", help="Build, start and stop the local Ollama server with the project's model"
    )
    actions = parser.add_subparsers(dest="ollama_action", required=True)
    start = actions.add_parser(
        "start", help="Start `ollama serve` in the background, create the model"
    )
    start.add_argument(
        "--host", default=None, help="host:port to serve on (default: OLLAMA_HOST from settings)"
    )
    start.set_defaults(func=cmd_start)
    stop = actions.add_parser("stop", help="Stop the server started by `terag ollama start`")
    stop.set_defaults(func=cmd_stop)
    status = actions.add_parser("status", help="Show whether the server runs and has the model")
    status.set_defaults(func=cmd_status)


def cmd_start(args: argparse.Namespace, settings: Settings | None = None) -> int:
    settings = settings or Settings()
    host = srv.normalize_host(args.host or settings.ollama_host)
    running = srv.running_server(settings)
    if running is not None:
        print(f"Ollama already running at {running.host} (pid {running.pid})")
        srv.ensure_model(settings, running.host)
        return 0
    if srv.is_reachable(host):
        print(f"An Ollama server not started by terag answers at {host}; using it")
        srv.ensure_model(settings, host)
        return 0
    server = srv.start(settings, host)
    srv.write_pid_file(settings, server)
    created = srv.ensure_model(settings, server.host)
    what = "created" if created else "present"
    print(f"Ollama {srv.OLLAMA_VERSION} at {server.host} (pid {server.pid})")
    print(f"model {settings.llm_model}: {what}")
    print(f"log: {server.log_path}")
    return 0


def cmd_stop(args: argparse.Namespace, settings: Settings | None = None) -> int:
    settings = settings or Settings()
    running = srv.running_server(settings)
    if running is None:
        print("No Ollama server started by terag is running")
        return 0
    srv.stop(running)
    srv.pid_file(settings).unlink(missing_ok=True)
    print(f"Stopped Ollama at {running.host} (pid {running.pid})")
    return 0


def cmd_status(args: argparse.Namespace, settings: Settings | None = None) -> int:
    settings = settings or Settings()
    running = srv.running_server(settings)
    host = running.host if running else srv.normalize_host(settings.ollama_host)
    binary = srv.binary_path(settings)
    print(f"binary: {binary} ({'built' if binary.is_file() else 'not built'})")
    if running:
        print(f"managed server: pid {running.pid} at {running.host}, log {running.log_path}")
    if not srv.is_reachable(host):
        print(f"server: nothing answers at {host}")
        return 1
    has = srv.has_model(host, settings.llm_model)
    print(f"server: {host} answers; model {settings.llm_model}: {'present' if has else 'missing'}")
    return 0 if has else 1


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry: `python -m terag_neo4j.server.ollama_cli start|stop|status`."""
    parser = argparse.ArgumentParser(prog="terag")
    register_cli(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["ollama", *(sys.argv[1:] if argv is None else argv)])
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
