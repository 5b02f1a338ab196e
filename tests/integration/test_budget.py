"""Budget mode against the real Neo4j + GDS, with the recorded GPT-3.5 extractions as the LLM."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from terag_bench.datasets import dataset_root
from terag_bench.recorded import RecordedExtractor

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.concepts import with_title_concepts
from terag_neo4j.core.documents import Document
from terag_neo4j.indexing.budget import passage_scores, rank
from terag_neo4j.indexing.extraction import SpacyExtractor
from terag_neo4j.indexing.loading import to_passages
from terag_neo4j.store import GraphStoreError

from .test_indexing import CONSISTENT, _consistency

pytestmark = pytest.mark.integration
DATASET = "musique_hipporag_train100"
N, BETA = 40, 0.25


def folder() -> Path:
    """The dataset where the benchmarks find it (TERAG_DATASETS, else ../shared/datasets)."""
    return dataset_root() / DATASET


def recorded_file() -> Path:
    return folder() / "recorded_extractions.jsonl"


@pytest.fixture(scope="module")
def docs() -> list[Document]:
    if not folder().is_dir():
        pytest.skip(f"benchmark data not found at {folder()} (set TERAG_DATASETS)")
    lines = (folder() / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:N]
    return [
        Document(id=r["id"], title=r["title"], text=r["text"], is_passage=True)
        for r in map(json.loads, lines)
    ]


def llm_settings(settings: Settings) -> Settings:
    """Budget mode refuses the spaCy setting; the recorded replay handed in stands for the LLM."""
    return settings.with_overrides(extractor="ollama")


def _client(settings: Settings, ns: str, **kw: Any) -> TeragClient:
    return TeragClient(
        llm_settings(settings),
        namespace=ns,
        extractor=RecordedExtractor(recorded_file()),
        llm_budget=BETA,
        cooccurrence="eager",  # the merge must keep pair counts right
        **kw,
    )


def _concepts(client: TeragClient, ns: str) -> dict[str, set[str]]:
    """Each passage's extracted concepts (mention links from grounding left out)."""
    with client.store.session() as s:
        rows = s.run(
            "MATCH (p:Passage {namespace: $ns}) "
            "OPTIONAL MATCH (c:Concept)-[r:HAS_PASSAGE]->(p) WHERE r.mention IS NULL "
            "RETURN p.id AS id, collect(c.key) AS keys",
            ns=ns,
        ).data()
    return {r["id"]: set(r["keys"]) for r in rows}


def test_budget_gives_llm_concepts_to_exactly_the_chosen_passages(
    base_settings: Settings, namespace: str, docs: list[Document]
) -> None:
    target = math.ceil(BETA * N)
    # The choice is made over the cheap graph: the same documents indexed with spaCy alone.
    cheap_ns = f"{namespace}-cheap"
    with TeragClient(base_settings, namespace=cheap_ns, extractor="spacy") as cheap:
        cheap.index(docs, progress=False)
        expected_core = set(
            rank(passage_scores(cheap.store, cheap.settings, cheap_ns, "pagerank"))[:target]
        )
        cheap.drop(cheap_ns)

    with _client(base_settings, namespace) as client:
        report = client.index(docs, progress=False)
        assert report.core_target == report.core_passages == report.core_merged == target
        # recorded extractions cost what HippoRAG's NER prompt would have: only core passages pay
        # (another test may have cached these passages' extractions: then they count as cached)
        spent_in = report.input_tokens + report.cached_input_tokens
        assert spent_in > 150 * target
        assert report.output_tokens + report.cached_output_tokens > 0
        assert report.input_per_passage == pytest.approx(
            (report.input_tokens + report.cached_input_tokens) / N
        )
        total, core = client.store.budget.core_state(namespace)
        assert total == N and set(core) == expected_core and all(core.values())
        assert _consistency(client, namespace) == CONSISTENT

        by_id = {d.id: d for d in docs}
        assert client.store.budget.core_pending(namespace) == []  # nothing left to merge
        spacy = SpacyExtractor()
        recorded = RecordedExtractor(recorded_file())
        all_passages = list(to_passages(docs, 256, 32))
        cheap_keys = {
            e.passage_id: {
                c.key for c in with_title_concepts(e, by_id[e.passage_id].title).concepts
            }
            for e in spacy.extract(all_passages, "t")
        }
        llm_norms = {
            e.passage_id: {c.norm for c in e.concepts} for e in recorded.extract(all_passages, "t")
        }
        graph = _concepts(client, namespace)
        gained = 0
        for pid, keys in graph.items():
            norms = {k.split(":", 1)[1] for k in keys}
            if pid in core:
                # every LLM name is a concept of the core passage, next to spaCy's (add)
                assert llm_norms[pid] <= norms, pid
                assert cheap_keys[pid] <= keys, pid
                gained += bool(keys - cheap_keys[pid])
            else:
                assert keys == cheap_keys[pid], pid  # the rest is the spaCy graph, untouched
        assert gained >= target // 2

        # Re-running the same budget changes nothing and pays nothing.
        before = client.store.namespaces.fingerprint(namespace)
        again = client.index(docs, progress=False)
        assert again.core_selected == again.core_merged == again.passages_new == 0
        assert again.input_tokens == again.cached_input_tokens == 0
        assert client.store.namespaces.fingerprint(namespace) == before

        # Deleting a core document removes it and its LLM concepts; the graph stays consistent.
        gone = sorted(core)[0]
        assert client.delete(gone) == 1
        total, core_after = client.store.budget.core_state(namespace)
        assert total == N - 1 and set(core_after) == set(core) - {gone}
        assert _consistency(client, namespace) == CONSISTENT

        # Indexing it again tops the core up to the budget, reusing the cached LLM extraction.
        back = client.index(docs, progress=False)
        assert back.passages_new == 1 and back.core_selected == 1 and back.core_merged == 1
        assert back.core_extracted_cached == 1 and back.core_extracted_fresh == 0
        assert back.input_tokens == 0  # nothing paid again
        assert len(client.store.budget.core_state(namespace)[1]) == target
        assert _consistency(client, namespace) == CONSISTENT


