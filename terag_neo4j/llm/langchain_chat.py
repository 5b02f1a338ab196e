"""A LangChain chat model as the LLM backend: any `BaseChatModel` handed to
`TeragClient(llm=...)` (ChatOpenAI, ChatOllama, ChatAnthropic, a model behind LiteLLM...).

Token counts are the model's `usage_metadata` (`input_tokens`, `output_tokens`); a provider
that reports none leaves the call's counts unknown. The chat model's own client retries as it
was configured to; this backend adds the TERAG_LLM_CONCURRENCY bound and the ledger. `format`
is not passed on (a chat model fixes its reply format when it is built); the prompts ask for
their format anyway and the parsers are lenient.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any

from terag_neo4j.config import Settings
from terag_neo4j.llm.failures import LLMError
from terag_neo4j.llm.interface import LLM, Bounded, Format, as_messages, record
from terag_neo4j.llm.ledger import Completion, Message, Stage, TokenLedger

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

log = logging.getLogger(__name__)


def model_name(chat: BaseChatModel) -> str:
    """What a namespace records for a chat model: its class and the model it calls."""
    for attr in ("model_name", "model", "model_id"):
        value = getattr(chat, attr, None)
        if isinstance(value, str) and value:
            return f"langchain:{type(chat).__name__}:{value}"
    return f"langchain:{type(chat).__name__}"


def _usage(message: BaseMessage) -> tuple[int | None, int | None]:
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        return None, None
    return usage.get("input_tokens"), usage.get("output_tokens")


def _finish_reason(message: BaseMessage) -> str | None:
    meta = getattr(message, "response_metadata", None) or {}
    reason = meta.get("finish_reason") or meta.get("done_reason") or meta.get("stop_reason")
    if reason in ("max_tokens", "length"):
        return "length"  # one name for a reply cut at the limit, whatever the provider says
    return str(reason) if reason else None


class LangChainLLM(LLM):
    """The LLM interface over a LangChain chat model."""

    def __init__(
        self, chat: BaseChatModel, settings: Settings, ledger: TokenLedger | None = None
    ) -> None:
        self.chat = chat
        self.settings = settings
        self.ledger = ledger if ledger is not None else TokenLedger()
        self.model = model_name(chat)
        self._bounded = Bounded(settings)

    def request_options(self, max_tokens: int | None = None) -> dict[str, Any]:
        # The chat model was configured by its owner; only the cap is ours to send
        return {
            "max_tokens": max_tokens if max_tokens is not None else self.settings.llm_max_tokens
        }

    def _finish(
        self,
        message: BaseMessage,
        started: float,
        stage: Stage,
        run_id: str,
        items: int,
    ) -> Completion:
        tin, tout = _usage(message)
        if tin is None or tout is None:
            log.warning("chat model %s reported no usage_metadata: counts unknown", self.model)
        text = message.content if isinstance(message.content, str) else message.text
        comp = Completion(
            text=text,
            input_tokens=tin,
            output_tokens=tout,
            duration_s=time.perf_counter() - started,
            model=self.model,
            done_reason=_finish_reason(message),
        )
        return record(self.ledger, comp, stage, run_id, items)

    def _fail(self, exc: Exception) -> LLMError:
        return LLMError(f"chat model {self.model} failed: {type(exc).__name__}: {exc}")

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
        with self._bounded.semaphore:
            started = time.perf_counter()
            try:
                reply = self.chat.invoke(_lc(messages))
            except Exception as exc:
                raise self._fail(exc) from exc
        return self._finish(reply, started, stage, run_id, items)

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
        """Yields the reply's pieces; the chunks added up carry the usage of the whole call."""
        whole: Any = None
        with self._bounded.semaphore:
            started = time.perf_counter()
            chunks = self.chat.stream(_lc(messages))
            try:
                for chunk in chunks:
                    whole = chunk if whole is None else whole + chunk
                    piece = chunk.content if isinstance(chunk.content, str) else chunk.text
                    if piece:
                        yield piece
            except Exception as exc:
                raise self._fail(exc) from exc
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()
        if whole is None:
            raise LLMError(f"chat model {self.model} sent an empty stream")
        return self._finish(whole, started, stage, run_id, items)

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
        async with self._bounded.slot():
            started = time.perf_counter()
            try:
                reply = await self.chat.ainvoke(_lc(messages))
            except Exception as exc:
                raise self._fail(exc) from exc
        return self._finish(reply, started, stage, run_id, items)

    def check_model(self) -> None:
        """A chat model handed in is taken as it is: its first call says whether it answers."""

    def close(self) -> None:
        """The chat model belongs to whoever handed it in."""


def _lc(messages: Sequence[Message] | str) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in as_messages(messages)]
