"""`terag --help` and argument errors answer without importing the heavy modules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from terag_neo4j import cli

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("neo4j", "torch", "ollama", "fastapi", "mcp", "terag_bench.bench")


def test_named_optional_commands_match_what_their_modules_register() -> None:
    p = cli.build_parser()  # every module imported and registered
    sub = next(a for a in p._subparsers._group_actions)  # type: ignore[union-attr]
    real = {c.dest: c.help for c in sub._choices_actions}
    named = {name: helptext for name, (_, helptext) in cli.OPTIONAL_COMMANDS.items()}
    assert {k: real.get(k) for k in named} == named


def test_help_lists_every_command_without_importing_heavy_modules() -> None:
    code = (
        "import sys\n"
        "from terag_neo4j import cli\n"
        "try:\n"
        "    cli.main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    assert out.strip().endswith("[]"), out
    for name in ("index", "retrieve", "server", "bench-load", "serve", "mcp"):
        assert f"\n    {name}" in out


def test_argument_error_is_fast_and_exits_2() -> None:
    # Fast because nothing heavy is imported before the error (which modules were loaded,
    # not a wall time, so a loaded machine cannot fail it)
    code = (
        "import sys\n"
        "from terag_neo4j import cli\n"
        "try:\n"
        "    cli.main(['retrieve'])\n"
        "except SystemExit as e:\n"
        f"    print(e.code, [m for m in {HEAVY!r} if m in sys.modules])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert proc.stdout.strip() == "2 []", proc.stdout
    assert "the following arguments are required: question" in proc.stderr


@pytest.mark.parametrize("argv", [["server", "--help"], ["serve", "--help"], ["bench", "--help"]])
def test_a_named_command_gets_its_real_parser(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 0
    assert "usage: terag " + argv[0] in capsys.readouterr().out


def test_serve_refuses_a_public_bind_without_keys_before_starting_anything() -> None:
    env = {k: v for k, v in os.environ.items() if k != "TERAG_API_KEYS"}
    env["NEO4J_URI"] = "bolt://127.0.0.1:1"  # nothing may be started or reached
    proc = subprocess.run(
        [sys.executable, "-m", "terag_neo4j.cli", "serve", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "refusing to bind 0.0.0.0 without API keys" in lines[0]
