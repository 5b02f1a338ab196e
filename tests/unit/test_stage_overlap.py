"""Unit tests of the ingest's overlapped stages (`indexing.stage_overlap`): plain functions stand in
for spaCy, the embedder and Neo4j, so the order, the overlap and the errors are what is tested."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import pytest

from terag_neo4j.indexing.stage_overlap import run_overlapped


def test_batches_are_written_in_order_with_their_own_extractions_and_vectors() -> None:
    written: list[tuple[int, str, str, str]] = []
    run_overlapped(
        ["a", "b", "c"],
        lambda b: f"x{b}",
        lambda b, ext: f"v{b}{ext.result()}",
        lambda i, b, x, v: written.append((i, b, x, v)),
    )
    assert written == [(0, "a", "xa", "vaxa"), (1, "b", "xb", "vbxb"), (2, "c", "xc", "vcxc")]


def test_the_next_batch_is_embedded_while_this_one_is_written() -> None:
    embedding_b = threading.Event()

    def embed(b: str, ext: Future[str]) -> str:
        if b == "b":
            embedding_b.set()
        return b

    def write(i: int, b: str, x: str, v: str) -> None:
        if b == "a":  # batch b's vectors are made before batch a's write returns
            assert embedding_b.wait(10), "the next batch was not embedded during the write"

    run_overlapped(["a", "b"], lambda b: b, embed, write)


def test_an_error_stops_the_run_and_later_batches_are_not_written() -> None:
    written: list[str] = []
    extracted: list[str] = []

    def extract(b: str) -> str:
        extracted.append(b)
        if b == "b":
            raise ValueError("spaCy failed on b")
        return b

    with pytest.raises(ValueError, match="failed on b"):
        run_overlapped(
            ["a", "b", "c", "d"],
            extract,
            lambda b, ext: b,
            lambda i, b, x, v: written.append(b),
        )
    assert written == ["a"]
    assert "d" not in extracted  # never more than one batch ahead of the write


def test_no_batches_run_nothing() -> None:
    run_overlapped([], lambda b: pytest.fail("extracted"), lambda b, e: b, lambda *a: None)
