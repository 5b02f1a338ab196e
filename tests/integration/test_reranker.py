"""The reranker stage, end to end on the real Neo4j with the tiny cross-encoder made here
(tests/fixtures/tiny_models.py) as a sentence-transformers CrossEncoder, as an ONNX folder, and
behind a rerank endpoint (a local stand-in computing with the same model, in the Cohere/Jina and
the TEI shapes). The reranked order is the model's, its time is a stage of the result and its
tokens a row of the ledger; it is off unless set, and a call can turn it off."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from pydantic import SecretStr

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.results import RetrievalResult
from terag_neo4j.llm.ledger import Stage
from terag_neo4j.retrieval.reranked import NoReranker, passage_text
from tests.fixtures.standin_endpoints import KEY, StandIn
from tests.fixtures.tiny_models import TinyModels

from .conftest import SAMPLE, connection_env

pytestmark = pytest.mark.integration
QUESTION = "Which city is the headquarters of Volkswagen?"
TOP = 6


@pytest.fixture(scope="module")
def built(base_settings: Settings, tiny_models: TinyModels) -> Iterator[tuple[Settings, str]]:
    """The sample corpus indexed once with the tiny bi-encoder; settings without a reranker."""
    settings = base_settings.with_overrides(
        embedding_model=f"st:{tiny_models.bi_encoder}", rerank_top=TOP
    )
    ns = "rerank-" + __import__("uuid").uuid4().hex[:8]
    with TeragClient(settings, namespace=ns) as client:
        client.index([SAMPLE], progress=False)
        yield settings, ns
        client.drop(ns)


def model_order(tiny: TinyModels, plain: RetrievalResult) -> tuple[list[str], np.ndarray]:
    """The passages ordered by the cross-encoder's own scores, computed here apart."""
    from sentence_transformers import CrossEncoder

    ce = CrossEncoder(str(tiny.cross_encoder), device="cpu", local_files_only=True)
    scores = ce.predict([(QUESTION, passage_text(p)) for p in plain.passages])
    order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))
    return [plain.passages[i].id for i in order], np.asarray(scores)[order]


@pytest.mark.parametrize("kind", ["st", "onnx"])
def test_the_reranked_order_is_the_models(
    built: tuple[Settings, str], tiny_models: TinyModels, kind: str
) -> None:
    settings, ns = built
    folder = tiny_models.cross_encoder if kind == "st" else tiny_models.cross_encoder_onnx
    with TeragClient(settings, namespace=ns, reranker=f"{kind}:{folder}") as client:
        for mode in ("pagerank", "flat", "dense"):
            plain = client.retrieve(QUESTION, top_k=TOP, mode=mode, rerank=False)  # type: ignore[arg-type]
            assert plain.score_kind != "rerank" and "rerank" not in plain.timings
            res = client.retrieve(QUESTION, top_k=3, mode=mode, run_id=f"q-{mode}")  # type: ignore[arg-type]
            ids, scores = model_order(tiny_models, plain)
            assert [p.id for p in res.passages] == ids[:3], mode
            assert len(set(scores.round(4))) > 1  # the scores differ: the order is the model's
            if kind == "st":
                assert np.allclose([p.score for p in res.passages], scores[:3], atol=1e-5)
            assert res.score_kind == "rerank" and res.reranker.endswith(folder.name)
            assert res.timings["rerank"] > 0
            row = client.ledger.totals(stage=Stage.RERANK, run_id=f"q-{mode}")
            assert row.calls == 1 and row.items == TOP and row.input_tokens > 0


