"""Fixtures for pipeline tests: a real Neo4j+GDS (from the neo4j plugin) and real models."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from tests.fixtures.neo4j import Neo4jConn
from tests.fixtures.settings import fixture_settings

SAMPLE = Path(__file__).resolve().parents[2] / "terag_neo4j" / "data" / "sample"


def connection_env(settings: Settings) -> dict[str, str]:
    """The environment that points a CLI or a subprocess at the test Neo4j and home."""
    return {
        "NEO4J_URI": settings.neo4j_uri or "",
        "NEO4J_USER": settings.neo4j_user,
        "NEO4J_PASSWORD": settings.neo4j_password or "",
        "NEO4J_DATABASE": settings.neo4j_database,
        "TERAG_HOME": str(settings.home),
    }


@pytest.fixture(scope="session")
def base_settings(neo4j_conn: Neo4jConn, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """The session's Neo4j, a fresh home, spaCy; every other setting at its declared default
    (no `.env`, no TERAG_* of the caller: see tests/fixtures/settings.py)."""
    home = tmp_path_factory.mktemp("terag-home")
    return fixture_settings(
        {},
        neo4j_uri=neo4j_conn.uri,
        neo4j_user=neo4j_conn.user,
        neo4j_password=neo4j_conn.password,
        neo4j_database=neo4j_conn.database,
        home=home,
        extractor="spacy",
    )


@pytest.fixture
def spacy_client(base_settings: Settings, namespace: str) -> Iterator[TeragClient]:
    """A spaCy client that keeps CO_OCCURRENCE on every write: its tests check pair counts."""
    with TeragClient(base_settings, namespace=namespace, cooccurrence="eager") as client:
        yield client


@pytest.fixture(scope="module")
def sample_client(base_settings: Settings) -> Iterator[TeragClient]:
    """The sample corpus indexed once per test module, in its own namespace (dropped after),
    with SYNONYM and CO_OCCURRENCE edges (the Browser kit shows them)."""
    ns = f"mod-{uuid.uuid4().hex[:10]}"
    with TeragClient(
        base_settings, namespace=ns, synonym_threshold=0.8, cooccurrence="eager"
    ) as client:
        client.index([SAMPLE], progress=False)
        try:
            yield client
        finally:
            client.drop(ns)
