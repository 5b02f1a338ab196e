"""The LLM interface every caller uses (extraction, query NER, the budget phase, the reader),
and what its backends share: the ledger entry of a call, the bound on calls in flight, and the
parallel `map`. Backends: `ollama_chat` (the default), `openai_chat` (any /v1/chat/completions
server), `langchain_chat` (a LangChain chat model handed in); `factory` picks one."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from terag_neo4j.config import Settings
from terag_neo4j.llm.ledger import Completion, LLMCall, Message, Stage, TokenLedger

# The longest an async call waits between two looks at a full bound
MAX_POLL_S = 0.05

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
    """TERAG_LLM_CONCURRENCY calls in flight per process, whichever backend: every backend
    object made with the same limit shares one semaphore, and an async call waits on that same
    semaphore (an asyncio one would belong to one event loop, and bound that loop alone)."""

    _shared: ClassVar[dict[int, threading.BoundedSemaphore]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, settings: Settings) -> None:
        self.limit = max(1, settings.llm_concurrency)
        with Bounded._lock:
            self.semaphore = Bounded._shared.setdefault(
                self.limit, threading.BoundedSemaphore(self.limit)
            )

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """One of the calls in flight, for a coroutine: polled without blocking its loop (a
        call lasts seconds, the poll at most 50 ms), and nothing held if it is cancelled."""
        wait = 0.002
        while not self.semaphore.acquire(blocking=False):
            await asyncio.sleep(wait)
            wait = min(wait * 2, MAX_POLL_S)
        try:
            yield
        finally:
            self.semaphore.release()


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
