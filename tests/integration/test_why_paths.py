"""The walk's paths in `why`: every passage a question returns is explained by a path from a
restart node of that retrieval (a linked concept of the question, or a seeded passage) over
relationships the walk's projection holds, on the sample corpus and on a slice of 2Wiki, with
the default walk; and on the sample with the paper's (directed, over CO_OCCURRENCE, no passage
seeds)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.results import RetrievalResult, WhyRetrieved
from terag_neo4j.retrieval.walk_paths import WHY_MAX_NODES
from terag_neo4j.store import gds
from tests.fixtures.wiki import WIKI_QUESTION, wiki_documents

pytestmark = pytest.mark.integration

SAMPLE_QUESTIONS = ["Who designed the Volkswagen Beetle?", "Where was Ferdinand Porsche born?"]
# The paper's linking starts from the question's named entities (spaCy's here, the namespace's
# extractor): the first question above has none, so its walk does not run
PAPER_QUESTIONS = [
    "Where was Ferdinand Porsche born?",
    "What did Ferdinand Porsche design for Volkswagen?",
]


def edge_exists(
    client: TeragClient, ns: str, a: tuple[str, str], b: tuple[str, str], rel: str
) -> bool:
    """Whether the namespace's graph holds `rel` between the steps a and b ((kind, id) each)."""
    with client.store.session() as s:
        if rel == "HAS_PASSAGE":
            (_, cid), (_, pid) = (a, b) if a[0] == "concept" else (b, a)
            q = (
                "MATCH (c:Concept {namespace: $ns, uid: $c})-[:HAS_PASSAGE]->"
                "(p:Passage {namespace: $ns, id: $p}) RETURN count(*) AS n"
            )
            rec = s.run(q, ns=ns, c=cid, p=pid).single()
        else:
            q = (
                "MATCH (a:Concept {namespace: $ns, uid: $a})-[:CO_OCCURRENCE]-"
                "(b:Concept {namespace: $ns, uid: $b}) RETURN count(*) AS n"
            )
            rec = s.run(q, ns=ns, a=a[1], b=b[1]).single()
    return rec is not None and int(rec["n"]) > 0


def concept_fields(client: TeragClient, ns: str, uid: str) -> tuple[str, int]:
    with client.store.session() as s:
        q = "MATCH (c:Concept {namespace: $ns, uid: $u}) RETURN c.type AS t, c.frequency AS f"
        rec = s.run(q, ns=ns, u=uid).single()
    assert rec is not None, uid
    return str(rec["t"]), int(rec["f"])


def check_paths(client: TeragClient, ns: str, question: str, top_k: int = 5) -> list[WhyRetrieved]:
    """Every returned passage's paths against the retrieval that ranked it and the graph its
    walk ran on; the explanations, for the caller's own checks."""
    rc = client.retriever.rc
    spec = gds.projection_spec(rc)
    res: RetrievalResult = client.retrieve(question, top_k=top_k, namespace=ns)
    assert res.mode == "pagerank" and res.passages, res.fallback_reason
    linked = {m.uid: m for m in res.matches}
    restart = {int(n): float(w) for n, w in res.restart}
    whys = []
    for p in res.passages:
        w = client.why(p.id, question, ns, top_k)
        whys.append(w)
        assert w.paths, f"{p.id} ({p.title}) has no path from the walk's restart nodes"
        shown = {(s.kind, s.id) for path in w.paths for s in path.steps}
        assert len(shown) <= WHY_MAX_NODES
        strengths = [path.strength for path in w.paths]
        assert strengths == sorted(strengths, reverse=True) and all(x > 0 for x in strengths)
        # joined to the question: a path from a linked concept, or the passage itself seeded
        assert any(path.steps[0].role == "question" for path in w.paths) or (
            w.seed_weight > 0 and any(len(path.steps) == 1 for path in w.paths)
        ), f"{p.title}: neither joined to a question concept nor a seed"
        for path in w.paths:
            first, last = path.steps[0], path.steps[-1]
            assert (last.kind, last.id) == ("passage", p.id)
            assert first.weight is not None and first.weight > 0
            if first.role == "question":
                m = linked[first.id]  # a linked concept of this retrieval
                assert restart[m.node] == pytest.approx(first.weight)
            else:
                assert first.role == "seed" and first.kind == "passage"
                assert first.weight in restart.values()
            for a, b in zip(path.steps, path.steps[1:], strict=False):
                assert b.rel in spec.rel_types, b
                if b.rel == "HAS_PASSAGE":
                    assert {a.kind, b.kind} == {"concept", "passage"}, (a, b)
                    if rc.orientation == "directed" and res.walk == "global":
                        assert a.kind == "concept"  # a directed walk leaves no passage
                else:
                    assert a.kind == b.kind == "concept"
                assert edge_exists(client, ns, (a.kind, a.id), (b.kind, b.id), str(b.rel)), (a, b)
            for s in path.steps:
                if s.kind == "concept":
                    ctype, freq = concept_fields(client, ns, s.id)
                    assert ctype not in spec.skip_types, s
                    assert not spec.hub_cap or freq <= spec.hub_cap or s.id in linked, s
                if s.role == "bridge":
                    assert s is not first and s is not last
    return whys


def test_the_sample_questions_passages_have_walk_paths(sample_client: TeragClient) -> None:
    ns = sample_client.settings.namespace
    for q in SAMPLE_QUESTIONS:
        whys = check_paths(sample_client, ns, q)
        assert any(len(path.steps) > 1 for w in whys for path in w.paths)


def test_the_paper_walk_paths_on_the_sample(sample_client: TeragClient) -> None:
    """Directed, over CO_OCCURRENCE, without passage seeds: every path starts at a linked
    concept, and every linked concept that names a returned passage is drawn on its paths."""
    ns = sample_client.settings.namespace
    with TeragClient(sample_client.settings, namespace=ns, preset="paper") as client:
        assert client.retriever.rc.orientation == "directed" and client.retriever.rc.seeds == "none"
        for q in PAPER_QUESTIONS:
            whys = check_paths(client, ns, q)
            for w in whys:
                assert all(path.steps[0].role == "question" for path in w.paths), w.paths
                drawn = {s.name for path in w.paths for s in path.steps if s.kind == "concept"}
                counted = {c.name for c in w.concepts}
                assert counted <= drawn, f"{w.passage_id}: {counted - drawn} counted, not drawn"
                assert w.seed_weight == 0


@pytest.fixture(scope="module")
def wiki(base_settings: Settings) -> Iterator[tuple[Settings, str]]:
    docs = wiki_documents()
    ns = f"why-wiki-{uuid.uuid4().hex[:8]}"
    with TeragClient(base_settings, namespace=ns, cooccurrence="eager") as client:
        client.index(docs, progress=False)
        try:
            yield base_settings, ns
        finally:
            client.drop(ns)


def test_a_2wiki_questions_passages_have_walk_paths(wiki: tuple[Settings, str]) -> None:
    settings, ns = wiki
    with TeragClient(settings, namespace=ns) as client:
        whys = check_paths(client, ns, WIKI_QUESTION)
    # A passage the walk reached over a bridge (a concept or passage between) is drawn so
    assert any(len(path.steps) >= 3 for w in whys for path in w.paths)
