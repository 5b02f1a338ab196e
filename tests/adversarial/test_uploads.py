"""Uploads against a real `terag serve`: bombs are refused within seconds without growing the
service's memory (they are refused by the readers' limits, in a worker process), a large page
is parsed while /v1/health keeps answering at once (parsing is off the event loop), and odd
or repeated file names get a one-line 4xx, never a 500."""

from __future__ import annotations

import logging
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.adversarial.conftest import rss_mib
from tests.fixtures.bombs import MiB, write_docx_bomb, write_shared_stream_pdf
from tests.service.conftest import KEY_A, Service

log = logging.getLogger(__name__)


def upload_url(service: Service) -> str:
    return f"/v1/namespaces/svc-{uuid.uuid4().hex[:8]}-up/documents/upload"


@contextmanager
def peak_rss(pid: int) -> Iterator[Callable[[], float]]:
    """The largest RSS (MiB) of process `pid` while the block runs, sampled every 20 ms."""
    peak = [rss_mib(pid)]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], rss_mib(pid))

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    try:
        yield lambda: peak[0]
    finally:
        done.set()
        t.join()


@pytest.mark.parametrize("kind", ["docx", "pdf"])
def test_a_bomb_is_refused_fast_without_growing_the_service(
    service: Service, tmp_path: Path, kind: str
) -> None:
    if kind == "docx":  # 0.6 MB that inflates to 600 MiB
        bomb = write_docx_bomb(tmp_path / "bomb.docx", 600 * MiB)
        says = "bomb.docx: the .docx inflates to over 629"
    else:  # 3,000 pages drawing one 1 MiB content stream: 3 GiB to parse
        bomb = write_shared_stream_pdf(tmp_path / "bomb.pdf", pages=3000, stream_bytes=MiB)
        says = "bomb.pdf: its pages draw over"
    data = bomb.read_bytes()
    assert pid_of(service)
    before = rss_mib(pid_of(service))
    with service.client() as http, peak_rss(pid_of(service)) as peak:
        start = time.monotonic()
        r = http.post(upload_url(service), files=[("files", (bomb.name, data, "application/pdf"))])
        seconds = time.monotonic() - start
    log.info(
        "%s bomb (%d bytes): %d in %.2f s, service RSS %.0f -> peak %.0f MiB",
        kind,
        len(data),
        r.status_code,
        seconds,
        before,
        peak(),
    )
    assert r.status_code == 413, r.text
    assert r.json()["error"]["message"].startswith(says)
    assert seconds <= 5, f"refused after {seconds:.1f} s"
    assert peak() - before < 100, f"the service grew {peak() - before:.0f} MiB"


def pid_of(service: Service) -> int:
    assert service.pid is not None
    return service.pid


def big_page(path: Path, sections: int = 22000) -> Path:
    """About 30 MB of HTML whose text is just over the 20M-character limit of a document: the
    readers parse all of it (the most an HTML upload can cost) and then refuse it, so the test
    leaves no ingest job behind."""
    para = "<p>" + " ".join(f"word{i % 97}" for i in range(200)) + "</p>\n"
    body = "".join(f"<h2>Section {i}</h2>\n{para}" for i in range(sections))
    path.write_text(
        f"<!DOCTYPE html><html><head><title>Big</title></head><body><main><article>"
        f"<h1>Big</h1>{body}</article></main></body></html>"
    )
    return path


