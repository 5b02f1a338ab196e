"""Unit tests of error handling: the driver's exceptions are told apart by their classes and
Neo4j status codes, never by words of their messages, and each kind gets its own error class and
CLI exit code. The exceptions are built the way the driver builds them from a server's FAILURE
(`Neo4jError._hydrate_neo4j`), or constructed as the driver raises its own."""

from __future__ import annotations

import pytest
from neo4j.exceptions import (
    ClientError,
    DatabaseError,
    DatabaseUnavailable,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from terag_neo4j import cli
from terag_neo4j.store import GraphStoreError, Neo4jUnavailable, neo4j_errors
from terag_neo4j.store.connection import Neo4jAuthError, Neo4jTransientError

URI = "bolt://db.example:7687"


def server_error(code: str, message: str = "") -> Neo4jError:
    """What the driver raises for a FAILURE the server sent with `code`."""
    return Neo4jError._hydrate_neo4j(code=code, message=message or f"{code} happened")


def translated(e: BaseException) -> BaseException:
    """What leaves `neo4j_errors` when `e` is raised inside it."""
    with pytest.raises(BaseException) as info, neo4j_errors(URI):
        raise e
    return info.value


@pytest.mark.parametrize(
    "error",
    [
        ServiceUnavailable("Couldn't connect to db.example:7687 (reason [Errno 111] refused)"),
        SessionExpired("Failed to read from defunct connection"),
        server_error(
            "Neo.TransientError.General.DatabaseUnavailable", "Database 'neo4j' unavailable"
        ),
    ],
)
def test_a_server_that_is_down_or_restarting_is_unavailable(error: Exception) -> None:
    if isinstance(error, Neo4jError) and error.code.endswith("DatabaseUnavailable"):
        assert isinstance(error, DatabaseUnavailable)
    out = translated(error)
    assert isinstance(out, Neo4jUnavailable) and out.__cause__ is error
    assert URI in str(out) and "\n" not in str(out)
    assert cli.error_line(out)[1] == cli.EXIT_UNAVAILABLE


@pytest.mark.parametrize(
    "code",
    [
        "Neo.TransientError.Transaction.DeadlockDetected",
        "Neo.TransientError.Transaction.LockClientStopped",  # the driver makes it a ClientError
        "Neo.TransientError.Transaction.Terminated",  # the driver makes it a ClientError
        "Neo.TransientError.General.MemoryPoolOutOfMemoryError",
    ],
)
def test_transient_errors_are_not_an_unavailable_server(code: str) -> None:
    error = server_error(code, "the transaction could not finish")
    assert isinstance(error, TransientError | ClientError)
    out = translated(error)
    assert isinstance(out, Neo4jTransientError) and not isinstance(out, Neo4jUnavailable)
    assert isinstance(out, GraphStoreError) and out.__cause__ is error
    text = str(out)
    assert "unavailable" not in text.lower() and "terag server status" not in text
    assert code.rsplit(".", 1)[1] in text and "\n" not in text
    code_line = cli.error_line(out)[1]
    assert code_line == cli.EXIT_NEO4J != cli.EXIT_UNAVAILABLE


@pytest.mark.parametrize(
    "code",
    [
        "Neo.ClientError.Security.Unauthorized",
        "Neo.ClientError.Security.AuthenticationRateLimit",
        "Neo.ClientError.Security.TokenExpired",
    ],
)
def test_refused_credentials_are_an_auth_error_with_their_own_exit_code(code: str) -> None:
    error = server_error(code, "The client is unauthorized due to authentication failure.")
    out = translated(error)
    assert isinstance(out, Neo4jAuthError) and not isinstance(out, Neo4jUnavailable)
    assert "NEO4J_PASSWORD" in str(out) and URI in str(out)
    assert cli.error_line(out)[1] == cli.EXIT_AUTH
    assert len({cli.EXIT_AUTH, cli.EXIT_UNAVAILABLE, cli.EXIT_NEO4J, cli.EXIT_USAGE}) == 4


def test_an_error_without_a_code_is_not_taken_for_a_shutdown() -> None:
    # A FAILURE without a code (the driver files it as an unknown DatabaseError), and a
    # ClientError built without one: neither says the server is stopping.
    codeless = Neo4jError._hydrate_neo4j(message="something went wrong")
    assert isinstance(codeless, DatabaseError)
    for error in (codeless, ClientError(), ClientError("no code here")):
        assert not isinstance(translated(error), Neo4jUnavailable)


def test_words_of_a_message_do_not_decide() -> None:
    # A query error whose text happens to name a shutdown is still the query's error.
    syntax = server_error(
        "Neo.ClientError.Statement.SyntaxError", "Invalid input 'shutdown': DatabaseUnavailable"
    )
    assert translated(syntax) is syntax
    # ... and a server that is starting says so by its code, whatever its words.
    starting = server_error("Neo.TransientError.General.DatabaseUnavailable", "please wait")
    assert isinstance(translated(starting), Neo4jUnavailable)


def test_query_errors_pass_through_for_their_callers() -> None:
    # Callers catch ClientError to recognise GDS's own failures: those are not translated.
    call_failed = server_error(
        "Neo.ClientError.Procedure.ProcedureCallFailed", "GraphNotFoundException"
    )
    assert translated(call_failed) is call_failed


def test_a_missing_gds_plugin_is_not_reported_as_an_unavailable_server() -> None:
    from terag_neo4j.store import gds

    class NoGds:
        def read(self, name: str, **params: object) -> list[dict[str, object]]:
            raise server_error(
                "Neo.ClientError.Statement.SyntaxError", "Unknown function 'gds.version'"
            )

    with pytest.raises(GraphStoreError) as info:
        gds.check_version(NoGds())  # type: ignore[arg-type]
    assert not isinstance(info.value, Neo4jUnavailable)
    assert cli.error_line(info.value)[1] == cli.EXIT_NEO4J


def test_the_documented_exit_codes_are_distinct() -> None:
    codes = [
        cli.EXIT_OK,
        cli.EXIT_ERROR,
        cli.EXIT_USAGE,
        cli.EXIT_UNAVAILABLE,
        cli.EXIT_NOT_FOUND,
        cli.EXIT_BAD_FILES,
        cli.EXIT_AUTH,
        cli.EXIT_NEO4J,
    ]
    assert len(set(codes)) == len(codes)
