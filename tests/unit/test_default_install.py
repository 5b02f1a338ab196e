"""The default path needs no torch: importing the package, the client, the service's app (HTTP
and MCP), the remote client and the CLI, sizing passages and building the packaged embedders
leave torch, sentence-transformers and transformers unimported, so an install without the `st`
extra serves. (A default-model index and retrieve against Neo4j: tests/integration/
test_default_install.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from terag_neo4j.embeddings import Embedder
from terag_neo4j.errors import DependencyError
from terag_neo4j.reranking import make_reranker

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "sentence_transformers", "transformers")

SCRIPT = """
import json, sys
import terag_neo4j
from terag_neo4j import TeragClient, TeragRetriever
from terag_neo4j.aio import AsyncTeragClient
from terag_neo4j.cli.main import main
from terag_neo4j.embeddings import Embedder, cached_embedder
from terag_neo4j.indexing.loading import default_tokenizer, to_passages
from terag_neo4j.core.documents import Document
from terag_neo4j.service.app import create_app
from terag_neo4j.service.jobs import JobRegistry
from terag_neo4j.service.mcp_tools import build_mcp
from terag_neo4j.service.remote_client import TeragRemote
from terag_neo4j.service.runtime import Runtime
from terag_neo4j.service.settings import OPEN, ServiceSettings

app = create_app(ServiceSettings())
service = ServiceSettings()
runtime = Runtime(service, None)
build_mcp(runtime, JobRegistry(runtime, service), service.keyring(), stdio_principal=OPEN)
for name in ("bge-small-en-v1.5", "all-MiniLM-L6-v2", "ollama:nomic-embed-text"):
    Embedder(name)
passages = list(to_passages([Document(id="d", text="Bonn is on the Rhine. " * 300)], 64, 8,
                            model="ollama:nomic-embed-text"))
print(json.dumps({"routes": len(app.routes), "passages": len(passages),
                  "heavy": [m for m in %r if m in sys.modules]}))
"""


def test_the_default_path_imports_no_torch(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "TERAG_HOME": str(tmp_path), "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT % (HEAVY,)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["routes"] > 10 and out["passages"] > 10
    assert out["heavy"] == []


@pytest.fixture
def without_st(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch, sentence-transformers and transformers as if not installed."""
    for name in HEAVY:
        monkeypatch.setitem(sys.modules, name, None)  # type: ignore[arg-type]


def test_a_sentence_transformers_model_without_the_extra_names_it(
    without_st: None, tmp_path: Path
) -> None:
    folder, home = tmp_path / "model", tmp_path / "home"
    folder.mkdir()
    for backend in ("torch", "auto"):
        model = Embedder(str(folder), backend=backend, home=home)  # type: ignore[arg-type]
        with pytest.raises(DependencyError) as refused:
            model.embed(["x"])
        message = str(refused.value)
        assert "terag-neo4j[st]" in message and "\n" not in message
    with pytest.raises(DependencyError, match=r"terag-neo4j\[st\]"):
        make_reranker(f"st:{folder}").score("q", ["p"])


def test_sizing_by_a_hub_models_tokenizer_without_the_extra_names_it(without_st: None) -> None:
    from terag_neo4j.indexing.loading import default_tokenizer

    with pytest.raises(DependencyError, match=r"terag-neo4j\[st\]"):
        default_tokenizer.__wrapped__("st:BAAI/bge-base-en-v1.5")
