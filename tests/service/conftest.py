"""A real `terag serve` process on a free loopback port, against the session's real Neo4j + GDS.

Two tenants: namespace A holds the bundled sample corpus, namespace B one document. Keys:
`KEY_A` writes A only, `KEY_B` writes B only, `KEY_A_READ` reads A only, `KEY_ALL` writes any.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from tests.fixtures.neo4j import Neo4jConn
from tests.integration.conftest import SAMPLE, connection_env

REPO = Path(__file__).resolve().parents[2]
KEY_A = "key-a-" + uuid.uuid4().hex
KEY_B = "key-b-" + uuid.uuid4().hex
KEY_A_READ = "key-ar-" + uuid.uuid4().hex
KEY_ALL = "key-all-" + uuid.uuid4().hex
B_TEXT = "The Glockenspiel of Munich's town hall plays twice a day."
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a child gets when its parent thread ends
# This session's services share an ingest job queue no other service on the database takes from
JOB_QUEUE = "test-" + uuid.uuid4().hex[:12]


@dataclass(frozen=True)
class Service:
    url: str
    ns_a: str
    ns_b: str
    env: dict[str, str]
    settings: Settings
    pid: int | None = None  # the `terag serve` process (bench-serve reads its RSS)
    proc: subprocess.Popen[bytes] | None = field(default=None, compare=False, repr=False)

    def client(self, key: str | None = KEY_ALL) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=120)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def keys_json(ns_a: str, ns_b: str) -> str:
    return json.dumps(
        {
            KEY_A: {"namespaces": [ns_a], "access": "write"},
            KEY_B: {"namespaces": [ns_b], "access": "write"},
            KEY_A_READ: {"namespaces": [ns_a], "access": "read"},
            KEY_ALL: {"namespaces": "*", "access": "write"},
        }
    )


def service_env(settings: Settings, ns_a: str, ns_b: str) -> dict[str, str]:
    env = {**os.environ, **connection_env(settings)}
    env.update(
        TERAG_EXTRACTOR="spacy",
        TERAG_API_KEYS=keys_json(ns_a, ns_b),
        TERAG_JOB_QUEUE=JOB_QUEUE,
        HF_HUB_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
    )
    return env


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float = 300) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"terag serve exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/v1/ready", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"terag serve at {url} not ready within {timeout:.0f} s")


@pytest.fixture(scope="session")
def base_settings(neo4j_conn: Neo4jConn, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(
        neo4j_uri=neo4j_conn.uri,
        neo4j_user=neo4j_conn.user,
        neo4j_password=neo4j_conn.password,
        neo4j_database=neo4j_conn.database,
        home=tmp_path_factory.mktemp("terag-home"),
        extractor="spacy",
    )


@pytest.fixture(scope="session")
def tenants(base_settings: Settings) -> Iterator[tuple[str, str]]:
    """Namespace A (the sample corpus) and B (one document), indexed in-process."""
    tag = uuid.uuid4().hex[:8]
    ns_a, ns_b = f"svc-{tag}-a", f"svc-{tag}-b"
    with TeragClient(base_settings) as client:
        client.index([SAMPLE], namespace=ns_a, progress=False)
        client.index(
            [Document(id="munich", text=B_TEXT, title="Munich")], namespace=ns_b, progress=False
        )
        try:
            yield ns_a, ns_b
        finally:
            for ns in (ns_a, ns_b):
                if client.store.namespaces.exists(ns):
                    client.drop(ns)


@contextmanager
def running_service(
    env: dict[str, str],
    base_settings: Settings,
    tenants: tuple[str, str],
    log: Path,
    preexec_fn: Callable[[], None] | None = None,
    stdout: Path | None = None,
) -> Iterator[Service]:
    """A real `terag serve` subprocess on a free loopback port, ready; stopped afterwards (its
    log's tail is printed when it fails to start). `preexec_fn` runs in the child first. Its
    standard output goes to `stdout` where given (the log has its standard error then)."""
    ns_a, ns_b = tenants
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # Started from the main thread, the service ends with this process even when it dies
    # without its teardown (a native abort): an orphan went on logging in to the next run's
    # Neo4j. The signal follows the starting thread, so a pool thread's services go without.
    tied = threading.current_thread() is threading.main_thread() and sys.platform == "linux"
    parent = os.getpid()

    def setup() -> None:
        if tied:
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
            if os.getppid() != parent:  # gone before the line above
                os._exit(1)
        if preexec_fn is not None:
            preexec_fn()

    with log.open("wb") as out, (stdout or log).open("ab") as printed:
        proc = subprocess.Popen(
            [sys.executable, "-m", "terag_neo4j.cli", "serve", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=printed if stdout is not None else out,
            stderr=subprocess.STDOUT if stdout is None else out,
            preexec_fn=setup,
        )
        try:
            wait_ready(url, proc)
            yield Service(url, ns_a, ns_b, env, base_settings, proc.pid, proc)
        except Exception:
            sys.stderr.write(log.read_text(errors="replace")[-4000:])
            raise
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="session")
def service(
    base_settings: Settings, tenants: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    env = service_env(base_settings, *tenants)
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with running_service(env, base_settings, tenants, log) as svc:
        yield svc
