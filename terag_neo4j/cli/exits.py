"""The CLI's exit codes (docs/cli.md) and its usage error."""

from __future__ import annotations

from terag_neo4j.errors import TeragError

# Exit codes (docs/cli.md): 1 unexpected error, 2 usage (arguments, settings, unsupported file
# type), 3 Neo4j/Ollama unavailable, 4 not found (namespace, document, path, folder without
# supported files), 5 some input files could not be read (named; the others were indexed),
# 6 Neo4j refused the credentials, 7 Neo4j answered with an error (no GDS plugin or database,
# a write it does not allow, a deadlock or lock wait that outlasted the retries).
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_NOT_FOUND, EXIT_BAD_FILES = 0, 1, 2, 3, 4, 5


EXIT_AUTH, EXIT_NEO4J = 6, 7


class UsageError(TeragError, ValueError):
    """A command used the wrong way (exit 2)."""
