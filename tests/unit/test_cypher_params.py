"""Statement parameters as the driver gets them (`run_cypher`): the driver's real packer, and a
stand-in transaction that records what it is handed (a unit test of the wrapping, named as such).
"""

from __future__ import annotations

import io
from typing import Any

from neo4j._codec.packstream.v1 import Packer

from terag_neo4j.store.cypher import Unprinted, load_cypher, run_cypher


class _RecordingTx:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def run(self, query: str, parameters: dict[str, Any] | None = None) -> None:
        self.calls.append((query, parameters or {}))


def test_list_parameters_are_never_formatted_as_text() -> None:
    rows = [{"uid": f"ns|{i}", "embedding": [0.5] * 384} for i in range(500)]
    tx = _RecordingTx()
    run_cypher(tx, "link_passages", rows=rows, namespace="ns", uids=("a", "b"))  # type: ignore[arg-type]
    [(query, params)] = tx.calls
    assert query == load_cypher("link_passages")
    # The driver formats repr() of the parameters on every RUN, its debug log on or not
    assert len(repr(params)) < 100, repr(params)[:200]
    assert params == {"rows": rows, "namespace": "ns", "uids": ["a", "b"]}


def test_an_unprinted_list_is_sent_as_the_list_it_is() -> None:
    value = {"rows": [{"a": [1.0, 2.5], "b": "x"}] * 3, "n": 1}

    def packed(v: dict[str, Any]) -> bytes:
        buf = io.BytesIO()
        Packer(buf).pack(v)
        return buf.getvalue()

    assert packed({**value, "rows": Unprinted(value["rows"])}) == packed(value)
