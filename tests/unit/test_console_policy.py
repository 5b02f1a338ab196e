"""The front door's rule for the console: its page and files are public to read only; every
other method there, and everything under /v1, still needs a key."""

from __future__ import annotations

import pytest

from terag_neo4j.service.policy import classify


@pytest.mark.parametrize("path", ["/", "/console/js/main.js", "/console/app.css"])
def test_reading_the_console_needs_no_key(path: str) -> None:
    for method in ("GET", "HEAD"):
        assert classify(method, path, 1).public, (method, path)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/"),
        ("DELETE", "/console/app.css"),
        ("PUT", "/console/js/main.js"),
        ("GET", "/consoles"),
        ("GET", "/v1/key"),
        ("GET", "/v1/namespaces/wiki/overview"),
        ("GET", "/console"),
    ],
)
def test_anything_else_near_it_needs_a_key(method: str, path: str) -> None:
    assert not classify(method, path, 1).public, (method, path)


def test_the_overview_is_a_read_of_its_namespace() -> None:
    rule = classify("GET", "/v1/namespaces/wiki/overview", 1)
    assert (rule.namespace, rule.write) == ("wiki", False)
