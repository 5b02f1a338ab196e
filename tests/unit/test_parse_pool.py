"""The service's parsing pool with real worker processes: files are read there as `terag index`
reads them, a file past the time limit has its worker killed and replaced, a worker runs under
its memory cap, a full pool answers 429/503 with Retry-After, a worker that dies costs only its
file; and the checks on uploaded file names."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from terag_neo4j.core.documents import Document
from terag_neo4j.service.auth import CALLER
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.parsing import ParsePool, upload_names
from terag_neo4j.service.settings import Principal
from tests.fixtures.bombs import text_ops, write_docx_bomb, write_raw_pdf


@pytest.fixture(scope="module")
def pool() -> Iterator[ParsePool]:
    """One warm worker for the module (a worker's start imports the readers' libraries)."""
    p = ParsePool(workers=1, timeout_s=60, wait_s=30, memory_bytes=1024**3)
    p.start()
    try:
        yield p
    finally:
        p.close()


def slow_pdf(path: Path) -> Path:
    """Pages of distinct text: well within the limits, and seconds of pypdf's time."""
    return write_raw_pdf(path, [text_ops(8000, f"Town{i}") for i in range(6)], list(range(6)))


def read(pool: ParsePool, path: Path, name: str | None = None) -> list:
    return asyncio.run(pool.read(path, name or path.name))


def refusal(pool: ParsePool, path: Path, name: str | None = None) -> ServiceError:
    with pytest.raises(ServiceError) as info:
        read(pool, path, name)
    assert "\n" not in info.value.message
    return info.value


def test_files_are_read_in_a_worker_as_terag_index_reads_them(
    pool: ParsePool, tmp_path: Path
) -> None:
    pdf = write_raw_pdf(tmp_path / "copy.pdf", [text_ops(3), text_ops(2, "Glider")], [0, 1])
    (doc,) = read(pool, pdf, "flights.pdf")
    assert doc.id == doc.source == "flights.pdf" and doc.title == "copy"
    assert "Glider 1 flew" in doc.text and doc.pages == (0, doc.text.index("Glider 0"))
    records = tmp_path / "r.jsonl"
    records.write_text('{"id": "a", "text": "Zürich"}\n{"text": "two"}\n', encoding="utf-8")
    docs = read(pool, records, "upload.jsonl")
    assert (docs[0].id, docs[0].text, docs[0].source) == ("a", "Zürich", "upload.jsonl:1")
    assert docs[1].source == "upload.jsonl:2"
    assert all(pid != os.getpid() for pid in pool.pids())


def test_refusals_name_the_upload_with_their_status(pool: ParsePool, tmp_path: Path) -> None:
    bomb = write_docx_bomb(tmp_path / "copy.docx", 300 * 1024 * 1024)
    e = refusal(pool, bomb, "report.docx")
    assert e.status == 413 and e.message.startswith("report.docx: the .docx inflates to over")
    text = tmp_path / "notes.txt"
    text.write_bytes(b"x" * 9000 + b"\x00")  # a NUL past the bytes the type is sniffed from
    e = refusal(pool, text, "notes.txt")
    assert e.status == 415 and e.message == "notes.txt: binary content; upload UTF-8 text"
    assert str(tmp_path) not in e.message


def test_a_file_past_the_time_limit_has_its_worker_killed_and_replaced(tmp_path: Path) -> None:
    pool = ParsePool(workers=1, timeout_s=1.0, wait_s=30)
    pool.start()
    try:
        read(pool, write_raw_pdf(tmp_path / "warm.pdf", [text_ops(1)], [0]))  # started, warm
        (before,) = pool.pids()
        start = time.monotonic()
        e = refusal(pool, slow_pdf(tmp_path / "slow.pdf"))
        assert time.monotonic() - start < 4
        assert e.status == 413 and "reading it took over 1 s" in e.message
        assert "TERAG_PARSE_TIMEOUT_S" in e.message
        with pytest.raises(ProcessLookupError):
            os.kill(before, 0)  # killed, and reaped
        (after,) = pool.pids()
        assert after != before
        (doc,) = read(pool, write_raw_pdf(tmp_path / "next.pdf", [text_ops(1)], [0]))
        assert "Zeppelin 0" in doc.text
    finally:
        pool.close()


