"""The `openai:` LLM backend: any server that speaks /v1/chat/completions (vLLM, llama.cpp's
llama-server, LM Studio, LiteLLM, TGI, Ollama's own /v1, a hosted API), through the official
`openai` client (the `openai` extra).

Token counts are the server's `usage` block (`prompt_tokens`, `completion_tokens`); a streamed
reply asks for it in its last chunk (`stream_options.include_usage`). A server that sends none
leaves the call's counts unknown (None), never estimated. The client's own retries are off:
tenacity retries 429 (waiting what `Retry-After` asks), 5xx, lost connections and timeouts
within TERAG_LLM_TIMEOUT_S, as the Ollama backend does; 400/401/403/404 are not retried and
become one line naming the setting to change. The key (TERAG_LLM_API_KEY) never appears in a
log line or an error. The retries and the error messages live in `openai_retry`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import weakref
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any

from tenacity import RetryError, Retrying

from terag_neo4j.config import Settings
from terag_neo4j.llm.failures import LLMUnavailableError
from terag_neo4j.llm.interface import LLM, Bounded, Format, as_messages, record
from terag_neo4j.llm.ledger import Completion, Message, Stage, TokenLedger
from terag_neo4j.llm.openai_retry import (
    OpenAIRetries,
    import_openai,
    is_transient_http,
    retry_after_s,
)

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

# A local server needs no key, but the client refuses to start without one
NO_KEY = "no-key"

__all__ = ["NO_KEY", "OpenAILLM", "is_transient_http", "retry_after_s"]


class OpenAILLM(OpenAIRetries, LLM):
    """Chat completions from one model of an OpenAI-compatible server, with bounded
    concurrency, retries and a ledger. `client`/`async_client` exist for tests."""

    def __init__(
        self,
        settings: Settings,
        ledger: TokenLedger | None = None,
        *,
        client: openai.OpenAI | None = None,
    ) -> None:
        self._openai = import_openai()
        self.settings = settings
        self.ledger = ledger if ledger is not None else TokenLedger()
        self.name = settings.llm_name
        self.model = f"openai:{self.name}"  # recorded by namespaces; apart from Ollama's names
        self.url = settings.llm_url  # None: the client's default (OPENAI_BASE_URL, else OpenAI)
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        self._key = key or os.environ.get("OPENAI_API_KEY") or None
        self._client = client or self._openai.OpenAI(
            base_url=self.url,
            api_key=self._key or NO_KEY,
            timeout=settings.llm_timeout_s,
            max_retries=0,
        )
        self.host = str(self._client.base_url).rstrip("/")
        self._bounded = Bounded(settings)
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        # Cleared the first time the server refuses `response_format`: it has no structured
        # replies, and the prompt alone asks for the format
        self._structured = True

    # ---------------------------------------------------------------- helpers

    def request_options(self, max_tokens: int | None = None) -> dict[str, Any]:
        return {
            "temperature": self.settings.llm_temperature,
            "max_tokens": max_tokens if max_tokens is not None else self.settings.llm_max_tokens,
        }

    def _request(
        self, messages: Sequence[Message] | str, max_tokens: int | None, format: Format
    ) -> dict[str, Any]:
        req: dict[str, Any] = {
            "model": self.name,
            "messages": as_messages(messages),
            **self.request_options(max_tokens),
        }
        if format and self._structured:
            req["response_format"] = (
                {"type": "json_object"}
                if format == "json"
                else {"type": "json_schema", "json_schema": {"name": "reply", "schema": format}}
            )
        return req

    def _finish(
        self,
        text: str,
        usage: Any,
        finish: str | None,
        model: str | None,
        started: float,
        stage: Stage,
        run_id: str,
        items: int,
    ) -> Completion:
        tin = getattr(usage, "prompt_tokens", None) if usage is not None else None
        tout = getattr(usage, "completion_tokens", None) if usage is not None else None
        if tin is None or tout is None:
            log.warning("LLM server at %s sent no token usage: counts unknown", self.host)
        comp = Completion(
            text=text,
            input_tokens=tin,
            output_tokens=tout,
            duration_s=time.perf_counter() - started,
            model=f"openai:{model}" if model else self.model,
            done_reason=finish,
        )
        if comp.cut:
            log.warning(
                "LLM reply cut at the output limit (%s tokens) for model %s",
                tout if tout is not None else "?", self.name,
            )  # fmt: skip
        return record(self.ledger, comp, stage, run_id, items)

    # ---------------------------------------------------------------- API

    def complete(
        self,
        messages: Sequence[Message] | str,
        *,
        stage: Stage,
        run_id: str = "default",
        items: int = 1,
        max_tokens: int | None = None,
        format: Format = None,
    ) -> Completion:
        req = self._request(messages, max_tokens, format)
        with self._bounded.semaphore:
            started = time.perf_counter()
            resp = self._call(req)
        choice = resp.choices[0] if resp.choices else None
        text = (choice.message.content or "") if choice else ""
        finish = choice.finish_reason if choice else None
        return self._finish(text, resp.usage, finish, resp.model, started, stage, run_id, items)

    def stream(
        self,
        messages: Sequence[Message] | str,
        *,
        stage: Stage,
        run_id: str = "default",
        items: int = 1,
        max_tokens: int | None = None,
        format: Format = None,
    ) -> Generator[str, None, Completion]:
        """One chat completion, streamed: yields the reply's pieces as they come and returns
        the `Completion` (the usage of the last chunk). Not retried once pieces went out."""
        req = self._request(messages, max_tokens, format)
        req |= {"stream": True, "stream_options": {"include_usage": True}}
        parts: list[str] = []
        usage: Any = None
        finish: str | None = None
        model: str | None = None
        timeout_s = self.settings.llm_timeout_s
        with self._bounded.semaphore:
            started = time.perf_counter()
            chunks = self._call(req)
            try:
                try:
                    for chunk in chunks:
                        model = chunk.model or model
                        if chunk.usage is not None:
                            usage = chunk.usage
                        for choice in chunk.choices:
                            finish = choice.finish_reason or finish
                            piece = choice.delta.content if choice.delta else None
                            if piece:
                                parts.append(piece)
                                yield piece
                        # The client's timeout bounds each read, not a reply that trickles on
                        if time.perf_counter() - started > timeout_s and finish is None:
                            raise LLMUnavailableError(
                                f"LLM server at {self.host} did not finish its reply within "
                                f"TERAG_LLM_TIMEOUT_S={timeout_s:g}s; raise it for a slow model"
                            )
                finally:
                    chunks.close()  # hangs up at once, also when our caller stops
            except self._openai.OpenAIError as exc:
                raise self._translate(exc) from exc
        text = "".join(parts)
        return self._finish(text, usage, finish, model, started, stage, run_id, items)

    def _async_client(self) -> Any:
        # httpx async clients belong to one event loop
        loop = asyncio.get_running_loop()
        client = self._async.get(loop)
        if client is None:
            client = self._openai.AsyncOpenAI(
                base_url=self.host,
                api_key=self._key or NO_KEY,
                timeout=self.settings.llm_timeout_s,
                max_retries=0,
            )
            self._async[loop] = client
        return client

    async def acomplete(
        self,
        messages: Sequence[Message] | str,
        *,
        stage: Stage,
        run_id: str = "default",
        items: int = 1,
        max_tokens: int | None = None,
        format: Format = None,
    ) -> Completion:
        req = self._request(messages, max_tokens, format)
        client = self._async_client()
        async with self._bounded.slot():
            started = time.perf_counter()
            resp = await self._acall(client, req)
        choice = resp.choices[0] if resp.choices else None
        text = (choice.message.content or "") if choice else ""
        finish = choice.finish_reason if choice else None
        return self._finish(text, resp.usage, finish, resp.model, started, stage, run_id, items)

    def check_model(self) -> None:
        """Fail fast before a long run: the server answers and lists the configured model
        (a server that lists no models is taken at its word)."""
        listed = self.server_models()
        if listed is None:
            try:
                for attempt in Retrying(**self._retry_kwargs()):
                    with attempt:
                        self._client.models.list()
            except RetryError as exc:
                raise self._translate(exc.last_attempt.exception() or exc) from exc
            except self._openai.OpenAIError as exc:
                raise self._translate(exc) from exc
            return
        # Ollama lists `name:latest` for a model asked for as `name`
        if listed and self.name not in listed and f"{self.name}:latest" not in listed:
            raise self._unknown_model(listed)

    def close(self) -> None:
        self._client.close()
