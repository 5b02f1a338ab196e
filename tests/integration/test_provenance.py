"""Provenance on every passage, through the client (each ranking mode), the CLI, LangChain and
neo4j-graphrag, against the real Neo4j; stats count documents; a namespace written before
provenance existed still reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from terag_neo4j import cli
from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.results import Provenance, RetrievedPassage
from terag_neo4j.integrations.langchain import TeragRetriever

from .conftest import connection_env

pytestmark = pytest.mark.integration

QUESTION = "Which dose do adults with kidney disease take?"
DOSING = """# Dosing

## Adults

Adults take 5 mg of Zelbrin once a day with water. Adults with kidney disease take 2 mg.

## Children

Children under twelve take 1 mg of Zelbrin, measured with the syringe in the box.
"""
SAFETY = """# Safety

## Interactions

Zelbrin must not be taken with Korvatol: together they slow the heart.

## Storage

Keep Zelbrin below 25 degrees, away from light, out of the reach of children.
"""


def corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dosing.md").write_text(DOSING, encoding="utf-8")
    (folder / "safety.md").write_text(SAFETY, encoding="utf-8")
    return folder


@pytest.fixture
def indexed(
    base_settings: Settings, namespace: str, tmp_path: Path
) -> Iterator[tuple[TeragClient, Path]]:
    folder = corpus(tmp_path / "leaflets")
    with TeragClient(base_settings, namespace=namespace) as client:
        client.index([folder], progress=False)
        yield client, folder


def check(p: RetrievedPassage, folder: Path) -> None:
    """A Markdown passage's provenance: its file, its headings, its characters in the file."""
    prov = p.provenance
    assert prov.source is not None and Path(prov.source).parent == folder, p
    # The headings under the document's title (which is its title, not a heading of its own)
    assert prov.heading_path in (("Adults",), ("Children",), ("Interactions",), ("Storage",)), p
    assert prov.char_start is not None and prov.char_end is not None
    text = Path(prov.source).read_text(encoding="utf-8")
    # The offsets point at the passage's own words in the document's text
    assert p.text.split()[0] in text[prov.char_start : prov.char_end], p
    assert prov.page_start is None  # Markdown has no pages


@pytest.mark.parametrize("mode", ["pagerank", "dense", "hybrid"])
def test_every_retrieved_passage_carries_its_provenance(
    indexed: tuple[TeragClient, Path], mode: str
) -> None:
    client, folder = indexed
    res = client.retrieve(QUESTION, top_k=4, mode=mode)  # type: ignore[arg-type]
    assert res.passages
    for p in res.passages:
        check(p, folder)
    assert res.passages[0].citation().startswith(("dosing.md · ", "safety.md · "))


def test_cli_prints_citation_lines_and_json_provenance(
    indexed: tuple[TeragClient, Path],
    base_settings: Settings,
    namespace: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, folder = indexed
    for var, value in connection_env(base_settings).items():
        monkeypatch.setenv(var, value)
    assert cli.main(["retrieve", QUESTION, "-n", namespace, "-k", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["passages"]) == 3
    for p in out["passages"]:
        assert Path(p["provenance"]["source"]).parent == folder
        assert p["provenance"]["heading_path"] and p["provenance"]["char_start"] is not None
    assert cli.main(["retrieve", QUESTION, "-n", namespace, "-k", "3"]) == 0
    text = capsys.readouterr().out
    lines = [x.strip() for x in text.splitlines() if x.strip().startswith("[1] ")]
    first = out["passages"][0]["provenance"]
    assert lines == [f"[1] {Path(first['source']).name} · {' > '.join(first['heading_path'])}"]

    assert cli.main(["stats", "-n", namespace, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 2


def test_langchain_and_graphrag_metadata_carry_provenance(
    indexed: tuple[TeragClient, Path],
) -> None:
    client, folder = indexed
    docs = TeragRetriever(client=client, k=3).invoke(QUESTION)
    assert docs
    for d in docs:
        prov = d.metadata["provenance"]
        assert Path(prov["source"]).parent == folder and prov["heading_path"]
        assert d.metadata["citation"].startswith(Path(prov["source"]).name)

    pytest.importorskip("neo4j_graphrag")
    from terag_neo4j.integrations.graphrag import TeragGraphRAGRetriever

    items = TeragGraphRAGRetriever(client=client).search(query_text=QUESTION, top_k=3).items
    assert items
    for item in items:
        meta = item.metadata or {}
        assert Path(meta["provenance"]["source"]).parent == folder
        assert meta["provenance"]["char_start"] is not None and meta["citation"]


def test_a_namespace_written_before_provenance_reads_with_none(
    indexed: tuple[TeragClient, Path], namespace: str
) -> None:
    client, _ = indexed
    with client.store.session() as s:
        s.run(
            "MATCH (p:Passage {namespace: $ns}) REMOVE p.source, p.heading_path, p.page_start, "
            "p.page_end, p.char_start, p.char_end",
            ns=namespace,
        ).consume()
    res = client.retrieve(QUESTION, top_k=3)
    assert res.passages
    assert all(p.provenance == Provenance() for p in res.passages)
    assert res.passages[0].citation() == Path(res.passages[0].doc_id).name
