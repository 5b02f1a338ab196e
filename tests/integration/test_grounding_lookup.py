"""Mention grounding's word-by-word lookup against the real Neo4j: it finds exactly the concepts
that reading the whole vocabulary finds."""

from __future__ import annotations

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.core.documents import Document
from terag_neo4j.indexing.grounding import mentions, named_concepts
from terag_neo4j.indexing.loading import to_passages

from .conftest import SAMPLE

pytestmark = pytest.mark.integration


def test_the_word_by_word_lookup_finds_what_the_whole_vocabulary_finds(
    spacy_client: TeragClient, namespace: str
) -> None:
    spacy_client.index([SAMPLE], progress=False)
    spacy_client.index(
        [Document(id="bank", title="Bank of England", text="The Bank of England is in London.")],
        progress=False,
    )
    texts = [
        "Wolfsburg is where Volkswagen builds the Beetle; the Bank of England is in London.",
        "The Bank of England and the bank of the Rhine in Germany, Ferdinand Porsche, Hanover.",
        "of the and",
        "",
    ]
    docs = [Document(id=f"t{i}", title="", text=t, is_passage=True) for i, t in enumerate(texts)]
    passages = list(to_passages(docs, 512, 0))
    store = spacy_client.store
    vocabulary = store.passages.concept_vocabulary(namespace)
    assert "bank of england" in vocabulary  # a name with a stopword inside it
    expected = mentions(passages, vocabulary)
    found = {pid: uids for pid, uids in named_concepts(store, namespace, passages).items() if uids}
    assert found == expected
    assert len(found.get("t0", [])) >= 3 and "t2" not in found
