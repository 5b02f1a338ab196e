"""A folder kept in sync: re-indexing after editing one file writes that file's passages only
(the report says which), and the graph (passages, concept frequencies, HAS_PASSAGE,
CO_OCCURRENCE) and the provenance equal a clean ingest of the edited folder; a file gone from
the folder is reported, and deleted with --prune, never a document from outside the folder."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from terag_neo4j import cli
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings

from .conftest import connection_env

pytestmark = pytest.mark.integration

SECTIONS = {
    "berlin.md": ["Berlin is the capital of Germany.", "The Spree flows through Berlin."],
    "hamburg.md": [
        "Hamburg is a port on the Elbe.",
        "Zanzibar Trading opened an office in Hamburg in 1890.",
        "The Alster is a lake in Hamburg.",
    ],
    "munich.md": ["Munich is the capital of Bavaria.", "The Isar flows through Munich."],
}


def write(folder: Path, sections: dict[str, list[str]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, paras in sections.items():
        title = name.removesuffix(".md").title()
        body = "\n\n".join(f"## Part {i}\n\n{p}" for i, p in enumerate(paras, 1))
        (folder / name).write_text(f"# {title}\n\n{body}\n", encoding="utf-8")


def provenance(client: TeragClient, namespace: str) -> dict[str, Any]:
    with client.store.session() as s:
        rows = s.run(
            "MATCH (p:Passage {namespace: $ns}) RETURN p.id AS id, [p.source, p.heading_path, "
            "p.char_start, p.char_end, p.page_start, p.page_end] AS prov",
            ns=namespace,
        )
        return {r["id"]: r["prov"] for r in rows}


def concept_names(client: TeragClient, namespace: str) -> set[str]:
    with client.store.session() as s:
        rows = s.run("MATCH (c:Concept {namespace: $ns}) RETURN toLower(c.name) AS n", ns=namespace)
        return {r["n"] for r in rows}


@pytest.fixture
def clean_namespace(base_settings: Settings) -> Iterator[str]:
    ns = f"clean-{uuid.uuid4().hex[:10]}"
    yield ns
    with TeragClient(base_settings, namespace=ns) as client:
        if client.store.namespaces.exists(ns):
            client.drop(ns)


def test_editing_one_file_rewrites_only_its_passages_and_matches_a_clean_ingest(
    base_settings: Settings, namespace: str, clean_namespace: str, tmp_path: Path
) -> None:
    folder = tmp_path / "cities"
    write(folder, SECTIONS)
    hamburg = (folder / "hamburg.md").as_posix()
    with TeragClient(base_settings, namespace=namespace, cooccurrence="eager") as client:
        first = client.index([folder], progress=False)
        assert (first.documents_new, first.documents_total) == (3, 3)
        assert "1890" in concept_names(client, namespace)

        # Edit hamburg.md: a longer first part (moving the parts after it), the second part
        # rewritten, the last part as it was
        edited = dict(SECTIONS)
        edited["hamburg.md"] = [
            "Hamburg is a port on the Elbe, the second city of Germany.",
            "Hanseatic merchants built the Speicherstadt in Hamburg.",
            "The Alster is a lake in Hamburg.",
        ]
        write(folder, edited)
        again = client.index([folder], progress=False)
        assert again.written_documents == [hamburg]
        assert (again.documents_changed, again.documents_unchanged) == (1, 2)
        assert again.documents_new == 0
        assert (again.passages_new, again.passages_replaced, again.passages_removed) == (2, 2, 0)
        assert again.extracted == 2  # nothing of berlin or munich extracted again
        assert again.passages_moved == 1  # the Alster part: same text, new offsets
        assert "written: " + hamburg in again.summary()
        # The concept only the rewritten part named (its year) is gone
        assert "1890" not in concept_names(client, namespace)

        with TeragClient(base_settings, namespace=clean_namespace, cooccurrence="eager") as clean:
            clean.index([folder], progress=False)
            assert client.store.namespaces.fingerprint(
                namespace
            ) == clean.store.namespaces.fingerprint(clean_namespace)
            assert provenance(client, namespace) == provenance(clean, clean_namespace)

        # Nothing changed: nothing written
        same = client.index([folder], progress=False)
        assert same.written_documents == [] and same.passages_new == 0
        assert same.documents_unchanged == 3


def test_a_removed_file_is_reported_then_pruned_only_under_its_folder(
    base_settings: Settings,
    namespace: str,
    clean_namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    folder = tmp_path / "cities"
    sibling = tmp_path / "cities2"  # its path starts with the folder's: not under it
    write(folder, SECTIONS)
    write(sibling, {"bonn.md": ["Bonn is on the Rhine."]})
    for var, value in connection_env(base_settings).items():
        monkeypatch.setenv(var, value)
    args = ["index", str(folder), "-n", namespace, "-e", "spacy", "-q", "--json"]
    assert cli.main([*args[:2], str(sibling), *args[2:]]) == cli.EXIT_OK
    capsys.readouterr()

    (folder / "munich.md").unlink()
    munich = (folder / "munich.md").as_posix()
    assert cli.main(args) == cli.EXIT_OK
    out = json.loads(capsys.readouterr().out)
    assert out["missing_documents"] == [munich] and out["documents_deleted"] == 0
    with TeragClient(base_settings, namespace=namespace) as client:
        assert client.stats().documents == 4  # reported, still there

    assert cli.main([*args, "--prune"]) == cli.EXIT_OK
    out = json.loads(capsys.readouterr().out)
    assert out["missing_documents"] == [munich] and out["documents_deleted"] == 1
    with TeragClient(base_settings, namespace=namespace) as client:
        assert client.stats().documents == 3
        assert client.document_ids(str(sibling / "bonn.md")) == [(sibling / "bonn.md").as_posix()]
        with TeragClient(base_settings, namespace=clean_namespace) as clean:
            clean.index([folder, sibling], progress=False)
            assert client.store.namespaces.fingerprint(
                namespace
            ) == clean.store.namespaces.fingerprint(clean_namespace)

    # Through a service, --prune is refused before anything runs
    monkeypatch.setenv("TERAG_URL", "http://127.0.0.1:9")
    assert cli.main([*args, "--prune"]) == cli.EXIT_USAGE
