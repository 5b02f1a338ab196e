"""A GDS graph missing from the catalog is recognised by the error GDS raises for it, not by
words of its message, which change between versions. The missing graph's error is GDS 2.26's as Neo4j 2026.01 sent
it; the others have the words the old check looked for ("does not exist", "graph")."""

from __future__ import annotations

from neo4j.exceptions import ClientError, Neo4jError

from terag_neo4j.store import gds

CALL_FAILED = "Neo.ClientError.Procedure.ProcedureCallFailed"


def error(code: str, message: str) -> ClientError:
    e = Neo4jError._hydrate_neo4j(code=code, message=message)
    assert isinstance(e, ClientError)
    return e


def test_a_graph_missing_from_the_catalog() -> None:
    missing = error(
        CALL_FAILED,
        "Failed to invoke procedure `gds.pageRank.stream`: Caused by: "
        "org.neo4j.gds.core.loading.GraphNotFoundException: Graph with name `terag_wiki_u_v3` "
        "does not exist on database `neo4j`. It might exist on another database.",
    )
    assert gds.missing_graph(missing)


def test_other_errors_that_name_a_graph_and_something_missing() -> None:
    others = [
        # a database named like a graph (NEO4J_DATABASE=graphs): not a projection to rebuild
        error("Neo.ClientError.Database.DatabaseNotFound", "Database `graphs` does not exist."),
        # a restart node that is not in the projection: projecting again would not help
        error(
            CALL_FAILED,
            "Failed to invoke procedure `gds.pageRank.stream`: Caused by: "
            "java.lang.IllegalArgumentException: Source node 42 does not exist in the graph.",
        ),
        # a missing property of the projected graph
        error(
            CALL_FAILED,
            "Failed to invoke procedure `gds.pageRank.stream`: Caused by: "
            "java.lang.IllegalArgumentException: Relationship weight property `weight` does "
            "not exist in the in-memory graph.",
        ),
    ]
    assert [gds.missing_graph(e) for e in others] == [False, False, False]
