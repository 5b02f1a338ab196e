"""`terag retrieve/index` through a running service (`--url` or TERAG_URL): the in-process output,
without torch or the Neo4j driver in the CLI's process."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from terag_neo4j import cli
from terag_neo4j.client import TeragClient
from terag_neo4j.indexing.loading import document_id
from tests.service.conftest import KEY_A, KEY_ALL, REPO, Service

pytestmark = pytest.mark.integration

QUESTION = "Who designed the Volkswagen Beetle?"
# Run first in the child: an import of either fails as if it were not installed
BLOCK = (
    "import sys\n"
    "for m in ('torch', 'neo4j', 'sentence_transformers', 'transformers'):\n"
    "    sys.modules[m] = None\n"
    "from terag_neo4j.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "heavy = [m for m in ('httpx', 'pydantic', 'fastapi') if m in sys.modules]\n"
    "print('loaded:', heavy, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def terag(
    service: Service, *argv: str, key: str = KEY_ALL, **env: str
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in service.env.items() if k != "TERAG_URL"}
    full.update(TERAG_API_KEY=key, **env)
    return subprocess.run(
        [sys.executable, "-c", BLOCK, *argv],
        cwd=REPO,
        env=full,
        capture_output=True,
        text=True,
        timeout=900,
    )


def without_timings(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "timings"}


def test_retrieve_json_through_the_service_is_the_in_process_json(service: Service) -> None:
    proc = terag(service, "retrieve", "--url", service.url, "-n", service.ns_a, "--json", QUESTION)
    assert proc.returncode == 0, proc.stderr
    remote = json.loads(proc.stdout)
    with TeragClient(service.settings) as client:
        local = cli.to_jsonable(client.retrieve(QUESTION, namespace=service.ns_a))
    assert list(remote) == list(local)  # the same keys in the same order
    assert without_timings(remote) == without_timings(json.loads(json.dumps(local)))
    assert remote["timings"].keys() == local["timings"].keys()


def test_retrieve_text_through_terag_url_and_its_time(service: Service) -> None:
    took = []
    for _ in range(3):
        t = time.perf_counter()
        proc = terag(
            service, "retrieve", "-n", service.ns_a, "-k", "2", QUESTION, TERAG_URL=service.url
        )
        took.append(time.perf_counter() - t)
        assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"query: {QUESTION}"
    ranked = [x for x in lines if x[:1].isdigit()]
    assert [x[:4] for x in ranked] == ["1. [", "2. ["]
    assert lines[-1].startswith("timings: ")
    # retrieve loads neither the library's models nor an HTTP or validation library
    assert "loaded: []" in proc.stderr
    # ≤ 0.3 s on a quiet machine (in-process: about 2 s); a loaded shared one gets a margin
    assert min(took) < 1.0, took


def test_errors_through_the_service_keep_the_cli_exit_codes(service: Service) -> None:
    other = terag(
        service, "retrieve", "--url", service.url, "-n", service.ns_b, QUESTION, key=KEY_A
    )
    assert other.returncode == 6 and "terag: error:" in other.stderr  # 403: another tenant's
    missing = terag(service, "retrieve", "--url", service.url, "-n", "no-such-ns", QUESTION)
    assert missing.returncode == 4, missing.stderr
    down = terag(service, "retrieve", "--url", "http://127.0.0.1:9", QUESTION)
    assert down.returncode == 3 and "cannot reach the service" in down.stderr
    backend = terag(service, "retrieve", "--url", service.url, "-e", "spacy", QUESTION)
    assert backend.returncode == 2
    # The answer, or (no reader LLM reachable from the service) the CLI's "unavailable"
    ask = terag(service, "ask", "--url", service.url, "-n", service.ns_a, "--json", QUESTION)
    if ask.returncode == 0:
        out = json.loads(ask.stdout)
        assert list(out) == [
            "answer",
            "retrieval",
            "input_tokens",
            "output_tokens",
            "citations",
            "uncited",
        ]
        for c in out["citations"]:  # each with the passage's provenance, as in-process
            assert c["provenance"]["source"] and c["passage_id"]
    else:
        assert ask.returncode in (1, 3) and "terag: error:" in ask.stderr, ask.stderr


def test_index_through_the_service_gives_the_in_process_document_ids(
    service: Service, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "klimt.md").write_text("# Klimt\n\nGustav Klimt painted The Kiss in Vienna.\n")
    ns = f"{service.ns_a}-cli"
    proc = terag(service, "index", str(folder), "--url", service.url, "-n", ns, "--json")
    try:
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out["namespace"] == ns and out["documents"] == 1 and out["passages_new"] == 1
        listed = terag(service, "retrieve", "--url", service.url, "-n", ns, "--json", "Klimt")
        doc_ids = {p["doc_id"] for p in json.loads(listed.stdout)["passages"]}
        assert doc_ids == {document_id(folder / "klimt.md")}  # what `terag index` names it
    finally:
        import httpx

        httpx.delete(
            f"{service.url}/v1/namespaces/{ns}",
            headers={"Authorization": f"Bearer {KEY_ALL}"},
            timeout=60,
        )


def test_a_pdf_indexed_through_the_service_keeps_its_pages(
    service: Service, tmp_path: Path
) -> None:
    from tests.fixtures.document_files import write_pdf

    pdf = write_pdf(
        tmp_path / "guide.pdf",
        [
            "Dosing in children.\n\nThe syrup is given twice a day with food.",
            "Dosing in adults.\n\nThe tablet of Zorvexin is taken once a day at night.",
        ],
    )
    ns = f"{service.ns_a}-pdf"
    proc = terag(service, "index", str(pdf), "--url", service.url, "-n", ns, "--json")
    try:
        assert proc.returncode == 0, proc.stderr
        found = terag(
            service, "retrieve", "--url", service.url, "-n", ns, "--json", "Zorvexin tablet"
        )
        assert found.returncode == 0, found.stderr
        passages = json.loads(found.stdout)["passages"]
        # the two short pages are one passage: it spans both (without the page offsets sent
        # through the service it would have no pages)
        spans = {
            (p["provenance"]["page_start"], p["provenance"]["page_end"])
            for p in passages
            if "Zorvexin" in p["text"]
        }
        assert spans == {(1, 2)}, passages
    finally:
        import httpx

        httpx.delete(
            f"{service.url}/v1/namespaces/{ns}",
            headers={"Authorization": f"Bearer {KEY_ALL}"},
            timeout=60,
        )
