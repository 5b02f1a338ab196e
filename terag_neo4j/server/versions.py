"""The one place for the versions of what the project fetches outside its Python dependencies.

Shipped with the package, so an installed wheel provisions the same servers as a checkout.
docker-compose.yml repeats the two image tags (Compose cannot read Python);
tests/unit/test_server_pins.py checks that they agree with this module. Python packages are
pinned in constraints.txt.

Neo4j and GDS go together: GDS 2.17 is the first release whose PageRank takes weighted
``sourceNodes`` ([[node, bias], ...]), GDS 2.26.0 is the only release >= 2.17 on Maven Central,
and GDS 2.26 supports exactly Neo4j 2026.01, so the pair is Neo4j 2026.01.4 (newest 2026.01
patch) + GDS 2.26.0; no Neo4j 2025.x has a matching GDS on Maven Central.
"""

from __future__ import annotations

from typing import Final

# Maven artifacts of the local server (terag_neo4j.server.neo4j), and the Docker image's tag.
NEO4J: Final = "2026.01.4"
GDS: Final = "2.26.0"
NEO4J_BROWSER: Final = "5.24.0"
MAVEN_DEPENDENCY_PLUGIN: Final = "3.8.1"

# Ollama, built with `go install` (terag_neo4j.server.ollama), and the Docker image's tag.
OLLAMA: Final = "0.17.4"
# The source package whose llama.cpp vendor/ folder supplies the headers that Ollama's Go module
# zip leaves out (fetched with `pip download` when Ollama is built).
LLAMA_CPP_HEADERS_DIST: Final = "llama-cpp-python"
LLAMA_CPP_HEADERS_VERSION: Final = "0.3.36"