def test_an_interrupted_budget_run_resumes_with_the_same_choice(
    base_settings: Settings, namespace: str, docs: list[Document], monkeypatch: pytest.MonkeyPatch
) -> None:
    target = math.ceil(BETA * N)
    with _client(base_settings, namespace, budget_selection="degree") as client:
        # Neo4j fails at the first merge of LLM concepts (after the choice was stored).
        def down(*a: object, **k: object) -> None:
            raise GraphStoreError("Neo4j went away")

        monkeypatch.setattr(client.store.passages, "replace", down)
        with pytest.raises(GraphStoreError):
            client.index(docs, progress=False)
        monkeypatch.undo()
        _, chosen = client.store.budget.core_state(namespace)
        assert len(chosen) == target and not any(chosen.values())

        report = client.index(docs, progress=False)
        _, core = client.store.budget.core_state(namespace)
        assert set(core) == set(chosen) and all(core.values())
        assert report.core_selected == 0 and report.core_merged == target
        # the interrupted run's LLM extractions were cached: the resumed run pays nothing
        assert report.core_extracted_cached == target and report.input_tokens == 0
        assert _consistency(client, namespace) == CONSISTENT


def test_a_top_up_on_a_grounded_namespace_keeps_one_link_per_pair(
    base_settings: Settings, namespace: str, docs: list[Document]
) -> None:
    """A top-up (a larger budget on a grounded namespace) merges passages that grounding has
    already linked to concepts they name: one HAS_PASSAGE per (concept, passage) afterwards, the
    merged ones extracted, and the stored counts agree with the graph."""
    with TeragClient(
        llm_settings(base_settings),
        namespace=namespace,
        extractor=RecordedExtractor(recorded_file()),
        llm_budget=0.05,
        cooccurrence="eager",
    ) as first:
        first.index(docs, progress=False)
    with _client(base_settings, namespace) as client:
        assert client.index(docs, progress=False).core_selected > 0
        with client.store.session() as s:
            rec = s.run(
                "MATCH (c:Concept {namespace: $ns})-[r:HAS_PASSAGE]->(p:Passage) "
                "WITH c, p, count(r) AS n, collect(r.mention) AS marks "
                "RETURN sum(CASE WHEN n > 1 THEN 1 ELSE 0 END) AS doubled, "
                "       sum(CASE WHEN p.core_selected AND size(marks) = 0 THEN 1 ELSE 0 END) "
                "         AS core_extracted",
                ns=namespace,
            ).single()
        assert rec is not None and rec["doubled"] == 0
        assert rec["core_extracted"] > 0
        assert _consistency(client, namespace) == CONSISTENT
