"""Reaching Neo4j: the driver and its timeouts, and the driver's errors as one line for a person.

Every other store module turns driver exceptions into these errors through `neo4j_errors`, so a
caller (the CLI, the client) only ever sees `GraphStoreError` and its subclasses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from neo4j import Driver, GraphDatabase
from neo4j.exceptions import (
    AuthError,
    ClientError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from terag_neo4j.config import Settings
from terag_neo4j.errors import TeragError


class GraphStoreError(TeragError, RuntimeError):
    """A Neo4j problem, phrased for the person who has to fix it."""


class NamespaceNotFound(GraphStoreError):
    pass


class Neo4jUnavailable(GraphStoreError):
    """Neo4j did not answer within the time budget (down, restarting, or unreachable)."""


# What a server that is down or restarting raises; the same client works again once it is back.
CONNECTION_ERRORS = (ServiceUnavailable, SessionExpired, TransientError)


def one_line(text: object, limit: int = 240) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _reason(e: BaseException) -> str:
    """The useful end of a driver message ("... (reason [Errno 111] Connection refused))")."""
    text = one_line(e, 10_000)
    m = re.search(r"reason ([^()]+)", text)
    return m.group(1).strip() if m else one_line(text, 160)


def unavailable(uri: str, e: BaseException) -> Neo4jUnavailable:
    return Neo4jUnavailable(
        f"Neo4j at {uri} is unavailable ({type(e).__name__}: {_reason(e)}); check that it "
        "runs (`terag server status`) and retry: the same client reconnects once it is back"
    )


@contextmanager
def neo4j_errors(uri: str) -> Iterator[None]:
    """Turn the driver's connection errors (after its retries) into `Neo4jUnavailable`."""
    try:
        yield
    except CONNECTION_ERRORS as e:
        raise unavailable(uri, e) from e
    except ClientError as e:
        if stopping(e):
            raise unavailable(uri, e) from e
        if (e.code or "").endswith("Database.DatabaseNotFound"):
            raise GraphStoreError(
                f"Neo4j at {uri} has no such database ({one_line(e.message, 160)}): set "
                "NEO4J_DATABASE to one that exists (Community edition has only `neo4j`; "
                "Enterprise and Aura create others with CREATE DATABASE)"
            ) from e
        raise


# What Neo4j answers a write it will not take from this session: a user without write
# privileges (Enterprise RBAC), a read-only database, a write in a read transaction.
WRITE_REFUSED = (
    "Neo.ClientError.Security.Forbidden",
    "Neo.ClientError.General.ForbiddenOnReadOnlyDatabase",
    "Neo.ClientError.Statement.AccessMode",
)


def write_refused(e: BaseException) -> bool:
    return isinstance(e, ClientError) and (e.code or "") in WRITE_REFUSED


def stopping(e: ClientError) -> bool:
    """A client error that a stopping or starting server sends (a query caught by the shutdown
    arrives as a bare error, or one naming the shutdown), not a fault of the query."""
    code = e.code or ""
    if not code or code.endswith("General.UnknownError"):
        return True  # no code came with it: the server did not get to answer the query
    text = f"{code} {e.message or ''} {e}".lower()
    return any(k in text for k in ("shutdown", "shut down", "databaseunavailable"))


def connection_target(settings: Settings) -> tuple[str, str, str | None]:
    """(uri, user, password) of the Neo4j at NEO4J_URI, or of the local managed server when it
    is unset. The local server's generated password goes to the local server only: with
    NEO4J_URI set and NEO4J_PASSWORD unset there is no password (a server without auth)."""
    if settings.neo4j_uri is None:
        from terag_neo4j.server.neo4j_home import connection

        return connection(settings)
    return settings.neo4j_uri, settings.neo4j_user, settings.neo4j_password


def connect(settings: Settings, target: tuple[str, str, str | None] | None = None) -> Driver:
    """A verified driver for the configured Neo4j, or the local managed server when unset."""
    uri, user, password = target or connection_target(settings)
    auth = (user, password) if password is not None else None
    driver = GraphDatabase.driver(uri, auth=auth, **driver_config(settings))
    try:
        driver.verify_connectivity()
    except AuthError as e:
        driver.close()
        if password is None:
            raise GraphStoreError(
                f"Neo4j at {uri} asks for a password and NEO4J_PASSWORD is unset: set "
                "NEO4J_USER and NEO4J_PASSWORD for it (the local server's generated password "
                "is used only when NEO4J_URI is unset)"
            ) from e
        raise GraphStoreError(
            f"Neo4j at {uri} rejected user {user!r}: check NEO4J_USER / NEO4J_PASSWORD "
            "(`terag server status --show-password` prints the local server's)"
        ) from e
    except (ServiceUnavailable, OSError, ValueError) as e:
        driver.close()
        raise GraphStoreError(
            f"cannot reach Neo4j at {uri}: start it with `terag server start` "
            "(or `docker compose up -d neo4j`), or set NEO4J_URI"
        ) from e
    return driver


def verify(driver: Driver, where: str) -> None:
    """Check that a driver the caller made (`TeragClient(driver=...)`) reaches Neo4j and may
    log in; a `GraphStoreError` saying what to fix if not. The driver stays open: its maker
    closes it."""
    try:
        driver.verify_connectivity()
    except AuthError as e:
        raise GraphStoreError(
            f"Neo4j at {where} rejected the driver's credentials: check the auth it was made "
            "with (`terag server status --show-password` prints the local server's password)"
        ) from e
    except (ServiceUnavailable, OSError, ValueError) as e:
        raise GraphStoreError(
            f"cannot reach Neo4j at {where} with the driver passed in: check its URI, and that "
            "the server runs (`terag server start` for the local one)"
        ) from e


def driver_address(driver: Driver) -> str:
    """Where a driver made elsewhere points (`host:port`), for messages: "Neo4j at ..."."""
    pool = getattr(driver, "_pool", None)  # a routing driver keeps its first router there
    address = getattr(driver, "address", None) or getattr(pool, "address", None)
    return str(address) if address else "the driver's address"


def driver_config(settings: Settings) -> dict[str, Any]:
    """Driver timeouts that fit one call, retries included, into `settings.neo4j_timeout_s`.

    The driver retries a managed transaction until `max_transaction_retry_time` has passed since
    its first failure and then sleeps once more (delays 0.5, 1, 2, 4 ... s), so a call on a dead
    server ends after at most about twice that; connection attempts give up after
    `connection_timeout` each. `GraphStore` retries on top only while time is left.
    """
    budget = settings.neo4j_timeout_s
    return {
        "connection_timeout": min(5.0, budget / 6),
        "connection_acquisition_timeout": budget / 2,
        "max_transaction_retry_time": budget / 5,
        "initial_retry_delay": 0.5,
        # Pooled connections idle for a while are checked before use: after a server restart a
        # stale one is replaced instead of failing an auto-commit query that does not retry.
        "liveness_check_timeout": 2.0,
        # "property key does not exist" and friends on a fresh database are not for the user.
        "notifications_min_severity": "OFF",
    }
