"""Fault tests reuse the integration fixtures: a real Neo4j + GDS and a spaCy-backed client."""

from tests.integration.conftest import base_settings

__all__ = ["base_settings"]
