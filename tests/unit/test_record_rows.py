"""`store.sessions.row`: a record as `record.data()` makes it, without walking plain values."""

from __future__ import annotations

import neo4j
from neo4j.graph import Graph, Node

from terag_neo4j.store.sessions import row


def test_plain_values_come_back_as_data_makes_them() -> None:
    rec = neo4j.Record(
        zip(["text", "first", "provenance"], [[[1, 0.5], [2, 0.25]], "a", {"page": 3}], strict=True)
    )
    assert row(rec) == rec.data()
    assert list(row(rec)) == ["text", "first", "provenance"]


def test_a_graph_value_is_turned_into_a_plain_one() -> None:
    node = Node(Graph(), "4:x:1", 1, ["Passage"], {"uid": "ns|p1"})
    rec = neo4j.Record(zip(["p", "ps", "n"], [node, [node], 7], strict=True))
    assert row(rec) == {"p": {"uid": "ns|p1"}, "ps": [{"uid": "ns|p1"}], "n": 7}
