"""The bench's commands reach `terag` through the entry-point group `terag_neo4j.commands` when
terag-bench is installed (as `make` installs it), are absent from `terag` without it, and are
`terag-bench`'s commands under short names."""

from __future__ import annotations

import argparse
from importlib import metadata
from typing import Any

import pytest
from terag_bench import subcommands

from terag_neo4j import cli
from terag_neo4j.cli.parser import COMMANDS_GROUP, plugin_commands


def _choices(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    sub = next(a for a in parser._subparsers._group_actions)  # type: ignore[union-attr]
    return {c.dest: c.help for c in sub._choices_actions}


def test_the_help_lines_match_what_the_bench_registers() -> None:
    real = _choices(cli.build_parser())
    assert {name: real.get(name) for name in subcommands.COMMANDS} == subcommands.COMMANDS
    assert set(plugin_commands()) == set(subcommands.COMMANDS)
    assert metadata.entry_points(group=COMMANDS_GROUP)["bench"].value == subcommands.__name__


def test_terag_has_no_bench_commands_without_the_bench(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def none(**kwargs: Any) -> list[metadata.EntryPoint]:
        return []

    monkeypatch.setattr(metadata, "entry_points", none)
    assert not any(name.startswith("bench") for name in _choices(cli.build_parser()))
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--help"])
    assert e.value.code == 2 and "invalid choice: 'bench'" in capsys.readouterr().err


def test_terag_bench_names_the_commands_without_the_prefix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as e:
        subcommands.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: terag-bench")
    for name in ("run", "latency", "index", "load", "scale", "serve", "chunking"):
        assert f"\n    {name} " in out
    assert "bench-latency" not in out
    with pytest.raises(SystemExit) as e:
        subcommands.main(["latency", "--help"])
    assert e.value.code == 0 and "usage: terag-bench latency" in capsys.readouterr().out


def test_an_add_on_that_fails_to_import_is_skipped_not_fatal(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Error handling only: an entry point whose module is gone (a stale install) stands in for
    # a broken add-on. `terag server start` must still work, and the log says what was skipped.
    gone = metadata.EntryPoint("bench", "terag_bench_not_installed", COMMANDS_GROUP)

    def broken(**kwargs: Any) -> list[metadata.EntryPoint]:
        return [gone]

    monkeypatch.setattr(metadata, "entry_points", broken)
    with caplog.at_level("DEBUG"):
        assert plugin_commands() == {}
        names = _choices(cli.build_parser())
    assert "server" in names and not any(n.startswith("bench") for n in names)
    assert "terag_bench_not_installed" in caplog.text
