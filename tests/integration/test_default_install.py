"""The default model indexes and retrieves on the real Neo4j without torch: a process of its own,
where torch, sentence-transformers and transformers cannot be imported (as in an install without
the `st` extra), builds a namespace with TERAG_EMBEDDING_MODEL's default and retrieves from it.
(spaCy's thinc imports torch whenever it is installed, so in this environment, which has the
extra, the child hides it rather than checking that it stayed unimported. The imports alone:
tests/unit/test_default_install.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from terag_neo4j.config import Settings, env_name

from .conftest import SAMPLE

pytestmark = pytest.mark.integration

SCRIPT = """
import json, sys
for name in ("torch", "sentence_transformers", "transformers"):
    sys.modules[name] = None  # an import fails as if it were not installed
from terag_neo4j import TeragClient

with TeragClient(namespace=sys.argv[1]) as client:
    report = client.index([sys.argv[2]], progress=False)
    result = client.retrieve("Who designed the Volkswagen Beetle?", top_k=3)
    print(json.dumps({
        "model": client.settings.embedding_model,
        "backend": client.embedder.embedder.backend,
        "passages": report.passages_new,
        "titles": [p.title for p in result.passages],
        "heavy": [m for m in ("torch", "sentence_transformers", "transformers")
                  if sys.modules.get(m) is not None],
    }))
"""


def test_the_default_model_indexes_and_retrieves_without_torch(
    base_settings: Settings, namespace: str
) -> None:
    fields = ("neo4j_uri", "neo4j_user", "neo4j_database", "home", "extractor")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TERAG_", "NEO4J_"))}
    env.update({env_name(f): str(getattr(base_settings, f)) for f in fields})
    env[env_name("neo4j_password")] = base_settings.neo4j_password or ""
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, namespace, str(SAMPLE)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["model"] == "bge-small-en-v1.5" and out["backend"].startswith("openvino-")
    assert out["passages"] == 8
    assert any("Beetle" in t or "Porsche" in t for t in out["titles"]), out["titles"]
    assert out["heavy"] == []
