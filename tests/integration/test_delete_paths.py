"""`delete` takes the path `index` read a file from, as well as the document id (a relative
path such as `terag delete g/docs/c.md` must find it); a file's id is its absolute path, so a path
deletes the document read from that file and no other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from terag_neo4j import cli
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document

from .conftest import connection_env

pytestmark = pytest.mark.integration


def _doc_ids(client: TeragClient, namespace: str) -> list[str]:
    with client.store.session() as s:
        return sorted(
            s.run(
                "MATCH (p:Passage {namespace: $ns}) RETURN DISTINCT p.doc_id AS d", ns=namespace
            ).value()
        )


def test_delete_resolves_a_path_the_way_index_does(
    base_settings: Settings,
    namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    docs = tmp_path / "g" / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "c.md").write_text("# Cologne\nCologne is on the Rhine.", encoding="utf-8")
    (docs / "e.md").write_text("# Essen\nEssen is in the Ruhr.", encoding="utf-8")
    (docs / "sub" / "d.md").write_text("# Dresden\nDresden is on the Elbe.", encoding="utf-8")
    for var, value in connection_env(base_settings).items():
        monkeypatch.setenv(var, value)
    monkeypatch.chdir(tmp_path)

    assert cli.main(["index", "g/docs", "-n", namespace, "-e", "spacy", "-q"]) == cli.EXIT_OK
    capsys.readouterr()
    c, d, e = str(docs / "c.md"), str(docs / "sub" / "d.md"), str(docs / "e.md")
    with TeragClient(base_settings, namespace=namespace) as terag:
        assert _doc_ids(terag, namespace) == sorted([c, d, e])

    # The CLI, with the path as it was typed for `index`
    assert cli.main(["delete", "g/docs/c.md", "-n", namespace, "--json"]) == cli.EXIT_OK
    out = json.loads(capsys.readouterr().out)
    assert out["deleted_passages"] == 1 and out["documents"] == [c]

    with TeragClient(base_settings, namespace=namespace) as terag:
        # a file below the folder that was indexed, by its absolute path
        assert terag.delete(str((docs / "sub" / "d.md").resolve())) == 1
        # a file that is gone from the disk (its path still says which document it was)
        (docs / "e.md").unlink()
        assert terag.delete(Path("g") / "docs" / "e.md") == 1
        assert _doc_ids(terag, namespace) == []
        # ids still work, and win over a path that happens to resolve to another id
        terag.index([Document(id="g/docs/c.md", text="Xanten is on the Rhine.")], progress=False)
        terag.index([docs / "c.md"], progress=False)  # stored under its absolute path
        assert terag.delete("g/docs/c.md") == 1  # the id, not the file at that path
        assert _doc_ids(terag, namespace) == [c]
        assert terag.delete("docs/c.md") == 0  # another path that ends the same: not this file
        assert terag.delete(c) == 1
        assert terag.delete("g/docs/nothing.md") == 0
    assert cli.main(["delete", "g/docs/nothing.md", "-n", namespace]) == cli.EXIT_NOT_FOUND
