"""The errors every LLM backend raises, whatever server it calls."""

from __future__ import annotations

from terag_neo4j.errors import TeragError

# The longest wait between two tries of one call (a Retry-After asks for its own)
MAX_RETRY_WAIT_S = 8.0


class LLMError(TeragError, RuntimeError):
    """An LLM call failed for a reason retrying does not fix."""


class ModelNotFoundError(LLMError):
    pass


class LLMUnavailableError(LLMError):
    """The server could not be reached or stayed busy through every retry."""
