"""The clients' public methods declare what they take (no `**kw` a type checker cannot see), and
the asyncio client's methods take the same arguments, by the same names, as the sync client's.
No services: signatures, and the asyncio client around a stand-in for the sync one."""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path
from typing import Any, get_overloads

import pytest

from terag_neo4j.aio import AsyncTeragClient
from terag_neo4j.client import TeragClient
from terag_neo4j.retrieval.reranked import RerankedRetriever


def params(fn: Any) -> list[inspect.Parameter]:
    # Annotations as written (every module postpones them): the same text, the same type.
    return list(inspect.signature(fn).parameters.values())[1:]  # without self


def test_retrieve_declares_every_argument_it_takes() -> None:
    for fn in (TeragClient.retrieve, AsyncTeragClient.retrieve):
        got = params(fn)
        assert all(p.kind is not p.VAR_KEYWORD for p in got), f"{fn.__qualname__} takes **kw"
        # the retriever's own arguments, by name, annotation and default
        assert [(p.name, p.annotation, p.default) for p in got] == [
            (p.name, p.annotation, p.default) for p in params(RerankedRetriever.retrieve)
        ], fn.__qualname__
    names = [p.name for p in params(TeragClient.retrieve)]
    assert {"mode", "entities", "run_id", "rerank"} <= set(names)


@pytest.mark.parametrize("name", ["index", "retrieve", "answer", "stats", "drop", "delete"])
def test_async_methods_take_the_sync_methods_arguments(name: str) -> None:
    sync = [(p.name, p.annotation) for p in params(getattr(TeragClient, name))]
    method = getattr(AsyncTeragClient, name)
    # What a type checker sees: the first overload where there are overloads (the others keep
    # a deprecated name working).
    method = next(iter(get_overloads(method)), method)
    aio = [(p.name, p.annotation) for p in params(method)]
    assert aio == sync


class Recorder:
    """Stands in for the sync client: records how `delete` was called."""

    def __init__(self) -> None:
        self.calls: list[tuple[str | Path, str | None]] = []

    def delete(self, document: str | Path, namespace: str | None = None) -> int:
        self.calls.append((document, namespace))
        return 1


@pytest.mark.asyncio
async def test_async_delete_takes_an_id_or_a_path_like_the_sync_one() -> None:
    sync = Recorder()
    terag = AsyncTeragClient.wrap(sync)  # type: ignore[arg-type]
    terag._warm = True  # a stand-in has no retriever to build
    assert await terag.delete("docs/a.md") == 1
    assert await terag.delete(Path("docs/b.md"), "ns") == 1
    assert await terag.delete(document="docs/c.md", namespace="ns") == 1
    with pytest.warns(DeprecationWarning, match="document="):
        assert await terag.delete(document_id="docs/d.md") == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        await terag.delete("docs/e.md")  # the new name warns of nothing
    assert sync.calls == [
        ("docs/a.md", None),
        (Path("docs/b.md"), "ns"),
        ("docs/c.md", "ns"),
        ("docs/d.md", None),
        ("docs/e.md", None),
    ]
    await terag.aclose()
