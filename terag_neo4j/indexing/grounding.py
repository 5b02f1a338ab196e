"""Mention grounding: every passage is linked to each concept whose name it contains.

An extractor sees a concept where it happens to tag it (spaCy's noun chunks vary with the
sentence, an LLM skips names), so a concept's passages are a sample of where it is named. After
an ingest writes its passages, each is linked (HAS_PASSAGE {mention: true}) to every concept of
the namespace whose normalised name occurs in its normalised text as whole words: zero tokens.
A concept's frequency then counts where it is named, which is what specificity (1/f) should
measure, and the walk can reach every passage that names it. A concept still exists only while
some passage's extraction has it (`prune_concepts.cypher`).
"""

from __future__ import annotations

from collections.abc import Iterable

from terag_neo4j.indexing.documents import Passage
from terag_neo4j.indexing.extraction import normalize_name
from terag_neo4j.retrieval.linking import stopwords

MAX_WORDS = 6  # longer names are rare; every n-gram length costs a pass over the text


def candidates(text: str, max_words: int = MAX_WORDS) -> set[str]:
    """The n-grams of `text` that could be a concept's name: no stopword at either end, no
    single word of fewer than three letters."""
    words = normalize_name(text).split()
    stop = stopwords()
    out: set[str] = set()
    for i, first in enumerate(words):
        if first in stop:
            continue
        for j in range(i, min(len(words), i + max_words)):
            last = words[j]
            if last in stop:
                continue
            if i == j and len(first) < 3:
                continue
            out.add(" ".join(words[i : j + 1]))
    return out


def passage_candidates(passage: Passage) -> set[str]:
    return candidates(passage.content)


def mentions(passages: Iterable[Passage], vocabulary: dict[str, list[str]]) -> dict[str, list[str]]:
    """{passage id: uids of the concepts it names}, from {normalised name: concept uids}."""
    out: dict[str, list[str]] = {}
    for p in passages:
        found = sorted({uid for n in passage_candidates(p) for uid in vocabulary.get(n, ())})
        if found:
            out[p.id] = found
    return out
