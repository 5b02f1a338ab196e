"""The adversarial suite: attacks run against a real keyed `terag serve` process on the session's
real Neo4j + GDS, each test asserting the defence (status, time, the service's RSS growth,
nothing written, the other tenant unaffected). Run it alone with `pytest -m adversarial`.

The service, its two tenants and their keys are the service suite's (tests/service/conftest.py);
a test that needs other service settings starts its own with `running_service`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.service.conftest import base_settings, service, tenants

__all__ = ["base_settings", "rss_mib", "service", "tenants"]


def rss_mib(pid: int) -> float:
    """The resident set of process `pid`, in MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.adversarial)
            item.add_marker(pytest.mark.integration)
