"""How far a running Ollama build is, told to other processes (the demo, `terag serve`'s reader):
the build's lock held with its progress file beside it, as a build leaves them (no Go, no
build). The reader's error when nothing answers is a unit test of error handling: a connection
refused, translated."""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import terag_ollama_build as build

from terag_neo4j.config import Settings
from terag_neo4j.core import versions
from terag_neo4j.llm import OllamaLLM
from terag_neo4j.local import ollama as srv


@contextmanager
def building(cache: Path, compiled: int, total: int) -> Iterator[None]:
    """The lock and progress file of a build of this version under `cache`, held meanwhile."""
    folder = build.binary_path(cache, versions.OLLAMA).parent
    folder.mkdir(parents=True)
    (folder / build.build.PROGRESS_FILE).write_text(
        json.dumps({"compiled": compiled, "total": total})
    )
    with (folder / "build.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def test_progress_is_told_only_while_the_build_holds_its_lock(tmp_path: Path) -> None:
    assert build.build_progress(tmp_path, versions.OLLAMA) is None
    with building(tmp_path, 412, 980):
        assert build.build_progress(tmp_path, versions.OLLAMA) == (412, 980)
    # Released: the build ended (or died), whatever its file says
    assert build.build_progress(tmp_path, versions.OLLAMA) is None


def test_the_reader_says_it_is_still_being_built(tmp_path: Path) -> None:
    if srv.on_path() is not None:
        pytest.skip("an `ollama` on PATH is used, never built")
    settings = Settings().model_copy(
        update={"home": tmp_path, "ollama_host": "http://127.0.0.1:9", "llm_retries": 1}
    )
    llm = OllamaLLM(settings)
    refused = httpx.ConnectError("connection refused")
    with building(srv.ollama_dir(settings), 412, 980):
        assert "412 of 980 C/C++ files" in (srv.build_running(settings) or "")
        message = str(llm._translate(refused))
    assert message.startswith("the reader is still being built: Ollama")
    assert "412 of 980 C/C++ files compiled" in message
    if srv.build_running(settings) is None:  # no build of the default home's running either
        assert "unavailable" in str(llm._translate(refused))
