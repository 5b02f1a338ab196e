"""Reaching Neo4j: the driver and its timeouts, and the driver's errors as one line for a person.

Every other store module turns driver exceptions into these errors through `neo4j_errors`, so a
caller (the CLI, the client) only ever sees `GraphStoreError` and its subclasses.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, TypeVar

from neo4j import Driver, GraphDatabase
from neo4j.exceptions import (
    AuthError,
    ClientError,
    DatabaseUnavailable,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from terag_neo4j.config import Settings
from terag_neo4j.errors import TeragError, one_line

log = logging.getLogger(__name__)


class GraphStoreError(TeragError, RuntimeError):
    """A Neo4j problem, phrased for the person who has to fix it."""


class NamespaceNotFound(GraphStoreError):
    pass


class Neo4jUnavailable(GraphStoreError):
    """Neo4j did not answer within the time budget (down, restarting, or unreachable)."""


class Neo4jAuthError(GraphStoreError):
    """Neo4j refused the credentials (NEO4J_USER / NEO4J_PASSWORD, or the driver's auth)."""


class Neo4jTransientError(GraphStoreError):
    """Neo4j answered, but could not finish the call for now (a deadlock, a lock wait or a
    transaction it stopped, memory), and the driver's retries ran out: the same call may work
    when run again; the server is not down."""


class StatementTimedOut(GraphStoreError):
    """Neo4j ended a statement or transaction that ran past its timeout (the store's
    statement timeout, TERAG_NEO4J_STATEMENT_TIMEOUT_S): nothing of it was committed."""


# The codes of a transaction the server ended at its timeout: the one a client sets
# (Neo4j 5 and later) and the server's own `db.transaction.timeout`.
TIMED_OUT_CODES = (
    "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
    "Neo.ClientError.Transaction.TransactionTimedOut",
    "Neo.TransientError.Transaction.TransactionTimedOut",
)


class ClientClosed(GraphStoreError):
    """A call on a client (or store) after its `close()`."""


P = ParamSpec("P")
R = TypeVar("R")


def held_call(method: Callable[Concatenate[Any, P], R]) -> Callable[Concatenate[Any, P], R]:
    """A client's public call, counted as running from start to end (on `self.store.in_flight`):
    `close` waits for it (the store's sessions alone leave gaps between its queries, where its
    LLM calls and caches are used)."""

    def call(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self.store.in_flight.hold():
            return method(self, *args, **kwargs)

    functools.update_wrapper(call, method)
    return call


class InFlight:
    """The calls using a driver now, so that it is never closed under one of them.

    The driver is not safe to close while another thread sends on one of its connections:
    closing says goodbye on every pooled connection, in use or not, and one being written to
    at that moment breaks (a `BufferError` in the driver's outbox). `close` refuses new calls,
    waits a bounded time for the running ones, and then releases the driver; when some are
    still running after the wait, the last of them releases it as it returns.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._count = 0
        self._closed = False
        self._release: Callable[[], None] | None = None
        # How deep this thread is in holds: a call that was running when `close` came goes on
        # opening sessions until it returns
        self._depth = threading.local()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def running(self) -> int:
        return self._count

    @contextmanager
    def hold(self) -> Iterator[None]:
        """One call's use of the driver (holds nest: a client call around its store calls)."""
        depth: int = getattr(self._depth, "n", 0)
        with self._cond:
            if self._closed and depth == 0:
                raise ClientClosed(
                    "this client was closed; make a new one (keep it open, e.g. `with "
                    "TeragClient(...)`, around every call that uses it)"
                )
            self._count += 1
        self._depth.n = depth + 1
        try:
            yield
        finally:
            self._depth.n = depth
            release = None
            with self._cond:
                self._count -= 1
                if self._count == 0:
                    self._cond.notify_all()
                    release, self._release = self._release, None
            if release is not None:  # closed while this call ran: the last one out releases
                _run_release(release)

    def close(self, release: Callable[[], None], wait_s: float) -> int:
        """Refuse new calls, wait up to `wait_s` for the running ones, then `release()` (once;
        later closes do nothing). Returns how many were still running (0: released now)."""
        with self._cond:
            if self._closed:
                return 0
            self._closed = True
            self._cond.wait_for(lambda: self._count == 0, wait_s)
            left = self._count
            if left:
                self._release = release
        if left:
            log.warning(
                "closing with %d call(s) still running after %.0f s; the Neo4j driver is "
                "closed when they return",
                left,
                wait_s,
            )
        else:
            release()
        return left


def _run_release(release: Callable[[], None]) -> None:
    try:
        release()
    except Exception:  # the call that ran last has its own outcome; this is only cleanup
        log.exception("closing the client after its last call failed")


# What a server that is down, starting or stopping raises: the driver's own classes for a lost
# connection, and the one status code a database that is not serving sends
# (Neo.TransientError.General.DatabaseUnavailable). The same client works again once it is back.
UNAVAILABLE_ERRORS = (ServiceUnavailable, SessionExpired, DatabaseUnavailable)
# What `StoreCore` retries at once: those, and every transient failure (the server classified
# it as worth retrying: a deadlock, a lock wait it stopped).
CONNECTION_ERRORS = (ServiceUnavailable, SessionExpired, TransientError)
# Credentials refused. The driver raises `AuthError` for Unauthorized, AuthorizationFailed and
# TokenExpired; these arrive as plain client errors.
AUTH_CODES = frozenset(
    {
        "Neo.ClientError.Security.AuthenticationRateLimit",
        "Neo.ClientError.Security.CredentialsExpired",
    }
)
# Transient failures that Neo4j 5 re-classified as client errors (the driver rewrites the old
# Neo.TransientError codes to these): a transaction stopped while it waited for a lock or ran.
TRANSIENT_CLIENT_CODES = frozenset(
    {
        "Neo.ClientError.Transaction.LockClientStopped",
        "Neo.ClientError.Transaction.Terminated",
    }
)


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


def auth_refused(uri: str, e: BaseException) -> Neo4jAuthError:
    code = e.code if isinstance(e, Neo4jError) else type(e).__name__
    return Neo4jAuthError(
        f"Neo4j at {uri} refused the credentials ({code}): check NEO4J_USER / NEO4J_PASSWORD "
        "(`terag server status --show-password` prints the local server's)"
    )


def transient(uri: str, e: Neo4jError) -> Neo4jTransientError:
    return Neo4jTransientError(
        f"Neo4j at {uri} could not finish the call for now ({e.code}: "
        f"{one_line(e.message, 160)}) and the retries ran out: run it again"
    )


def translate(uri: str, e: BaseException) -> GraphStoreError | None:
    """The project's error for a driver exception, decided by its class and Neo4j status code
    (never by its message), or None for an error of the query itself, which callers that
    recognise GDS's failures by their codes need to see as the driver raised it."""
    if isinstance(e, UNAVAILABLE_ERRORS):
        return unavailable(uri, e)
    if not isinstance(e, Neo4jError):
        return None
    code = e.code or ""
    if isinstance(e, AuthError) or code in AUTH_CODES:
        return auth_refused(uri, e)
    if code in TIMED_OUT_CODES:
        return StatementTimedOut(
            f"Neo4j at {uri} ended a statement that ran past its timeout, and nothing of it was "
            f"committed ({code.rsplit('.', 1)[-1]}); TERAG_NEO4J_STATEMENT_TIMEOUT_S sets the "
            "timeout, for bulk work on a very large namespace"
        )
    if isinstance(e, TransientError) or code in TRANSIENT_CLIENT_CODES:
        return transient(uri, e)
    if code == "Neo.ClientError.Database.DatabaseNotFound":
        return GraphStoreError(
            f"Neo4j at {uri} has no such database ({one_line(e.message, 160)}): set "
            "NEO4J_DATABASE to one that exists (Community edition has only `neo4j`; "
            "Enterprise and Aura create others with CREATE DATABASE)"
        )
    return None


@contextmanager
def neo4j_errors(uri: str) -> Iterator[None]:
    """Turn the driver's errors (after its retries) into the project's: `Neo4jUnavailable`,
    `Neo4jAuthError`, `Neo4jTransientError`, `GraphStoreError`; a query's own error (a
    `ClientError` with its code) goes through unchanged."""
    try:
        yield
    except (Neo4jError, ServiceUnavailable, SessionExpired) as e:
        mine = translate(uri, e)
        if mine is None:
            raise
        raise mine from e


# What Neo4j answers a write it will not take from this session: a user without write
# privileges (Enterprise RBAC), a read-only database, a write in a read transaction.
WRITE_REFUSED = (
    "Neo.ClientError.Security.Forbidden",
    "Neo.ClientError.General.ForbiddenOnReadOnlyDatabase",
    "Neo.ClientError.Statement.AccessMode",
)


def write_refused(e: BaseException) -> bool:
    return isinstance(e, ClientError) and (e.code or "") in WRITE_REFUSED


def stopping(e: BaseException) -> bool:
    """What a server that is down, starting or stopping raises (its class or status code says
    so), not a fault of the query. A query caught by a shutdown loses its connection
    (`ServiceUnavailable`); one sent while the database is not serving gets DatabaseUnavailable."""
    return isinstance(e, UNAVAILABLE_ERRORS)


Target = tuple[str, str, str | None]  # (uri, user, password); no password: a server without auth


def uri_target(settings: Settings) -> Target:
    """(uri, user, password) of the Neo4j at NEO4J_URI. The store knows no managed server: with
    NEO4J_URI unset, whoever builds the store (the client) passes the local server's target."""
    if settings.neo4j_uri is None:
        raise GraphStoreError(
            "NEO4J_URI is unset: pass the target of the server to use (TeragClient connects "
            "to the local managed server then)"
        )
    return settings.neo4j_uri, settings.neo4j_user, settings.neo4j_password


def connect(settings: Settings, target: Target) -> Driver:
    """A verified driver for the Neo4j at `target`, with the settings' pool and timeouts."""
    uri, user, password = target
    auth = (user, password) if password is not None else None
    driver = GraphDatabase.driver(uri, auth=auth, **driver_config(settings))
    try:
        driver.verify_connectivity()
    except AuthError as e:
        driver.close()
        if password is None:
            raise Neo4jAuthError(
                f"Neo4j at {uri} asks for a password and NEO4J_PASSWORD is unset: set "
                "NEO4J_USER and NEO4J_PASSWORD for it (the local server's generated password "
                "is used only when NEO4J_URI is unset)"
            ) from e
        raise Neo4jAuthError(
            f"Neo4j at {uri} rejected user {user!r}: check NEO4J_USER / NEO4J_PASSWORD "
            "(`terag server status --show-password` prints the local server's)"
        ) from e
    except (ServiceUnavailable, SessionExpired, OSError) as e:
        driver.close()
        raise Neo4jUnavailable(
            f"cannot reach Neo4j at {uri}: start it with `terag server start` "
            "(or `docker compose up -d neo4j`), or set NEO4J_URI"
        ) from e
    except ValueError as e:  # an address the driver cannot use: a setting to fix
        driver.close()
        raise GraphStoreError(
            f"cannot connect to Neo4j at {uri} ({one_line(e, 160)}): check NEO4J_URI"
        ) from e
    return driver


def verify(driver: Driver, where: str) -> None:
    """Check that a driver the caller made (`TeragClient(driver=...)`) reaches Neo4j and may
    log in; a `GraphStoreError` saying what to fix if not. The driver stays open: its maker
    closes it."""
    try:
        driver.verify_connectivity()
    except AuthError as e:
        raise Neo4jAuthError(
            f"Neo4j at {where} rejected the driver's credentials: check the auth it was made "
            "with (`terag server status --show-password` prints the local server's password)"
        ) from e
    except (ServiceUnavailable, SessionExpired, OSError) as e:
        raise Neo4jUnavailable(
            f"cannot reach Neo4j at {where} with the driver passed in: check its URI, and that "
            "the server runs (`terag server start` for the local one)"
        ) from e
    except ValueError as e:
        raise GraphStoreError(
            f"cannot connect to Neo4j at {where} with the driver passed in "
            f"({one_line(e, 160)}): check the URI it was made with"
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
    `connection_timeout` each. `GraphStore` retries on top only while time is left. A server
    that stops answering on an open connection is bounded by the receive timeout Neo4j 5 hands
    the driver (`connection.recv_timeout_seconds`, from its keep-alive settings).

    No transaction timeout: the first queries on a restarted server are compiled cold and
    re-project the namespace's GDS graph, which took 51 s on a busy machine (load 15 on 2
    cores); a limit would only stop that work from ever finishing, and every caller after it.
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
