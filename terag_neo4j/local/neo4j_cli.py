"""`terag server start|stop|status|logs`: the local Neo4j + GDS (no Docker)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from terag_neo4j.config import Settings
from terag_neo4j.local import neo4j as local


def _settings(args: argparse.Namespace) -> Settings:
    settings = getattr(args, "settings", None)
    return settings if isinstance(settings, Settings) else Settings()


def _print(args: argparse.Namespace, data: dict[str, Any], text: str) -> None:
    if getattr(args, "json", False):
        print(json.dumps(data, default=str, indent=2))
    else:
        print(text)


def _password_shown(args: argparse.Namespace, password: str | None, home: Any) -> str:
    if password is None:
        return "(not generated yet)"
    if getattr(args, "show_password", False):
        return password
    return (
        f"(hidden: --show-password prints it; also in {home}/password unless NEO4J_PASSWORD is set)"
    )


def _public(args: argparse.Namespace, data: dict[str, Any]) -> dict[str, Any]:
    """--json output: the password only with --show-password."""
    if not getattr(args, "show_password", False):
        data = {k: v for k, v in data.items() if k != "password"}
    return data


def cmd_start(args: argparse.Namespace) -> int:
    settings = _settings(args)
    try:
        info = local.start(settings, timeout_s=args.timeout)
    except local.ServerError as e:
        print(f"terag server start: {e}", file=sys.stderr)
        return 1
    verb = "started" if info.started else "already running"
    _print(
        args,
        _public(args, asdict(info)),
        f"Neo4j {info.neo4j_version} + GDS {info.gds_version} {verb} (pid {info.pid}, "
        f"{info.startup_s:.1f}s)\n  uri:      {info.uri}\n  user:     {info.user}\n"
        f"  password: {_password_shown(args, info.password, info.home)}\n"
        f"  browser:  {info.http_url}\n  home:     {info.home}",
    )
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    stopped = local.stop(_settings(args))
    _print(args, {"stopped": stopped}, "Neo4j stopped" if stopped else "Neo4j was not running")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    st = local.status(_settings(args))
    state = "running" if st.running else "stopped"
    bolt = "answers" if st.bolt_ok else "does not answer"
    _print(
        args,
        _public(args, asdict(st)),
        f"Neo4j {st.neo4j_version} + GDS {st.gds_version}: {state}"
        + (f" (pid {st.pid})" if st.pid else "")
        + f"\n  uri:      {st.uri} (Bolt {bolt})\n  user:     {st.user}\n"
        f"  password: {_password_shown(args, st.password, st.home)}\n  browser:  {st.http_url}\n"
        f"  home:     {st.home} ({'provisioned' if st.provisioned else 'not provisioned'})",
    )
    # Exit status 3 like an LSB init script's `status` for "not running".
    return 0 if st.running and st.bolt_ok else 3


def cmd_logs(args: argparse.Namespace) -> int:
    print(local.logs(_settings(args), lines=args.lines), end="")
    return 0


def register_cli(subparsers: Any) -> None:
    """Add `server start|stop|status|logs` to the `terag` argparse subparsers."""
    server = subparsers.add_parser("server", help="local Neo4j + GDS server (no Docker needed)")
    sub = server.add_subparsers(dest="server_command", metavar="ACTION", required=True)

    s = sub.add_parser("start", help="download once, start in the background, wait for Bolt")
    s.add_argument("--timeout", type=float, default=local.START_TIMEOUT_S, help="seconds to wait")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--show-password", action="store_true", help="print the password of neo4j")
    s.set_defaults(func=cmd_start)

    s = sub.add_parser("stop", help="stop it (SIGTERM, then SIGKILL after 60s)")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=cmd_stop)

    s = sub.add_parser("status", help="URI, user, pid, versions, whether Bolt answers")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--show-password", action="store_true", help="print the password of neo4j")
    s.set_defaults(func=cmd_status)

    s = sub.add_parser("logs", help="last lines of the server log")
    s.add_argument("-n", "--lines", type=int, default=50)
    s.set_defaults(func=cmd_logs)
