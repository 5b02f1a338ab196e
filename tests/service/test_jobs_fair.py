"""One worker, two tenants: a big job yields to another namespace's small job queued behind
it, and a cancel stops a running job within seconds, whatever step it is in, even inside one
sentence of megabytes."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

import httpx
import pytest

from tests.service.conftest import Service

pytestmark = pytest.mark.integration
log = logging.getLogger(__name__)

FINISHED = ("succeeded", "failed", "cancelled")
# One document of a few hundred passages: one group, so only `should_stop` can make it yield
BIG = "\n\n".join(
    f"Paragraph {i}: the mill at Hollow {i} grinds corn for the farms of Dale {i % 50}, "
    f"says Miller Jones {i % 13}."
    for i in range(6000)
)


def post(http: httpx.Client, ns: str, docs: list[dict[str, str]]) -> str:
    r = http.post(f"/v1/namespaces/{ns}/documents", json={"documents": docs})
    assert r.status_code == 202, r.text
    return str(r.json()["id"])


def wait(http: httpx.Client, job_id: str, until: tuple[str, ...], timeout: float) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        job: dict[str, Any] = http.get(f"/v1/jobs/{job_id}").json()
        if job["state"] in until:
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} not {until} within {timeout:.0f} s")


def test_a_small_job_overtakes_a_big_one_which_then_cancels_in_seconds(service: Service) -> None:
    tag = uuid.uuid4().hex[:8]
    big_ns, small_ns = f"fair-{tag}-big", f"fair-{tag}-small"
    with service.client() as http:
        try:
            big = post(http, big_ns, [{"id": "big", "text": BIG}])
            wait(http, big, ("running", *FINISHED), 60)
            t0 = time.monotonic()
            small = post(http, small_ns, [{"id": "s", "text": "Dale lies on the River Swale."}])
            done = wait(http, small, FINISHED, 60)
            took = time.monotonic() - t0
            assert done["state"] == "succeeded", done
            # It went first: the big job is still under way
            assert http.get(f"/v1/jobs/{big}").json()["state"] == "running"
            t1 = time.monotonic()
            assert http.delete(f"/v1/jobs/{big}").status_code == 202
            stopped = wait(http, big, FINISHED, 30)
            cancel_s = time.monotonic() - t1
            assert stopped["state"] == "cancelled", stopped
            # The worker sees a cancel within a second; the indexer asks `should_stop` between
            # steps that take a few seconds each on a loaded machine (target: 5 s)
            assert cancel_s < 15, f"the cancel took {cancel_s:.1f} s"
            log.info(
                "small job done %.1f s after submission; big cancelled in %.1f s", took, cancel_s
            )
        finally:
            for ns in (big_ns, small_ns):
                http.delete(f"/v1/namespaces/{ns}")


def _one_sentence(words: int) -> str:
    """Prose with commas and no sentence end: chunking can only cut it into token windows."""
    names = ("mill", "Hollow", "corn", "farms", "Dale", "Miller Jones", "River Swale", "barley")
    return " ".join(f"{names[i % 8]} {i}" + ("," if i % 9 == 0 else "") for i in range(words))


@pytest.mark.parametrize(
    ("words", "after_s"),
    [
        (300_000, 1.0),  # about 4 MB: cancelled while its sentence is cut into windows
        (20_000, 6.0),  # about 200 windows: cancelled while spaCy extracts them
    ],
    ids=["chunking", "extracting"],
)
def test_a_job_in_one_enormous_sentence_cancels_within_5_s(
    service: Service, words: int, after_s: float
) -> None:
    """The tokenizer and spaCy work in bounded steps (`token_windows.TOKENIZE_CHARS`,
    `pacing.STEP_S`), so the worker's cancel check and lease heartbeat run between
    them: one call on the whole sentence, or 64 of its windows at once, took 16-30 s here."""
    ns = f"fair-{uuid.uuid4().hex[:8]}-sentence"
    with service.client() as http:
        try:
            job = post(http, ns, [{"id": "one-sentence", "text": _one_sentence(words)}])
            wait(http, job, ("running", *FINISHED), 60)
            time.sleep(after_s)
            assert http.get(f"/v1/jobs/{job}").json()["state"] == "running"
            t0 = time.monotonic()
            assert http.delete(f"/v1/jobs/{job}").status_code == 202
            stopped = wait(http, job, FINISHED, 60)
            cancel_s = time.monotonic() - t0
            assert stopped["state"] == "cancelled", stopped
            assert cancel_s < 5, f"the cancel took {cancel_s:.1f} s"
            log.info("one sentence of %d words: cancelled in %.1f s", words, cancel_s)
        finally:
            http.delete(f"/v1/namespaces/{ns}")
