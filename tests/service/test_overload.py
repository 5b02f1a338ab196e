"""More concurrent work than the service admits: 429 with Retry-After at once, never a hang."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import httpx
import pytest

from tests.service.conftest import KEY_ALL, REPO, Service, free_port, wait_ready

pytestmark = pytest.mark.integration


@pytest.mark.asyncio
async def test_excess_requests_get_429_with_retry_after(service: Service) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**service.env, "TERAG_MAX_CONCURRENCY": "1", "TERAG_MAX_QUEUE": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "terag_neo4j.cli", "serve", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        await asyncio.to_thread(wait_ready, url, proc)
        headers = {"Authorization": f"Bearer {KEY_ALL}"}
        body = {"question": "Who designed the Volkswagen Beetle?", "top_k": 5}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as http:
            t = time.monotonic()
            replies = await asyncio.gather(
                *(http.post(f"/v1/namespaces/{service.ns_a}/retrieve", json=body) for _ in range(8))
            )
            took = time.monotonic() - t
        statuses = sorted(r.status_code for r in replies)
        assert 200 in statuses and 429 in statuses, statuses
        assert set(statuses) <= {200, 429}
        for r in replies:
            if r.status_code == 429:
                assert int(r.headers["retry-after"]) >= 1
                assert r.json()["error"]["type"] == "TooManyRequests"
        assert took < 60  # refused at once, not queued behind the others
    finally:
        proc.terminate()
        proc.wait(30)
