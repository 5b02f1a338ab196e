"""How the `openai:` LLM backend fails and retries: the client imported on demand, which
failures retrying may fix (429, 5xx, lost connections, timeouts) and how long to wait
(`Retry-After`, else an exponential backoff), the retried call itself, and the translation of
every other failure into one `LLMError` line naming the setting to change, with the key
(TERAG_LLM_API_KEY) taken out. `OpenAIRetries` is the part of `OpenAILLM` that does this."""

from __future__ import annotations

import logging
import re
from typing import Any

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from terag_neo4j.config import Settings, SettingsError
from terag_neo4j.llm.failures import (
    MAX_RETRY_WAIT_S,
    LLMError,
    LLMUnavailableError,
    ModelNotFoundError,
)

# How a server's 400 names the structured-reply request it refuses
_STRUCTURE_NAMED = re.compile(r"response_format|json_schema|json_object|structured", re.I)

# The backend's logger, so that its retries log under the name they always had
log = logging.getLogger("terag_neo4j.llm.openai_chat")


def import_openai() -> Any:
    try:
        import openai
    except ImportError as e:
        raise SettingsError(
            "TERAG_LLM_MODEL=openai:... needs the `openai` package: pip install 'terag-neo4j[openai]'"
        ) from e
    return openai


def is_transient_http(exc: BaseException) -> bool:
    """What retrying may fix: throttling, a server error, a lost connection, a timeout."""
    import openai

    if isinstance(exc, openai.APIStatusError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, openai.APIConnectionError)  # APITimeoutError is one


def retry_after_s(exc: BaseException | None) -> float | None:
    """The wait a 429 (or 503) asks for in its `Retry-After` header, in seconds."""
    import openai

    if not isinstance(exc, openai.APIStatusError):
        return None
    value = exc.response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: rare from model servers; the backoff applies


class OpenAIRetries:
    """Retries and error translation for `OpenAILLM`, which sets these attributes."""

    settings: Settings
    name: str
    host: str
    _key: str | None
    _openai: Any
    _client: Any
    _structured: bool

    @property
    def attempts(self) -> int:
        return max(1, self.settings.llm_retries + 1)

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_s(exc)
        if asked is not None:
            return min(asked, self.settings.llm_timeout_s)
        backoff = self.settings.llm_retry_backoff_s
        return float(wait_exponential(multiplier=backoff, min=backoff, max=MAX_RETRY_WAIT_S)(state))

    def _retry_kwargs(self) -> dict[str, Any]:
        return {
            "retry": retry_if_exception(is_transient_http),
            "stop": stop_after_attempt(self.attempts)
            | stop_after_delay(self.settings.llm_timeout_s),
            "wait": self._wait,
            "reraise": False,
            "before_sleep": self._log_retry,
        }

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "LLM call to %s failed (%s), attempt %d/%d; retrying",
            self.host, self._clean(str(exc)), state.attempt_number, self.attempts,
        )  # fmt: skip

    def _clean(self, text: str) -> str:
        """`text` without the key, nor the part of it some servers echo in a 401."""
        if self._key:
            text = text.replace(self._key, "***")
            if len(self._key) > 8:
                text = text.replace(self._key[-4:], "***")
        return text.splitlines()[0] if text else text

    def server_models(self) -> list[str] | None:
        """The models the server lists at /v1/models; None where it lists none."""
        try:
            return sorted(m.id for m in self._client.models.list())
        except Exception:
            return None

    def _translate(self, exc: BaseException) -> LLMError:
        o = self._openai
        detail = self._clean(getattr(exc, "message", None) or str(exc))
        if isinstance(exc, o.AuthenticationError | o.PermissionDeniedError):
            return LLMError(
                f"the LLM server at {self.host} refused the key (HTTP {exc.status_code}): set "
                "TERAG_LLM_API_KEY to a key it accepts"
            )
        if isinstance(exc, o.NotFoundError):
            listed = self.server_models()
            if listed is None:
                return LLMError(
                    f"{self.host} has no OpenAI-compatible /chat/completions (HTTP 404): set "
                    "TERAG_LLM_URL to the server's base URL, ending in /v1"
                )
            return self._unknown_model(listed)
        if isinstance(exc, o.BadRequestError):
            return LLMError(
                f"the LLM server at {self.host} refused the request for model {self.name!r} "
                f"(HTTP 400: {detail}); check TERAG_LLM_MODEL and TERAG_LLM_MAX_TOKENS"
            )
        if isinstance(exc, o.APIResponseValidationError) or (
            isinstance(exc, o.APIStatusError) and exc.status_code in (405, 415)
        ):
            return LLMError(
                f"{self.host} did not answer as an OpenAI-compatible server ({detail}): set "
                "TERAG_LLM_URL to the server's base URL, ending in /v1"
            )
        if is_transient_http(exc):
            return LLMUnavailableError(
                f"LLM server at {self.host} unavailable after {self.attempts} attempts "
                f"within TERAG_LLM_TIMEOUT_S={self.settings.llm_timeout_s:g}s: "
                f"{type(exc).__name__}: {detail}"
            )
        return LLMError(f"LLM call to {self.host} with model {self.name!r} failed: {detail}")

    def _unknown_model(self, listed: list[str]) -> ModelNotFoundError:
        shown = ", ".join(listed[:20]) + (
            f" (+{len(listed) - 20} more)" if len(listed) > 20 else ""
        )
        return ModelNotFoundError(
            f"model {self.name!r} is not on the LLM server at {self.host}: set "
            f"TERAG_LLM_MODEL=openai:<one of: {shown or 'none listed'}>"
        )

    def _refuses_structure(self, exc: BaseException, req: dict[str, Any]) -> bool:
        """A 400 naming `response_format` (or the kind asked for) to a request that had it:
        the server lacks structured replies; asked once more without it (the prompt asks for
        the format anyway), and not again by this object. Any other 400 is the request's."""
        if (
            "response_format" in req
            and isinstance(exc, self._openai.BadRequestError)
            and _STRUCTURE_NAMED.search(str(exc))
        ):
            log.warning(
                "LLM server at %s refused response_format (%s); asking without it",
                self.host, self._clean(str(exc)),
            )  # fmt: skip
            self._structured = False
            return True
        return False

    def _call(self, req: dict[str, Any]) -> Any:
        """The request, retried where retrying may help; any failure as an `LLMError` whose
        cause is the client's exception."""
        for structured in (True, False):
            try:
                for attempt in Retrying(**self._retry_kwargs()):
                    with attempt:
                        return self._client.chat.completions.create(**req)
            except RetryError as exc:
                raise self._translate(exc.last_attempt.exception() or exc) from exc
            except self._openai.OpenAIError as exc:
                if not (structured and self._refuses_structure(exc, req)):
                    raise self._translate(exc) from exc
                req.pop("response_format")
        raise AssertionError("unreachable")  # pragma: no cover - returns or raises above

    async def _acall(self, client: Any, req: dict[str, Any]) -> Any:
        for structured in (True, False):
            try:
                async for attempt in AsyncRetrying(**self._retry_kwargs()):
                    with attempt:
                        return await client.chat.completions.create(**req)
            except RetryError as exc:
                raise self._translate(exc.last_attempt.exception() or exc) from exc
            except self._openai.OpenAIError as exc:
                if not (structured and self._refuses_structure(exc, req)):
                    raise self._translate(exc) from exc
                req.pop("response_format")
        raise AssertionError("unreachable")  # pragma: no cover - returns or raises above
