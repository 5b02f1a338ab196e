"""The store's plumbing: sessions, retries and error translation around every query, the schema,
and the namespace write lock and version that every write goes through.

`GraphStore` is a `StoreCore`; each of its components (passages, documents, namespaces, ...)
takes the core in its constructor and runs its one job's queries through `read`, `execute`,
`write_tx`, `call` and, inside a write's transaction, `lock_namespace`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Self, TypeVar, cast

import neo4j
from neo4j import Driver, ManagedTransaction
from neo4j.exceptions import ClientError
from neo4j.graph import Node, Path, Relationship
from tenacity import (
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from terag_neo4j import tracing
from terag_neo4j.config import Settings
from terag_neo4j.core.passage_ids import SCHEME as PASSAGE_ID_SCHEME
from terag_neo4j.store.connection import (
    CONNECTION_ERRORS,
    GraphStoreError,
    InFlight,
    NamespaceNotFound,
    Target,
    connect,
    driver_address,
    neo4j_errors,
    uri_target,
    verify,
)
from terag_neo4j.store.cypher import cypher_statements, run_cypher
from terag_neo4j.store.ids import check_namespace
from terag_neo4j.store.migrations import migrate_passage_ids_tx, needs_migration

T = TypeVar("T")
# What a namespace created by a store does with CO_OCCURRENCE unless told: the setting's default.
COOCCURRENCE_DEFAULT: str = Settings.model_fields["cooccurrence"].default
# The search layout's version, kept on the Namespace node (`search`): 2 = each namespace has
# its own full-text and vector index (store/search.py).
SEARCH_VERSION = 2


_GRAPH_TYPES = (Node, Relationship, Path)


def row(record: neo4j.Record) -> dict[str, Any]:
    """A record as a dict, as `record.data()` makes it. `data()` walks every value to turn
    nodes, relationships and paths into plain ones; the project's statements return plain
    values (ids, numbers, strings, lists and maps of those), and walking a flat ranking's long
    lists cost a question more Python time than anything else it does (docs/benchmarks.md).
    A record that holds a graph value, or a list of them, still goes through `data()`."""
    values = record.values()
    for v in values:
        if isinstance(v, _GRAPH_TYPES) or (
            isinstance(v, list) and v and isinstance(v[0], _GRAPH_TYPES)
        ):
            return record.data()
    return dict(zip(record.keys(), values, strict=True))


class ReadNeedsWriter(GraphStoreError):
    """A read needs something a writer builds (search indexes, CO_OCCURRENCE pairs, concept
    vectors) and may not write it: the message says what a writer must run."""


class NamespaceDropped(GraphStoreError):
    """The namespace is being dropped, or was dropped (and perhaps made again) while a writer
    that started on it was still writing: the write is refused rather than start a partial one."""


def chunks(rows: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for i in range(0, len(rows), size):
        yield rows[i : i + size]


# What a write that adds no passage and no concept passes as `added` (links, pairs, flags)
NOTHING_ADDED = (0, 0)


def bump_version_tx(
    tx: ManagedTransaction,
    namespace: str,
    meta: dict[str, Any] | None,
    added: tuple[int, int] | None = None,
) -> int:
    """Bump the namespace version, so a GDS projection built before this write is never used
    after it (`meta` is stored with the namespace). `added` is (passages, concepts) this
    transaction created when it deleted nothing; without it the namespace is counted again."""
    rec = run_cypher(
        tx,
        "bump_version",
        namespace=namespace,
        meta=meta or {},
        added={"passages": added[0], "concepts": added[1]} if added is not None else None,
    ).single()
    return int(rec["version"]) if rec else 0


# How long one statement or transaction may run on the server unless the settings say otherwise
STATEMENT_TIMEOUT_S: float = Settings.model_fields["neo4j_statement_timeout_s"].default
# The batched deletes of a namespace's graph (`CALL ... IN TRANSACTIONS`: one statement over all
# of a million-passage namespace's relationships) get an hour, or the statement timeout if longer
BULK_TIMEOUT_S = 3600.0


class TimedSession:
    """A driver session whose every statement and transaction carries a server-side timeout:
    `run` sends its text as a `Query` with one, and `execute_read` / `execute_write` give their
    transaction function one (`neo4j.unit_of_work`), unless the caller set its own. The driver
    passes it to the server with each BEGIN or RUN (`tx_timeout`), so it holds against any
    Neo4j, whatever that server's own `db.transaction.timeout`; Neo4j ends a transaction past it
    with `Neo.ClientError.Transaction.TransactionTimedOut`. Everything else is the session's."""

    def __init__(self, session: neo4j.Session, timeout_s: float) -> None:
        self._session = session
        self._timeout_s = timeout_s

    def run(self, query: Any, parameters: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        if isinstance(query, str):
            query = neo4j.Query(query, timeout=self._timeout_s)
        return self._session.run(query, parameters, **kwargs)

    def _timed(self, fn: Callable[..., T]) -> Callable[..., T]:
        if getattr(fn, "timeout", None) is not None:
            return fn
        timed: Callable[..., T] = neo4j.unit_of_work(timeout=self._timeout_s)(fn)
        return timed

    def execute_read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return self._session.execute_read(self._timed(fn), *args, **kwargs)

    def execute_write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return self._session.execute_write(self._timed(fn), *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


class StoreCore:
    def __init__(
        self,
        driver: Driver,
        database: str = "neo4j",
        write_batch: int = 1000,
        timeout_s: float = 30.0,
        uri: str | None = None,
        cooccurrence: str = COOCCURRENCE_DEFAULT,
        owns_driver: bool = True,
        statement_timeout_s: float = STATEMENT_TIMEOUT_S,
    ) -> None:
        self.driver = driver
        # False for a driver the caller made and passed in: the caller closes it, `close` does not
        self.owns_driver = owns_driver
        self.database = database
        self.write_batch = write_batch
        # What a namespace created by this store does with CO_OCCURRENCE (Settings.cooccurrence)
        self.cooccurrence_mode = cooccurrence
        self.timeout_s = timeout_s
        self.statement_timeout_s = statement_timeout_s
        self.uri = uri or "the configured URI"
        # Every session holds it: `close` never closes the driver under a running call
        self.in_flight = InFlight()

    @classmethod
    def from_settings(cls, settings: Settings, target: Target | None = None) -> Self:
        """A store on a driver of its own, to `target` (default: NEO4J_URI's server)."""
        uri, user, password = target or uri_target(settings)
        return cls(
            connect(settings, (uri, user, password)),
            settings.neo4j_database,
            settings.write_batch,
            settings.neo4j_timeout_s,
            uri,
            settings.cooccurrence,
            statement_timeout_s=settings.neo4j_statement_timeout_s,
        )

    @classmethod
    def from_driver(cls, driver: Driver, settings: Settings) -> Self:
        """A store on a driver the caller made (own pool, auth, Aura, ...) and keeps: settings
        give the database and batch sizes; `close` leaves the driver open."""
        uri = driver_address(driver)  # NEO4J_URI does not apply: the driver says where it goes
        verify(driver, uri)
        return cls(
            driver,
            settings.neo4j_database,
            settings.write_batch,
            settings.neo4j_timeout_s,
            uri,
            settings.cooccurrence,
            owns_driver=False,
            statement_timeout_s=settings.neo4j_statement_timeout_s,
        )

    def close(self) -> None:
        """Refuse new calls, wait up to the time budget for the running ones, then close the
        driver (if it is ours); one still running after that closes it when it returns."""
        self.in_flight.close(self.release_driver, self.timeout_s)

    def release_driver(self) -> None:
        if self.owns_driver:
            self.driver.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def session(
        self, read: bool = False, timeout_s: float | None = None
    ) -> Iterator[neo4j.Session]:
        """`read=True` for statements that write nothing (every `read`, the GDS calls among
        them): Neo4j refuses a write in it, and a routing driver sends it to a secondary, where
        GDS runs and holds the projections in a cluster. Every statement and transaction in it
        is ended by the server after `timeout_s` (default: the store's statement timeout;
        `TimedSession`). A session after `close` raises `ClientClosed`."""
        mode = neo4j.READ_ACCESS if read or self.reading_only else neo4j.WRITE_ACCESS
        with (
            self.in_flight.hold(),
            self.driver.session(database=self.database, default_access_mode=mode) as s,
        ):
            timed = TimedSession(s, timeout_s or self.statement_timeout_s)
            yield cast(neo4j.Session, timed)  # the session's interface, timed

    @property
    def bulk_timeout_s(self) -> float:
        """The timeout of a batched statement over a whole namespace (`BULK_TIMEOUT_S`)."""
        return max(BULK_TIMEOUT_S, self.statement_timeout_s)

    def _retrying(self, attempts: int | None = 3) -> Retrying:
        """Retries on connection and transient errors, only within the first fifth of the time
        budget, so that a call on a dead server fails within the budget.

        Around a transaction function (`attempts` 3) they add quick retries for failures outside
        the driver's own (a session lost between transactions) without stacking full rounds.
        Around an auto-commit read, which the driver never retries, they are its only ones: as
        many as fit in that fifth (`attempts` None), as the driver's for a transaction function.
        """
        stop = stop_after_delay(self.timeout_s / 5)
        return Retrying(
            retry=retry_if_exception_type(CONNECTION_ERRORS),
            stop=stop if attempts is None else stop_after_attempt(attempts) | stop,
            wait=wait_exponential(multiplier=0.25, max=2),
            reraise=True,
        )

    def call(self, fn: Callable[[], T], attempts: int | None = 3) -> T:
        """Run `fn` (which opens its own sessions) with the retries and error translation of
        every query: for work that is not one read or one transaction."""
        with neo4j_errors(self.uri):
            result: T = self._retrying(attempts)(fn)
        return result

    def read(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """One statement that writes nothing, as an auto-commit query in a read session: Neo4j
        refuses a write in it, and a routing driver sends it to a secondary (where GDS runs and
        holds the projections, in a cluster). A managed transaction would add a BEGIN and a
        COMMIT, which cost a question's handful of reads more CPU, in Python and in Neo4j, than
        anything but the walk (docs/benchmarks.md). Records are read inside the retries, so an
        error while they stream is retried too."""

        def run() -> list[dict[str, Any]]:
            with self.session(read=True) as s:
                return [row(r) for r in run_cypher(s, name, **params)]

        return self.call(run, attempts=None)

    @property
    def reading_only(self) -> bool:
        """Whether this thread is inside `reads_only`."""
        return bool(getattr(self._read_local(), "depth", 0))

    def _read_local(self) -> threading.local:
        local: threading.local = self.__dict__.setdefault("_read_only", threading.local())
        return local

    @contextmanager
    def reads_only(self) -> Iterator[None]:
        """Every query of this thread inside the block runs with read access, so Neo4j refuses
        any write (`Statement.AccessMode`): what a read would otherwise build on first use
        (search indexes, CO_OCCURRENCE pairs, concept vectors) is refused with the one line
        saying what a writer must run. The service's reads by keys that may not write."""
        local = self._read_local()
        local.depth = getattr(local, "depth", 0) + 1
        try:
            yield
        finally:
            local.depth -= 1

    def write_tx(self, fn: Callable[[ManagedTransaction], T]) -> T:
        def run() -> T:
            with self.session() as s:
                if self.reading_only:
                    return s.execute_read(fn)
                return s.execute_write(fn)

        return self.call(run)

    def create_schema(self) -> None:
        """Run `schema.cypher` (`GraphStore.ensure_schema` first repairs what would refuse it)."""

        def run() -> None:  # idempotent, so safe to retry as a whole
            with self.session() as s, tracing.statement("schema"):
                for stmt in cypher_statements("schema"):
                    try:
                        s.run(stmt).consume()
                    except ClientError as e:
                        # An equivalent index under another name (made by hand) is not an error.
                        if "EquivalentSchemaRule" not in (e.code or ""):
                            raise

        self.call(run)

    def require_namespace(self, namespace: str) -> None:
        """Refuse a namespace name that is not valid, or a namespace that does not exist."""
        check_namespace(namespace)
        if not self.read("namespace_version", namespace=namespace):
            known = ", ".join(r["name"] for r in self.read("namespaces")) or "none yet"
            raise NamespaceNotFound(
                f"namespace {namespace!r} does not exist (known: {known}); index documents into it first"
            )

    def lock_namespace(self, tx: ManagedTransaction, namespace: str) -> str:
        """Take the namespace's write lock (creating it on first use) and return the state of
        its CO_OCCURRENCE pairs: 'kept' (every write keeps them), 'lazy' (none yet),
        'building' (kept for the passages marked `paired`; `Cooccurrence.build` does the rest)
        or 'resetting' (being removed by `Cooccurrence.reset`; writers leave them alone)."""
        return str(self.lock_row(tx, namespace)["cooccurrence"])

    def lock_row(self, tx: ManagedTransaction, namespace: str) -> dict[str, Any]:
        """`lock_namespace`'s whole row (version, cooccurrence, epoch); refuses a namespace that is being
        dropped, or that is not the incarnation this thread's writer started on (`writing`)."""
        mode = "lazy" if self.cooccurrence_mode == "lazy" else "kept"
        rec = run_cypher(
            tx,
            "lock_namespace",
            namespace=namespace,
            cooccurrence=mode,
            search=SEARCH_VERSION,
            passage_ids=PASSAGE_ID_SCHEME,
        ).single()
        row: dict[str, Any] = rec.data() if rec else {"cooccurrence": "kept", "version": 0}
        if row.get("dropping"):
            raise NamespaceDropped(
                f"namespace {namespace!r} is being dropped; nothing was written to it: "
                f"index again once the drop has finished"
            )
        if rec is not None and needs_migration(row):
            migrate_passage_ids_tx(tx, namespace)
        pinned = self._pins()
        if namespace in pinned:
            if pinned[namespace] is None:
                pinned[namespace] = row.get("epoch")
            elif pinned[namespace] != row.get("epoch"):
                raise NamespaceDropped(
                    f"namespace {namespace!r} was dropped while this ingest was writing it; "
                    f"nothing more was written: index again to build it anew"
                )
        return row

    def _pins(self) -> dict[str, str | None]:
        local = self.__dict__.setdefault("_pin_local", threading.local())
        if not hasattr(local, "epochs"):
            local.epochs = {}
        epochs: dict[str, str | None] = local.epochs
        return epochs

    @contextmanager
    def writing(self, namespace: str) -> Iterator[None]:
        """Writes of this thread inside the block go to the incarnation of the namespace they
        find first: one dropped meanwhile (and made again by a later write) is refused."""
        pinned = self._pins()
        outer = namespace in pinned
        if not outer:
            rows = self.read("namespace_version", namespace=namespace)
            pinned[namespace] = rows[0]["epoch"] if rows else None
        try:
            yield
        finally:
            if not outer:
                pinned.pop(namespace, None)
