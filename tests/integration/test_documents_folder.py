"""A folder of fifty mixed documents (PDF, .docx, HTML, Markdown, text), five of them broken,
indexed by `terag index` into the real Neo4j: the forty-five good ones are all there, each bad one
is one line, and the exit code says the run was partial."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from terag_neo4j import cli
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from tests.fixtures.document_files import broken_and_good_folder

from .conftest import connection_env

pytestmark = pytest.mark.integration


def test_45_good_files_indexed_5_bad_reported_exit_partial(
    base_settings: Settings,
    namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "mixed"
    bad = broken_and_good_folder(folder)
    for var, value in connection_env(base_settings).items():
        monkeypatch.setenv(var, value)
    argv = ["index", str(folder), "-n", namespace, "-e", "spacy", "-q", "--json"]
    assert cli.main(argv) == cli.EXIT_BAD_FILES
    out = json.loads(capsys.readouterr().out)
    skipped = out["skipped"]
    assert sorted(Path(line.split(":", 1)[0]).name for line in skipped) == bad
    assert all("\n" not in line for line in skipped)
    good = sorted(str(p) for p in folder.rglob("*") if p.is_file() and p.name not in bad)
    assert len(good) == 45
    with TeragClient(base_settings, namespace=namespace) as terag, terag.store.session() as s:
        rows = s.run(
            "MATCH (p:Passage {namespace: $ns}) RETURN p.doc_id AS doc, collect(p.text) AS texts",
            ns=namespace,
        ).data()
    indexed = {r["doc"]: " ".join(r["texts"]) for r in rows}
    assert sorted(indexed) == good
    for doc, text in indexed.items():
        n = Path(doc).stem.removeprefix("doc")
        assert f"river number {n}" in text, doc  # each file's own text, whatever its format
    # The PDF's second page is indexed too, and the HTML boilerplate is not.
    assert "Page two of document 0" in indexed[str(folder / "part0" / "doc0.pdf")]
    assert "Products catalogue" not in indexed[str(folder / "part2" / "doc2.html")]
