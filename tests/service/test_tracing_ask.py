"""End to end with the reader: a real `terag serve` on a real Ollama, tracing with the SDK's
console exporter, answers one `ask`: its trace has every retrieval stage, the reader's, and every
Neo4j statement under the request's server span, and no question or answer text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from terag_neo4j.config import Settings
from tests.service.conftest import KEY_A_READ, Service, running_service, service_env
from tests.service.test_tracing_serve import QUESTION, STAGES, check_trace, trace_of

pytestmark = [pytest.mark.integration, pytest.mark.ollama]


@pytest.fixture(scope="module")
def traced_reader(
    base_settings: Settings,
    tenants: tuple[str, str],
    ollama_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Service, Path]]:
    env = {k: v for k, v in service_env(base_settings, *tenants).items() if "OTEL_" not in k}
    env.update(OLLAMA_HOST=ollama_settings.ollama_host, TERAG_LLM_MODEL=ollama_settings.llm_model)
    env.update(OTEL_TRACES_EXPORTER="console", OTEL_BSP_SCHEDULE_DELAY="100")
    folder = tmp_path_factory.mktemp("traced-ask")
    spans = folder / "spans.json"
    with running_service(env, base_settings, tenants, folder / "serve.log", stdout=spans) as svc:
        yield svc, spans


def test_an_ask_is_one_trace_with_every_stage_the_reader_and_every_statement(
    traced_reader: tuple[Service, Path],
) -> None:
    svc, path = traced_reader
    rid = "trace-ask-1"
    with svc.client(KEY_A_READ) as http:
        r = http.post(
            f"/v1/namespaces/{svc.ns_a}/ask",
            json={"question": QUESTION},
            headers={"X-Request-ID": rid},
        )
    assert r.status_code == 200, r.text
    answer = r.json()["answer"]
    want = {f"stage {s}" for s in STAGES} | {"retrieve", "stage reader"}
    spans = trace_of(path, rid, want)
    statements = check_trace(spans, "/v1/namespaces/{namespace}/ask", rid)
    assert {"namespace_version", "flat_text", "flat_vector"} <= statements
    text = path.read_text(encoding="utf-8")
    assert QUESTION not in text
    assert len(answer) < 8 or answer not in text
