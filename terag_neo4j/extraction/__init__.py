"""Extraction stage (being split into one module per concern; see the next commit)."""

from terag_neo4j.extraction.concepts import *  # noqa: F403
