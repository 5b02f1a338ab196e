"""Folders: recursive walking with include / exclude globs, hidden and unsupported files
skipped, symbolic link loops survived, and a folder with bad files indexes every good one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from terag_neo4j import cli
from terag_neo4j.core.documents import InputNotFound
from terag_neo4j.indexing.loading import iter_sources, load_documents
from terag_neo4j.indexing.readers.discovery import matches
from tests.fixtures.document_files import broken_and_good_folder, write_pdf


def rel(root: Path, paths: list[Path]) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


def files(root: Path, include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()) -> list[str]:
    return rel(root, [p for p, _ in iter_sources([root], include, exclude)])


@pytest.mark.parametrize(
    ("path", "pattern", "hit"),
    [
        ("a/b/report.pdf", "*.pdf", True),
        ("report.pdf", "*.pdf", True),
        ("a/report.PDF", "*.pdf", False),
        ("drafts/x.md", "drafts/**", True),
        ("drafts/deep/x.md", "drafts/**", True),
        ("notes/drafts/x.md", "drafts/**", False),
        ("notes/drafts/x.md", "**/drafts/**", True),
        ("drafts/x.md", "**/drafts/**", True),
        ("a/old/x.md", "*/old/*.md", True),
        ("a/b/old/x.md", "*/old/*.md", False),
        ("ch1.md", "ch[0-9].md", True),
        ("chx.md", "ch[!0-9].md", True),
        ("a.md", "?.md", True),
    ],
)
def test_glob_semantics(path: str, pattern: str, hit: bool) -> None:
    assert matches(path, [pattern]) is hit


def make_tree(root: Path) -> None:
    for name in ("a.md", "b.txt", "docs/c.md", "docs/drafts/d.md", ".hidden.md", ".git/e.md"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"# {name}\n\nText of {name}.", encoding="utf-8")
    (root / "docs" / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    write_pdf(root / "docs" / "f.pdf", ["A page of text."])


def test_folders_are_walked_in_a_stable_order_with_globs(tmp_path: Path) -> None:
    make_tree(tmp_path)
    every = ["a.md", "b.txt", "docs/c.md", "docs/drafts/d.md", "docs/f.pdf"]
    assert files(tmp_path) == every  # no hidden files or folders, no .png
    assert files(tmp_path, include=("*.pdf",)) == ["docs/f.pdf"]
    assert files(tmp_path, exclude=("docs/drafts/**",)) == [
        "a.md", "b.txt", "docs/c.md", "docs/f.pdf"
    ]  # fmt: skip
    assert files(tmp_path, include=("*.md",), exclude=("drafts",)) == ["a.md", "docs/c.md"]
    with pytest.raises(InputNotFound, match="no supported files matching --include"):
        files(tmp_path, include=("*.docx",))
    # A file named on its own is taken whatever the globs say.
    named = [p for p, _ in iter_sources([tmp_path / "b.txt"], ("*.pdf",), ("*.txt",))]
    assert named == [tmp_path / "b.txt"]


def test_symlink_loops_neither_hang_nor_lose_files(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    make_tree(tmp_path)
    os.symlink("..", tmp_path / "docs" / "up")  # a loop back to the root
    os.symlink(tmp_path / "docs", tmp_path / "docs" / "drafts" / "again")  # to an ancestor
    os.symlink("self.md", tmp_path / "self.md")  # a link to itself
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "linked.md").write_text("Linked text.", encoding="utf-8")
    os.symlink(outside, tmp_path / "linked")  # an ordinary link is followed
    got = files(tmp_path)
    assert got == [
        "a.md", "b.txt", "docs/c.md", "docs/drafts/d.md", "docs/f.pdf", "linked/linked.md",
        "self.md",
    ]  # fmt: skip
    assert caplog.text.count("a symbolic link loop") == 2
    errors: list[str] = []
    docs = list(load_documents([tmp_path], errors))
    assert len(docs) == 6
    assert len(errors) == 1 and "self.md: cannot read it" in errors[0]


def test_one_line_per_bad_file_and_every_good_file_read(tmp_path: Path) -> None:
    bad = broken_and_good_folder(tmp_path / "mixed")
    errors: list[str] = []
    docs = list(load_documents([tmp_path / "mixed"], errors))
    assert len(docs) == 45
    assert len({d.id for d in docs}) == 45
    assert sorted(Path(e.split(":", 1)[0]).name for e in errors) == bad
    assert all("\n" not in e for e in errors)
    pdf = next(d for d in docs if d.id.endswith("doc0.pdf"))
    assert len(pdf.pages) == 2


def test_cli_globs_fail_before_connecting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")  # never reached: input fails first
    monkeypatch.setenv("NEO4J_PASSWORD", "x")
    make_tree(tmp_path)
    argv = ["index", str(tmp_path), "--include", "*.docx", "--exclude", "drafts/**"]
    assert cli.main(argv) == cli.EXIT_NOT_FOUND
    assert "no supported files matching --include / --exclude" in capsys.readouterr().err
