"""The ask stream with a real reader: a `terag serve` of its own pointed at the session's
Ollama, token lines before done, and done's answer the token lines put together."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from terag_neo4j.config import Settings
from terag_neo4j.retrieval.answer import parse_answer
from tests.service.conftest import KEY_A_READ, Service, running_service, service_env

pytestmark = [pytest.mark.integration, pytest.mark.ollama]


@pytest.fixture(scope="module")
def ollama_service(
    base_settings: Settings,
    tenants: tuple[str, str],
    ollama_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Service]:
    env = service_env(base_settings, *tenants)
    env.update(OLLAMA_HOST=ollama_settings.ollama_host, TERAG_LLM_MODEL=ollama_settings.llm_model)
    log = tmp_path_factory.mktemp("serve-ollama") / "serve.log"
    with running_service(env, base_settings, tenants, log) as svc:
        yield svc


def test_ask_stream_sends_tokens_before_done(ollama_service: Service) -> None:
    body = {"question": "Who designed the Volkswagen Beetle?", "top_k": 3, "stream": True}
    with (
        ollama_service.client(KEY_A_READ) as http,
        http.stream("POST", f"/v1/namespaces/{ollama_service.ns_a}/ask", json=body) as r,
    ):
        assert r.status_code == 200
        lines = [json.loads(x) for x in r.iter_lines() if x.strip()]
    events = [x["event"] for x in lines]
    assert events[-1] == "done", lines[-1]
    assert events[0] == "passages" and "token" in events
    assert events.index("token") < events.index("done")
    done = lines[-1]
    streamed = "".join(x["text"] for x in lines if x["event"] == "token")
    assert done["answer"] and done["answer"] == parse_answer(json.dumps({"answer": streamed}))
    assert done["input_tokens"] > 0 and done["output_tokens"] > 0
    # The citations the answer's markers make: each names a passage of the first line, with its
    # provenance; the answer line before done says the same
    ids = [p["id"] for p in lines[0]["passages"]]
    for c in done["citations"]:
        assert c["passage_id"] == ids[c["marker"] - 1] and c["provenance"]["source"]
        assert f"[{c['marker']}]" in done["answer"]
    answer_line = next(x for x in lines if x["event"] == "answer")
    assert (answer_line["citations"], answer_line["uncited"]) == (
        done["citations"],
        done["uncited"],
    )
    assert done["streamed"] == "answer_value"
