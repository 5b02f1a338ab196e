"""Two first queries of the paper preset at once on a lazy namespace: both walk CO_OCCURRENCE,
so both start the lazy pair build. Afterwards every concept pair has exactly one edge and the
counts equal those an eager namespace of the same documents keeps."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.store import GraphStore

pytestmark = [pytest.mark.integration, pytest.mark.faults]

FIRST = ["Anna", "Karl", "Lena", "Otto", "Marta", "Paul", "Greta", "Hans", "Ilse", "Jonas"]
LAST = ["Weber", "Braun", "Fischer", "Klein", "Vogel", "Roth", "Becker", "Wolf", "Krause"]


def person(i: int) -> str:
    return f"{FIRST[i % len(FIRST)]} {LAST[i % len(LAST)]}"


# Documents 3g-1, 3g and 3g+1 name the same two people, so every pair of people straddles the
# boundary between two build batches of 3 passages, with people the batches before never named:
# a builder that assumed it alone had paired a batch recreated pairs the other builder made.
DOCS = [
    Document(
        id=f"d{i:02d}",
        title=f"Meeting {i}",
        text=f"{person(2 * ((i + 1) // 3))} worked with {person(2 * ((i + 1) // 3) + 1)} "
        f"in {['Hamburg', 'Munich', 'Dresden'][i % 3]}.",
    )
    for i in range(36)
]
QUESTION = "Where did Anna Weber work with Karl Braun?"
ROUNDS = 3


def cooccurrence_edges(store: GraphStore, ns: str) -> list[tuple[str, str, int]]:
    """Every stored CO_OCCURRENCE edge of the namespace as (concept key, concept key, count)."""
    with store.session() as s:
        rows = s.run(
            "MATCH (a:Concept {namespace: $ns})-[r:CO_OCCURRENCE]-(b) WHERE a.key < b.key "
            "RETURN a.key AS a, b.key AS b, r.count AS n",
            ns=ns,
        ).data()
    return sorted((r["a"], r["b"], int(r["n"])) for r in rows)


def first_queries_at_once(base_settings: Settings, ns: str) -> list[tuple[str, str, int]]:
    """Index DOCS lazily into `ns`, run two first paper-preset queries at once, and return the
    namespace's CO_OCCURRENCE edges afterwards."""
    # Small write batches: the build takes one transaction per 3 passages, so the two builders
    # take turns at the namespace lock many times over.
    with TeragClient(base_settings, namespace=ns, write_batch=3) as writer:
        assert writer.settings.cooccurrence == "lazy"
        writer.index(DOCS, progress=False)
        assert writer.stats().co_occurrence == 0
    clients = [
        TeragClient(base_settings, namespace=ns, preset="paper", write_batch=3) for _ in range(2)
    ]
    errors: list[BaseException] = []
    answers: list[list[str]] = []
    start = threading.Barrier(len(clients))

    def first_query(client: TeragClient) -> None:
        try:
            start.wait(timeout=60)
            answers.append([p.id for p in client.retrieve(QUESTION).passages])
        except BaseException as e:
            errors.append(e)

    try:
        for c in clients:  # load the query NER and embedding models before the race
            c.query_extractor(ns).extract_query("warm up", "warm")
            c.embedder.embed(["warm up"])
        threads = [threading.Thread(target=first_query, args=(c,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert not errors, [f"{type(e).__name__}: {getattr(e, 'message', e)}" for e in errors]
        assert len(answers) == 2 and answers[0] == answers[1] and answers[0]
        assert clients[0].stats().cooccurrence == "kept"
        return cooccurrence_edges(clients[0].store, ns)
    finally:
        for c in clients:
            c.close()


def test_two_first_paper_queries_build_each_pair_once(
    base_settings: Settings, namespace: str
) -> None:
    eager_ns = f"{namespace}-eager"
    with TeragClient(base_settings, namespace=eager_ns, cooccurrence="eager") as eager:
        eager.index(DOCS, progress=False)
        expected = cooccurrence_edges(eager.store, eager_ns)
    assert len(expected) > 50

    for round_ in range(ROUNDS):  # fresh namespaces: the race has several chances to show
        edges = first_queries_at_once(base_settings, f"{namespace}-r{round_}")
        per_pair = Counter((a, b) for a, b, _ in edges)
        duplicates = {pair: n for pair, n in per_pair.items() if n > 1}
        assert not duplicates, f"round {round_}: pairs with several edges: {duplicates}"
        assert edges == expected, f"round {round_}: pair counts differ from the eager ones"
