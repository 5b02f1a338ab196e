"""Text that is not Wikipedia, against the real Neo4j + GDS: structure-aware passages, lower-case
terms linked by stem, mention grounding, the full-text channel, and the projection lifecycle
(ingest lease, eviction)."""

from __future__ import annotations

from pathlib import Path

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.core.documents import Document
from terag_neo4j.retrieval.flat import flat_ranking
from terag_neo4j.store import gds

pytestmark = pytest.mark.integration

GUIDE = """# Gliomas

Gliomas are tumours that start in the glial cells of the brain or the spine. About a third of
all brain tumours are gliomas. Symptoms depend on where the tumour grows.

## Grading

A pathologist grades a glioma from 1 to 4 under the microscope. Low grade gliomas grow slowly.
High grade gliomas such as glioblastoma grow fast and spread into nearby brain tissue.

## Treatment

Surgery removes as much of the tumour as is safe. Radiation therapy and chemotherapy with
temozolomide follow surgery for high grade tumours.

## Follow-up care

MRI scans every few months look for regrowth after treatment.
"""
NOTES = """Radiation therapy uses high-energy rays to kill cancer cells. Side effects include
tiredness and hair loss where the rays pass. A course of radiation therapy takes several weeks.
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "guides"
    folder.mkdir()
    (folder / "glioma.md").write_text(GUIDE, encoding="utf-8")
    (folder / "radiation_notes.txt").write_text(NOTES, encoding="utf-8")
    return folder


@pytest.fixture
def guides(spacy_client: TeragClient, folder: Path) -> TeragClient:
    spacy_client.index([folder], progress=False)
    return spacy_client


def records(client: TeragClient, query: str, **params: object) -> list[dict[str, object]]:
    return [r.data() for r in client.store.driver.execute_query(query, **params).records]


def test_sections_become_passages_titled_by_their_heading_path(
    guides: TeragClient, folder: Path
) -> None:
    ns = guides.settings.namespace
    rows = guides.store.read("document_passages", namespace=ns, doc_id=str(folder / "glioma.md"))
    assert len(rows) == 4  # one passage per section: none crosses a heading
    titles = {
        r["title"]
        for r in records(
            guides, "MATCH (p:Passage {namespace: $ns}) RETURN p.title AS title", ns=ns
        )
    }
    assert {
        "Gliomas",
        "Gliomas > Grading",
        "Gliomas > Treatment",
        "Gliomas > Follow-up care",
    } <= titles
    # the headings are title concepts; a file's name ("radiation notes") is not
    names = {
        r["norm"]
        for r in records(
            guides, "MATCH (c:Concept {namespace: $ns, type: 'title'}) RETURN c.norm AS norm", ns=ns
        )
    }
    assert {"gliomas", "grading", "treatment", "follow up care"} <= names
    assert "radiation notes" not in names


def test_a_lower_case_plural_question_links_its_concept(guides: TeragClient) -> None:
    res = guides.retrieve("How are gliomas graded?", top_k=3)
    assert res.mode == "pagerank" and res.matches
    assert any(m.name.lower().startswith("glioma") for m in res.matches)
    assert res.passages[0].title == "Gliomas > Grading"
    # "glioma" (singular) finds the same concepts through their stem
    singular = guides.retrieve("What grade can a glioma have?", top_k=3)
    assert {m.uid for m in singular.matches} & {m.uid for m in res.matches}


def test_mentions_link_every_passage_that_names_a_concept(
    guides: TeragClient, folder: Path
) -> None:
    ns = guides.settings.namespace
    rows = records(
        guides,
        """MATCH (c:Concept {namespace: $ns})-[r:HAS_PASSAGE]->(p:Passage)
           RETURN c.norm AS norm, c.frequency AS f, r.mention AS mention, p.text AS text,
                  p.title AS title, COUNT { (c)-[:HAS_PASSAGE]->() } AS links""",
        ns=ns,
    )
    mentions = [r for r in rows if r["mention"]]
    assert mentions, "no passage was linked to a concept it names beyond its extraction"
    from terag_neo4j.core.concepts import normalize_name

    for r in mentions:  # a mention is the concept's name, as whole words, in the passage
        text = normalize_name(f"{r['title']} {r['text']}")
        assert f" {r['norm']} " in f" {text} "
    assert all(r["f"] == r["links"] for r in rows)  # frequency counts mentions too
    # "radiation therapy" is in both files: every passage naming it is linked to it
    named = {r["title"] for r in rows if r["norm"] == "radiation therapy"}
    assert {"radiation notes", "Gliomas > Treatment"} <= named
    # a rerun changes nothing
    before = guides.store.namespaces.fingerprint(ns)
    report = guides.index([folder], progress=False)
    assert report.passages_new == 0 and report.mention_links == 0
    assert guides.store.namespaces.fingerprint(ns) == before


def test_a_concept_goes_with_the_last_passage_that_extracts_it(spacy_client: TeragClient) -> None:
    ns = spacy_client.settings.namespace
    spacy_client.index(
        [
            Document("a", "Kalo Mite is a river in the north.", title="Kalo Mite"),
            Document("b", "The old bridge crosses the kalo mite near the town.", title="Bridge"),
        ],
        progress=False,
    )

    def title_links() -> list[tuple[object, object]]:
        return [
            (r["id"], r["mention"])
            for r in records(
                spacy_client,
                """MATCH (c:Concept {namespace: $ns, type: 'title', norm: 'kalo mite'})
                         -[r:HAS_PASSAGE]->(p) RETURN p.id AS id, r.mention AS mention
                   ORDER BY id""",
                ns=ns,
            )
        ]

    assert title_links() == [("a", None), ("b", True)]  # b names it, a's title made it
    assert spacy_client.delete("a") == 1
    assert title_links() == []  # gone with its extraction, mention links and all


def test_full_text_search_stays_in_its_namespace(base_settings: object, namespace: str) -> None:
    docs = [Document("x", "Temozolomide is a chemotherapy drug.", title="Temozolomide")]
    with TeragClient(base_settings, namespace=namespace) as one:  # type: ignore[arg-type]
        one.index(docs, progress=False)
        other = f"{namespace}-b"
        one.index(docs, namespace=other, progress=False)
        try:
            for ns in (namespace, other):
                vector = one.retriever.embed_query("temozolomide")
                flat = flat_ranking(one.store, ns, "temozolomide", vector, 10)
                assert flat.by_text == 1 and flat.by_vector == 1  # not the other's copy
                ((node, _),) = flat.top(10)
                owner = records(one, "MATCH (p) WHERE id(p) = $n RETURN p.namespace AS ns", n=node)
                assert owner[0]["ns"] == ns
        finally:
            one.drop(other)


def test_readers_keep_their_projection_while_an_ingest_holds_the_lease(
    guides: TeragClient,
) -> None:
    ns = guides.settings.namespace
    r = guides.retriever
    g1 = r.ensure_projection(ns)
    guides.store.namespaces.ingest_lease(ns, 60)
    try:
        guides.store.namespaces.bump_version(ns)  # what every ingest batch does
        r._projected.clear()  # another reader, that has not seen the catalog yet
        assert r.ensure_projection(ns) == g1  # no new projection while the ingest writes
    finally:
        guides.store.namespaces.ingest_lease(ns, 0)
    g2 = r.ensure_projection(ns)
    assert g2 != g1
    assert gds.projections(guides.store, ns) == {g2}  # the old one was dropped
    assert guides.stats().projections[0]["graph"] == g2 and guides.stats().projections[0]["mb"] >= 0


def test_projections_past_the_cap_are_evicted_least_recently_used_first(
    guides: TeragClient,
) -> None:
    ns = guides.settings.namespace
    r = guides.retriever
    first = r.ensure_projection(ns)
    r.settings = guides.settings.with_overrides(retrieval={"walk_titles": False})
    second = r.ensure_projection(ns)  # another walk, another projection of this namespace
    assert {first, second} <= gds.projections(guides.store, ns)
    dropped = gds.evict(guides.store, max_bytes=2**40, max_graphs=0, keep=second)
    assert first in dropped and second not in dropped
    assert second in gds.projections(guides.store, ns) and first not in gds.projections(
        guides.store, ns
    )


def test_auto_walks_locally_above_the_threshold(guides: TeragClient) -> None:
    r = guides.retriever
    r.settings = guides.settings.with_overrides(retrieval={"local_above": 2})
    res = guides.retrieve("How are gliomas treated?", top_k=3)
    assert res.walk == "local" and res.graph_relationships > 0
    r.settings = guides.settings.with_overrides(retrieval={"local_above": 10_000})
    assert guides.retrieve("How are gliomas treated?", top_k=3).walk == "global"
