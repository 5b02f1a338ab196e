"""Unit test: each router of the service is short (one concern; the work is the library's)."""

from __future__ import annotations

from pathlib import Path

SERVICE = Path(__file__).resolve().parents[2] / "terag_neo4j" / "service"
MAX_LINES = 120


def test_every_router_module_is_at_most_120_lines() -> None:
    routers = sorted(SERVICE.glob("routes_*.py"))
    assert len(routers) >= 5  # the routers were found
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in routers}
    assert {n: s for n, s in sizes.items() if s > MAX_LINES} == {}


def test_no_router_opens_the_store_itself() -> None:
    """Routes call the client's operations; the graph is the library's to read."""
    for p in sorted(SERVICE.glob("routes_*.py")):
        text = p.read_text(encoding="utf-8")
        assert ".store." not in text and "session()" not in text, p.name
