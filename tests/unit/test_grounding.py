"""Mention grounding: which concepts a passage names (no services)."""

from terag_neo4j.core.documents import Passage
from terag_neo4j.indexing.grounding import candidates, mentions


def test_candidates_are_ngrams_without_stopwords_at_their_ends() -> None:
    got = candidates("Radiation therapy is used for basal cell carcinoma of the skin.")
    assert {"radiation therapy", "basal cell carcinoma", "carcinoma of the skin", "skin"} <= got
    assert not any(c.startswith(("is ", "the ", "of ")) or c.endswith((" of", " the")) for c in got)
    assert "of" not in got and "is" not in got


def test_mentions_map_passages_to_every_concept_of_a_name() -> None:
    vocabulary = {
        "basal cell carcinoma": ["ns|concept:basal cell carcinoma"],
        "bcc": ["ns|other:bcc", "ns|organization:bcc"],
    }
    ps = [
        Passage("a", "d", 0, "", "Basal cell carcinoma (BCC) is common."),
        Passage("b", "d", 1, "", "Nothing named here."),
    ]
    assert mentions(ps, vocabulary) == {
        "a": ["ns|concept:basal cell carcinoma", "ns|organization:bcc", "ns|other:bcc"]
    }
