"""Name linking (no NER): which of a question's n-grams become restart concepts."""

from terag_neo4j.extraction import title_concepts
from terag_neo4j.linking import question_spans, select_links, span_norms


def linked(question: str, known: set[str]) -> list[str]:
    return [s.norm for s in select_links(question, question_spans(question), known)]


def test_the_longest_name_wins_over_names_inside_it() -> None:
    q = "Do both directors of films Wrong Turn 5: Bloodlines and Dark River (2017 Film) agree?"
    known = {"wrong turn", "wrong turn 5 bloodlines", "dark river", "dark river 2017 film", "film"}
    assert linked(q, known) == ["wrong turn 5 bloodlines", "dark river 2017 film"]


def test_lower_case_phrasing_and_stopwords_are_not_names() -> None:
    q = "What is the place of birth of the director of film The Return Of Swamp Thing?"
    known = {"place of birth", "film", "director", "what", "return of swamp thing", "who"}
    assert linked(q, known) == ["return of swamp thing"]


def test_a_question_typed_in_lower_case_still_links() -> None:
    assert linked("which state is wolfsburg in", {"wolfsburg", "state"}) == ["state", "wolfsburg"]


def test_spans_are_normalised_like_concept_names() -> None:
    norms = span_norms(question_spans("When did Lothair II's mother die?"))
    assert "lothair ii" in norms and "lothair ii s mother" in norms
    assert all(n == n.strip() and n.islower() for n in norms if n.isalpha())


def test_a_title_is_a_concept_with_and_without_its_disambiguation() -> None:
    names = [c.name for c in title_concepts("Dark River (2017 film)")]
    assert names == ["Dark River (2017 film)", "Dark River"]
    assert [c.type for c in title_concepts("Lothair II")] == ["title"]
    assert title_concepts("") == ()
