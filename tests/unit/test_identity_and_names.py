"""Document ids that do not depend on how a path was typed (a file's id is its absolute path), and
GDS graph names matched exactly (pure functions: no services needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from terag_neo4j.indexing.loading import load_documents
from terag_neo4j.store import check_namespace
from terag_neo4j.store.gds import projection_name_re


def _tree(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("# A\nAlpha.", encoding="utf-8")
    (docs / "sub" / "b.txt").write_text("Beta.", encoding="utf-8")
    return docs


def test_ids_are_the_same_however_the_folder_is_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _tree(tmp_path)
    expected = [str(docs / "a.md"), str(docs / "sub" / "b.txt")]
    assert [d.id for d in load_documents([docs.resolve()])] == expected
    monkeypatch.chdir(tmp_path)
    assert [d.id for d in load_documents(["docs"])] == expected
    assert [d.id for d in load_documents(["./docs/"])] == expected
    monkeypatch.chdir(docs / "sub")
    assert [d.id for d in load_documents([".."])] == expected
    assert [d.id for d in load_documents(["../../docs"])] == expected


def test_a_file_named_alone_gets_the_id_it_has_in_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _tree(tmp_path)
    assert [d.id for d in load_documents([docs / "a.md"])] == [str(docs / "a.md")]
    monkeypatch.chdir(docs)
    assert [d.id for d in load_documents(["a.md"])] == [str(docs / "a.md")]
    # the source is the file it was read from, wherever the command ran
    assert [d.source for d in load_documents(["a.md"])] == [str(docs / "a.md")]


@pytest.mark.parametrize(
    ("graph", "mine"),
    [
        ("terag_wiki_dctn_v3", True),
        ("terag_wiki_utn_v12_0a1b2c3d", True),
        ("terag_wiki_en_dctn_v3", False),
        ("terag_wiki_en_u_v3_0a1b2c3d", False),
        ("terag_wiki-x_dctn_v1", False),
        ("terag_wiki_dctn_v3_dctn_v4", False),
        ("terag_wiki_dctn_v3\n", False),
        ("terag_wiki_dtn_dtn_v3_0a1b2c3d", False),  # namespace wiki_dtn
        ("terag_wiki_xtn_v3", False),  # no such walk
        ("xterag_wiki_dctn_v3", False),
    ],
)
def test_projection_names_of_a_namespace_match_exactly(graph: str, mine: bool) -> None:
    assert bool(projection_name_re("wiki").fullmatch(graph)) is mine


@pytest.mark.parametrize("bad", ["wiki\n", "wiki\r\n", "", "-wiki", "wiki ns", "a" * 65, "wiki$"])
def test_invalid_namespaces_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid namespace"):
        check_namespace(bad)


def test_valid_namespaces_pass() -> None:
    for good in ("wiki", "wiki_en", "W-1", "a" * 64):
        assert check_namespace(good) == good
