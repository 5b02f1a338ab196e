"""Property-based fuzzing of the service's OpenAPI schema (schemathesis): whatever the input, no
5xx and every error in the one shape. Bounded: a few examples per operation and mode, well under
a minute."""

from __future__ import annotations

import time
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.openapi import from_url

from tests.service.conftest import KEY_A, Service

pytestmark = pytest.mark.integration

EXAMPLES = 6
BUDGET_S = 60.0


@schemathesis.serializer("application/zip")
def _archive_bytes(ctx: Any, value: Any) -> bytes:
    """The import route's body (a namespace archive) as the fuzzer made it: raw bytes, which the
    route must refuse in one line, never with a 5xx."""
    return value if isinstance(value, bytes) else str(value).encode()


def test_no_server_errors_on_fuzzed_requests(service: Service) -> None:
    schema = from_url(f"{service.url}/openapi.json")
    operations = [r.ok() for r in schema.get_all_operations()]
    assert len(operations) >= 15
    seen: dict[int, int] = {}
    failures: list[str] = []
    start = time.monotonic()

    def check(case: Any) -> None:
        if case.method == "DELETE" and case.path == "/v1/namespaces/{namespace}":
            # A fuzzed name reaches only the key's namespace: A, the corpus other tests read
            case.path_parameters = {"namespace": "fuzz-never-exists"}
        r = case.call(
            base_url=service.url, headers={"Authorization": f"Bearer {KEY_A}"}, timeout=60
        )
        seen[r.status_code] = seen.get(r.status_code, 0) + 1
        if r.status_code >= 500:
            failures.append(f"{case.method} {case.formatted_path}: {r.status_code} {r.text[:200]}")
        elif r.status_code >= 400:
            ctype = r.headers.get("content-type") or [""]  # schemathesis: name -> values
            if str(ctype[0] if isinstance(ctype, list) else ctype).startswith("application/json"):
                assert set(r.json()["error"]) == {"type", "message"}, r.text

    for op in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            if time.monotonic() - start > BUDGET_S:
                break
            run = settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )(given(case=op.as_strategy(generation_mode=mode))(check))
            try:
                run()
            except Exception as e:  # a strategy schemathesis cannot build for this mode
                if "Unsatisfiable" not in type(e).__name__:
                    raise
    assert failures == []
    assert sum(seen.values()) >= len(operations)  # it really sent requests
    assert any(400 <= s < 500 for s in seen)  # and the negative cases were refused
