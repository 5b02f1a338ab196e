"""An ingest's lease on its namespace, held by a heartbeat for as long as the ingest runs.

While any lease of a namespace runs, readers keep the GDS projection they have instead of
projecting again after every batch (`gds.ensure_projection`). The heartbeat renews the lease
whatever the ingest is doing (an LLM batch can take longer than a lease); a killed ingest's
lease runs out by itself, and giving one back leaves other ingests' leases in force.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from neo4j.exceptions import Neo4jError

from terag_neo4j.store import GraphStore, GraphStoreError

log = logging.getLogger(__name__)

LEASE_S = 120  # how long a lease lasts without renewal
RENEW_S = 30  # how often the heartbeat renews it
# What renewing or giving back a lease may raise without touching the ingest: the store's own
# error, or the server's (a transient one after the driver's retries, a deadlock with a reader).
LEASE_ERRORS = (GraphStoreError, Neo4jError)


@contextmanager
def held_lease(
    store: GraphStore, namespace: str, run_id: str, renew_s: float = RENEW_S
) -> Iterator[None]:
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(renew_s):
            try:
                store.namespaces.ingest_lease(namespace, LEASE_S, run_id)
            except LEASE_ERRORS as e:  # readers re-project meanwhile; the ingest goes on
                log.warning("could not renew the ingest lease of %s: %s", namespace, e)

    store.namespaces.ingest_lease(namespace, LEASE_S, run_id)
    thread = threading.Thread(target=beat, name=f"lease-{namespace}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        try:
            store.namespaces.ingest_lease(namespace, 0, run_id)
        except LEASE_ERRORS as e:
            # The ingest's writes are committed and the lease runs out by itself: a failure to
            # give it back must not turn a finished ingest into a failed one
            log.warning("could not give back the ingest lease of %s: %s", namespace, e)
