"""A namespace's life beside others, against the real Neo4j + GDS: its own search indexes
(made with it, dropped with it, made for one an older version wrote), a drop that a running
ingest cannot outlive, ingest leases per run, and GDS graphs that only their owners drop."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.store import NamespaceDropped, gds
from terag_neo4j.store.ids import passage_label, text_index, vector_index

pytestmark = pytest.mark.integration

SAMPLE = Path(__file__).resolve().parents[2] / "terag_neo4j" / "data" / "sample"


def _indexes(client: TeragClient) -> set[str]:
    with client.store.session() as s:
        return set(s.run("SHOW INDEXES YIELD name RETURN name").value())


def test_accented_and_plain_spellings_meet_in_the_full_text_index(
    base_settings: Settings, namespace: str
) -> None:
    with TeragClient(base_settings, namespace=namespace) as client:
        client.index(
            [
                Document(id="a", text="Osnabrück lies in Lower Saxony, north of Münster."),
                Document(id="b", text="Stuttgart is the capital of Baden-Württemberg."),
            ],
            progress=False,
        )
        for question, doc in (
            ("Where is Osnabruck?", "a"),  # plain spelling, accented text
            ("What is the capital of Baden-Württemberg?", "b"),
            ("Capital of Baden-Wuerttemberg or Baden-Wurttemberg?", "b"),
        ):
            vec = client.retriever.embed_query(question)
            from terag_neo4j.retrieval.flat import flat_ranking

            flat = flat_ranking(client.store, namespace, question, vec, 10)
            assert flat.by_text >= 1, question  # the words matched, not only the vectors
            top = client.retrieve(question, top_k=1).passages[0]
            assert top.doc_id == doc, question


def test_a_namespace_written_by_an_older_version_is_moved_into_its_own_indexes(
    base_settings: Settings, namespace: str
) -> None:
    with TeragClient(base_settings, namespace=namespace) as client:
        client.index([SAMPLE], progress=False)
        before = [p.id for p in client.retrieve("Where is Volkswagen based?").passages]
        label = passage_label(namespace)
        # What an older version left: no label, no folded text, no indexes, no marker.
        client.store.search_indexes.drop(namespace)
        with client.store.session() as s:
            s.run(
                f"MATCH (p:`{label}`) REMOVE p:`{label}`, p.ft_title, p.ft_text SET p.nskey = 'x'"
            ).consume()
            s.run("MATCH (n:Namespace {name: $ns}) REMOVE n.search", ns=namespace).consume()
        assert not {text_index(namespace), vector_index(namespace)} & _indexes(client)

    with TeragClient(base_settings, namespace=namespace) as fresh:  # a new process's view
        after = [p.id for p in fresh.retrieve("Where is Volkswagen based?").passages]
        assert after == before
        assert {text_index(namespace), vector_index(namespace)} <= _indexes(fresh)
        with fresh.store.session() as s:
            left = s.run(
                "MATCH (p:Passage {namespace: $ns}) WHERE p.ft_text IS NULL OR p.nskey IS NOT NULL "
                "RETURN count(p)",
                ns=namespace,
            ).single()
        assert left is not None and left[0] == 0


def test_an_ingest_cannot_outlive_a_drop_of_its_namespace(
    base_settings: Settings, namespace: str
) -> None:
    with (
        TeragClient(base_settings, namespace=namespace) as client,
        TeragClient(base_settings, namespace=namespace) as other,
    ):
        with client.store.writing(namespace):  # one ingest, its batches in two calls
            client.index([Document(id="one", text="Wolfsburg is in Lower Saxony.")], progress=False)
            other.drop(namespace)
            with pytest.raises(NamespaceDropped, match="dropped while this ingest"):
                client.index(
                    [Document(id="two", text="Hanover is the capital of Lower Saxony.")],
                    progress=False,
                )
        assert not client.store.namespaces.exists(namespace), "no new, partial namespace"

        # Being dropped (marked under the write lock): a writer that comes now is refused.
        client.index([Document(id="one", text="Wolfsburg is in Lower Saxony.")], progress=False)
        with other.store.session() as s:
            s.run("MATCH (n:Namespace {name: $ns}) SET n.dropping = true", ns=namespace).consume()
        with pytest.raises(NamespaceDropped, match="being dropped"):
            client.index([Document(id="two", text="Hanover is in it.")], progress=False)


def test_one_ingest_giving_its_lease_back_leaves_another_in_force(
    base_settings: Settings, namespace: str
) -> None:
    with TeragClient(base_settings, namespace=namespace) as client:
        client.index([Document(id="one", text="Wolfsburg is in Lower Saxony.")], progress=False)

        def ingesting() -> bool:
            return bool(client.store.read("namespace_version", namespace=namespace)[0]["ingesting"])

        assert not ingesting(), "an ingest gives its lease back when it ends"
        client.store.namespaces.ingest_lease(namespace, 60, "run-a")
        client.store.namespaces.ingest_lease(namespace, 60, "run-b")
        client.store.namespaces.ingest_lease(namespace, 0, "run-a")
        assert ingesting()
        client.store.namespaces.ingest_lease(namespace, 0, "run-b")
        assert not ingesting()


def test_the_lease_heartbeat_renews_a_lease_shorter_than_the_ingest(
    base_settings: Settings, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from terag_neo4j.indexing import lease as ingest_lease

    monkeypatch.setattr(ingest_lease, "LEASE_S", 2)
    with TeragClient(base_settings, namespace=namespace) as client:
        client.index([Document(id="one", text="Wolfsburg is in Lower Saxony.")], progress=False)
        with ingest_lease.held_lease(client.store, namespace, "slow-run", renew_s=0.5):
            time.sleep(3.5)  # longer than a lease: only renewals keep it
            row = client.store.read("namespace_version", namespace=namespace)[0]
            assert row["ingesting"]
        assert not client.store.read("namespace_version", namespace=namespace)[0]["ingesting"]


def test_eviction_and_sweeps_leave_other_graphs_alone(
    base_settings: Settings, namespace: str
) -> None:
    # A namespace named like the per-query prefix once had its projections swept as per-query
    # graphs, and eviction could drop a running budget ingest's graph.
    ns = f"local{namespace}"
    with TeragClient(base_settings, namespace=ns) as client:
        try:
            client.index([SAMPLE], progress=False)
            graph = client.retriever.ensure_projection(ns)
            core = f"{gds.CORE_PREFIX}{ns}_x"
            lost = f"{gds.LOCAL_PREFIX}lost"
            for name in (core, lost):
                client.store.read("gds_drop", graph=name)  # a rerun of this test starts clean
                with client.store.session() as s:
                    s.run(
                        "MATCH (p:Passage {namespace: $ns}) "
                        "WITH gds.graph.project($g, p, null) AS g RETURN g.nodeCount",
                        ns=ns,
                        g=name,
                    ).consume()
            dropped = gds.evict(client.store, max_bytes=2**40, max_graphs=0, keep=graph)
            assert core not in dropped and lost not in dropped and graph not in dropped
            swept = gds.sweep_local(client.store, older_than_s=0.0)
            assert swept == [lost], "only the per-query graph left behind is swept"
            names = {g["graphName"] for g in gds.catalog(client.store)}
            assert graph in names and core in names
            gds.drop(client.store, core)
        finally:
            client.drop(ns)


def test_a_drop_that_stalls_and_wakes_after_a_new_namespace_deletes_nothing_of_it(
    base_settings: Settings, namespace: str
) -> None:
    from terag_neo4j.store.cypher import cypher_statements, run_cypher

    with TeragClient(base_settings, namespace=namespace) as client:
        client.index([Document(id="old", text="Wolfsburg is in Lower Saxony.")], progress=False)
        store = client.store
        # A worker marks the namespace as its drop's, then stalls (its lease runs out)
        stalled = "stalled-drop"
        store.write_tx(
            lambda tx: run_cypher(
                tx, "mark_dropping", namespace=namespace, epoch=None, token=stalled
            ).consume()
        )
        # The job's next worker drops it and makes it anew
        assert store.namespaces.drop(namespace)
        client.index(
            [Document(id="new", text="Hanover is the capital of Lower Saxony.")], progress=False
        )
        before = store.namespaces.fingerprint(namespace)
        # The stalled worker wakes: its index drop is skipped and its deletes find no token
        assert not store.namespaces._owns_drop(namespace, stalled)
        with store.session() as s:
            for stmt in cypher_statements("drop_namespace"):
                s.run(
                    stmt, namespace=namespace, keep_job=None, token=stalled, marked=True
                ).consume()
        assert store.namespaces.exists(namespace)
        assert store.namespaces.fingerprint(namespace) == before
        assert {text_index(namespace), vector_index(namespace)} <= _indexes(client)
        assert [p.doc_id for p in client.retrieve("What is the capital of Lower Saxony?").passages][
            :1
        ] == ["new"]
        # A drop now, whose token the node carries, still deletes it
        store.namespaces.drop(namespace)
        assert not store.namespaces.exists(namespace)
