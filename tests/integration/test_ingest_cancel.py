"""Cancelling an ingest with `should_stop`: `IngestCancelled` is raised at the next step, the
batches written before it are whole, and indexing the same documents again completes the
graph exactly as one uninterrupted ingest builds it. Real Neo4j, spaCy and embedder."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from terag_neo4j import IngestCancelled
from terag_neo4j.client import TeragClient
from terag_neo4j.core.documents import Document
from terag_neo4j.indexing.pipeline import Indexer
from tests.fixtures.neo4j import wipe_namespace

TOPICS = ["harbour", "lighthouse", "railway", "canal", "quarry", "market", "parish", "mill"]


def documents() -> list[Document]:
    return [
        Document(
            id=f"town-{n}",
            title=f"Town {n}",
            text="\n\n".join(
                f"The {TOPICS[(n + k) % len(TOPICS)]} of Town {n} opened in {1800 + n * 7 + k}. "
                f"Its keeper, Ada {TOPICS[k % len(TOPICS)].title()}, kept the ledger of Town {n}."
                for k in range(4)
            ),
        )
        for n in range(12)
    ]


@pytest.fixture
def clean_namespace(spacy_client: TeragClient) -> Iterator[str]:
    """The same documents indexed without interruption, in a namespace of their own."""
    ns = f"test_{uuid.uuid4().hex[:8]}"
    try:
        spacy_client.index(documents(), namespace=ns, progress=False)
        yield ns
    finally:
        wipe_namespace(spacy_client.store.driver, spacy_client.settings.neo4j_database, ns)


def test_a_cancelled_ingest_resumes_to_the_graph_of_a_clean_one(
    spacy_client: TeragClient,
    namespace: str,
    clean_namespace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client, docs = spacy_client, documents()
    # Told to stop at once: nothing is read, nothing is written
    with pytest.raises(IngestCancelled, match="ingest cancelled while chunking"):
        client.index(docs, progress=False, should_stop=lambda: True)
    assert client.store.read("namespace_version", namespace=namespace) == []

    # Told to stop after the first batch's write, with batches of 8 passages
    writes = 0
    write = client.store.passages.write

    def counting_write(*args: object, **kw: object) -> object:
        nonlocal writes
        writes += 1
        return write(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(client.store.passages, "write", counting_write)
    indexer = Indexer(
        client.settings,
        client.store,
        client.extractor,
        client.namespace_embedder(namespace),
        client.cache,
        batch_passages=8,
    )
    # The next batch is extracted and embedded while the first is written: the cancel is seen
    # by whichever stage asks first, and the second batch's write is never begun.
    with pytest.raises(
        IngestCancelled, match=r"while (extracting concepts|embedding passages|writing passages)"
    ):
        indexer.index(docs, namespace, progress=False, should_stop=lambda: writes >= 1)
    monkeypatch.undo()
    assert writes == 1
    assert client.stats(namespace).passages == 8  # the first batch, whole; nothing of the next

    # Indexing the same documents again resumes: the first batch is kept, the rest added
    report = client.index(docs, progress=False, should_stop=lambda: False)
    assert report.passages_unchanged == 8 and report.passages_new == report.passages_total - 8
    assert client.store.namespaces.fingerprint(namespace) == client.store.namespaces.fingerprint(
        clean_namespace
    )
