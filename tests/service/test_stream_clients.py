"""The streamed ask through the clients, with a real reader: `TeragRemote.answer_stream` (sync and
async), the MCP `ask` tool's progress notifications and `terag ask --url`'s text, against a
`terag serve` of its own pointed at the session's Ollama."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from terag_neo4j.cli.remote_commands import answer_text
from terag_neo4j.config import Settings
from terag_neo4j.retrieval.answer import parse_answer
from terag_neo4j.service.remote_client import (
    AsyncTeragRemote,
    RemoteError,
    StreamedAnswer,
    StreamedPassages,
    StreamedText,
    TeragRemote,
)
from tests.service.conftest import KEY_A_READ, REPO, Service, running_service, service_env
from tests.service.test_cli_remote import BLOCK
from tests.service.test_mcp import http_session, text_of

pytestmark = [pytest.mark.integration, pytest.mark.ollama]

QUESTION = "Who designed the Volkswagen Beetle?"
# The passages event leaves before the reader has read the passages and written the answer;
# a stream buffered until the end would deliver everything within a few milliseconds
SPREAD_S = 0.05


@pytest.fixture(scope="module")
def reader_service(
    base_settings: Settings,
    tenants: tuple[str, str],
    ollama_settings: Settings,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Service]:
    env = service_env(base_settings, *tenants)
    env.update(OLLAMA_HOST=ollama_settings.ollama_host, TERAG_LLM_MODEL=ollama_settings.llm_model)
    log = tmp_path_factory.mktemp("serve-clients") / "serve.log"
    with running_service(env, base_settings, tenants, log) as svc:
        yield svc


def without_timings(text: str) -> str:
    return re.sub(r"(?m)^timings: .*?; tokens", "timings: ...; tokens", text)


def the_answer_of(streamed: str) -> str:
    """What the service makes of the streamed characters (whitespace collapsed)."""
    return parse_answer(json.dumps({"answer": streamed}))


def test_remote_answer_stream_passages_then_text_then_answer(reader_service: Service) -> None:
    events: list[tuple[float, object]] = []
    with TeragRemote(reader_service.url, api_key=KEY_A_READ, namespace=reader_service.ns_a) as t:
        for event in t.answer_stream(QUESTION, top_k=3):
            events.append((time.monotonic(), event))
    kinds = [type(e) for _, e in events]
    assert kinds[0] is StreamedPassages and kinds[-1] is StreamedAnswer
    assert (
        StreamedText in kinds and kinds.count(StreamedPassages) == kinds.count(StreamedAnswer) == 1
    )
    first = events[0][1]
    last = events[-1][1]
    assert isinstance(first, StreamedPassages) and isinstance(last, StreamedAnswer)
    ans = last.answer
    texts = [e.text for _, e in events if isinstance(e, StreamedText)]
    assert ans.answer and ans.answer == the_answer_of("".join(texts))
    assert (
        [p.id for p in first.passages] == ans.passage_ids == [p.id for p in ans.retrieval.passages]
    )
    for c in ans.citations:
        assert c.passage_id == ans.passage_ids[c.marker - 1]
    assert ans.input_tokens > 0 and ans.output_tokens > 0
    last_text_at = max(at for at, e in events if isinstance(e, StreamedText))
    assert last_text_at - events[0][0] > SPREAD_S


@pytest.mark.asyncio
async def test_async_remote_answer_stream(reader_service: Service) -> None:
    texts: list[str] = []
    kinds: list[type] = []
    answer = None
    async with AsyncTeragRemote(
        reader_service.url, api_key=KEY_A_READ, namespace=reader_service.ns_a
    ) as t:
        async for event in t.answer_stream(QUESTION, top_k=2):
            kinds.append(type(event))
            if isinstance(event, StreamedText):
                texts.append(event.text)
            elif isinstance(event, StreamedAnswer):
                answer = event.answer
    assert kinds[0] is StreamedPassages and kinds[-1] is StreamedAnswer and texts
    assert answer is not None and answer.answer == the_answer_of("".join(texts))
    assert len(answer.passage_ids) == 2


def test_remote_answer_stream_refused_before_it_starts(reader_service: Service) -> None:
    with (
        TeragRemote(reader_service.url, api_key=KEY_A_READ) as t,
        pytest.raises(RemoteError) as refused,
    ):
        next(iter(t.answer_stream(QUESTION, namespace=reader_service.ns_b)))
    assert (refused.value.status, refused.value.type) == (403, "Forbidden")


@pytest.mark.asyncio
async def test_mcp_ask_streams_progress_before_its_result(reader_service: Service) -> None:
    """Over /mcp: the passages' ids, then the answer so far (each message the one before it and
    more), all before the tool's result, whose answer is the last message's characters."""
    notes: list[tuple[float, float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        notes.append((time.monotonic(), progress, message))

    args = {"namespace": reader_service.ns_a, "question": QUESTION, "top_k": 3}
    async with http_session(reader_service, KEY_A_READ) as s:
        res = await s.call_tool("ask", args, progress_callback=on_progress)
        done_at = time.monotonic()
    assert not res.is_error, text_of(res)
    out = res.structured_content
    assert out is not None and out["answer"]
    assert len(notes) >= 2, notes
    values = [v for _, v, _ in notes]
    assert values == sorted(set(values))  # strictly increasing, as the protocol asks
    messages = [m or "" for _, _, m in notes]
    assert messages[0] == "passages: " + ", ".join(out["passage_ids"])
    for before, after in itertools.pairwise(messages[1:]):
        assert after.startswith(before) and len(after) > len(before)
    assert out["answer"] == the_answer_of(messages[-1])
    assert notes[-1][0] <= done_at and done_at - notes[0][0] > SPREAD_S


def test_cli_ask_through_the_service_prints_the_answer_as_it_arrives(
    reader_service: Service,
) -> None:
    """`terag ask --url` in a terminal's text: "answer: " once the passages are in, the answer's
    characters in pieces as the reader writes them, and in the end the text of the whole
    answer; `--json` waits for it and prints the one object it always printed."""
    env = {k: v for k, v in reader_service.env.items() if k != "TERAG_URL"}
    env["TERAG_API_KEY"] = KEY_A_READ
    argv = ["ask", "--url", reader_service.url, "-n", reader_service.ns_a, "-k", "3", QUESTION]
    reads: list[tuple[float, bytes]] = []
    with subprocess.Popen(
        [sys.executable, "-c", BLOCK, *argv],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        while chunk := os.read(proc.stdout.fileno(), 65536):
            reads.append((time.monotonic(), chunk))
        err = proc.stderr.read().decode()
    assert proc.returncode == 0, err
    assert "loaded: []" in err  # still the standard library only
    text = b"".join(c for _, c in reads).decode()

    out = subprocess.run(
        [sys.executable, "-c", BLOCK, *argv, "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr
    whole = json.loads(out.stdout)
    keys = ["answer", "retrieval", "input_tokens", "output_tokens", "citations", "uncited"]
    assert list(whole) == keys and whole["answer"]
    # the streamed text is the non-streamed answer's text (the reader answers alike at
    # temperature 0; only the retrieval's timings differ from call to call)
    assert without_timings(text) == without_timings(answer_text(whole) + "\n")

    def arrived(prefix: str) -> float:
        seen = b""
        for at, chunk in reads:
            seen += chunk
            if seen.decode(errors="ignore").startswith(prefix):
                return at
        raise AssertionError(f"{prefix!r} never arrived: {text!r}")

    answer_line = "answer: " + whole["answer"]
    pieces = [c for at, c in reads if arrived("answer: ") <= at < arrived(answer_line)]
    assert len(pieces) >= 2, reads
    assert arrived(answer_line) - arrived("answer: ") > SPREAD_S
