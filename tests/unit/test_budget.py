"""Budget mode's pure parts: how many core passages, which ones, and how concepts merge."""

from __future__ import annotations

import pytest
from terag_bench.reference_tokens import (
    HIPPORAG_NER_PREFIX_TOKENS,
    count_tokens,
    ner_answer_tokens,
    ner_prompt_tokens,
)

from terag_neo4j.config import Settings, SettingsError
from terag_neo4j.core.concepts import Concept
from terag_neo4j.indexing.budget import choose, core_target, merge_concepts, rank
from terag_neo4j.indexing.pipeline import IngestReport


@pytest.mark.parametrize(
    ("beta", "n", "want"),
    [
        (0.0, 1890, 0),
        (0.05, 1890, 95),
        (0.1, 1890, 189),
        (0.2, 1890, 378),
        (1.0, 1890, 1890),
        (0.05, 8, 1),
        (0.5, 3, 2),
        (0.3, 0, 0),
    ],
)
def test_core_target_is_the_ceiling_of_beta_n(beta: float, n: int, want: int) -> None:
    assert core_target(beta, n) == want


def test_core_target_refuses_a_budget_outside_0_1() -> None:
    with pytest.raises(ValueError, match=r"0\.\.1"):
        core_target(1.5, 10)


def test_rank_breaks_ties_by_id_so_reruns_agree() -> None:
    assert rank({"b": 1.0, "a": 1.0, "c": 2.0}) == ["c", "a", "b"]


def test_choose_tops_up_the_core_and_never_demotes() -> None:
    scores = {"p1": 0.9, "p2": 0.8, "p3": 0.7, "p4": 0.1}
    assert choose(scores, [], 2) == ["p1", "p2"]
    # a larger budget adds the best passages not chosen yet
    assert choose(scores, ["p1", "p2"], 3) == ["p3"]
    # an earlier choice made on another graph keeps its passages and counts against the budget
    assert choose(scores, ["p4"], 2) == ["p1"]
    # a core as large as the budget (a rerun) or larger (β lowered) gets nothing
    assert choose(scores, ["p1", "p2"], 2) == []
    assert choose(scores, ["p1", "p2", "p3"], 1) == []


SPACY = (
    Concept("person", "Carl Rogers"),
    Concept("concept", "client-centered therapy"),
    Concept("title", "Carl Rogers"),
)
LLM = (Concept("other", "Carl Rogers"), Concept("other", "1940s"), Concept("other", "Chicago"))


def test_add_merge_maps_llm_names_onto_the_graphs_concepts() -> None:
    merged = merge_concepts(SPACY, LLM, "add", known={"chicago": ("location", "Chicago")})
    keys = [c.key for c in merged]
    # spaCy's person, not an `other` twin; Chicago as the namespace already types it
    assert keys == [
        "person:carl rogers",
        "concept:client centered therapy",
        "title:carl rogers",
        "other:1940s",
        "location:chicago",
    ]


def test_replace_merge_keeps_only_the_llm_names() -> None:
    merged = merge_concepts(SPACY, LLM, "replace")
    assert [c.key for c in merged] == ["person:carl rogers", "other:1940s", "other:chicago"]


def test_a_title_is_never_the_target_of_an_llm_name() -> None:
    merged = merge_concepts((Concept("title", "Chicago"),), (Concept("other", "Chicago"),), "add")
    assert {c.key for c in merged} == {"title:chicago", "other:chicago"}


def test_budget_report_counts_tokens_per_passage_of_the_corpus() -> None:
    r = IngestReport("r", "ns", "spacy", "m", passages_total=100, extracted_fresh=100)
    r.input_tokens, r.output_tokens = 1000, 200
    assert r.input_per_passage == 10.0  # without a budget: per extracted passage
    r.llm_budget = 0.1
    r.core_passages = 10
    assert r.input_per_passage == 10.0 and r.output_per_passage == 2.0
    r.extracted_fresh = 0  # a rerun that only extracted core passages still divides by the corpus
    assert r.input_per_passage == 10.0
    assert "LLM budget 0.1" in r.summary()


def test_budget_needs_an_llm_extractor() -> None:
    with pytest.raises(SettingsError, match="TERAG_LLM_BUDGET"):
        Settings(extractor="spacy", llm_budget=0.1)
    with pytest.raises(SettingsError, match="llm_budget"):
        Settings(extractor="ollama", llm_budget=1.5)
    assert Settings(extractor="ollama", llm_budget=0.1).llm_budget == 0.1


def test_reference_prompt_tokens_use_cl100k() -> None:
    # cl100k_base splits these as tiktoken does (ids 9906 "Hello", 1917 " world")
    assert count_tokens("Hello world") == 2
    text = "Radio City\nRadio City is India's first private FM radio station."
    assert ner_prompt_tokens(text) == HIPPORAG_NER_PREFIX_TOKENS + 4 + count_tokens(text) + 3
    assert ner_answer_tokens(["India"]) == count_tokens('{"named_entities": ["India"]}')
    assert ner_answer_tokens(["India", "Radio City"]) > ner_answer_tokens(["India"])
