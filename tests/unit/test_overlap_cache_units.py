"""Unit tests of the query overlap's background call and of the result cache's bookkeeping
(no database: what they do with a real one is tests/integration/test_query_overlap_cache.py)."""

from __future__ import annotations

import threading

import pytest

from terag_neo4j.core.results import RetrievalResult, RetrievedPassage
from terag_neo4j.errors import TeragError
from terag_neo4j.retrieval.overlap import Background
from terag_neo4j.retrieval.result_cache import ResultCache


class Boom(TeragError):
    pass


def test_a_started_call_runs_once_on_another_thread_and_a_lazy_one_in_the_caller() -> None:
    threads: list[str] = []

    def fn() -> int:
        threads.append(threading.current_thread().name)
        return 7

    started = Background(fn, start=True)
    assert started() == 7 and started() == 7
    lazy = Background(fn, start=False)
    assert lazy() == 7 and lazy() == 7
    assert len(threads) == 2
    assert threads[0].startswith("terag-overlap") and threads[1] == threading.current_thread().name
    assert started.elapsed >= 0 and lazy.elapsed >= 0


def test_an_error_on_the_worker_reaches_the_caller() -> None:
    def fail() -> int:
        raise Boom("no vector")

    with pytest.raises(Boom, match="no vector"):
        Background(fail, start=True)()
    with pytest.raises(Boom, match="no vector"):
        Background(fail, start=False)()


def _result(pid: str) -> RetrievalResult:
    return RetrievalResult(
        "q", "ns", [], [], [RetrievedPassage(pid, "d", "t", "x", 1.0)], "pagerank"
    )


def test_the_cache_keeps_the_most_recently_used_and_hands_out_copies() -> None:
    cache = ResultCache(2)
    cache.put("a", _result("a"))
    cache.put("b", _result("b"))
    got = cache.get("a")
    assert got is not None and got.passages[0].id == "a"
    got.passages.clear()
    cache.put("c", _result("c"))  # "b" was used least recently
    assert cache.get("b") is None
    kept = cache.get("a")
    assert kept is not None and kept.passages[0].id == "a"
    assert len(cache) == 2 and (cache.hits, cache.misses) == (2, 1)
    off = ResultCache(0)
    off.put("a", _result("a"))
    assert off.get("a") is None and len(off) == 0
