"""A file's document id tells it apart from every other file: `a/docs/readme.md` and
`b/docs/readme.md` are two documents, re-indexing a folder however it is typed gives the same ids,
and `terag delete PATH` deletes only the document indexed from that path (the real Neo4j)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from terag_neo4j import cli
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.indexing.loading import load_documents, to_passages

from .conftest import connection_env

pytestmark = pytest.mark.integration


def _doc_ids(client: TeragClient, namespace: str) -> list[str]:
    with client.store.session() as s:
        return sorted(
            s.run(
                "MATCH (p:Passage {namespace: $ns}) RETURN DISTINCT p.doc_id AS d", ns=namespace
            ).value()
        )


def _tree(root: Path) -> tuple[Path, Path]:
    a, b = root / "a" / "docs", root / "b" / "docs"
    for folder, city in ((a, "Augsburg"), (b, "Bremen")):
        folder.mkdir(parents=True)
        (folder / "readme.md").write_text(f"# {city}\n{city} is a city.", encoding="utf-8")
    return a, b


@pytest.fixture
def cli_env(base_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var, value in connection_env(base_settings).items():
        monkeypatch.setenv(var, value)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_same_names_in_different_folders_are_different_documents(
    base_settings: Settings,
    namespace: str,
    cli_env: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    a, b = _tree(cli_env)
    a_id, b_id = (str(d / "readme.md") for d in (a, b))  # tmp_path is absolute
    assert cli.main(["index", "a/docs", "-n", namespace, "-q"]) == cli.EXIT_OK
    assert cli.main(["index", "b/docs", "-n", namespace, "-q"]) == cli.EXIT_OK
    with TeragClient(base_settings, namespace=namespace) as terag:
        assert _doc_ids(terag, namespace) == sorted([a_id, b_id])  # the second replaced nothing
        assert terag.stats().passages == 2

        # The same folder however it is typed, and a file of it named on its own: the same ids.
        os.chdir(cli_env / "a")
        assert terag.index(["docs"], progress=False).passages_new == 0
        assert terag.index([a.resolve()], progress=False).passages_new == 0
        assert terag.index([Path("docs/readme.md")], progress=False).passages_new == 0
        os.chdir(cli_env)
        assert _doc_ids(terag, namespace) == sorted([a_id, b_id])
    capsys.readouterr()

    # A path nothing was indexed from deletes nothing, however its last folders are named.
    elsewhere = cli_env / "elsewhere" / "docs" / "readme.md"
    assert cli.main(["delete", str(elsewhere), "-n", namespace]) == cli.EXIT_NOT_FOUND
    assert cli.main(["delete", "docs/readme.md", "-n", namespace]) == cli.EXIT_NOT_FOUND
    capsys.readouterr()
    # The path it was indexed from deletes that document only.
    assert cli.main(["delete", "a/docs/readme.md", "-n", namespace, "--json"]) == cli.EXIT_OK
    out = json.loads(capsys.readouterr().out)
    assert out == {"deleted_passages": 1, "documents": [a_id]}
    with TeragClient(base_settings, namespace=namespace) as terag:
        assert _doc_ids(terag, namespace) == [b_id]
        # by its id too, as `retrieve` shows it
        assert terag.delete(b_id) == 1
        assert _doc_ids(terag, namespace) == []


def test_a_document_carries_the_path_it_was_read_from(cli_env: Path) -> None:
    a, _ = _tree(cli_env)
    (a / "more.jsonl").write_text('{"id": "r1", "text": "Ulm is on the Danube."}\n', "utf-8")
    docs = {d.id: d for d in load_documents(["a/docs"])}
    readme = str(a / "readme.md")
    assert docs[readme].source == readme
    assert docs["r1"].source == f"{a / 'more.jsonl'}:1"
    passages = list(to_passages(docs.values(), 256, 32))
    assert {p.source for p in passages} == {readme, f"{a / 'more.jsonl'}:1"}
