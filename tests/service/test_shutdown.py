"""`terag serve` stops within an orchestrator's grace (30 s before SIGKILL) even while Neo4j
hangs: the real managed Neo4j is frozen with SIGSTOP under a request, the service gets SIGTERM,
and the request is answered 503 (retry) rather than held for the driver's read timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from terag_neo4j.config import Settings
from terag_neo4j.local import neo4j as local
from terag_neo4j.service.app import SHUTDOWN_GRACE_S
from tests.fixtures.neo4j import Neo4jConn
from tests.fixtures.settings import fixture_settings
from tests.service.conftest import KEY_ALL, running_service, service_env

pytestmark = [pytest.mark.integration, pytest.mark.faults]

# Kubernetes' default terminationGracePeriodSeconds; systemd allows 90
ORCHESTRATOR_GRACE_S = 30


def test_sigterm_while_neo4j_hangs_exits_in_time_and_answers_the_request_503(
    neo4j_conn: Neo4jConn,
    base_settings: Settings,
    tenants: tuple[str, str],
    tmp_path: Path,
) -> None:
    if neo4j_conn.source != "local":
        pytest.skip("freezes the managed local Neo4j's process, which this session does not run")
    neo4j_pid = local.status(fixture_settings()).pid
    assert neo4j_pid is not None
    ns = tenants[0]
    auth = {"Authorization": f"Bearer {KEY_ALL}"}
    body = {"question": "Which city is the headquarters of Volkswagen?", "top_k": 3}
    env = {**service_env(base_settings, *tenants), "TERAG_QUERY_CACHE_SIZE": "0"}
    log = tmp_path / "serve.log"
    stalled: list[httpx.Response | BaseException] = []
    with running_service(env, base_settings, tenants, log) as svc:
        assert svc.proc is not None
        url = svc.url

        def ask() -> None:
            try:
                stalled.append(
                    httpx.post(
                        f"{url}/v1/namespaces/{ns}/retrieve", json=body, headers=auth, timeout=300
                    )
                )
            except BaseException as e:
                stalled.append(e)

        warm = httpx.post(
            f"{url}/v1/namespaces/{ns}/retrieve", json=body, headers=auth, timeout=120
        )
        assert warm.status_code == 200, warm.text
        os.kill(neo4j_pid, signal.SIGSTOP)
        try:
            asker = threading.Thread(target=ask, daemon=True)
            asker.start()
            time.sleep(2)  # the request is in a worker, waiting on the frozen server
            assert not stalled, stalled
            t0 = time.monotonic()
            svc.proc.send_signal(signal.SIGTERM)
            try:
                svc.proc.wait(ORCHESTRATOR_GRACE_S)
            except subprocess.TimeoutExpired:
                pytest.fail(
                    f"terag serve still running {ORCHESTRATOR_GRACE_S} s after SIGTERM:\n"
                    + log.read_text(errors="replace")[-3000:]
                )
            took = time.monotonic() - t0
            asker.join(10)
        finally:
            os.kill(neo4j_pid, signal.SIGCONT)
    # The request had its grace, then was told to retry
    assert took >= SHUTDOWN_GRACE_S - 1, took
    assert len(stalled) == 1 and isinstance(stalled[0], httpx.Response), stalled
    answer = stalled[0]
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"]
    assert answer.json()["error"]["type"] == "ServiceUnavailable"
    assert "Exception in ASGI application" not in log.read_text()
    # Neo4j, resumed, serves as before
    assert local.bolt_answers(neo4j_conn.uri, neo4j_conn.user, neo4j_conn.password, 30.0)
