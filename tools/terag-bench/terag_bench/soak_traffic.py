"""`terag bench-soak`'s traffic: per key a retriever, an uploader and a poller against either
service (`Traffic`), the documents they upload, and the end's wait for every job and listing of
every namespace."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import httpx

from terag_bench.soak_accounting import Ledger, Request, error_kind
from terag_bench.soak_services import Services

REQUEST_TIMEOUT_S = 30.0  # every request's client timeout: none can hang the soak
FINISHED = ("succeeded", "failed", "cancelled")
QUESTIONS = (
    "Which river flows past town {n}?",
    "What does mill {n} grind?",
    "Who keeps the lighthouse of harbour {n}?",
)


class Traffic:
    """Per key: a retriever, an uploader and a poller, each on its own thread and connection."""

    def __init__(
        self,
        services: Services,
        keys: dict[str, str],
        ledger: Ledger,
        docs_per_upload: int,
        upload_every: float,
    ) -> None:
        self.services, self.keys, self.ledger = services, keys, ledger
        self.docs_per_upload, self.upload_every = docs_per_upload, upload_every
        self.t0 = time.monotonic()
        self.stop = threading.Event()
        self.jobs: dict[str, tuple[str, list[dict[str, str]]]] = {}  # id -> namespace, docs
        self.done_jobs: dict[str, str] = {}
        self.lock = threading.Lock()
        self.rng = random.Random(7)

    def request(
        self, kind: str, key: str, method: str, path: str, body: Any = None
    ) -> httpx.Response | None:
        """One request to either service, timed and counted however it ends."""
        i = self.rng.randrange(2)
        self.ledger.begin()
        t = time.monotonic()
        response, outcome = None, "ok"
        try:
            with httpx.Client(
                base_url=self.services.url(i),
                headers={"Authorization": f"Bearer {key}"},
                timeout=REQUEST_TIMEOUT_S,
            ) as http:
                response = http.request(method, path, json=body)
            outcome = error_kind(response.status_code)
        except httpx.HTTPError as e:
            outcome = error_kind(None, e)
        finally:
            self.ledger.end(Request(kind, i, t - self.t0, time.monotonic() - t, outcome))
        return response

    def retriever(self, key: str, ns: str) -> None:
        n = 0
        while not self.stop.is_set():
            q = QUESTIONS[n % len(QUESTIONS)].format(n=n % 50)
            self.request("retrieve", key, "POST", f"/v1/namespaces/{ns}/retrieve", {"question": q})
            n += 1

    def upload(self, key: str, ns: str, docs: list[dict[str, str]]) -> bool:
        self.ledger.submit(ns, [d["id"] for d in docs])
        r = self.request(
            "upload", key, "POST", f"/v1/namespaces/{ns}/documents", {"documents": docs}
        )
        if r is None or r.status_code != 202:
            return False
        with self.lock:
            self.jobs[str(r.json()["id"])] = (ns, docs)
        self.ledger.accept(ns, [d["id"] for d in docs])
        return True

    def uploader(self, key: str, ns: str) -> None:
        n, pending = 0, None
        while not self.stop.wait(self.upload_every):
            if pending is None:
                pending = [document(ns, n + j) for j in range(self.docs_per_upload)]
                n += self.docs_per_upload
            elif pending:
                with self.ledger.lock:
                    self.ledger.resent += len(pending)
            if self.upload(key, ns, pending):
                pending = None

    def poller(self, key: str, ns: str) -> None:
        while not self.stop.wait(1.0):
            self.poll_once(key, ns)

    def poll_once(self, key: str, ns: str) -> None:
        with self.lock:
            mine = [j for j, (jns, _) in self.jobs.items() if jns == ns]
        for job_id in mine:
            r = self.request("poll", key, "GET", f"/v1/jobs/{job_id}")
            if r is None or r.status_code != 200:
                continue
            state = r.json().get("state")
            if state not in FINISHED:
                continue
            with self.lock:
                ns_docs = self.jobs.pop(job_id, None)
                self.done_jobs[job_id] = state
            if state != "succeeded" and ns_docs is not None:
                # A client sends a failed job's documents again (the same ids)
                with self.ledger.lock:
                    self.ledger.resent += len(ns_docs[1])
                while not self.upload(key, ns, ns_docs[1]):
                    time.sleep(1.0)

    def threads(self, namespaces: dict[str, str]) -> list[threading.Thread]:
        out = []
        for key, ns in namespaces.items():
            for fn in (self.retriever, self.uploader, self.poller):
                out.append(threading.Thread(target=fn, args=(key, ns), daemon=True))
        return out


def document(ns: str, n: int) -> dict[str, str]:
    return {
        "id": f"{ns}-doc-{n}",
        "title": f"Town {n}",
        "text": f"River {n % 50} flows past town {n}, where mill {n % 50} grinds corn for the "
        f"farms and keeper {n % 13} tends the lighthouse of harbour {n % 50}.",
    }


def settle(traffic: Traffic, keys: dict[str, str], timeout: float) -> int:
    """Poll until every job has ended (failed ones sent again); the jobs still open after."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for key, ns in keys.items():
            traffic.poll_once(key, ns)
        with traffic.lock:
            if not traffic.jobs:
                return 0
        time.sleep(1.0)
    with traffic.lock:
        return len(traffic.jobs)


def stored_documents(services: Services, keys: dict[str, str], namespaces: dict[str, str]) -> Any:
    from terag_bench.serve_clients import Target, listed_documents

    out: dict[str, dict[str, int]] = {}
    for key, ns in namespaces.items():
        target = Target(services.url(1), None, {"Authorization": f"Bearer {key}"})
        out[ns] = listed_documents(target, ns)
    return out
