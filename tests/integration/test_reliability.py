"""Input and identity checks against the real Neo4j + GDS: top_k validation, document identity, shrinking
documents, and GDS projection naming/versioning."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document, InputError
from terag_neo4j.indexing.loading import load_documents
from terag_neo4j.indexing.pipeline import Indexer
from terag_neo4j.llm import LLMError
from terag_neo4j.retrieval.retriever import RetrievalError

from .conftest import connection_env

pytestmark = pytest.mark.integration

SAMPLE = Path(__file__).resolve().parents[2] / "terag_neo4j" / "data" / "sample"
BEETLE = str(SAMPLE / "beetle.md")  # its document (and only passage) id: the file's absolute path
QUESTION = "Which city is the headquarters of Volkswagen?"


def _passage_ids(client: TeragClient, namespace: str) -> list[str]:
    with client.store.session() as s:
        return sorted(
            s.run("MATCH (p:Passage {namespace: $ns}) RETURN p.id AS id", ns=namespace).value()
        )


def _graphs(client: TeragClient, needle: str) -> set[str]:
    with client.store.session() as s:
        return set(
            s.run(
                "CALL gds.graph.list() YIELD graphName WHERE graphName CONTAINS $n "
                "RETURN graphName",
                n=needle,
            ).value()
        )


def test_top_k_zero_or_negative_is_refused(spacy_client: TeragClient) -> None:
    spacy_client.index([SAMPLE], progress=False)
    assert len(spacy_client.retrieve(QUESTION).passages) == spacy_client.settings.top_k
    for bad in (0, -1):
        with pytest.raises(RetrievalError, match="top_k"):
            spacy_client.retrieve(QUESTION, top_k=bad)
    assert len(spacy_client.retrieve(QUESTION, top_k=1).passages) == 1


def test_absolute_and_relative_paths_index_the_same_documents(
    spacy_client: TeragClient, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spacy_client.index([SAMPLE.resolve()], progress=False)
    monkeypatch.chdir(SAMPLE.parent)
    again = spacy_client.index([Path("sample")], progress=False)
    monkeypatch.chdir(SAMPLE)
    spacy_client.index([Path("."), Path("beetle.md")], progress=False)
    assert again.passages_new == 0
    ids = _passage_ids(spacy_client, namespace)
    assert len(ids) == 8 and BEETLE in ids
    assert spacy_client.delete(BEETLE) == 1


def test_shrunk_document_loses_all_its_old_passages(
    base_settings: Settings, namespace: str
) -> None:
    long_text = " ".join(
        f"Sentence {i} says that Wolfsburg hosts factory number {i}." for i in range(40)
    )
    with TeragClient(
        base_settings, namespace=namespace, chunk_tokens=32, chunk_overlap=4
    ) as client:
        first = client.index([Document(id="doc", title="T", text=long_text)], progress=False)
        assert first.passages_new > 3
        client.index([Document(id="other", title="O", text="Stuttgart is in Germany.")])
        shrunk = client.index(
            [Document(id="doc", title="T", text="Wolfsburg is in Lower Saxony.")], progress=False
        )
        assert shrunk.passages_removed == first.passages_new
        assert _passage_ids(client, namespace) == ["doc", "other"]
        grown = client.index([Document(id="doc", title="T", text=long_text)], progress=False)
        assert grown.passages_removed == 1
        assert len(_passage_ids(client, namespace)) == first.passages_new + 1
        with client.store.session() as s:
            orphans = s.run(
                "MATCH (c:Concept {namespace: $ns}) WHERE NOT (c)-[:HAS_PASSAGE]->() "
                "RETURN count(c) AS n",
                ns=namespace,
            ).single()
        assert orphans is not None and orphans["n"] == 0


def test_dropping_a_namespace_keeps_projections_of_a_longer_name(
    base_settings: Settings, namespace: str
) -> None:
    longer = f"{namespace}_en"
    with (
        TeragClient(base_settings, namespace=namespace) as a,
        TeragClient(base_settings, namespace=longer) as b,
    ):
        a.index([SAMPLE], progress=False)
        b.index([SAMPLE], progress=False)
        a.retrieve(QUESTION)
        b.retrieve(QUESTION)
        kept = _graphs(b, longer)
        assert kept
        a.drop()
        assert _graphs(b, longer) == kept
        assert not _graphs(a, namespace) - kept
        assert b.retrieve(QUESTION).passages


def test_projection_is_never_reused_after_a_drop(spacy_client: TeragClient) -> None:
    spacy_client.index([SAMPLE], progress=False)
    first = spacy_client.retriever.ensure_projection(spacy_client.settings.namespace)
    spacy_client.drop()
    spacy_client.index([SAMPLE / "beetle.md"], progress=False)
    second = spacy_client.retriever.ensure_projection(spacy_client.settings.namespace)
    assert second != first
    res = spacy_client.retrieve(QUESTION)
    assert [p.id for p in res.passages] == [BEETLE]


def test_version_is_bumped_for_every_committed_batch(spacy_client: TeragClient) -> None:
    c = spacy_client
    indexer = Indexer(c.settings, c.store, c.extractor, c.embedder, c.cache, batch_passages=3)
    seen: list[int] = []
    original = c.store.passages.write

    def write_and_look(*args: object, **kw: object) -> object:
        out = original(*args, **kw)  # type: ignore[arg-type]
        seen.append(c.store.read("namespace_version", namespace=c.settings.namespace)[0]["version"])
        return out

    c.store.passages.write = write_and_look  # type: ignore[method-assign]
    try:
        indexer.index(load_documents([SAMPLE]), c.settings.namespace, progress=False)
    finally:
        del c.store.passages.write
    assert seen == [1, 2, 3]  # 8 passages in batches of 3: each commit is a new version


def _dead_ollama(tmp_path: Path) -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens there


def test_query_ner_follows_the_namespace_extractor(
    base_settings: Settings, namespace: str, tmp_path: Path
) -> None:
    """Indexed with spaCy, queried by a client whose default extractor is the LLM: no LLM call
    (Ollama is not even reachable), unless query NER is asked for explicitly."""
    with TeragClient(base_settings, namespace=namespace, extractor="spacy") as indexer:
        indexer.index([SAMPLE], progress=False)
    # Query NER runs only with `ner` linking (the default `names` linking needs none).
    ollama = {
        "extractor": "ollama",
        "ollama_host": _dead_ollama(tmp_path),
        "llm_retries": 1,
        "retrieval": {"linking": "ner"},
    }
    with TeragClient(base_settings, namespace=namespace, **ollama) as client:
        assert client.query_backend() == "spacy"
        res = client.retrieve(QUESTION)
        assert res.entities and res.mode == "pagerank"
        assert (res.input_tokens, res.output_tokens) == (0, 0)
        assert client.ledger.calls == []
    with (
        TeragClient(base_settings, namespace=namespace, query_extractor="ollama", **ollama) as c,
        pytest.raises(LLMError),
    ):
        c.retrieve(QUESTION)


def test_cli_retrieve_uses_the_namespace_extractor(
    base_settings: Settings, namespace: str, tmp_path: Path
) -> None:
    import subprocess
    import sys

    with TeragClient(base_settings, namespace=namespace, extractor="spacy") as indexer:
        indexer.index([SAMPLE], progress=False)
    env = {
        **os.environ,
        **connection_env(base_settings),
        "TERAG_EXTRACTOR": "ollama",
        "TERAG_RETRIEVAL": '{"linking": "ner"}',  # query NER runs (the default names linking needs none)
        "TERAG_LLM_RETRIES": "1",
        "OLLAMA_HOST": _dead_ollama(tmp_path),
        "PYTHONPATH": str(SAMPLE.parents[2]),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "terag_neo4j.cli", "retrieve", QUESTION, "-n", namespace, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["entities"] and out["input_tokens"] == 0


def test_index_refuses_records_that_are_not_documents(
    spacy_client: TeragClient, namespace: str
) -> None:
    with pytest.raises(InputError, match="item 1 is a dict"):
        spacy_client.index([Document(id="a", text="Wolfsburg."), {"text": "x"}], progress=False)
    mixed = spacy_client.index(
        [SAMPLE / "beetle.md", Document(id="extra", text="Hanover is in Lower Saxony.")],
        progress=False,
    )
    assert mixed.passages_new == 2
    assert _passage_ids(spacy_client, namespace) == sorted(["extra", BEETLE])


def test_cli_names_and_skips_unreadable_files_with_exit_5(
    base_settings: Settings,
    namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from terag_neo4j import cli

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\nWolfsburg is in Lower Saxony.", encoding="utf-8")
    (docs / "bad.txt").write_bytes(b"caf\xe9 latin-1")
    for var, value in connection_env(base_settings).items():
        monkeypatch.setenv(var, value)
    code = cli.main(["index", str(docs), "-n", namespace, "-e", "spacy", "-q", "--json"])
    assert code == cli.EXIT_BAD_FILES
    out = json.loads(capsys.readouterr().out)
    assert out["passages_new"] == 1 and len(out["skipped"]) == 1 and "bad.txt" in out["skipped"][0]


def test_an_overlong_query_is_refused_before_query_ner(spacy_client: TeragClient) -> None:
    spacy_client.index([SAMPLE / "beetle.md"], progress=False)
    with pytest.raises(RetrievalError, match="over the 10,000 limit"):
        spacy_client.retrieve("x" * 2_000_000)
