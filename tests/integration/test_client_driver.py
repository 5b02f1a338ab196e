"""`TeragClient(driver=...)` against the real Neo4j: the caller's driver is used (not the
settings' connection) and stays open after the client closes; a driver that cannot log in or
reach Neo4j is refused with a `GraphStoreError` at construction."""

from __future__ import annotations

import asyncio

import pytest
from neo4j import GraphDatabase

from terag_neo4j import (
    AsyncTeragClient,
    Document,
    GraphStoreError,
    Settings,
    TeragClient,
    TeragError,
)
from tests.fixtures.neo4j import Neo4jConn

pytestmark = pytest.mark.integration

BEETLE = Document(
    id="beetle",
    title="Volkswagen Beetle",
    text="The Volkswagen Beetle is a car. Ferdinand Porsche designed the Beetle in Stuttgart.",
)


def count_passages(driver: object, database: str, namespace: str) -> int:
    records = driver.execute_query(  # type: ignore[attr-defined]
        "MATCH (p:Passage {namespace: $ns}) RETURN count(p) AS n",
        ns=namespace,
        database_=database,
    ).records
    return int(records[0]["n"])


def test_client_uses_the_callers_driver_and_leaves_it_open(
    neo4j_conn: Neo4jConn, base_settings: Settings, namespace: str
) -> None:
    driver = GraphDatabase.driver(neo4j_conn.uri, auth=(neo4j_conn.user, neo4j_conn.password))
    try:
        # Settings that point nowhere: only the driver can be what reaches Neo4j.
        nowhere = base_settings.with_overrides(
            neo4j_uri="bolt://127.0.0.1:9", neo4j_password="not-the-password"
        )
        with TeragClient(nowhere, driver=driver, namespace=namespace) as terag:
            assert terag.store.driver is driver
            report = terag.index([BEETLE], progress=False)
            assert report.passages_new == 1
            res = terag.retrieve("Who designed the Volkswagen Beetle?", top_k=1)
            assert [p.doc_id for p in res.passages] == ["beetle"]
        # close() closed the client's caches, not the caller's driver
        driver.verify_connectivity()
        assert count_passages(driver, neo4j_conn.database, namespace) == 1
    finally:
        driver.close()


def test_async_client_takes_a_driver_too(
    neo4j_conn: Neo4jConn, base_settings: Settings, namespace: str
) -> None:
    driver = GraphDatabase.driver(neo4j_conn.uri, auth=(neo4j_conn.user, neo4j_conn.password))

    async def main() -> list[str]:
        async with AsyncTeragClient(base_settings, driver=driver, namespace=namespace) as terag:
            await terag.index([BEETLE])
            res = await terag.retrieve("Who designed the Beetle?", top_k=1)
            return [p.doc_id for p in res.passages]

    try:
        assert asyncio.run(main()) == ["beetle"]
        driver.verify_connectivity()  # aclose() left it open
    finally:
        driver.close()


def test_a_driver_with_wrong_credentials_is_refused_in_one_line(
    neo4j_conn: Neo4jConn, base_settings: Settings
) -> None:
    driver = GraphDatabase.driver(neo4j_conn.uri, auth=(neo4j_conn.user, "wrong-password"))
    try:
        with pytest.raises(GraphStoreError, match="rejected") as info:
            TeragClient(base_settings, driver=driver)
        assert isinstance(info.value, TeragError) and "\n" not in str(info.value)
    finally:
        driver.close()


def test_a_driver_to_nowhere_is_refused(base_settings: Settings) -> None:
    driver = GraphDatabase.driver("bolt://127.0.0.1:9", auth=("neo4j", "x"), connection_timeout=2.0)
    try:
        with pytest.raises(GraphStoreError, match=r"cannot reach Neo4j at 127\.0\.0\.1:9"):
            TeragClient(base_settings, driver=driver)
    finally:
        driver.close()
