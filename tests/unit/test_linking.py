"""Name linking (no NER): which of a question's n-grams name concepts (no services)."""

from terag_neo4j.core.concepts import stem_key, stopwords, title_concepts
from terag_neo4j.retrieval.linking import question_spans, select_links, span_keys


def linked(question: str, names: set[str]) -> list[str]:
    stems = {stem_key(n) for n in names}
    return [s.norm for s in select_links(question_spans(question), names, stems)]


def test_the_longest_name_wins_over_names_inside_it() -> None:
    q = "Do both directors of films Wrong Turn 5: Bloodlines and Dark River (2017 Film) agree?"
    names = {"wrong turn", "wrong turn 5 bloodlines", "dark river", "dark river 2017 film", "film"}
    # "films" names the concept "film" (by its stem); how much it counts is the restart
    # vector's business: a name in half the corpus weighs next to nothing
    assert linked(q, names) == ["films", "wrong turn 5 bloodlines", "dark river 2017 film"]


def test_case_does_not_decide_a_lower_case_domain_term_links() -> None:
    # the rule of earlier versions dropped every lower-case span once a question had a capital
    q = "When was the transistor invented at Bell Labs?"
    assert linked(q, {"transistor", "bell labs"}) == ["transistor", "bell labs"]
    assert linked("which state is wolfsburg in", {"wolfsburg", "state"}) == ["state", "wolfsburg"]


def test_inflections_link_both_ways() -> None:
    assert linked("How are gliomas graded?", {"glioma"}) == ["gliomas"]
    assert linked("What is a glioma?", {"gliomas"}) == ["glioma"]
    assert linked("Which therapies treat lymph nodes?", {"therapy", "lymph node"}) == [
        "therapies",
        "lymph nodes",
    ]
    assert stem_key("status") == "status" and stem_key("glass") == "glass"


def test_lone_stopwords_and_short_words_are_not_names() -> None:
    q = "What is the name of it in the US?"
    assert linked(q, {"what", "it", "name", "us"}) == []
    assert {"what", "the", "name"} <= stopwords()
    norms, _ = span_keys(question_spans(q))
    assert "it" not in norms and "name of it" in norms


def test_spans_are_normalised_like_concept_names() -> None:
    norms, stems = span_keys(question_spans("When did Lothair II's mother die?"))
    assert "lothair ii" in norms and "lothair ii s mother" in norms
    assert "lothair ii s mother" in stems


def test_a_title_is_a_concept_with_and_without_its_disambiguation() -> None:
    names = [c.name for c in title_concepts("Dark River (2017 film)")]
    assert names == ["Dark River (2017 film)", "Dark River"]
    assert [c.type for c in title_concepts("Lothair II")] == ["title"]
    assert title_concepts("") == ()
