"""The LangChain retriever and the neo4j-graphrag adapter over `TeragRemote`: the documents a
running service gives are those of an in-process `TeragClient`, and LangChain over the service
needs neither torch nor the Neo4j driver."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.integrations.langchain import TeragRetriever
from terag_neo4j.service.remote_client import TeragRemote
from tests.service.conftest import KEY_A, REPO, Service

pytestmark = pytest.mark.integration

QUESTIONS = ["Who designed the Volkswagen Beetle?", "Where is Porsche based?"]


def docs(retriever: TeragRetriever, q: str) -> list[tuple[str, str, dict[str, object]]]:
    return [(d.id or "", d.page_content, d.metadata) for d in retriever.invoke(q, k=3)]


def test_langchain_over_the_service_returns_the_in_process_documents(service: Service) -> None:
    with (
        TeragRemote(service.url, api_key=KEY_A) as remote,
        TeragClient(service.settings) as local,
    ):
        over_http = TeragRetriever(client=remote, namespace=service.ns_a)
        in_process = TeragRetriever(client=local, namespace=service.ns_a)
        for q in QUESTIONS:
            got, want = docs(over_http, q), docs(in_process, q)
            assert got == want and len(got) == 3


def test_langchain_add_and_delete_through_the_service(service: Service) -> None:
    from langchain_core.documents import Document

    with TeragRemote(service.url, api_key=KEY_A) as remote:
        retriever = TeragRetriever(client=remote, namespace=service.ns_a)
        ids = retriever.add_documents(
            [Document("Gustav Klimt painted The Kiss in Vienna.", metadata={"id": "lc-klimt"})]
        )
        assert ids == ["lc-klimt"]
        assert "lc-klimt" in {d.id for d in remote.documents(service.ns_a, limit=1000).documents}
        assert retriever.delete(ids) is True


def test_graphrag_adapter_over_the_service(service: Service) -> None:
    from terag_neo4j.integrations.graphrag import TeragGraphRAGRetriever

    with (
        TeragRemote(service.url, api_key=KEY_A) as remote,
        TeragClient(service.settings) as local,
    ):
        over_http = TeragGraphRAGRetriever(client=remote, namespace=service.ns_a)
        in_process = TeragGraphRAGRetriever(client=local, namespace=service.ns_a)
        got = over_http.search(query_text=QUESTIONS[0], top_k=3)
        want = in_process.search(query_text=QUESTIONS[0], top_k=3)
        assert over_http.driver is None
        assert [i.content for i in got.items] == [i.content for i in want.items]
        assert [i.metadata for i in got.items] == [i.metadata for i in want.items]
        assert got.metadata == want.metadata


SCRIPT = """
import json, sys
for name in ("torch", "neo4j", "sentence_transformers", "transformers", "fastapi"):
    sys.modules[name] = None
from terag_neo4j.integrations.langchain import TeragRetriever
from terag_neo4j.service.remote_client import TeragRemote

url, key, ns, q = sys.argv[1:5]
with TeragRemote(url, api_key=key) as remote:
    found = TeragRetriever(client=remote, namespace=ns, k=2).invoke(q)
print(json.dumps([d.metadata["passage_id"] for d in found]))
"""


def test_langchain_over_the_service_without_torch_or_the_driver(service: Service) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), service.url, KEY_A, service.ns_a,
         QUESTIONS[0]],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(json.loads(proc.stdout.strip().splitlines()[-1])) == 2
