"""The LLM interface every caller uses (extraction, query NER, the budget phase, the reader),
and what its backends share: the ledger entry of a call, the bound on calls in flight, and the
parallel `map`. Backends: `ollama_chat` (the default), `openai_chat` (any /v1/chat/completions
server), `langchain_chat` (a LangChain chat model handed in); `factory` picks one."""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, Protocol, runtime_checkable

from terag_neo4j.config import Settings
from terag_neo4j.llm.ledger import Completion, LLMCall, Message, Stage, TokenLedger

# "json", or a JSON schema the reply must match; None/"" leaves the reply free
Format = Literal["", "json"] | dict[str, Any] | None


@runtime_checkable
class LLM(Protocol):
    """Chat completions with a token ledger, retries and a bound on calls in flight."""

    settings: Settings
    ledger: TokenLedger
    model: str  # the model's name as a namespace records it (which model extracted it)

    def request_options(self, max_tokens: int | None = None) -> dict[str, Any]:
        """What a call with this `max_tokens` sends besides the messages (caches key on it)."""
        ...

    def complete(
        self,
        messages: Sequence[Message] | str,
        *,
        stage: Stage,
        run_id: str = "default",
        items: int = 1,
        max_tokens: int | None = None,
        format: Format = None,
    ) -> Completion: ...

    def stream(
        self,
        messages: Sequence[Message] | str,
        *,
        stage: Stage,
        run_id: str = "default",
        items: int = 1,
        max_tokens: int | None = None,
        format: Format = None,
    ) -> Generator[str, None, Completion]: ...

    async def acomplete(
        self,
        messages: Sequence[Message] | str,
        *,
        stage: Stage,
        run_id: str = "default",
        items: int = 1,
        max_tokens: int | None = None,
        format: Format = None,
    ) -> Completion: ...

    def check_model(self) -> None: ...

    def map(
        self,
        prompts: Sequence[Sequence[Message] | str],
        *,
        stage: Stage,
        run_id: str = "default",
        items_per_prompt: int = 1,
        max_tokens: int | None = None,
        format: Format = None,
    ) -> list[Completion]:
        """Complete every prompt, `llm_concurrency` at a time; results keep the prompts' order.
        The backends subclass this protocol for this one shared method."""
        return parallel_map(
            self,
            prompts,
            stage=stage,
            run_id=run_id,
            items_per_prompt=items_per_prompt,
            max_tokens=max_tokens,
            format=format,
        )

    def close(self) -> None: ...


def as_messages(messages: Sequence[Message] | str) -> list[dict[str, str]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return [{"role": m.role, "content": m.content} for m in messages]


def record(
    ledger: TokenLedger, completion: Completion, stage: Stage, run_id: str, items: int
) -> Completion:
    """Books a finished call in the ledger, its counts as the server gave them (None: unknown)."""
    ledger.record(
        LLMCall(
            stage=Stage(stage),
            run_id=run_id,
            model=completion.model,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            duration_s=completion.duration_s,
            items=items,
        )
    )
    return completion


class Bounded:
    """TERAG_LLM_CONCURRENCY calls in flight per backend object, in threads and in every event
    loop (an asyncio semaphore belongs to one loop)."""

    def __init__(self, settings: Settings) -> None:
        self._limit = max(1, settings.llm_concurrency)
        self.semaphore = threading.BoundedSemaphore(self._limit)
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def for_loop(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._loops.get(loop)
        if sem is None:
            sem = self._loops[loop] = asyncio.Semaphore(self._limit)
        return sem


def parallel_map(
    llm: LLM,
    prompts: Sequence[Sequence[Message] | str],
    *,
    stage: Stage,
    run_id: str,
    items_per_prompt: int,
    max_tokens: int | None,
    format: Format = None,
) -> list[Completion]:
    """Complete every prompt, `llm_concurrency` at a time; results keep the prompts' order."""
    if not prompts:
        return []
    workers = max(1, min(llm.settings.llm_concurrency, len(prompts)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm") as pool:
        return list(
            pool.map(
                lambda p: llm.complete(
                    p,
                    stage=stage,
                    run_id=run_id,
                    items=items_per_prompt,
                    max_tokens=max_tokens,
                    format=format,
                ),
                prompts,
            )
        )
