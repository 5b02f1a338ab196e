"""One question limit for HTTP and MCP: the service's TERAG_MAX_QUESTION_CHARS (default 2000)
refuses the same questions with the same message on both, and admits the same ones."""

from __future__ import annotations

import pytest

from tests.service.conftest import KEY_A_READ, Service
from tests.service.test_mcp import http_session, text_of

pytestmark = pytest.mark.integration

LIMIT = 2000  # the service fixture runs with the default


def question(chars: int) -> str:
    base = "Who designed the Volkswagen Beetle? "
    return (base * (chars // len(base) + 1))[:chars]


@pytest.mark.asyncio
async def test_http_and_mcp_refuse_and_admit_the_same_questions(service: Service) -> None:
    too_long, fits = question(LIMIT + 500), question(LIMIT)
    ns = service.ns_a
    with service.client(KEY_A_READ) as http:
        refused = http.post(f"/v1/namespaces/{ns}/retrieve", json={"question": too_long})
        assert refused.status_code == 422, refused.text
        http_message = refused.json()["error"]["message"]
        why = http.get(f"/v1/namespaces/{ns}/passages/x/why", params={"question": too_long})
        assert why.status_code == 422 and why.json()["error"]["message"] == http_message
        admitted = http.post(f"/v1/namespaces/{ns}/retrieve", json={"question": fits})
        assert admitted.status_code == 200, admitted.text
    assert f"at most {LIMIT} characters" in http_message
    async with http_session(service, KEY_A_READ) as s:
        for tool in ("search", "ask"):
            got = await s.call_tool(tool, {"namespace": ns, "question": too_long})
            assert got.is_error and http_message in text_of(got), text_of(got)
        blank = await s.call_tool("search", {"namespace": ns, "question": "   "})
        assert blank.is_error and "empty" in text_of(blank)
        found = await s.call_tool("search", {"namespace": ns, "question": fits})
        assert not found.is_error, text_of(found)
