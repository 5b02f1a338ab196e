"""The passage and concept counts a namespace keeps (`bump_version.cypher`: added to by writes
that only add, counted again after deletes) equal the graph's own, on the real Neo4j, after
every kind of write: a first ingest, one that shares concepts with it, a changed document,
mention grounding, a document deleted."""

from __future__ import annotations

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.core.documents import Document

from .conftest import SAMPLE

pytestmark = pytest.mark.integration


def kept_and_actual(client: TeragClient, namespace: str) -> tuple[tuple[int, int], tuple[int, int]]:
    (kept,) = client.store.read("namespace_version", namespace=namespace)
    info = client.stats(namespace)  # counted from the graph itself
    return (kept["passages"], kept["concepts"]), (info.passages, info.concepts)


def test_kept_counts_follow_every_write(spacy_client: TeragClient, namespace: str) -> None:
    seen = []

    def check() -> None:
        kept, actual = kept_and_actual(spacy_client, namespace)
        assert kept == actual
        seen.append(actual)

    spacy_client.index([SAMPLE], progress=False)
    check()
    # New passages whose concepts are partly the namespace's already: only new ones count
    bank = Document(id="bank", title="Bank of England", text="The Bank of England is in London.")
    wolfsburg = Document(
        id="wolfsburg-note", title="Wolfsburg", text="Volkswagen builds cars in Wolfsburg."
    )
    spacy_client.index([bank, wolfsburg], progress=False)
    check()
    # A changed document: its old passage is deleted and its concepts pruned in the write
    spacy_client.index(
        [Document(id="bank", title="Bank of England", text="Threadneedle Street, City of London.")],
        progress=False,
    )
    check()
    assert spacy_client.delete("wolfsburg-note") >= 1
    check()
    assert seen[1][0] == seen[0][0] + 2 and seen[1][1] > seen[0][1]
    assert seen[3][0] == seen[0][0] + 1
