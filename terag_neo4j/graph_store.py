"""Graph-store stage: everything that reads or writes Neo4j.

The Cypher lives in `cypher/*.cypher` (loaded here by name) so a person can paste the same
statements into Neo4j Browser. Every statement takes parameters; nothing user-supplied is ever
spliced into query text.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from itertools import combinations
from pathlib import Path
from typing import Any, TypeVar

import neo4j
import numpy as np
import numpy.typing as npt
from neo4j import Driver, GraphDatabase, ManagedTransaction
from neo4j.exceptions import (
    AuthError,
    ClientError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from tenacity import (
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)

from terag_neo4j.config import Settings
from terag_neo4j.documents import Passage
from terag_neo4j.extraction import Concept, Extraction

log = logging.getLogger(__name__)

NAMESPACE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # always used with fullmatch
T = TypeVar("T")


class GraphStoreError(RuntimeError):
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


def stopping(e: ClientError) -> bool:
    """A client error that a stopping or starting server sends (a query caught by the shutdown
    arrives as a bare error, or one naming the shutdown), not a fault of the query."""
    code = e.code or ""
    if not code or code.endswith("General.UnknownError"):
        return True  # no code came with it: the server did not get to answer the query
    text = f"{code} {e.message or ''} {e}".lower()
    return any(k in text for k in ("shutdown", "shut down", "databaseunavailable"))


_SOURCE_CYPHER = Path(__file__).resolve().parent.parent / "cypher"


@cache
def load_cypher(name: str) -> str:
    """The text of `cypher/<name>.cypher`: from the source tree, else as packaged in a wheel."""
    path = _SOURCE_CYPHER / f"{name}.cypher"
    if path.is_file():
        return path.read_text(encoding="utf-8")
    return (
        resources.files("terag_neo4j.cypher").joinpath(f"{name}.cypher").read_text(encoding="utf-8")
    )


def cypher_statements(name: str) -> list[str]:
    """A multi-statement file split on `;` at line ends, comments removed."""
    text = "\n".join(
        line for line in load_cypher(name).splitlines() if not line.lstrip().startswith("//")
    )
    return [s.strip() for s in re.split(r";\s*\n", text) if s.strip().rstrip(";").strip()]


def check_namespace(namespace: str) -> str:
    if not isinstance(namespace, str) or not NAMESPACE_RE.fullmatch(namespace):
        raise ValueError(
            f"invalid namespace {namespace!r}: use 1-64 letters, digits, '_' or '-', starting with a letter or digit"
        )
    return namespace


def passage_uid(namespace: str, passage_id: str) -> str:
    return f"{namespace}|{passage_id}"


def concept_uid(namespace: str, concept: Concept) -> str:
    return f"{namespace}|{concept.key}"


def connection_target(settings: Settings) -> tuple[str, str, str]:
    """(uri, user, password) of the configured Neo4j, or of the local managed server when unset."""
    uri, user, password = settings.neo4j_uri, settings.neo4j_user, settings.neo4j_password
    if uri is None or password is None:
        from terag_neo4j.server.neo4j_home import connection

        luri, luser, lpassword = connection(settings)
        uri = uri or luri
        user = user if settings.neo4j_uri else luser
        password = password if password is not None else lpassword
    return uri, user, password


def connect(settings: Settings, target: tuple[str, str, str] | None = None) -> Driver:
    """A verified driver for the configured Neo4j, or the local managed server when unset."""
    uri, user, password = target or connection_target(settings)
    driver = GraphDatabase.driver(uri, auth=(user, password), **driver_config(settings))
    try:
        driver.verify_connectivity()
    except AuthError as e:
        driver.close()
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


@dataclass
class WriteStats:
    passages: int = 0
    concepts_touched: int = 0
    has_passage: int = 0
    cooccurrence_rows: int = 0
    deleted_passages: int = 0


@dataclass
class NamespaceInfo:
    name: str
    version: int
    passages: int
    concepts: int
    extractor: str | None = None
    model: str | None = None
    created: str | None = None
    updated: str | None = None
    entities: int = 0
    has_passage: int = 0
    co_occurrence: int = 0
    # 'kept' (every write keeps the pairs) or 'lazy' (none yet: built on first use)
    cooccurrence: str = "kept"
    runs: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0


def pair_key(a: str, b: str) -> int:
    """The index key of an unordered concept pair: a 64-bit hash, far smaller than the uids."""
    digest = hashlib.blake2b(f"{a}~{b}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _pair_deltas(concept_lists: Sequence[Sequence[str]], sign: int) -> list[dict[str, Any]]:
    # Aggregating in Python first turns N passages x k^2 pairs into one row per distinct pair.
    counts: Counter[tuple[str, str]] = Counter()
    for uids in concept_lists:
        for a, b in combinations(sorted(set(uids)), 2):
            counts[(a, b)] += 1
    return [
        {"a": a, "b": b, "pair": pair_key(a, b), "delta": sign * n} for (a, b), n in counts.items()
    ]


def _pairs(uids: set[str]) -> Counter[tuple[str, str]]:
    return Counter(combinations(sorted(uids), 2))


def _concept_row(uid: str, c: Concept, vectors: dict[str, Sequence[float]]) -> dict[str, Any]:
    return {
        "uid": uid,
        "key": c.key,
        "type": c.type,
        "norm": c.norm,
        "name": c.name,
        "kind": "entity" if c.is_entity else "concept",
        # absent: written when first needed (concept_vectors.py)
        "embedding": list(map(float, vectors[c.key])) if c.key in vectors else None,
    }


def _apply_pair_deltas(
    tx: ManagedTransaction,
    rows: Sequence[dict[str, Any]],
    batch: int,
    new_concepts: frozenset[str] = frozenset(),
) -> None:
    """Add `delta` to each pair's count, creating missing pairs and deleting emptied ones.

    A pair with a concept created in this transaction cannot exist yet, so it skips the lookup.
    """
    fresh = [r for r in rows if r["a"] in new_concepts or r["b"] in new_concepts]
    known = [r for r in rows if not (r["a"] in new_concepts or r["b"] in new_concepts)]
    for chunk in _chunks(known, batch):
        existed = {r["pair"] for r in tx.run(load_cypher("add_cooccurrence"), rows=chunk)}
        fresh.extend(r for r in chunk if r["pair"] not in existed and r["delta"] > 0)
        emptied = [r["pair"] for r in chunk if r["delta"] < 0]
        if emptied:
            tx.run(load_cypher("prune_cooccurrence"), pairs=emptied).consume()
    for chunk in _chunks(fresh, batch):
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in chunk:
            groups.setdefault(r["a"], []).append(
                {"b": r["b"], "pair": r["pair"], "delta": r["delta"]}
            )
        tx.run(
            load_cypher("create_cooccurrence"),
            groups=[{"a": a, "rows": rows} for a, rows in groups.items()],
        ).consume()


def _chunks(rows: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for i in range(0, len(rows), size):
        yield rows[i : i + size]


class GraphStore:
    def __init__(
        self,
        driver: Driver,
        database: str = "neo4j",
        write_batch: int = 1000,
        timeout_s: float = 30.0,
        uri: str | None = None,
        cooccurrence: str = "eager",
    ) -> None:
        self.driver = driver
        self.database = database
        self.write_batch = write_batch
        # What a namespace created by this store does with CO_OCCURRENCE (Settings.cooccurrence)
        self.cooccurrence = cooccurrence
        self.timeout_s = timeout_s
        self.uri = uri or "the configured URI"

    @classmethod
    def from_settings(cls, settings: Settings) -> GraphStore:
        uri, user, password = connection_target(settings)
        return cls(
            connect(settings, (uri, user, password)),
            settings.neo4j_database,
            settings.write_batch,
            settings.neo4j_timeout_s,
            uri,
            settings.cooccurrence,
        )

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ plumbing

    def session(self, read: bool = False) -> neo4j.Session:
        """`read=True` for GDS calls: in a cluster they must reach the secondary that runs GDS
        (and holds the projections), and a routing driver sends read sessions to secondaries."""
        if read:
            return self.driver.session(
                database=self.database, default_access_mode=neo4j.READ_ACCESS
            )
        return self.driver.session(database=self.database)

    def _retrying(self) -> Retrying:
        """Retries on top of the driver's own, only within the first fifth of the time budget.

        The driver already retries a transaction function on connection and transient errors;
        this adds quick retries for failures outside it (a session lost between transactions)
        without stacking full retry rounds: a call on a dead server fails within the budget.
        """
        return Retrying(
            retry=retry_if_exception_type(CONNECTION_ERRORS),
            stop=stop_after_attempt(3) | stop_after_delay(self.timeout_s / 5),
            wait=wait_exponential(multiplier=0.25, max=2),
            reraise=True,
        )

    def _call(self, fn: Callable[[], T]) -> T:
        with neo4j_errors(self.uri):
            result: T = self._retrying()(fn)
        return result

    def read(self, name: str, **params: Any) -> list[dict[str, Any]]:
        def run() -> list[dict[str, Any]]:
            with self.session() as s:
                return s.execute_read(
                    lambda tx: [r.data() for r in tx.run(load_cypher(name), **params)]
                )

        return self._call(run)

    def read_vectors(
        self, name: str, vector: str, **params: Any
    ) -> tuple[list[dict[str, Any]], npt.NDArray[np.float32]]:
        """A query's rows without their `vector` field, and those vectors as float32 rows.

        The rows are packed into arrays as they stream in: as Python lists the passage vectors
        of a 1M-passage namespace would take about 12 GB, as float32 1.5 GB.
        """

        def work(tx: ManagedTransaction) -> tuple[list[dict[str, Any]], npt.NDArray[np.float32]]:
            rows: list[dict[str, Any]] = []
            blocks: list[npt.NDArray[np.float32]] = []
            block: list[Any] = []
            for rec in tx.run(load_cypher(name), **params):
                data = rec.data()
                block.append(data.pop(vector))
                rows.append(data)
                if len(block) == 10_000:
                    blocks.append(np.asarray(block, dtype=np.float32))
                    block = []
            if block:
                blocks.append(np.asarray(block, dtype=np.float32))
            matrix = np.concatenate(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)
            return rows, matrix

        def run() -> tuple[list[dict[str, Any]], npt.NDArray[np.float32]]:
            with self.session() as s:
                return s.execute_read(work)

        return self._call(run)

    def execute(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """An auto-commit query (GDS catalog procedures: projecting, dropping in-memory graphs),
        with the retries and error translation of `read`. It runs in a read session: GDS's
        procedures only read the database, and in a cluster they must reach the secondary that
        runs GDS and holds the projections."""

        def run() -> list[dict[str, Any]]:
            with self.session(read=True) as s:
                return [r.data() for r in s.run(load_cypher(name), **params)]

        return self._call(run)

    def write_tx(self, fn: Callable[[ManagedTransaction], T]) -> T:
        def run() -> T:
            with self.session() as s:
                return s.execute_write(fn)

        return self._call(run)

    def ensure_schema(self) -> None:
        def run() -> None:  # idempotent, so safe to retry as a whole
            with self.session() as s:
                for stmt in cypher_statements("schema"):
                    try:
                        s.run(stmt).consume()
                    except ClientError as e:
                        # An equivalent index under another name (made by hand) is not an error.
                        if "EquivalentSchemaRule" not in (e.code or ""):
                            raise

        self._call(run)

    # ------------------------------------------------------------------ writes

    def existing_hashes(self, namespace: str, passage_ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for chunk in _chunks(list(passage_ids), 5000):
            uids = [passage_uid(namespace, pid) for pid in chunk]
            out.update({r["id"]: r["hash"] for r in self.read("existing_passages", uids=uids)})
        return out

    def _lock(self, tx: ManagedTransaction, namespace: str) -> str:
        """Take the namespace's write lock (creating it on first use) and return the state of
        its CO_OCCURRENCE pairs: 'kept' (every write keeps them), 'lazy' (none yet) or
        'building' (kept for the passages marked `paired`; `build_cooccurrence` does the rest)."""
        mode = "lazy" if self.cooccurrence == "lazy" else "kept"
        rec = tx.run(load_cypher("lock_namespace"), namespace=namespace, cooccurrence=mode).single()
        return str(rec["cooccurrence"]) if rec else "kept"

    def write_passages(
        self,
        namespace: str,
        passages: Sequence[Passage],
        extractions: Sequence[Extraction],
        passage_vectors: Sequence[Sequence[float]],
        concept_vectors: dict[str, Sequence[float]],
        meta: dict[str, Any] | None = None,
    ) -> WriteStats:
        """Add passages with their concepts in ONE transaction.

        Inside it, passages already present with the same hash are skipped and changed ones are
        replaced, so a rerun (even after a crash between batches) never counts a passage twice.
        The namespace version is bumped in the same transaction when anything changed, so a GDS
        projection built before this batch is never used after it (`meta` is stored with it).
        """
        by_id = {e.passage_id: e for e in extractions}
        vec_by_id = {p.id: v for p, v in zip(passages, passage_vectors, strict=True)}

        def work(tx: ManagedTransaction) -> WriteStats:
            stats = WriteStats()
            state = self._lock(tx, namespace)
            uids = [passage_uid(namespace, p.id) for p in passages]
            present = {
                r["id"]: r["hash"] for r in tx.run(load_cypher("existing_passages"), uids=uids)
            }
            changed = [p for p in passages if p.id in present and present[p.id] != p.hash]
            if changed:
                stats.deleted_passages += _delete_passages_tx(
                    tx, [passage_uid(namespace, p.id) for p in changed], state
                )
            new = [p for p in passages if present.get(p.id) != p.hash]
            if not new:
                if stats.deleted_passages:
                    _bump_version_tx(tx, namespace, meta)
                return stats
            # While pairs are lazy or being built, a new passage is left to the builder.
            self._write_new_tx(
                tx, namespace, new, by_id, vec_by_id, concept_vectors, stats, state == "kept"
            )
            _bump_version_tx(tx, namespace, meta)
            return stats

        return self.write_tx(work)

    def replace_passages(
        self,
        namespace: str,
        passages: Sequence[Passage],
        extractions: Sequence[Extraction],
        concept_vectors: dict[str, Sequence[float]],
        meta: dict[str, Any] | None = None,
    ) -> WriteStats:
        """Give passages new concepts (budget mode's merged extractions) in ONE transaction.

        Only the difference is written: links of concepts a passage loses go, links of concepts
        it gains are made (creating concepts new to the graph), and co-occurrence counts change
        by the pairs gained or lost, so adding a few LLM names to a passage costs those pairs,
        not the passage's whole square. The passage is marked merged; one already marked, or
        gone meanwhile, is left alone, so a rerun changes nothing.
        """
        by_id = {e.passage_id: e for e in extractions}

        def work(tx: ManagedTransaction) -> WriteStats:
            stats = WriteStats()
            state = self._lock(tx, namespace)
            uids = [passage_uid(namespace, p.id) for p in passages]
            pending = {r["id"]: r["hash"] for r in tx.run(load_cypher("core_unmerged"), uids=uids)}
            todo = [p for p in passages if pending.get(p.id) == p.hash]
            if not todo:
                return stats
            todo_uids = [passage_uid(namespace, p.id) for p in todo]
            held = [r.data() for r in tx.run(load_cypher("passage_concepts"), uids=todo_uids)]
            old = {r["passage"]: set(r["concepts"]) for r in held}
            paired = {r["passage"] for r in held if _pairs_counted(state, r["paired"])}
            concept_rows: dict[str, dict[str, Any]] = {}
            gained: list[dict[str, Any]] = []
            lost: list[dict[str, Any]] = []
            counts: list[dict[str, Any]] = []
            pair_delta: Counter[tuple[str, str]] = Counter()
            for p, pu in zip(todo, todo_uids, strict=True):
                new: set[str] = set()
                for c in by_id[p.id].concepts:
                    cu = concept_uid(namespace, c)
                    new.add(cu)
                    concept_rows.setdefault(cu, _concept_row(cu, c, concept_vectors))
                before = old.get(pu, set())
                gained.append({"passage": pu, "concepts": sorted(new - before)})
                lost.append({"passage": pu, "concepts": sorted(before - new)})
                counts.append({"passage": pu, "count": len(new)})
                if pu in paired:
                    pair_delta.update(_pairs(new) - _pairs(before))
                    pair_delta.subtract(_pairs(before) - _pairs(new))
            gained_uids = {c for g in gained for c in g["concepts"]}
            wanted = [cu for cu in concept_rows if cu in gained_uids]
            existing: set[str] = set()
            for chunk in _chunks(wanted, self.write_batch * 5):
                existing.update(
                    r["uid"] for r in tx.run(load_cypher("existing_concepts"), uids=list(chunk))
                )
            created = frozenset(wanted) - existing
            crow = [concept_rows[cu] for cu in wanted if cu in created]
            for rows in _chunks(crow, self.write_batch):
                tx.run(load_cypher("upsert_concepts"), rows=rows, namespace=namespace).consume()
            for rows in _chunks(lost, self.write_batch):
                tx.run(load_cypher("unlink_passages"), rows=rows).consume()
            for rows in _chunks(gained, self.write_batch):
                tx.run(load_cypher("link_passages"), rows=rows).consume()
            pairs = [
                {"a": a, "b": b, "pair": pair_key(a, b), "delta": d}
                for (a, b), d in pair_delta.items()
                if d
            ]
            _apply_pair_deltas(tx, pairs, self.write_batch * 5, created)
            touched = sorted(gained_uids | {c for x in lost for c in x["concepts"]})
            for chunk in _chunks(touched, self.write_batch * 5):
                tx.run(load_cypher("update_frequency"), uids=list(chunk)).consume()
            for rows in _chunks(counts, self.write_batch):
                tx.run(load_cypher("set_concept_count"), rows=rows).consume()
            tx.run(load_cypher("mark_core"), uids=todo_uids, merged=True).consume()
            stats.passages = len(todo)
            stats.concepts_touched = len(touched)
            stats.has_passage = sum(len(g["concepts"]) for g in gained)
            stats.cooccurrence_rows = len(pairs)
            _bump_version_tx(tx, namespace, meta)
            return stats

        return self.write_tx(work)

    def _write_new_tx(
        self,
        tx: ManagedTransaction,
        namespace: str,
        new: Sequence[Passage],
        by_id: dict[str, Extraction],
        vec_by_id: dict[str, Sequence[float]],
        concept_vectors: dict[str, Sequence[float]],
        stats: WriteStats,
        pairs_kept: bool = True,
    ) -> None:
        """Write passages that are not in the graph, with their concepts, links and counts
        (CO_OCCURRENCE counts only when the namespace keeps them)."""
        concept_rows: dict[str, dict[str, Any]] = {}
        links: list[dict[str, Any]] = []
        for p in new:
            cuids = []
            for c in by_id[p.id].concepts:
                cu = concept_uid(namespace, c)
                cuids.append(cu)
                if cu not in concept_rows:
                    concept_rows[cu] = _concept_row(cu, c, concept_vectors)
            links.append({"passage": passage_uid(namespace, p.id), "concepts": cuids})
        prow = [
            {
                "uid": passage_uid(namespace, p.id),
                "id": p.id,
                "doc_id": p.doc_id,
                "position": p.position,
                "title": p.title,
                "text": p.text,
                "hash": p.hash,
                "concept_count": len(by_id[p.id].concepts),
                "embedding": list(map(float, vec_by_id[p.id])),
            }
            for p in new
        ]
        for rows in _chunks(prow, self.write_batch):
            tx.run(load_cypher("upsert_passages"), rows=rows, namespace=namespace).consume()
        existing: set[str] = set()
        for uids_chunk in _chunks(list(concept_rows), self.write_batch * 5):
            existing.update(
                r["uid"] for r in tx.run(load_cypher("existing_concepts"), uids=uids_chunk)
            )
        created = frozenset(concept_rows) - existing
        crow = [row for uid, row in concept_rows.items() if uid in created]
        for rows in _chunks(crow, self.write_batch):
            tx.run(load_cypher("upsert_concepts"), rows=rows, namespace=namespace).consume()
        for rows in _chunks(links, self.write_batch):
            tx.run(load_cypher("link_passages"), rows=rows).consume()
        pairs = _pair_deltas([link["concepts"] for link in links], +1) if pairs_kept else []
        _apply_pair_deltas(tx, pairs, self.write_batch * 5, created)
        for freq_uids in _chunks(list(concept_rows), self.write_batch * 5):
            tx.run(load_cypher("update_frequency"), uids=freq_uids).consume()
        stats.passages += len(new)
        stats.concepts_touched += len(concept_rows)
        stats.has_passage += sum(len(link["concepts"]) for link in links)
        stats.cooccurrence_rows += len(pairs)

    # ------------------------------------------------------------------ budget mode

    def core_state(self, namespace: str) -> tuple[int, dict[str, bool]]:
        """(passages in the namespace, {core passage id: merged})."""
        rows = self.read("core_state", namespace=namespace)
        if not rows:
            return 0, {}
        return int(rows[0]["passages"]), {r["id"]: bool(r["merged"]) for r in rows[0]["core"]}

    def mark_core(self, namespace: str, passage_ids: Sequence[str]) -> None:
        """Record the chosen core passages before their extraction is paid for, so an
        interrupted run resumes with the same choice."""
        uids = [passage_uid(namespace, pid) for pid in passage_ids]

        def work(tx: ManagedTransaction) -> None:
            self._lock(tx, namespace)
            for chunk in _chunks(uids, self.write_batch):
                tx.run(load_cypher("mark_core"), uids=list(chunk), merged=False).consume()

        self.write_tx(work)

    def core_pending(self, namespace: str) -> list[Passage]:
        return [
            Passage(r["id"], r["doc_id"], int(r["position"] or 0), r["title"] or "", r["text"])
            for r in self.read("core_pending", namespace=namespace)
        ]

    def concept_types(self, namespace: str, norms: Sequence[str]) -> dict[str, tuple[str, str]]:
        """{normalised name: (type, display name)} of the most frequent non-title concept."""
        out: dict[str, tuple[str, str]] = {}
        for chunk in _chunks(sorted(set(norms)), 5000):
            for r in self.read("concept_types", namespace=namespace, norms=list(chunk)):
                out.setdefault(r["norm"], (r["type"], r["name"]))
        return out

    def set_concept_vectors(self, rows: Sequence[dict[str, Any]]) -> None:
        for chunk in _chunks(list(rows), self.write_batch):

            def work(tx: ManagedTransaction, chunk: Sequence[dict[str, Any]] = chunk) -> None:
                tx.run(load_cypher("set_concept_vectors"), rows=list(chunk)).consume()

            self.write_tx(work)

    def link_synonyms(self, namespace: str, threshold: float, cap: int) -> int:
        """SYNONYM edges for every concept of the namespace that has none linked yet.

        Indexing calls it after its batches (so new concepts, and those of an interrupted run,
        get theirs); deletes need nothing, since a concept's relationships go with it. Returns
        the number of edges made or found.
        """
        uids = [r["uid"] for r in self.read("unlinked_concepts", namespace=namespace)]
        links = 0
        for chunk in _chunks(uids, 500):

            def work(tx: ManagedTransaction, chunk: Sequence[str] = chunk) -> int:
                rec = tx.run(
                    load_cypher("link_synonyms"),
                    uids=chunk,
                    threshold=threshold,
                    cap=cap,
                    candidates=cap * 4 + 10,
                ).single()
                return int(rec["links"]) if rec else 0

            links += self.write_tx(work)
        return links

    def build_cooccurrence(
        self, namespace: str, batch: int = 1000, max_batches: int | None = None
    ) -> int | None:
        """Give a lazy namespace its CO_OCCURRENCE pairs, counted from its HAS_PASSAGE links, and
        keep them from then on. The number of pair updates, or None when they were kept already.

        One transaction per `batch` passages (the whole of 2Wiki in one outgrows Neo4j's
        transaction memory): each marks its passages `paired`, so a killed build resumes where it
        stopped, and writers meanwhile count pairs for marked passages only (`_pairs_counted`),
        leaving new ones to the builder. The last batch sets the namespace 'kept'.
        `max_batches` stops after that many transactions; the next call goes on.
        """

        # Concepts of the passages this call has paired: a pair with a concept outside it cannot
        # exist yet (writers never create pairs while a build is under way), so it is created
        # without a lookup. None when resuming a build another call started: look every pair up.
        seen: set[str] | None = None

        def work(tx: ManagedTransaction) -> tuple[int, set[str], bool] | None:
            nonlocal seen
            state = self._lock(tx, namespace)
            if state == "kept":
                return None
            if state == "lazy":
                tx.run(
                    load_cypher("set_cooccurrence"), namespace=namespace, state="building"
                ).consume()
                seen = set()
            rows = [
                r.data()
                for r in tx.run(load_cypher("unpaired_passages"), namespace=namespace, limit=batch)
            ]
            if not rows:
                tx.run(load_cypher("set_cooccurrence"), namespace=namespace, state="kept").consume()
                _bump_version_tx(tx, namespace, None)
                return 0, set(), True
            concepts = {c for r in rows for c in r["concepts"]}
            unseen = frozenset(concepts - seen) if seen is not None else frozenset()
            deltas = _pair_deltas([r["concepts"] for r in rows], +1)
            _apply_pair_deltas(tx, deltas, self.write_batch * 5, unseen)
            tx.run(load_cypher("mark_paired"), uids=[r["passage"] for r in rows]).consume()
            return len(deltas), concepts, False

        total, done = 0, 0
        while max_batches is None or done < max_batches:
            step = self.write_tx(work)
            if step is None:
                return None if done == 0 else total
            pairs, concepts, finished = step
            if finished:  # no passage left: the namespace keeps its pairs from now on
                break
            total += pairs
            done += 1
            if seen is not None:
                seen |= concepts
        return total

    def bump_version(self, namespace: str, meta: dict[str, Any] | None = None) -> int:
        def work(tx: ManagedTransaction) -> int:
            self._lock(tx, namespace)
            return _bump_version_tx(tx, namespace, meta)

        return self.write_tx(work)

    def stale_passages(
        self, namespace: str, doc_ids: Sequence[str], keep: Sequence[str]
    ) -> list[str]:
        """Ids of passages these documents have in the graph but not in `keep` (their new ones)."""
        wanted = set(keep)
        stale: list[str] = []
        for chunk in _chunks(sorted(set(doc_ids)), 5000):
            rows = self.read("document_passage_ids", namespace=namespace, doc_ids=list(chunk))
            stale += [r["id"] for r in rows if r["id"] not in wanted]
        return sorted(stale)

    def delete_passages(
        self, namespace: str, passage_ids: Sequence[str], meta: dict[str, Any] | None = None
    ) -> int:
        """Remove passages (fixing counts and co-occurrences) and bump the version, in one go."""
        if not passage_ids:
            return 0

        def work(tx: ManagedTransaction) -> int:
            state = self._lock(tx, namespace)
            n = _delete_passages_tx(tx, [passage_uid(namespace, pid) for pid in passage_ids], state)
            if n:
                _bump_version_tx(tx, namespace, meta)
            return n

        return self.write_tx(work)

    def record_run(self, namespace: str, run: dict[str, Any]) -> None:
        self.write_tx(
            lambda tx: tx.run(load_cypher("record_run"), namespace=namespace, run=run).consume()
        )

    def delete_document(self, namespace: str, doc_id: str) -> int:
        """Remove a document's passages, concepts left without passages, and fix all counts."""
        self.require_namespace(namespace)

        def work(tx: ManagedTransaction) -> int:
            state = self._lock(tx, namespace)
            uids = [
                r["uid"]
                for r in tx.run(
                    load_cypher("document_passages"), namespace=namespace, doc_id=doc_id
                )
            ]
            n = _delete_passages_tx(tx, uids, state)
            if n:
                _bump_version_tx(tx, namespace, None)
            return n

        return self.write_tx(work)

    def drop_namespace(self, namespace: str) -> None:
        def run() -> None:  # batched deletes: a retry continues where the last one stopped
            with self.session() as s:
                for stmt in cypher_statements("drop_namespace"):
                    s.run(stmt, namespace=namespace).consume()

        self._call(run)

    # ------------------------------------------------------------------ reads

    def namespaces(self) -> list[NamespaceInfo]:
        return [
            NamespaceInfo(
                name=r["name"],
                version=r["version"] or 0,
                passages=r["passages"] or 0,
                concepts=r["concepts"] or 0,
                extractor=r["extractor"],
                model=r["model"],
                created=r["created"],
                updated=r["updated"],
                input_tokens=r["input_tokens"] or 0,
                output_tokens=r["output_tokens"] or 0,
            )
            for r in self.read("namespaces")
        ]

    def require_namespace(self, namespace: str) -> None:
        check_namespace(namespace)
        if not self.read("namespace_version", namespace=namespace):
            known = ", ".join(n.name for n in self.namespaces()) or "none yet"
            raise NamespaceNotFound(
                f"namespace {namespace!r} does not exist (known: {known}); index documents into it first"
            )

    def describe(self, namespace: str) -> NamespaceInfo:
        check_namespace(namespace)
        rows = self.read("describe_namespace", namespace=namespace)
        if not rows:
            self.require_namespace(namespace)
        r = rows[0]
        runs = [
            {k: (str(v) if hasattr(v, "iso_format") else v) for k, v in run.items()}
            for run in r["runs"]
        ]
        return NamespaceInfo(
            name=r["name"],
            version=r["version"] or 0,
            passages=r["passages"],
            concepts=r["concepts"],
            extractor=r["extractor"],
            model=r["model"],
            created=r["created"],
            updated=r["updated"],
            entities=r["entities"],
            has_passage=r["has_passage"],
            co_occurrence=r["co_occurrence"],
            cooccurrence=r["cooccurrence"],
            runs=runs,
            # What the graph's extraction cost, including extractions a run took from the cache
            # (a resumed or rebuilt ingest); runs that skipped unchanged passages add nothing.
            input_tokens=sum(
                int(x.get("input_tokens") or 0) + int(x.get("cached_input_tokens") or 0)
                for x in runs
            ),
            output_tokens=sum(
                int(x.get("output_tokens") or 0) + int(x.get("cached_output_tokens") or 0)
                for x in runs
            ),
        )

    def fingerprint(self, namespace: str) -> str:
        """A hash of the whole namespace graph: equal before and after an idempotent re-ingest."""
        rows = self.read("fingerprint", namespace=namespace)
        h = hashlib.sha256()
        for part in ("passages", "concepts", "links", "cooc"):
            for item in sorted(rows[0][part]):
                h.update(item.encode())
                h.update(b"\n")
            h.update(b"|")
        return h.hexdigest()


def _bump_version_tx(tx: ManagedTransaction, namespace: str, meta: dict[str, Any] | None) -> int:
    rec = tx.run(load_cypher("bump_version"), namespace=namespace, meta=meta or {}).single()
    return int(rec["version"]) if rec else 0


def _pairs_counted(state: str, paired: bool | None) -> bool:
    """Whether a passage's pairs are in the CO_OCCURRENCE counts (see `GraphStore._lock`)."""
    return state == "kept" or (state == "building" and bool(paired))


def _delete_passages_tx(tx: ManagedTransaction, uids: Sequence[str], state: str) -> int:
    if not uids:
        return 0
    rows = [r.data() for r in tx.run(load_cypher("passage_concepts"), uids=list(uids))]
    lists = [r["concepts"] for r in rows]
    counted = [r["concepts"] for r in rows if _pairs_counted(state, r["paired"])]
    _apply_pair_deltas(tx, _pair_deltas(counted, -1), 5000)
    tx.run(load_cypher("delete_passages"), uids=list(uids)).consume()
    touched = sorted({c for cs in lists for c in cs})
    for chunk in _chunks(touched, 5000):
        tx.run(load_cypher("update_frequency"), uids=chunk).consume()
    return len(rows)
