"""Indexing against the real Neo4j, with the zero-token spaCy and the recorded backends."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from terag_bench.recorded import RecordedExtractor

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.concepts import Extraction
from terag_neo4j.core.documents import Document, Passage
from terag_neo4j.indexing.extraction import SpacyExtractor

from .conftest import SAMPLE

pytestmark = pytest.mark.integration
DATASETS = Path(__file__).resolve().parents[3] / "shared" / "datasets"


# What `_consistency` returns for a graph whose stored counts agree with its structure.
CONSISTENT = dict.fromkeys(
    ["bad_freq", "bad_cooc", "missing_cooc", "duplicate_pairs", "orphans"], 0
)


def _consistency(client: TeragClient, ns: str) -> dict[str, int]:
    """Stored counts that disagree with the graph's own structure (all must be 0). A concept's
    frequency counts every passage that names it; a pair counts the passages whose extraction
    has both (mention links, added by grounding, make no pairs)."""
    q = """
    CALL () { MATCH (c:Concept {namespace: $ns})
              WHERE c.frequency <> COUNT { (c)-[:HAS_PASSAGE]->() } RETURN count(*) AS bad_freq }
    CALL () { MATCH (a:Concept {namespace: $ns})-[r:CO_OCCURRENCE]->(b)
              WHERE r.count <> COUNT { (a)-[x:HAS_PASSAGE]->(:Passage)<-[y:HAS_PASSAGE]-(b)
                                       WHERE x.mention IS NULL AND y.mention IS NULL }
              RETURN count(*) AS bad_cooc }
    CALL () { MATCH (a:Concept {namespace: $ns})-[x:HAS_PASSAGE]->(p)<-[y:HAS_PASSAGE]-(b)
              WHERE x.mention IS NULL AND y.mention IS NULL
                AND a.uid < b.uid AND NOT (a)-[:CO_OCCURRENCE]-(b) RETURN count(*) AS missing_cooc }
    CALL () { MATCH (a:Concept {namespace: $ns})-[r:CO_OCCURRENCE]-(b) WHERE a.uid < b.uid
              WITH a, b, count(r) AS n WHERE n > 1 RETURN count(*) AS duplicate_pairs }
    CALL () { MATCH (c:Concept {namespace: $ns}) WHERE NOT (c)-[:HAS_PASSAGE]->()
              RETURN count(*) AS orphans }
    RETURN bad_freq, bad_cooc, missing_cooc, duplicate_pairs, orphans
    """
    with client.store.session() as s:
        return dict(s.run(q, ns=ns).single().data())  # type: ignore[union-attr]


def test_index_sample_builds_a_consistent_graph(spacy_client: TeragClient, namespace: str) -> None:
    report = spacy_client.index([SAMPLE], progress=False)
    assert report.passages_total == report.passages_new == 8
    assert report.input_tokens == report.output_tokens == 0  # spaCy spends no LLM tokens
    info = spacy_client.stats()
    assert info.passages == 8 and info.concepts > 20 and info.has_passage >= info.concepts
    assert info.co_occurrence > 0 and len(info.runs) == 1
    assert _consistency(spacy_client, namespace) == CONSISTENT
    with spacy_client.store.session() as s:
        rec = s.run(
            "MATCH (c:Concept {namespace: $ns, norm: 'volkswagen'}) WHERE c.type <> 'title' "
            "RETURN c.frequency AS f, c.type AS t",
            ns=namespace,
        ).single()
    assert rec is not None and rec["f"] >= 5  # Volkswagen occurs in most sample passages
    with spacy_client.store.session() as s:
        titles = s.run(
            "MATCH (c:Concept {namespace: $ns, type: 'title'})-[r:HAS_PASSAGE]->(p:Passage) "
            "WHERE r.mention IS NULL RETURN c.name AS name, p.title AS title",
            ns=namespace,
        ).data()
    # Every passage's title is a concept of its extraction (zero tokens; TERAG_TITLE_CONCEPTS);
    # other passages that name it link to it as mentions.
    assert len(titles) == 8 and all(t["name"] == t["title"] for t in titles)


def test_reingest_is_idempotent_and_add_then_delete_restores_graph(
    spacy_client: TeragClient, namespace: str
) -> None:
    spacy_client.index([SAMPLE], progress=False)
    before = spacy_client.store.namespaces.fingerprint(namespace)
    again = spacy_client.index([SAMPLE], progress=False)
    assert again.passages_new == 0 and again.passages_unchanged == 8
    assert spacy_client.store.namespaces.fingerprint(namespace) == before

    extra = Document(
        id="extra",
        title="Hanover",
        text="Hanover is the capital of Lower Saxony and hosts a trade fair.",
    )
    added = spacy_client.index([extra], progress=False)
    assert added.passages_new == 1
    assert spacy_client.store.namespaces.fingerprint(namespace) != before
    assert _consistency(spacy_client, namespace)["bad_cooc"] == 0
    assert spacy_client.delete("extra") == 1
    assert spacy_client.store.namespaces.fingerprint(namespace) == before
    assert spacy_client.delete("no-such-doc") == 0


def _pairs(client: TeragClient, ns: str) -> dict[tuple[str, str], int]:
    with client.store.session() as s:
        rows = s.run(
            "MATCH (a:Concept {namespace: $ns})-[r:CO_OCCURRENCE]->(b) "
            "RETURN a.key AS a, b.key AS b, r.count AS n",
            ns=ns,
        ).data()
    return {(r["a"], r["b"]): r["n"] for r in rows}


@pytest.fixture
def lazy_and_eager(
    base_settings: Settings, namespace: str
) -> Iterator[tuple[TeragClient, TeragClient]]:
    """A client with the default (lazy) CO_OCCURRENCE on `namespace`, and one that keeps the
    pairs at every write on a namespace of its own, to compare against."""
    eager_ns = f"{namespace}-eager"
    with (
        TeragClient(base_settings, namespace=namespace) as lazy,
        TeragClient(base_settings, namespace=eager_ns, cooccurrence="eager") as eager,
    ):
        try:
            yield lazy, eager
        finally:
            eager.drop(eager_ns)


def test_lazy_cooccurrence_is_built_once_when_a_walk_needs_it(
    lazy_and_eager: tuple[TeragClient, TeragClient], base_settings: Settings, namespace: str
) -> None:
    lazy, eager = lazy_and_eager
    assert lazy.settings.cooccurrence == "lazy"  # the default
    lazy.index([SAMPLE], progress=False)
    eager.index([SAMPLE], progress=False)
    info = lazy.stats()
    assert (info.cooccurrence, info.co_occurrence) == ("lazy", 0)
    assert info.has_passage == eager.stats().has_passage
    # A lazy namespace loses passages without touching pairs.
    lazy.index([Document(id="x", title="Bonn", text="Bonn is on the Rhine.")], progress=False)
    assert lazy.delete("x") == 1
    lazy.retrieve("Where is Volkswagen based?")  # the default walk does not read pairs
    assert lazy.stats().co_occurrence == 0

    version = lazy.stats().version
    with TeragClient(base_settings, namespace=namespace, preset="paper") as paper:
        assert paper.retrieve("Where is Volkswagen based?").passages
    info = lazy.stats()
    assert info.cooccurrence == "kept" and info.version == version + 1
    assert _pairs(lazy, namespace) == _pairs(eager, eager.settings.namespace)
    assert _consistency(lazy, namespace) == CONSISTENT
    assert lazy.store.cooccurrence.build(namespace) is None  # built once
    # From now on every write keeps them, whatever the setting says.
    lazy.index([Document(id="y", title="Kiel", text="Kiel is in Germany.")], progress=False)
    assert _consistency(lazy, namespace)["missing_cooc"] == 0


def test_a_cooccurrence_build_interrupted_by_writes_ends_with_the_eager_pairs(
    lazy_and_eager: tuple[TeragClient, TeragClient], namespace: str
) -> None:
    """A build stopped after one batch (as if killed), with passages added and deleted while it
    was under way (paired and unpaired ones), resumes to exactly the eagerly kept pairs."""
    lazy, eager = lazy_and_eager
    extra = Document(id="x", title="Bonn", text="Bonn is on the Rhine in Germany.")
    lazy.index([SAMPLE], progress=False)
    assert (lazy.store.cooccurrence.build(namespace, batch=3, max_batches=1) or 0) > 0
    assert lazy.stats().cooccurrence == "building"
    with lazy.store.session() as s:
        docs = s.run(
            "MATCH (p:Passage {namespace: $ns}) RETURN p.doc_id AS doc, p.paired AS paired",
            ns=namespace,
        ).data()
    paired = next(d["doc"] for d in docs if d["paired"])
    unpaired = next(d["doc"] for d in docs if not d["paired"])
    lazy.index([extra], progress=False)
    assert lazy.delete(paired) == 1 and lazy.delete(unpaired) == 1
    assert lazy.store.cooccurrence.build(namespace, batch=3) is not None
    assert lazy.stats().cooccurrence == "kept"

    for docs_in in ([SAMPLE], [extra]):
        eager.index(docs_in, progress=False)
    assert eager.delete(paired) == 1 and eager.delete(unpaired) == 1
    assert _pairs(lazy, namespace) == _pairs(eager, eager.settings.namespace)
    assert _consistency(lazy, namespace) == CONSISTENT


def test_changed_document_replaces_its_passage(spacy_client: TeragClient, namespace: str) -> None:
    spacy_client.index(
        [Document(id="d", title="Capitals", text="Paris is in France.")], progress=False
    )
    r = spacy_client.index(
        [Document(id="d", title="Capitals", text="Berlin is in Germany.")], progress=False
    )
    assert r.passages_replaced == 1
    with spacy_client.store.session() as s:
        names = {
            x["n"]
            for x in s.run("MATCH (c:Concept {namespace: $ns}) RETURN c.norm AS n", ns=namespace)
        }
    assert "berlin" in names and "paris" not in names
    assert _consistency(spacy_client, namespace)["orphans"] == 0


def test_namespaces_do_not_mix_and_drop_removes_only_one(
    base_settings: Settings, namespace: str
) -> None:
    other = f"{namespace}b"
    with (
        TeragClient(base_settings, namespace=namespace) as a,
        TeragClient(base_settings, namespace=other) as b,
    ):
        a.index([SAMPLE], progress=False)
        b.index([SAMPLE / "beetle.md"], progress=False)
        assert a.stats().passages == 8 and b.stats().passages == 1
        assert {namespace, other} <= {n.name for n in a.namespaces()}
        b.drop()
        assert other not in {n.name for n in a.namespaces()}
        assert a.stats().passages == 8


class _FailingExtractor(SpacyExtractor):
    """A real spaCy extractor that raises once it has extracted `FIRST_BATCH` passages (to
    interrupt an ingest after its first batch): the ingest extracts a batch in steps of its own
    size, so counting calls would cut the first batch short."""

    FIRST_BATCH = 4
    passages_seen = 0

    def extract(self, passages: Sequence[Passage], run_id: str) -> list[Extraction]:
        if type(self).passages_seen >= self.FIRST_BATCH:
            raise ConnectionError("simulated crash mid-ingest")
        type(self).passages_seen += len(passages)
        return super().extract(passages, run_id)


def test_interrupted_ingest_resumes_to_the_same_graph(
    base_settings: Settings, namespace: str
) -> None:
    from terag_neo4j.indexing.pipeline import Indexer

    docs = [
        Document(id=f"d{i}", title=f"T{i}", text=f"Company {i} is based in City {i % 3}.")
        for i in range(10)
    ]
    with TeragClient(base_settings, namespace=namespace) as c:
        indexer = Indexer(
            c.settings,
            c.store,
            _FailingExtractor(),
            c.embedder,
            c.cache,
            batch_passages=_FailingExtractor.FIRST_BATCH,
        )
        with pytest.raises(ConnectionError):
            indexer.index(docs, namespace, progress=False)
        assert c.stats().passages == 4  # the first batch committed whole, nothing of the second
        resumed = c.index(docs, progress=False)
        assert resumed.passages_new == 6 and resumed.passages_unchanged == 4
        fp = c.store.namespaces.fingerprint(namespace)
    clean_ns = f"{namespace}c"
    with TeragClient(base_settings, namespace=clean_ns) as c2:
        c2.index(docs, progress=False)
        # The fingerprint names passages and concepts by id and key, not namespace.
        assert c2.store.namespaces.fingerprint(clean_ns) == fp
        c2.drop()


def test_empty_input_and_unknown_namespace(spacy_client: TeragClient) -> None:
    from terag_neo4j.store import NamespaceNotFound

    r = spacy_client.index([Document(id="e", text="   ")], progress=False)
    assert r.passages_total == 0 and r.warnings
    with pytest.raises(NamespaceNotFound, match="does not exist"):
        spacy_client.stats("never_indexed_ns")


@pytest.mark.skipif(
    not (DATASETS / "musique_hipporag_train100").is_dir(), reason="shared datasets absent"
)
def test_recorded_extractions_build_a_graph(base_settings: Settings, namespace: str) -> None:
    folder = DATASETS / "musique_hipporag_train100"
    lines = (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:40]
    docs = [
        Document(id=r["id"], title=r["title"], text=r["text"], is_passage=True)
        for r in map(json.loads, lines)
    ]
    with TeragClient(
        base_settings,
        namespace=namespace,
        extractor=RecordedExtractor(folder / "recorded_extractions.jsonl"),
    ) as c:
        report = c.index(docs, progress=False)
        assert report.passages_new == 40 and report.passages_without_concepts == 0
        info = c.stats()
        assert info.extractor == "recorded" and info.model == "gpt-3.5-turbo-1106"
        assert info.concepts > 100


def test_reindexing_with_another_extractor_warns(
    base_settings: Settings, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    with TeragClient(base_settings, namespace=namespace) as c:
        c.index([SAMPLE / "beetle.md"], progress=False)
    with TeragClient(base_settings, namespace=namespace, spacy_noun_chunks="all") as c:
        c.index([SAMPLE / "beetle.md"], progress=False)
    assert "was built with spacy" in caplog.text and "drop the namespace" in caplog.text


def test_synonym_edges_are_built_kept_and_removed_with_their_concepts(
    base_settings: Settings, namespace: str
) -> None:
    with TeragClient(
        base_settings, namespace=namespace, synonym_threshold=0.8, synonym_cap=3
    ) as client:
        report = client.index([SAMPLE], progress=False)
        q = """
        MATCH (a:Concept {namespace: $ns})-[r:SYNONYM]-(b:Concept)
        RETURN count(DISTINCT r) AS edges, min(r.similarity) AS lowest,
               count(DISTINCT CASE WHEN b.namespace <> $ns THEN r END) AS foreign,
               max(COUNT { (a)-[:SYNONYM]->() }) AS most_out
        """

        def synonyms() -> dict[str, Any]:
            with client.store.session() as s:
                return dict(s.run(q, ns=namespace).single().data())  # type: ignore[union-attr]

        before = synonyms()
        assert before["edges"] > 0 and report.synonym_links > 0
        assert before["lowest"] >= 0.8 and before["foreign"] == 0 and before["most_out"] <= 3
        # Every concept was visited, so a rerun has nothing left to link.
        assert not client.store.read("unlinked_concepts", namespace=namespace)
        extra = Document(id="vw2", title="Volkswagen Group", text="Volkswagen Group owns Porsche.")
        client.index([extra], progress=False)
        assert synonyms()["edges"] > before["edges"]
        client.delete("vw2")
        assert synonyms() == before
