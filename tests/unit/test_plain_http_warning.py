"""Clients warn once per host, in a log line without the key, when they would send a key over
plain http:// to a host that is not loopback; never for loopback, https or no key."""

from __future__ import annotations

import logging

import pytest

from terag_neo4j.cli.remote_commands import Service
from terag_neo4j.service import plain_http
from terag_neo4j.service.remote_client import AsyncTeragRemote, TeragRemote

KEY = "k" * 43


@pytest.fixture(autouse=True)
def fresh() -> None:
    plain_http._warned.clear()


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_a_key_over_plain_http_to_another_host_is_warned_of_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    for _ in range(2):
        TeragRemote("http://10.1.2.3:8000", api_key=KEY).close()
    AsyncTeragRemote("http://10.1.2.3:8000", api_key=KEY)
    Service("http://terag.example.org:8000", KEY)  # the CLI's client
    said = warnings(caplog)
    assert len(said) == 2, said
    assert "10.1.2.3 over plain http://" in said[0] and "terag.example.org" in said[1]
    assert all(KEY not in s for s in said)


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://127.0.0.1:8000", KEY),
        ("http://localhost:8000", KEY),
        ("http://[::1]:8000", KEY),
        ("https://terag.example.org", KEY),
        ("http://terag.example.org", None),
    ],
)
def test_no_warning_for_loopback_https_or_no_key(
    caplog: pytest.LogCaptureFixture, url: str, key: str | None
) -> None:
    caplog.set_level(logging.WARNING)
    TeragRemote(url, api_key=key).close()
    Service(url, key)
    assert warnings(caplog) == []
