"""Memory per caller against a real keyed `terag serve`: a JSON Lines upload of 200,000 records
is refused by the 10,000-document cap of a submission with nothing stored (it made 200,000
queued documents), and 64 bodies of 32 MiB sent at once by one key are read a few at a time,
off the event loop, while another key's retrievals go on and /v1/health answers within a
second (they were all read and decoded at once, on the loop)."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from tests.adversarial.conftest import rss_mib
from tests.adversarial.test_uploads import peak_rss, pid_of
from tests.service.conftest import KEY_A, KEY_B, Service

log = logging.getLogger(__name__)

MiB = 1024 * 1024
# Probes /v1/health every 0.1 s until terminated, printing each answer's seconds (a refused or
# failed probe prints 99)
PROBE = """
import signal, sys, time, httpx
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
with httpx.Client(base_url=sys.argv[1], timeout=10) as http:
    while True:
        start = time.monotonic()
        try:
            ok = http.get("/v1/health").status_code == 200
        except httpx.HTTPError:
            ok = False
        print(time.monotonic() - start if ok else 99.0, flush=True)
        time.sleep(0.1)
"""


def test_a_jsonl_upload_past_the_document_cap_is_refused_and_stores_nothing(
    service: Service, tmp_path: Path
) -> None:
    ns = f"svc-{uuid.uuid4().hex[:8]}-many"
    data = b"".join(b'{"text": "record %d"}\n' % i for i in range(200_000))
    with service.client() as http:
        start = time.monotonic()
        r = http.post(
            f"/v1/namespaces/{ns}/documents/upload",
            files=[("files", ("many.jsonl", data, "application/jsonl"))],
        )
        seconds = time.monotonic() - start
        assert r.status_code == 413, r.text
        message = r.json()["error"]["message"]
        assert message == (
            "many.jsonl: over the 10,000 documents one upload may hold; "
            "split it into smaller uploads"
        )
        assert seconds < 30
        # Nothing stored: no namespace, no job
        assert http.get(f"/v1/namespaces/{ns}").status_code == 404
        jobs = http.get("/v1/jobs", params={"limit": 1000}).json()
        rows = jobs["jobs"] if isinstance(jobs, dict) else jobs
        assert not [j for j in rows if j["namespace"] == ns]
        assert http.get("/v1/health").status_code == 200


def test_64_bodies_of_32_mib_from_one_key_leave_another_key_served(service: Service) -> None:
    limit = 32 * MiB  # TERAG_MAX_BODY_BYTES, the default
    head, tail = b'{"documents": [{"id": "big", "text": "', b'"}]}'
    # One bytes object, shared by every sender: the test's own memory stays at 32 MiB
    body = head + b"x" * (limit - len(head) - len(tail)) + tail
    assert len(body) == limit
    url = f"/v1/namespaces/{service.ns_a}/documents"
    statuses: list[int | str] = []
    retrievals: list[int] = []
    done = threading.Event()

    def flood(_: int) -> None:
        try:
            with httpx.Client(base_url=service.url, timeout=300) as http:
                r = http.post(
                    url,
                    content=body,
                    headers={
                        "Authorization": f"Bearer {KEY_A}",
                        "Content-Type": "application/json",
                    },
                )
            statuses.append(r.status_code)
        except httpx.TransportError as e:  # refused unread: the service closed the connection
            statuses.append(type(e).__name__)

    # /v1/health is probed from a process of its own: this one's GIL is busy with 64 senders
    prober = subprocess.Popen(
        [sys.executable, "-c", PROBE, service.url], stdout=subprocess.PIPE, text=True
    )

    def retrieve() -> None:
        with service.client(KEY_B) as http:
            while not done.is_set():
                r = http.post(
                    f"/v1/namespaces/{service.ns_b}/retrieve",
                    json={"question": "When does the Glockenspiel play?", "top_k": 1},
                )
                retrievals.append(r.status_code)

    with service.client(KEY_B) as http:  # warm: the flood must not be timed against a cold start
        warm = http.post(
            f"/v1/namespaces/{service.ns_b}/retrieve",
            json={"question": "When does the Glockenspiel play?", "top_k": 1},
        )
        assert warm.status_code == 200, warm.text
    pid = pid_of(service)
    before = rss_mib(pid)
    side = [threading.Thread(target=retrieve, daemon=True)]
    with peak_rss(pid) as peak:
        for t in side:
            t.start()
        with ThreadPoolExecutor(64) as pool:
            list(pool.map(flood, range(64)))
        time.sleep(1.0)  # the other key goes on after the flood too
        done.set()
        for t in side:
            t.join(60)
        prober.terminate()
        out, _ = prober.communicate(timeout=30)
    health = [float(line) for line in out.split()]
    log.info(
        "64 x 32 MiB: %s; key B %d retrievals %s; health max %.2f s over %d probes; "
        "service RSS %.0f -> peak %.0f MiB",
        {s: statuses.count(s) for s in set(statuses)},
        len(retrievals),
        set(retrievals),
        max(health),
        len(health),
        before,
        peak(),
    )
    assert len(statuses) == 64
    # Read and decoded in full, then refused as over the document limit: nothing stored
    assert statuses.count(413) >= 1 and 202 not in statuses
    assert all(s in (408, 413, 429, 503) or isinstance(s, str) for s in statuses), statuses
    assert retrievals and set(retrievals) == {200}, retrievals
    assert max(health) < 1.0, f"/v1/health took {max(health):.2f} s"
    assert peak() - before < 768, f"the service grew {peak() - before:.0f} MiB"
