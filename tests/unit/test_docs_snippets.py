"""The code in the README and the docs works as written.

Every fenced block of README.md and docs/*.md is found here. Python blocks are run: those
marked `<!-- snippet: offline -->` (the line before the fence) need no service and run in this
unit test; the others need Neo4j (unmarked) or also Ollama (`<!-- snippet: ollama -->`) and run
in tests/integration/test_docs_snippets.py. Shell blocks are not run: every `terag ...` line of
them is parsed by the CLI's own argparse parser, which proves the command and its flags exist and
take those values (choices, types), not that the command succeeds.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"<!--\s*snippet:\s*(offline|ollama|skip)\b(.*?)-->")
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
KINDS = {"offline", "neo4j", "ollama", "skip"}


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    kind: str  # offline, neo4j, ollama or skip (Python blocks); "" for other languages
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The page's fenced blocks in order, each with the kind its marker line gives it."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        body = [
            line[len(indent) :] if line.startswith(indent) else line for line in lines[i + 1 : end]
        ]
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.search(before)
        kind = ""
        if lang == "python":
            kind = marker.group(1) if marker else "neo4j"
            if kind == "skip":
                assert marker is not None and marker.group(2).strip(), (
                    f"{page.name}:{i + 1}: a skipped snippet says why"
                )
        out.append(Block(page, i + 1, lang, kind, "\n".join(body) + "\n"))
        i = end + 1
    return out


def all_blocks() -> list[Block]:
    return [b for page in PAGES for b in blocks(page)]


def python_blocks(kind: str) -> list[Block]:
    return [b for b in all_blocks() if b.lang == "python" and b.kind == kind]


def run_block(block: Block, scope: dict[str, object]) -> str:
    """Execute one block in `scope` (shared by a page's blocks, in order); its stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block.code, block.where, "exec"), scope)
    return out.getvalue()


# ------------------------------------------------------------------------------ shell lines


def shell_commands(block: Block) -> list[list[str]]:
    """The `terag` command lines of a shell block, as argument lists (env assignments and the
    path to the executable dropped; backslash continuations joined; comments removed)."""
    text = block.code.replace("\\\n", " ")
    commands = []
    for line in text.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError as e:  # an unbalanced quote: the line is broken as written
            raise AssertionError(f"{block.where}: {line!r}: {e}") from None
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            words = words[1:]
        if words and Path(words[0]).name == "terag":
            commands.append(words[1:])
    return commands


def terag_parser() -> argparse.ArgumentParser:
    from terag_neo4j.cli import build_parser

    return build_parser()


def test_pages_have_snippets_of_known_kinds() -> None:
    found = all_blocks()
    python = [b for b in found if b.lang == "python"]
    assert len(python) >= 10, "the README and docs lost their Python examples"
    assert all(b.kind in KINDS for b in python)
    readme = [b for b in python if b.page.name == "README.md"]
    assert len(readme) >= 2, "the README shows the Python API and the LangChain retriever"


def test_every_terag_command_in_the_docs_parses() -> None:
    parser = terag_parser()
    checked = 0
    for block in all_blocks():
        if block.lang not in ("bash", "sh", "shell", "console"):
            continue
        for argv in shell_commands(block):
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err):
                    parser.parse_args(argv)
            except SystemExit:
                raise AssertionError(
                    f"{block.where}: `terag {shlex.join(argv)}` does not parse: "
                    f"{err.getvalue().strip().splitlines()[-1:]}"
                ) from None
            checked += 1
    assert checked >= 30, f"only {checked} terag command lines found in the docs"


INLINE = re.compile(r"`((?:[A-Z_]+=\\S+ )*(?:\\S*/)?terag [^`]+)`")


def inline_commands(page: Path) -> list[list[str]]:
    """The `terag ...` code spans of a page's prose that are invocations: three words or more,
    without the `|`, `...` or `retrieve/ask` of a synopsis."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    out = []
    for m in INLINE.finditer(text.replace("\n", " ")):
        words = shlex.split(m.group(1))
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            words = words[1:]
        synopsis = "/" in words[1] or any(c in w for w in words for c in ("|", "…", "..."))
        if len(words) >= 3 and not synopsis:
            out.append(words[1:])
    return out


def test_every_terag_command_in_the_prose_parses() -> None:
    """The commands the prose gives (the benchmarks' reproducing commands among them)."""
    parser = terag_parser()
    checked = 0
    for page in PAGES:
        for argv in inline_commands(page):
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err):
                    parser.parse_args(argv)
            except SystemExit:
                raise AssertionError(
                    f"{page.name}: `terag {shlex.join(argv)}` does not parse: "
                    f"{err.getvalue().strip().splitlines()[-1:]}"
                ) from None
            checked += 1
    assert checked >= 20, f"only {checked} inline terag commands found"


def test_the_two_commands_of_the_readme_are_kept() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make demo" in readme and "make test" in readme
    assert len(readme.splitlines()) <= 250, "the README is a one-screen guide: 250 lines at most"


def test_a_wrong_flag_does_not_parse() -> None:
    """The parse check above can fail: a flag the CLI does not have is refused."""
    block = Block(ROOT / "README.md", 1, "bash", "", "terag retrieve 'q' --no-such-flag\n")
    [argv] = shell_commands(block)
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        terag_parser().parse_args(argv)


@pytest.mark.parametrize("block", python_blocks("offline"), ids=lambda b: b.where)
def test_offline_python_snippet_runs(block: Block) -> None:
    scope: dict[str, object] = {"__name__": "__docs__"}
    run_block(block, scope)


def test_json_snippets_are_json() -> None:
    import json

    found = [b for b in all_blocks() if b.lang == "json"]
    assert found, "the MCP configuration examples are JSON blocks"
    for block in found:
        try:
            json.loads(block.code)
        except json.JSONDecodeError as e:
            raise AssertionError(f"{block.where}: not JSON: {e}") from None