def test_health_answers_at_once_while_a_large_upload_is_parsed(
    service: Service, tmp_path: Path
) -> None:
    page = big_page(tmp_path / "big.html")
    assert 28 * MiB < page.stat().st_size < 32 * MiB
    data = page.read_bytes()
    times: list[float] = []
    done = threading.Event()

    def probe() -> None:
        with httpx.Client(base_url=service.url, timeout=10) as http:
            while not done.is_set():
                start = time.monotonic()
                r = http.get("/v1/health")
                times.append(time.monotonic() - start)
                assert r.status_code == 200
                done.wait(0.05)

    prober = threading.Thread(target=probe, daemon=True)
    with service.client() as http:
        prober.start()
        start = time.monotonic()
        try:
            r = http.post(upload_url(service), files=[("files", ("big.html", data, "text/html"))])
        finally:
            seconds = time.monotonic() - start
            done.set()
            prober.join()
    ms = sorted(t * 1000 for t in times)
    log.info(
        "%d-byte page parsed in %.1f s (%d); /v1/health over %d probes: p50 %.1f ms, "
        "p99 %.1f ms, max %.1f ms",
        len(data),
        seconds,
        r.status_code,
        len(ms),
        statistics.median(ms),
        statistics.quantiles(ms, n=100)[98],
        ms[-1],
    )
    assert r.status_code == 413, r.text  # parsed in full, then over the document limit
    assert "big.html: over" in r.text and "20,000,000-character limit" in r.text
    assert seconds > 2 and len(times) > 20  # a parse long enough for the probes to mean something
    p99 = statistics.quantiles(times, n=100)[98]
    assert p99 <= 0.1, f"/v1/health p99 {p99 * 1000:.0f} ms over {len(times)} probes"


def multipart(parts: list[tuple[bytes, bytes]]) -> tuple[bytes, dict[str, str]]:
    """A multipart body written by hand: httpx escapes control characters in file names."""
    boundary = uuid.uuid4().hex
    body = b"".join(
        b"--" + boundary.encode() + b"\r\n"
        b'Content-Disposition: form-data; name="files"; filename="' + name + b'"\r\n'
        b"Content-Type: text/plain\r\n\r\n" + content + b"\r\n"
        for name, content in parts
    )
    body += b"--" + boundary.encode() + b"--\r\n"
    return body, {"content-type": f"multipart/form-data; boundary={boundary}"}


@pytest.mark.parametrize(
    ("names", "says"),
    [
        ([b"nul\x00name.txt"], "control characters"),
        ([b"x" * 252 + b".txt"], "over 255 bytes"),
        ([b"a.txt", b"a.txt"], "a.txt: uploaded twice"),
    ],
    ids=["nul", "256-bytes", "duplicate"],
)
def test_odd_or_repeated_file_names_get_a_one_line_4xx(
    service: Service, names: list[bytes], says: str
) -> None:
    body, headers = multipart([(n, b"Zeppelins flew over Lake Constance.") for n in names])
    with service.client() as http:
        r = http.post(upload_url(service), content=body, headers=headers)
    assert r.status_code == 422, r.text
    message = r.json()["error"]["message"]
    assert says in message and "\n" not in message


def test_one_key_uploading_slow_files_leaves_another_key_a_worker(
    service: Service, tmp_path: Path
) -> None:
    """With two parsing workers, three large pages from key A took both, and key B's small file
    waited behind them; now A's files are read one at a time on half the pool."""
    page = big_page(tmp_path / "big.html").read_bytes()
    ended: list[tuple[float, int]] = []

    def slow() -> None:
        with service.client(KEY_A) as http:
            r = http.post(
                f"/v1/namespaces/{service.ns_a}/documents/upload",
                files=[("files", ("big.html", page, "text/html"))],
            )
        ended.append((time.monotonic(), r.status_code))

    flood = [threading.Thread(target=slow) for _ in range(3)]
    for t in flood:
        t.start()
    time.sleep(1.0)  # A's uploads are in, and being read
    with service.client() as http:
        r = http.post(
            upload_url(service),
            files=[("files", ("note.txt", b"A short note on the Zeppelin works.", "text/plain"))],
        )
    quick = time.monotonic()
    for t in flood:
        t.join()
    assert r.status_code == 202, r.text
    assert [status for _, status in ended] == [413, 413, 413]  # read in full, nothing written
    assert quick < min(at for at, _ in ended), "key B's file waited for key A's"
