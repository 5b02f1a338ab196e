"""`TeragRemote` queries a running service from a process where torch and the Neo4j driver
cannot be imported at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.service.conftest import KEY_A, REPO, Service

pytestmark = pytest.mark.integration

# Run before anything else in the child: an import of either fails as if it were not installed.
BLOCK = """
import sys
for name in ("torch", "neo4j", "transformers", "sentence_transformers", "openvino", "fastapi"):
    sys.modules[name] = None
"""

SCRIPT = """
import asyncio, json, sys
from terag_neo4j.service.remote_client import AsyncTeragRemote, RemoteError, TeragRemote

url, key, ns, other = sys.argv[1:5]
out = {}
with TeragRemote(url, api_key=key, namespace=ns) as terag:
    res = terag.retrieve("Who designed the Volkswagen Beetle?", top_k=3)
    out["passages"] = [p.id for p in res.passages]
    out["namespaces"] = [n.name for n in terag.namespaces()]
    job = terag.index_texts([{"id": "remote-doc", "text": "Gustav Klimt painted The Kiss in Vienna."}],
                            wait=True, timeout=120)
    out["job"] = job.state
    out["docs"] = [d.id for d in terag.documents(limit=1000).documents]
    out["deleted"] = terag.delete("remote-doc")
    try:
        terag.retrieve("x", namespace=other)
    except RemoteError as e:
        out["other"] = [e.status, e.type]

async def run_async():
    async with AsyncTeragRemote(url, api_key=key, namespace=ns) as terag:
        res = await terag.retrieve("Who designed the Volkswagen Beetle?", top_k=3)
        return [p.id for p in res.passages]

out["async_passages"] = asyncio.run(run_async())
out["heavy"] = [m for m in ("torch", "neo4j") if sys.modules.get(m) is not None]
print(json.dumps(out))
"""


def test_remote_client_without_torch_or_the_driver(service: Service) -> None:
    code = BLOCK + textwrap.dedent(SCRIPT)
    proc = subprocess.run(
        [sys.executable, "-c", code, service.url, KEY_A, service.ns_a, service.ns_b],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(out["passages"]) == 3
    assert out["async_passages"] == out["passages"]
    assert out["namespaces"] == [service.ns_a]
    assert out["job"] == "succeeded" and "remote-doc" in out["docs"]
    assert out["deleted"] == 1
    assert out["other"] == [403, "Forbidden"]
    assert out["heavy"] == []


def test_blocking_shim_really_blocks() -> None:
    """The shim above makes `import torch` fail, so the test above proves what it claims."""
    code = BLOCK + "\ntry:\n    import torch\nexcept ImportError:\n    print('blocked')\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.stdout.strip() == "blocked"
