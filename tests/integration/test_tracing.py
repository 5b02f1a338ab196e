"""The span tree of one retrieval against the real Neo4j + GDS: every stage under the call, every
Cypher file the retrieval ran as a span named by it, nothing of the question unless
TERAG_TRACE_CONTENT asks. The spans go to the OpenTelemetry SDK's `InMemorySpanExporter` (the
SDK's in-memory exporter, not a collector)."""

from __future__ import annotations

from collections import Counter

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.store import cypher

pytestmark = pytest.mark.integration

QUESTION = "Which engineer designed the car built in Puebla until 2003?"
STAGES = {"projection", "linking", "flat", "embedding", "restart", "walk", "final"}


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """The Cypher files loaded to run a statement (a spy on the real loader, which it calls):
    what the statement spans are checked against."""
    names: Counter[str] = Counter()
    real = cypher.load_cypher

    def spy(name: str) -> str:
        names[name] += 1
        return real(name)

    monkeypatch.setattr(cypher, "load_cypher", spy)
    return names


def _by_id(spans: tuple[ReadableSpan, ...]) -> dict[int, ReadableSpan]:
    return {s.context.span_id: s for s in spans}


def _parent(s: ReadableSpan, index: dict[int, ReadableSpan]) -> ReadableSpan | None:
    return index.get(s.parent.span_id) if s.parent is not None else None


def test_one_retrieval_is_one_trace_of_its_stages_and_statements(
    sample_client: TeragClient, spans: InMemorySpanExporter, loaded: Counter[str]
) -> None:
    result = sample_client.retrieve(QUESTION)
    assert result.passages
    finished = spans.get_finished_spans()
    index = _by_id(finished)
    (root,) = [s for s in finished if s.parent is None]
    assert root.name == "retrieve"
    assert {s.context.trace_id for s in finished} == {root.context.trace_id}
    assert root.attributes is not None
    assert root.attributes["terag.namespace"] == sample_client.settings.namespace

    stages = {s.name.removeprefix("stage "): s for s in finished if s.name.startswith("stage ")}
    assert set(stages) >= STAGES, sorted(stages)
    for name in STAGES:  # the call's own stages, the vector's thread included
        assert _parent(stages[name], index) is root, name
    for half in ("flat text", "flat vector"):
        assert _parent(stages[half], index) is stages["flat"]
    # every timing the result reports has its stage's span (the walk's key is `pagerank`)
    assert {("walk" if k == "pagerank" else k) for k in result.timings} <= set(stages)

    statements = Counter(
        s.name.removeprefix("cypher ") for s in finished if s.name.startswith("cypher ")
    )
    assert statements == loaded, "a statement ran without its span, or the other way round"
    assert {"flat_text", "flat_vector"} <= set(statements)
    for s in finished:
        if s.name.startswith("cypher "):
            assert _parent(s, index) is not None  # inside the retrieval's tree
            assert set(s.attributes or {}) == {"db.system.name", "db.query.summary"}

    # Nothing of the question anywhere: not its text, not a word of it
    words = {w for w in QUESTION.lower().rstrip("?").split() if len(w) > 4}
    for s in finished:
        for value in (s.attributes or {}).values():
            text = str(value).lower()
            assert QUESTION.lower() not in text
            assert not any(w in text.split() for w in words), (s.name, value)


def test_the_question_is_in_the_span_only_when_the_setting_asks(
    base_settings: Settings, sample_client: TeragClient, spans: InMemorySpanExporter
) -> None:
    ns = sample_client.settings.namespace
    with TeragClient(base_settings, namespace=ns, trace_content=True) as client:
        client.retrieve(QUESTION)
    (root,) = [s for s in spans.get_finished_spans() if s.parent is None]
    assert root.attributes is not None and root.attributes["terag.question"] == QUESTION
