"""What one caller can make the service spend: the MCP tools' bounds (the HTTP routes'), errors
that quote a short escaped prefix, error-path text handling linear in a megabyte of input, the
metric children bounded whatever methods are sent, the per-address throttle of requests without
a key, readiness probing Neo4j once a second however often it is asked, and MCP writes' audit
lines."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from terag_neo4j.errors import echo
from terag_neo4j.llm import LLMUnavailableError
from terag_neo4j.service import bounds
from terag_neo4j.service.audit import audited
from terag_neo4j.service.http_errors import (
    LLM_DOWN,
    STORE_DOWN,
    ServiceError,
    public_message,
    without_addresses,
    without_known,
)
from terag_neo4j.service.metrics import HttpMetrics
from terag_neo4j.service.policy import AddressThrottle
from terag_neo4j.service.routes_health import PROBE_TTL_S, ReadyProbe
from terag_neo4j.service.schemas import MAX_CONCEPT_CHARS, MAX_ID_CHARS
from terag_neo4j.store import InvalidNamespace, NamespaceNotFound, Neo4jUnavailable
from terag_neo4j.store.ids import check_namespace

MB = 1_000_000
OLD_KNOWN = re.compile(r"\s*\(known: [^)]*\)")  # the pattern the strip replaced (semantics)


def _timed(fn: Any, *args: Any) -> tuple[Any, float]:
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


@pytest.mark.parametrize(
    "text",
    [
        "namespace 'x' does not exist (known: a, b); index it first",
        "no such (known: a) and (known: b)  (known: c)",
        "unclosed (known: a, b",
        "   (known: )",
        "nothing to strip",
        "",
    ],
)
def test_the_known_strip_does_what_the_regex_did(text: str) -> None:
    assert without_known(text) == OLD_KNOWN.sub("", text)


@pytest.mark.parametrize(
    "attack",
    [" " * MB, " " * MB + "(known: ", "(known: " * (MB // 8), "\t\n " * (MB // 3)],
)
def test_error_text_is_linear_in_a_megabyte(attack: str) -> None:
    """The regex took 0.68 s on 16,000 spaces (quadratic: most of an hour on a megabyte)."""
    _, took = _timed(without_known, attack)
    assert took < 0.5, f"{took:.2f} s"
    e = InvalidNamespace(f"bad: {attack}")
    msg, took = _timed(public_message, e)
    assert took < 0.5 and len(msg) <= 1000
    _, took = _timed(without_addresses, attack)
    assert took < 0.5


def test_an_error_quotes_a_short_escaped_prefix() -> None:
    assert echo("wiki") == "'wiki'"
    long = "a\nb" * MB
    quoted = echo(long)
    assert len(quoted) < 100 and "\n" not in quoted and "3,000,000 characters" in quoted
    with pytest.raises(InvalidNamespace) as bad:
        check_namespace(" " * MB)
    assert len(str(bad.value)) < 200


def test_a_503_names_no_internal_address() -> None:
    down = Neo4jUnavailable("Neo4j at bolt://neo4j:pw@db.internal:7687 did not answer")
    assert public_message(down) == STORE_DOWN
    reader = LLMUnavailableError("Ollama at http://10.0.0.5:11434 is not answering")
    assert public_message(reader) == LLM_DOWN  # which part is down, not where it lives
    # a 404 of the store keeps its message, without the other tenants' names
    missing = NamespaceNotFound("namespace 'x' does not exist (known: a, b); index it first")
    assert public_message(missing) == "namespace 'x' does not exist; index it first"
    text = "cannot reach http://ollama:11434/api and 10.0.0.5:7687 (resolved to ('db:7687',))"
    for leak in ("ollama", "11434", "10.0.0.5", "7687"):
        assert leak not in without_addresses(text)


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        (bounds.check_namespace_arg, "wiki_1-a", " " * MB),
        (bounds.check_namespace_arg, "a" * 64, "a" * 65),
        (bounds.check_document_id, "d" * MAX_ID_CHARS, "d" * (MAX_ID_CHARS + 1)),
        (bounds.check_job_id, "j" * MAX_ID_CHARS, "j" * MB),
        (bounds.check_concept, "c" * MAX_CONCEPT_CHARS, "c" * (MAX_CONCEPT_CHARS + 1)),
        (bounds.check_concept, "Porsche", ""),
        (lambda q: bounds.check_question_arg(q, 2000), "Who?", "q" * 2001),
        (lambda q: bounds.check_question_arg(q, 2000), "Who?", " " * 100),
    ],
)
def test_the_mcp_bounds_are_the_routes(check: Any, good: str, bad: str) -> None:
    assert check(good) == good
    t = time.perf_counter()
    with pytest.raises(ServiceError) as refused:
        check(bad)
    assert time.perf_counter() - t < 0.05  # refused from its length, not by reading it
    assert refused.value.status == 422 and len(refused.value.message) < 200


def test_made_up_methods_do_not_grow_the_metric_children() -> None:
    http = HttpMetrics(CollectorRegistry())
    for i in range(3000):
        http.observe("unmatched", f"X{i:05d}" + "M" * 12_000, 401, 0.001)
    http.observe("unmatched", "GET", 401, 0.001)
    assert len(http._children) == 2


def test_requests_without_a_key_are_throttled_per_address() -> None:
    throttle = AddressThrottle(rate=10.0, burst=20.0, size=100)
    waits = [throttle.take("10.0.0.1") for _ in range(25)]
    assert waits[:20] == [0.0] * 20 and all(w > 0 for w in waits[20:])
    assert throttle.take("10.0.0.2") == 0.0  # another address has its own bucket
    time.sleep(0.25)
    assert throttle.take("10.0.0.1") == 0.0  # refilled at the rate
    for i in range(10_000):  # a caller with many addresses
        throttle.take(f"fd00::{i:x}")
    assert len(throttle) == 100


class _CountingRuntime:
    """A stand-in runtime: its probe counts calls and takes 50 ms, as a short read would."""

    def __init__(self) -> None:
        self.calls = 0
        self.lock = threading.Lock()

    def probe(self) -> dict[str, Any]:
        with self.lock:
            self.calls += 1
        time.sleep(0.05)
        return {"gds": "2.x"}


def test_readiness_probes_once_a_second_however_often_asked() -> None:
    rt = _CountingRuntime()
    probe = ReadyProbe(rt)  # type: ignore[arg-type]

    async def main() -> None:
        assert (await probe.result())["gds"] == "2.x"
        # twice more within the second, and 50 at once: still the one probe
        await probe.result()
        await asyncio.gather(*(probe.result() for _ in range(50)))
        assert rt.calls == 1
        await asyncio.sleep(PROBE_TTL_S + 0.05)
        await asyncio.gather(*(probe.result() for _ in range(50)))
        assert rt.calls == 2

    asyncio.run(main())


def test_an_mcp_write_writes_its_audit_line(caplog: pytest.LogCaptureFixture) -> None:
    class Refused(Exception):
        status = 403

    caplog.set_level(logging.INFO, logger="terag_neo4j.audit")
    with audited("documents.delete", "wiki", ["doc-1"]) as line:
        line.key = "k-123"
    with pytest.raises(Refused), audited("documents.add", "wiki", ["doc-2"]) as line:
        raise Refused
    lines = [r.fields for r in caplog.records if r.name == "terag_neo4j.audit"]  # type: ignore[attr-defined]
    assert [(f["action"], f["transport"], f["status"], f["outcome"]) for f in lines] == [
        ("documents.delete", "mcp", 200, "ok"),
        ("documents.add", "mcp", 403, "refused"),
    ]
    assert lines[0]["key"] == "k-123" and lines[0]["documents"] == ["doc-1"]
    assert json.loads(caplog.records[0].getMessage().removeprefix("write "))["namespace"] == "wiki"
