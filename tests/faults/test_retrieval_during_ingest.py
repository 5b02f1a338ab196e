"""Retrievals loop while an ingest writes the same namespace batch by batch (new documents, and a
changed one whose old passage goes): no call fails, and every passage a call returns is one the
graph held at a committed version, with the text it had then."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.indexing.loading import load_documents
from terag_neo4j.indexing.pipeline import Indexer
from terag_neo4j.store import GraphStore

pytestmark = [pytest.mark.integration, pytest.mark.faults]

SAMPLE = Path(__file__).resolve().parents[2] / "terag_neo4j" / "data" / "sample"
QUESTIONS = [
    "Which city is the headquarters of Volkswagen?",
    "Who designed the Volkswagen Beetle?",
    "Where are the new plants of Volkswagen?",
]
CITIES = ["Emden", "Zwickau", "Dresden", "Osnabrück", "Kassel", "Salzgitter", "Hanover"]


def committed_passages(store: GraphStore, namespace: str) -> set[tuple[str, str]]:
    with store.session() as s:
        rows = s.run(
            "MATCH (p:Passage {namespace: $ns}) RETURN p.id AS id, p.text AS text", ns=namespace
        ).data()
    return {(r["id"], r["text"]) for r in rows}


def test_retrievals_during_an_ingest_see_committed_data_only(
    base_settings: Settings, namespace: str
) -> None:
    sample = list(load_documents([SAMPLE]))
    new_docs = [
        Document(
            id=f"plant-{i}",
            title=f"Volkswagen plant {city}",
            text=f"Volkswagen builds a new plant in {city}, near its headquarters in Wolfsburg. "
            f"The {city} plant makes the Beetle's successors.",
        )
        for i, city in enumerate(CITIES * 3)
    ]
    first = sample[0]
    changed = Document(
        id=first.id,
        title=first.title,
        text=first.text + "\n\nVolkswagen moved its design studio to Potsdam.",
        source=first.source,
        title_is_name=first.title_is_name,
    )
    calls: list[tuple[float, list[tuple[str, str]] | None, BaseException | None]] = []
    done = threading.Event()

    with (
        TeragClient(base_settings, namespace=namespace) as writer,
        TeragClient(base_settings, namespace=namespace) as reader,
    ):
        writer.index(sample, progress=False)
        seen = committed_passages(writer.store, namespace)  # every committed state's passages
        assert reader.retrieve(QUESTIONS[0]).passages

        indexer = Indexer(
            writer.settings,
            writer.store,
            writer.extractor,
            writer.embedder,
            writer.cache,
            batch_passages=3,
        )
        write = writer.store.passages.write

        def write_and_record(*args: object, **kw: object) -> object:
            stats = write(*args, **kw)  # type: ignore[arg-type]
            seen.update(committed_passages(writer.store, namespace))  # after the commit
            return stats

        writer.store.passages.write = write_and_record  # type: ignore[method-assign]

        def loop() -> None:
            i = 0
            while not done.is_set():
                t = time.monotonic()
                try:
                    res = reader.retrieve(QUESTIONS[i % len(QUESTIONS)], top_k=5)
                    calls.append((t, [(p.id, p.text) for p in res.passages], None))
                except BaseException as e:
                    calls.append((t, None, e))
                i += 1

        worker = threading.Thread(target=loop, daemon=True)
        worker.start()
        try:
            report = indexer.index([*new_docs, changed], namespace, progress=False)
            # a few more calls on the final version
            n = len(calls)
            deadline = time.monotonic() + 60
            while len(calls) < n + 3 and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            done.set()
            worker.join(120)
        assert report.passages_new >= len(new_docs)
        assert report.passages_replaced + report.passages_removed >= 1  # the changed document
        assert writer.stats().version >= 1 + len(new_docs) // 3

    errors = [e for _, _, e in calls if e is not None]
    assert not errors, [f"{type(e).__name__}: {getattr(e, 'message', e)}" for e in errors[:3]]
    answered = [r for _, r, _ in calls if r is not None]
    assert len(answered) >= 10, "the loop hardly ran while the ingest wrote"
    for result in answered:
        assert result, "a retrieval returned no passage"
        uncommitted = [p for p in result if p not in seen]
        assert not uncommitted, f"passages never committed with this text: {uncommitted}"
    # The loop saw the ingest's passages arrive, not only the sample's.
    assert any(pid.startswith("plant-") for r in answered for pid, _ in r)
