"""Shared fixtures: real services are started on demand by the plugins below.

- tests/fixtures/neo4j.py: one session-wide Neo4j + GDS (NEO4J_URI, else Docker, else the local
  server manager) and a per-test namespace that is wiped afterwards.
- tests/fixtures/ollama.py: a real Ollama serving the small SmolLM2 model.

Run only the fast unit tests with `pytest -m "not integration"`.
"""

import os

from tests.fixtures.settings import scrub_environment

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The caller's TERAG_* settings and knobs would reach every CLI and subprocess a test starts;
# only where the services are stays (tests/fixtures/settings.py).
scrub_environment(os.environ)

pytest_plugins = [
    "tests.fixtures.neo4j",
    "tests.fixtures.ollama",
    "tests.fixtures.spans",
    "tests.fixtures.tiny_models",
]
