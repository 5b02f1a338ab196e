"""The soak's accounting (`terag_bench.soak_accounting.account`): requests that never ended,
errors by kind, and documents accepted against documents stored, from a ledger filled by hand
(pure arithmetic, no service)."""

from __future__ import annotations

import httpx
from terag_bench.soak_accounting import Ledger, Request, account, error_kind


def _ledger() -> Ledger:
    ledger = Ledger()
    for i, (kind, outcome, s) in enumerate(
        [
            ("retrieve", "ok", 0.1),
            ("retrieve", "ok", 0.3),
            ("retrieve", "HTTP 503", 0.01),
            ("upload", "ok", 0.2),
            ("upload", "ConnectError", 0.0),
            ("poll", "ok", 0.05),
        ]
    ):
        ledger.begin()
        ledger.end(Request(kind, i % 2, float(i), s, outcome))
    ledger.accept("ns_a", ["a-1", "a-2"])
    ledger.accept("ns_b", ["b-1"])
    return ledger


def test_a_soak_that_lost_nothing_says_so() -> None:
    out = account(_ledger(), {"ns_a": {"a-1": 1, "a-2": 1}, "ns_b": {"b-1": 1}}, 0)
    assert out["requests"] == 6 and out["requests_never_ended"] == 0
    assert out["errors"] == 2
    assert out["errors_by_kind"] == {"retrieve: HTTP 503": 1, "upload: ConnectError": 1}
    assert out["per_kind"]["retrieve"] == {
        "requests": 3,
        "errors": 1,
        "p50_ms": 200.0,  # interpolated between 0.1 and 0.3 s
        "p99_ms": 298.0,
    }
    assert out["documents_accepted"] == out["documents_stored"] == 3
    assert out["lost_nothing"] is True


def test_a_hung_request_a_lost_a_doubled_and_a_stray_document_each_count() -> None:
    ledger = _ledger()
    ledger.begin()  # a request that never came back
    stored = {"ns_a": {"a-1": 2}, "ns_b": {"b-1": 1, "b-9": 1}}
    ledger.submit("ns_b", ["b-7"])  # sent, its 202 never read, stored: no loss
    stored["ns_b"]["b-7"] = 1
    out = account(ledger, stored, 1)
    assert out["requests_never_ended"] == 1
    assert out["documents_stored_reply_lost"] == ["ns_b/b-7"]
    assert out["documents_unexpected"] == ["ns_b/b-9"]
    assert out["documents_missing"] == ["ns_a/a-2"]
    assert out["documents_not_stored_once"] == ["ns_a/a-1"]
    assert out["documents_unexpected_count"] == 1
    assert out["jobs_unfinished"] == 1
    assert out["lost_nothing"] is False


def test_outcomes_are_named_by_status_or_exception() -> None:
    assert error_kind(202) == "ok"
    assert error_kind(429) == "HTTP 429"
    assert error_kind(None, httpx.ReadTimeout("slow")) == "ReadTimeout"


def test_a_document_stored_whose_reply_was_lost_is_no_loss() -> None:
    ledger = _ledger()
    ledger.submit("ns_a", ["a-3"])  # the last upload: the soak ended before its reply
    out = account(ledger, {"ns_a": {"a-1": 1, "a-2": 1, "a-3": 1}, "ns_b": {"b-1": 1}}, 0)
    assert out["documents_submitted"] == 4 and out["documents_accepted"] == 3
    assert out["documents_stored_reply_lost_count"] == 1
    assert out["documents_unexpected_count"] == 0
    assert out["lost_nothing"] is True
