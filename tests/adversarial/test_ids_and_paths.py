"""Document and passage ids that look like paths or URLs (`/`, `..`, `#`, `%`, `?`, spaces,
unicode) round-trip through add, list, retrieve, why and delete on every surface (`TeragRemote`
and its async twin over HTTP, the MCP tools, `terag index/retrieve --url`, the in-process
`TeragClient`), and no call removes anything but what it names: a delete of `../../other` in one
namespace once dropped the namespace `other`."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.core.documents import Document
from terag_neo4j.core.passage_ids import passage_id
from terag_neo4j.service.remote_client import AsyncTeragRemote, RemoteError, TeragRemote
from tests.service.conftest import KEY_ALL, REPO, Service
from tests.service.test_mcp import http_session, text_of

CITIES = ["Lisbon", "Oslo", "Riga", "Tallinn", "Vilnius", "Zagreb", "Sofia", "Tirana", "Skopje"]
IDS = [
    "notes/a.md",
    "../up",
    "..",
    ".",
    "x#1",
    "100% sure",
    "what?now",
    "Straße über Köln",
    "a/../../b",
]


def text_of_id(i: int) -> str:
    return f"The cartographer Anselm Vogt{i} mapped the old harbour of {CITIES[i]} in 1820."


def question(i: int) -> str:
    return f"Who mapped the old harbour of {CITIES[i]}?"


def fresh(tag: str) -> str:
    return f"ids-{uuid.uuid4().hex[:8]}-{tag}"


@pytest.fixture
def remote(service: Service) -> Iterator[TeragRemote]:
    with TeragRemote(service.url, api_key=KEY_ALL, timeout=120) as r:
        yield r


@pytest.fixture
def victim(remote: TeragRemote) -> Iterator[str]:
    """A namespace that no call in a test names: it must keep its one passage."""
    ns = fresh("victim")
    job = remote.index_texts([{"id": "v", "text": "Gdansk has a crane."}], ns, wait=True)
    assert job.state == "succeeded", job.errors
    yield ns
    remote.drop(ns)


def passages_of(remote: TeragRemote, ns: str) -> dict[str, int]:
    return {d.id: d.passages for d in remote.documents(ns, limit=1000).documents}


def test_dot_dot_ids_in_a_delete_reach_no_other_namespace(remote: TeragRemote, victim: str) -> None:
    ns = fresh("mine")
    job = remote.index_texts([{"id": "kept", "text": "Bergen has a fish market."}], ns, wait=True)
    assert job.state == "succeeded", job.errors
    try:
        for attack in (f"../../{victim}", f"../{victim}", "..", ".", "../..", f"%2E%2E/{victim}"):
            with pytest.raises(RemoteError) as refused:
                remote.delete(attack, namespace=ns)
            assert refused.value.status == 404, (attack, refused.value)
            assert repr(attack) in refused.value.message
        assert passages_of(remote, victim) == {"v": 1}
        assert passages_of(remote, ns) == {"kept": 1}
    finally:
        remote.drop(ns)


def test_odd_ids_round_trip_through_the_remote_client(remote: TeragRemote, victim: str) -> None:
    ns = fresh("remote")
    docs = [{"id": d, "text": text_of_id(i)} for i, d in enumerate(IDS)]
    job = remote.index_texts(docs, ns, wait=True)
    assert job.state == "succeeded", job.errors
    try:
        assert passages_of(remote, ns) == dict.fromkeys(IDS, 1)
        for i, d in enumerate(IDS):
            top = remote.retrieve(question(i), top_k=3, namespace=ns).passages
            assert top[0].doc_id == d, (d, [p.doc_id for p in top])
            why = remote.why(top[0].id, question(i), namespace=ns)
            assert (why.passage_id, why.rank) == (top[0].id, 1)

        async def async_side() -> tuple[str, int]:
            async with AsyncTeragRemote(str(remote.http.base_url), KEY_ALL) as a:
                top = (await a.retrieve(question(4), top_k=1, namespace=ns)).passages[0]
                why = await a.why(top.id, question(4), namespace=ns)
                return why.passage_id, await a.delete(IDS[4], namespace=ns)

        assert asyncio.run(async_side()) == (passage_id(IDS[4]), 1)
        left = [d for d in IDS if d != IDS[4]]
        for n, d in enumerate(left, 1):
            assert remote.delete(d, namespace=ns) == 1
            assert sorted(passages_of(remote, ns)) == sorted(left[n:])
        assert passages_of(remote, victim) == {"v": 1}
    finally:
        remote.drop(ns)


@pytest.mark.asyncio
async def test_odd_ids_round_trip_through_the_mcp_tools(service: Service, victim: str) -> None:
    ns = fresh("mcp")
    async with http_session(service, KEY_ALL) as s:
        try:
            for i, d in enumerate(IDS):
                got = await s.call_tool(
                    "add_text", {"namespace": ns, "document_id": d, "text": text_of_id(i)}
                )
                assert not got.is_error, text_of(got)
                assert got.structured_content is not None
                job_id = got.structured_content["id"]
                for _ in range(600):
                    st = await s.call_tool("ingest_status", {"job_id": job_id})
                    assert st.structured_content is not None
                    if st.structured_content["state"] in ("succeeded", "failed", "cancelled"):
                        break
                    await asyncio.sleep(0.2)
                assert st.structured_content["state"] == "succeeded", st.structured_content
            listed = await s.call_tool("list_documents", {"namespace": ns})
            assert listed.structured_content is not None
            assert sorted(x["id"] for x in listed.structured_content["documents"]) == sorted(IDS)
            for i, d in enumerate(IDS):
                found = await s.call_tool("search", {"namespace": ns, "question": question(i)})
                assert found.structured_content is not None, text_of(found)
                top = found.structured_content["passages"][0]
                assert top["doc_id"] == d
                why = await s.call_tool(
                    "why_retrieved",
                    {"namespace": ns, "passage_id": top["id"], "question": question(i)},
                )
                assert why.structured_content is not None, text_of(why)
                assert why.structured_content["rank"] == 1
            gone = await s.call_tool(
                "delete_document", {"namespace": ns, "document_id": f"../../{victim}"}
            )
            assert gone.is_error and "no document" in text_of(gone), text_of(gone)
            for d in IDS:
                gone = await s.call_tool("delete_document", {"namespace": ns, "document_id": d})
                assert gone.structured_content is not None, text_of(gone)
                assert gone.structured_content["passages"] == 1
        finally:
            with TeragRemote(service.url, api_key=KEY_ALL) as r:
                r.drop(ns)
    with TeragRemote(service.url, api_key=KEY_ALL) as r:
        assert passages_of(r, victim) == {"v": 1}


CLI = (
    "import sys\n"
    "for m in ('torch', 'neo4j'):\n"
    "    sys.modules[m] = None\n"
    "from terag_neo4j.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
FILES = ["a#1.md", "100% sure.md", "what?.md", "Straße über.md", "two..dots %2E%2E.md"]


def test_odd_file_names_round_trip_through_the_cli_over_the_service(
    service: Service, remote: TeragRemote, tmp_path: Path
) -> None:
    ns = fresh("cli")
    for i, name in enumerate(FILES):
        (tmp_path / name).write_text(text_of_id(i), encoding="utf-8")
    env = {k: v for k, v in service.env.items() if k != "TERAG_URL"}
    env["TERAG_API_KEY"] = KEY_ALL

    def terag(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", CLI, *argv, "--url", service.url, "-n", ns],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    try:
        proc = terag("index", str(tmp_path), "--json")
        assert proc.returncode == 0, proc.stderr
        want = {str(tmp_path / name) for name in FILES}
        assert set(passages_of(remote, ns)) == want
        for i, name in enumerate(FILES):
            proc = terag("retrieve", "--json", "-k", "1", question(i))
            assert proc.returncode == 0, proc.stderr
            (top,) = json.loads(proc.stdout)["passages"]
            assert top["doc_id"] == str(tmp_path / name)
            assert remote.why(top["id"], question(i), namespace=ns).rank == 1
        for d in sorted(want):
            assert remote.delete(d, namespace=ns) == 1
        assert passages_of(remote, ns) == {}
    finally:
        remote.drop(ns)


def test_odd_ids_round_trip_in_process(base_settings: Settings) -> None:
    ns = fresh("local")
    with TeragClient(base_settings, namespace=ns) as c:
        try:
            c.index([Document(id=d, text=text_of_id(i)) for i, d in enumerate(IDS)], progress=False)
            for i, d in enumerate(IDS):
                top = c.retrieve(question(i), top_k=1).passages[0]
                assert top.doc_id == d
                assert c.document_ids(d) == [d]
            for n, d in enumerate(IDS, 1):
                assert c.delete(d) == 1
                assert c.stats().passages == len(IDS) - n
        finally:
            c.drop(ns)
