"""Speed and scale paths against the real Neo4j + GDS: lazy concept vectors, a projection
dropped behind the client's back, and the resumable scale bench."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from terag_bench.scale import run_scale

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings

from .conftest import SAMPLE

pytestmark = pytest.mark.integration

COUNT_VECTORS = (
    "MATCH (c:Concept {namespace: $ns}) "
    "RETURN count(c) AS concepts, count(c.embedding) AS with_vectors"
)


def _vectors(client: TeragClient, ns: str) -> tuple[int, int]:
    with client.store.session() as s:
        rec = s.run(COUNT_VECTORS, ns=ns).single()
    assert rec is not None
    return int(rec["concepts"]), int(rec["with_vectors"])


def test_concept_vectors_are_written_when_semantic_matching_first_needs_them(
    base_settings: Settings, namespace: str
) -> None:
    with TeragClient(base_settings, namespace=namespace) as client:
        client.index([SAMPLE], progress=False)
        concepts, with_vectors = _vectors(client, namespace)
        assert concepts > 0 and with_vectors == 0
        client.retrieve("Who designed the Volkswagen Beetle?")  # default: no vectors needed
        assert _vectors(client, namespace)[1] == 0
        client.retriever.settings = client.settings.with_overrides(preset="paper")
        res = client.retrieve("Which company did Ferdinand Porsch found?", top_k=3)
        assert _vectors(client, namespace) == (concepts, concepts)
        assert any(m.match == "semantic" for m in res.matches)


def test_eager_concept_vectors_are_written_with_the_concepts(
    base_settings: Settings, namespace: str
) -> None:
    with TeragClient(base_settings, namespace=namespace, concept_vectors="eager") as client:
        client.index([SAMPLE], progress=False)
        concepts, with_vectors = _vectors(client, namespace)
        assert concepts > 0 and with_vectors == concepts


def test_a_projection_dropped_elsewhere_is_projected_again(
    base_settings: Settings, namespace: str
) -> None:
    with TeragClient(base_settings, namespace=namespace) as client:
        client.index([SAMPLE], progress=False)
        first = client.retrieve("Who designed the Volkswagen Beetle?", top_k=3)
        graph = client.retriever.ensure_projection(namespace)
        with client.store.session() as s:  # another process drops it
            s.run("CALL gds.graph.drop($g) YIELD graphName RETURN graphName", g=graph).consume()
        again = client.retrieve("Who designed the Volkswagen Beetle?", top_k=3)
        assert [p.id for p in again.passages] == [p.id for p in first.passages]


def test_scale_bench_measures_and_resumes(base_settings: Settings, tmp_path: Path) -> None:
    out = tmp_path / "out"
    prefix = f"s{uuid.uuid4().hex[:8]}"
    settings = base_settings
    try:
        state = run_scale(
            settings, ["llm"], [150, 300], out, tmp_path / "work", questions=10, prefix=prefix
        )
        rows = state["results"]["llm"]
        assert set(rows) == {"150", "300"}
        assert rows["150"]["passages"] == 150 and rows["300"]["passages"] == 300
        assert rows["300"]["added"] == 150  # grown from the 150-passage namespace
        assert rows["300"]["has_passage"] > rows["150"]["has_passage"]
        assert rows["300"]["retrieval_ms"]["p50"] > 0 and rows["300"]["questions"] == 10
        warm = rows["300"]["retrieval_warm_ms"]  # the same questions, asked again
        assert warm["p95"] >= warm["p50"] > 0
        assert rows["300"]["python_query_peak_mib"] > 0  # the query process's own peak
        assert (out / "scale.png").is_file()
        # A rerun keeps finished sizes and measures only the new one.
        again = run_scale(
            settings, ["llm"], [150, 300], out, tmp_path / "work", questions=10, prefix=prefix
        )
        assert again["results"]["llm"]["150"] == rows["150"]
        assert json.loads((out / "scale.json").read_text())["results"]["llm"]["300"]
    finally:
        with TeragClient(settings, namespace=f"{prefix}_llm") as client:
            client.drop(f"{prefix}_llm")