def test_a_worker_runs_under_its_memory_cap(pool: ParsePool, tmp_path: Path) -> None:
    read(pool, write_raw_pdf(tmp_path / "warm.pdf", [text_ops(1)], [0]))  # it has started
    (pid,) = pool.pids()
    limits = Path(f"/proc/{pid}/limits").read_text()
    line = next(x for x in limits.splitlines() if x.startswith("Max address space"))
    assert line.split()[3:5] == [str(1024**3), str(1024**3)]


def test_a_worker_that_dies_costs_only_its_file(pool: ParsePool, tmp_path: Path) -> None:
    slow = slow_pdf(tmp_path / "slow.pdf")

    async def kill_mid_parse() -> ServiceError:
        task = asyncio.ensure_future(pool.read(slow, "slow.pdf"))
        await asyncio.sleep(1.0)
        (pid,) = pool.pids()
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(ServiceError) as info:
            await task
        return info.value

    e = asyncio.run(kill_mid_parse())
    assert e.status == 415 and "the parsing worker ended with status -9" in e.message
    (doc,) = read(pool, write_raw_pdf(tmp_path / "next.pdf", [text_ops(1)], [0]))
    assert "Zeppelin 0" in doc.text


def test_a_full_pool_answers_429_and_a_long_wait_503(tmp_path: Path) -> None:
    slow = slow_pdf(tmp_path / "slow.pdf")
    quick = write_raw_pdf(tmp_path / "quick.pdf", [text_ops(1)], [0])

    async def crowd(pool: ParsePool) -> tuple[ServiceError, ServiceError]:
        busy = asyncio.ensure_future(pool.read(slow, "slow.pdf"))  # the one worker
        await asyncio.sleep(0.2)
        waiting = asyncio.ensure_future(pool.read(quick, "a.pdf"))  # the one place in the queue
        await asyncio.sleep(0.05)
        with pytest.raises(ServiceError) as over:
            await pool.read(quick, "b.pdf")
        with pytest.raises(ServiceError) as late:
            await waiting
        busy.cancel()
        return over.value, late.value

    pool = ParsePool(workers=1, timeout_s=60, wait_s=0.5, waiting=1)
    pool.start()
    try:
        over, late = asyncio.run(crowd(pool))
    finally:
        pool.close()
    assert over.status == 429 and "busy: 2 uploaded files" in over.message
    assert late.status == 503 and "no worker free in time" in late.message
    assert over.headers["Retry-After"] and late.headers["Retry-After"]


def test_one_key_sending_slow_files_leaves_another_key_a_worker(tmp_path: Path) -> None:
    slow = slow_pdf(tmp_path / "slow.pdf")
    quick = write_raw_pdf(tmp_path / "quick.pdf", [text_ops(1)], [0])
    a, b = (Principal(n, None, True) for n in ("key-a", "key-b"))

    async def as_key(who: Principal, path: Path) -> tuple[float, list[Document]]:
        CALLER.set(who)  # this task's own context: the key the front door would have set
        docs = await halves.read(path, path.name)
        return time.monotonic(), docs

    async def flood() -> tuple[list[float], float]:
        # Both workers have read a file first (at once, so neither is handed the other's), so
        # what is timed is the scheduling, not a worker importing its readers under load
        await asyncio.gather(as_key(a, quick), as_key(b, quick))
        t0 = time.monotonic()
        slows = [asyncio.ensure_future(as_key(a, slow)) for _ in range(3)]
        await asyncio.sleep(0.2)
        done, _ = await as_key(b, quick)
        return [(await s)[0] - t0 for s in slows], done - t0

    halves = ParsePool(workers=2, timeout_s=60, wait_s=60, shared=True)
    halves.start()
    try:
        slow_done, quick_done = asyncio.run(flood())
    finally:
        halves.close()
    # Key A's files are read one at a time on its half of the pool; key B's file is read on
    # the other worker at once, not after A's
    assert quick_done < min(slow_done), (quick_done, slow_done)


