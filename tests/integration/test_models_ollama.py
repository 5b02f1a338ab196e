"""Model choice against a real Ollama: a model the user brings works by name, a missing one fails.

Stays on SmolLM2 (the catalog's smallest); the big catalog models are exercised by
`terag bench-extraction`, not by the test suite.
"""

from __future__ import annotations

import ollama
import pytest

from terag_neo4j.config import Settings
from terag_neo4j.llm import Message, OllamaLLM, Stage
from terag_neo4j.local import ollama as srv

pytestmark = [pytest.mark.integration, pytest.mark.ollama]


def test_a_model_already_on_the_server_is_used_by_name(ollama_settings: Settings) -> None:
    client = ollama.Client(host=ollama_settings.ollama_host)
    client.copy(ollama_settings.llm_model, "users-own-model-terag")
    try:
        settings = ollama_settings.model_copy(update={"llm_model": "users-own-model-terag"})
        assert srv.ensure_model(settings) is False  # used as it is, not re-created
        llm = OllamaLLM(settings)
        try:
            out = llm.complete([Message("user", "Say hi.")], stage=Stage.ANSWER, max_tokens=8)
        finally:
            llm.close()
        assert out.output_tokens > 0 and out.model.startswith("users-own-model-terag")
    finally:
        client.delete("users-own-model-terag")


def test_a_missing_model_outside_the_catalog_is_a_one_line_error(ollama_settings: Settings) -> None:
    settings = ollama_settings.model_copy(update={"llm_model": "no-such-model-terag:7b"})
    with pytest.raises(srv.OllamaSetupError) as info:
        srv.ensure_model(settings)
    message = str(info.value)
    assert "'no-such-model-terag:7b' is not on the Ollama server" in message
    assert "\n" not in message and "qwen-1.5b" in message


def test_the_catalog_model_is_current_after_ensure_model(ollama_settings: Settings) -> None:
    srv.ensure_model(ollama_settings)  # re-creates it if it was made with other settings
    assert srv.ensure_model(ollama_settings) is False
    shown = ollama.Client(host=ollama_settings.ollama_host).show(ollama_settings.llm_model)
    assert srv.model_is_current(shown, ollama_settings)
