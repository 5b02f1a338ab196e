"""Ollama killed (SIGKILL) in the middle of an LLM ingest: the ingest fails with one line, and a
rerun against the restarted server resumes from the extraction cache and loses nothing, ending
with the graph a clean ingest of the same documents builds."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
import uuid
from pathlib import Path

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.llm import LLMError
from terag_neo4j.local import ollama as srv

pytestmark = [pytest.mark.integration, pytest.mark.faults, pytest.mark.ollama]

CITIES = ["Wolfsburg", "Stuttgart", "Munich", "Ingolstadt", "Zwickau", "Dresden", "Emden"]


def cached_extractions(home: Path) -> int:
    path = home / "extractions.sqlite3"
    if not path.is_file():
        return 0
    with sqlite3.connect(path, timeout=30) as db:
        try:
            return int(db.execute("SELECT count(*) FROM extraction").fetchone()[0])
        except sqlite3.OperationalError:  # the cache's file is made before its table
            return 0


def wait_for(cond: object, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not cond():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")
        time.sleep(0.2)


def test_an_ingest_survives_ollama_being_killed(
    ollama_settings: Settings, base_settings: Settings, namespace: str, tmp_path: Path
) -> None:
    # Texts no earlier run extracted (the cache is keyed by the text): every one needs the LLM.
    run = uuid.uuid4().hex[:6]
    docs = [
        Document(
            id=f"plant-{i}",
            title=f"Plant {i}",
            text=f"The {city} plant {run}-{i} of Volkswagen builds cars for Europe.",
        )
        for i, city in enumerate(CITIES)
    ]
    server = srv.start(ollama_settings)  # a server of this test's own, to kill
    restarted: srv.OllamaServer | None = None
    try:
        srv.ensure_model(ollama_settings, server.host)
        settings = base_settings.with_overrides(
            home=tmp_path,
            extractor="ollama",
            ollama_host=server.host,
            llm_model=ollama_settings.llm_model,
            llm_concurrency=1,
            llm_retries=1,
            llm_retry_backoff_s=0.1,
            llm_timeout_s=60,
        )
        failure: list[BaseException] = []
        with TeragClient(settings, namespace=namespace) as client:

            def ingest() -> None:
                try:
                    client.index(docs, progress=False)
                except BaseException as e:
                    failure.append(e)

            worker = threading.Thread(target=ingest)
            worker.start()
            wait_for(lambda: cached_extractions(tmp_path) >= 2, 600, "two cached extractions")
            os.killpg(server.pid, signal.SIGKILL)  # the server and its model runner
            killed = time.monotonic()
            worker.join(300)
            assert not worker.is_alive(), "the ingest did not end after Ollama died"
            failed_after = time.monotonic() - killed
        assert len(failure) == 1 and isinstance(failure[0], LLMError), failure
        message = str(failure[0])
        assert "\n" not in message and "Ollama" in message and server.host in message
        done_before = cached_extractions(tmp_path)
        assert 2 <= done_before < len(docs)

        restarted = srv.start(ollama_settings, server.host)
        with TeragClient(settings, namespace=namespace) as client:
            report = client.index(docs, progress=False)
            assert report.passages_total == len(docs)
            # What was extracted before the kill came from the cache, the rest from the LLM.
            assert report.extracted_cached >= done_before
            assert report.extracted_cached + report.extracted_fresh == report.passages_new
            resumed = client.store.namespaces.fingerprint(namespace)
            assert client.stats().passages == len(docs)

        clean_ns = f"{namespace}-clean"
        with TeragClient(settings, namespace=clean_ns) as clean:
            clean.index(docs, progress=False)
            assert clean.store.namespaces.fingerprint(clean_ns) == resumed
        print(f"\nthe ingest failed {failed_after:.1f}s after the kill: {message}")
    finally:
        for s in (server, restarted):
            if s is not None:
                srv.stop(s)