@pytest.mark.parametrize("shape", ["cohere", "tei"])
def test_a_rerank_endpoint_in_either_shape(
    built: tuple[Settings, str], tiny_models: TinyModels, standin: StandIn, shape: str
) -> None:
    settings, ns = built
    url = f"{standin.url}/v1/rerank#tiny-rerank" if shape == "cohere" else f"{standin.url}/rerank"
    standin.requests.clear()
    with TeragClient(
        settings, namespace=ns, reranker=url, reranker_api_key=SecretStr(KEY)
    ) as client:
        plain = client.retrieve(QUESTION, top_k=TOP, rerank=False)
        res = client.retrieve(QUESTION, top_k=4)
    ids, _ = model_order(tiny_models, plain)
    assert [p.id for p in res.passages] == ids[:4]
    sent = standin.requests[-1]
    if shape == "cohere":
        assert sent["model"] == "tiny-rerank" and len(sent["documents"]) == TOP
    else:
        assert "model" not in sent and len(sent["texts"]) == TOP


def test_off_by_default_and_asked_for_without_one(built: tuple[Settings, str]) -> None:
    settings, ns = built
    assert settings.reranker is None
    with TeragClient(settings, namespace=ns) as client:
        res = client.retrieve(QUESTION)
        assert res.score_kind != "rerank" and "rerank" not in res.timings
        with pytest.raises(NoReranker, match="TERAG_RERANKER") as refused:
            client.retrieve(QUESTION, rerank=True)
    assert "\n" not in str(refused.value)


def test_langchain_and_graphrag_take_the_option(
    built: tuple[Settings, str], tiny_models: TinyModels
) -> None:
    from terag_neo4j.integrations.graphrag import TeragGraphRAGRetriever
    from terag_neo4j.integrations.langchain import TeragRetriever

    settings, ns = built
    with TeragClient(settings, namespace=ns, reranker=f"st:{tiny_models.cross_encoder}") as client:
        plain = client.retrieve(QUESTION, top_k=TOP, rerank=False)
        ids, _ = model_order(tiny_models, plain)
        docs = TeragRetriever(client=client, k=3).invoke(QUESTION)
        assert [d.metadata["passage_id"] for d in docs] == ids[:3]
        assert {d.metadata["score_kind"] for d in docs} == {"rerank"}
        off = TeragRetriever(client=client, k=3, rerank=False).invoke(QUESTION)
        assert {d.metadata["score_kind"] for d in off} == {"pagerank_mass"}
        per_call = TeragRetriever(client=client, k=3).invoke(QUESTION, rerank=False)
        assert {d.metadata["score_kind"] for d in per_call} == {"pagerank_mass"}
        graphrag = TeragGraphRAGRetriever(client=client)
        found = graphrag.get_search_results(QUESTION, top_k=3)
        assert [r["passage_id"] for r in found.records] == ids[:3]
        assert found.metadata["score_kind"] == "rerank"
        skipped = graphrag.get_search_results(QUESTION, top_k=3, rerank=False)
        assert skipped.metadata["score_kind"] == "pagerank_mass"


def test_the_cli_reranks_and_can_skip_it(
    built: tuple[Settings, str], tiny_models: TinyModels
) -> None:
    settings, ns = built
    env = {
        **connection_env(settings),
        "PATH": __import__("os").environ["PATH"],
        "HF_HUB_OFFLINE": "1",
        "TERAG_EMBEDDING_MODEL": f"st:{tiny_models.bi_encoder}",
        "TERAG_RERANKER": f"st:{tiny_models.cross_encoder}",
        "TERAG_RERANK_TOP": str(TOP),
        "TERAG_EXTRACTOR": "spacy",
    }

    def run(*extra: str) -> dict[str, Any]:
        cmd = [sys.executable, "-m", "terag_neo4j.cli", "retrieve", QUESTION, "-n", ns, "--json"]
        proc = subprocess.run(
            [*cmd, *extra], env=env, capture_output=True, text=True, timeout=300, check=False
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        out: dict[str, Any] = json.loads(proc.stdout)
        return out

    on, off = run("-k", "2"), run("-k", "2", "--no-rerank")
    assert on["score_kind"] == "rerank" and "rerank" in on["timings"]
    assert off["score_kind"] == "pagerank_mass" and "rerank" not in off["timings"]