@pytest.mark.parametrize(
    ("given", "status", "says"),
    [
        ("a\x00b.txt", 422, "control characters"),
        ("line\nbreak.md", 422, "control characters"),
        ("x" * 252 + ".txt", 422, "over 255 bytes"),
        ("é" * 126 + ".txt", 422, "over 255 bytes"),
        ("..", 422, "a file without a name"),
        ("", 422, "a file without a name"),
        ("dir/", 422, "a file without a name"),
        ("notes.exe", 415, "unsupported file type"),
    ],
)
def test_odd_file_names_get_a_4xx_in_one_line(given: str, status: int, says: str) -> None:
    with pytest.raises(ServiceError) as info:
        upload_names([given])
    assert info.value.status == status and says in info.value.message
    assert "\n" not in info.value.message and "\x00" not in info.value.message


def test_file_names_are_unique_and_lose_any_client_path() -> None:
    assert upload_names(["C:\\Users\\me\\notes.md", "../../etc/x.txt", "x" * 251 + ".txt"]) == [
        "notes.md",
        "x.txt",
        "x" * 251 + ".txt",
    ]
    with pytest.raises(ServiceError) as info:
        upload_names(["a.txt", "b.md", "a.txt"])
    assert info.value.status == 422 and "a.txt: uploaded twice" in info.value.message


def test_an_upload_is_held_to_the_document_cap_and_id_and_title_lengths(
    pool: ParsePool, tmp_path: Path
) -> None:
    # Refused as the cap is passed, not after reading every line: it costs no more than an
    # upload at the cap (a ratio in one run, so the machine's load cancels out)
    at_cap = tmp_path / "at_cap.jsonl"
    at_cap.write_bytes(b'{"text": "x"}\n' * 10_000)
    start = time.monotonic()
    assert len(read(pool, at_cap)) == 10_000
    accepted_s = time.monotonic() - start
    many = tmp_path / "many.jsonl"
    many.write_bytes(b'{"text": "x"}\n' * 200_000)
    start = time.monotonic()
    e = refusal(pool, many, "many.jsonl")
    assert time.monotonic() - start < 3 * accepted_s + 0.5
    assert e.status == 413
    assert e.message == (
        "many.jsonl: over the 10,000 documents one upload may hold; split it into smaller uploads"
    )
    # A file after others in one upload may add only what is left of the cap
    few = tmp_path / "few.jsonl"
    few.write_bytes(b'{"text": "x"}\n\n{"text": "y"}\n{"text": "z"}\n')
    assert len(read(pool, few)) == 3
    with pytest.raises(ServiceError) as info:
        asyncio.run(pool.read(few, "few.jsonl", max_docs=2))
    assert info.value.status == 413 and "over the 2 left of the 10,000" in info.value.message
    long_id = tmp_path / "id.jsonl"
    long_id.write_text('{"id": "' + "i" * 513 + '", "text": "x"}\n')
    e = refusal(pool, long_id, "id.jsonl")
    assert e.status == 422 and "513 characters, over the 512 limit of an id" in e.message
    assert len(e.message) < 200
    long_title = tmp_path / "title.jsonl"
    long_title.write_text('{"id": "t", "title": "' + "t" * 1001 + '", "text": "x"}\n')
    e = refusal(pool, long_title, "title.jsonl")
    assert e.status == 422 and "over the 1,000 limit of a title" in e.message


def test_a_worker_is_told_only_an_allow_listed_environment(
    pool: ParsePool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from terag_neo4j.service.parsing import _worker_env

    secrets = {
        "NEO4J_AUTH": "neo4j/s3cret",
        "NEO4J_URI": "bolt://neo4j:s3cret@db.internal:7687",
        "TERAG_API_KEYS": str(tmp_path / "keys.json"),
        "AWS_SESSION_TOKEN": "t0ken",
        "OLLAMA_HOST": "http://user:pw@ollama:11434",
    }
    for k, v in secrets.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    env = _worker_env()
    assert not set(secrets) & set(env)
    assert env["PATH"] == os.environ["PATH"] and env["LC_ALL"] == "C.UTF-8"
    # The running worker's own environment, as the kernel has it
    read(pool, write_raw_pdf(tmp_path / "warm.pdf", [text_ops(1)], [0]))
    (pid,) = pool.pids()
    names = {
        entry.split(b"=", 1)[0].decode()
        for entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        if entry
    }
    assert not {n for n in names if n.startswith(("NEO4J", "TERAG"))}, names
