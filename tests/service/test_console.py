"""The console's files over HTTP against the real keyed service: served without a key under a
strict Content-Security-Policy, only the shipped files, and the two reads the page makes
(what a key reaches, a namespace's most connected concepts) scoped like the rest of the API."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from terag_neo4j.config import Settings
from terag_neo4j.indexing.readers import SUPPORTED_SUFFIXES
from terag_neo4j.service.console_files import CSP, shipped
from tests.service.conftest import (
    KEY_A,
    KEY_A_READ,
    KEY_ALL,
    KEY_B,
    Service,
    free_port,
    running_service,
    service_env,
)

CONSOLE = Path(__file__).resolve().parents[2] / "terag_neo4j" / "service" / "console"


@pytest.mark.integration
def test_the_page_loads_without_a_key_under_a_strict_policy(service: Service) -> None:
    r = httpx.get(service.url + "/", timeout=30)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    csp = r.headers["content-security-policy"]
    assert csp == CSP
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    # Nothing inline, nothing from another host: every source is this origin or none
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == "'self'" and directives["connect-src"] == "'self'"
    assert all(v in ("'self'", "'none'") for v in directives.values()), directives
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY"
    # No inline script or style in the page: everything it runs is a file the policy allows
    html = r.text
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "inline script"
    assert "<style" not in html and " style=" not in html and " on" + "click=" not in html
    for src in re.findall(r'(?:src|href)="([^"]+)"', html):
        if src.startswith("#"):
            continue
        assert src.startswith("/console/"), src
        assert httpx.get(service.url + src, timeout=30).status_code == 200, src


@pytest.mark.integration
def test_the_shipped_files_and_nothing_else(service: Service) -> None:
    for name in ("js/main.js", "app.css", "vendor/cytoscape.min.js"):
        r = httpx.get(f"{service.url}/console/{name}", timeout=30)
        assert r.status_code == 200 and r.headers["content-security-policy"] == CSP, name
        assert r.content == (CONSOLE / name).read_bytes()
    assert (
        httpx.get(service.url + "/console/js/main.js")
        .headers["content-type"]
        .startswith("text/javascript")
    )
    for probe in (
        "/console/../routes_console.py",
        "/console/%2e%2e/routes_console.py",
        "/console/nope.js",
        "/console/",
    ):
        r = httpx.get(service.url + probe, timeout=30)
        assert r.status_code in (401, 404), (probe, r.status_code)
    # Only reading is public: anything else at the console's paths needs a key like the API
    assert httpx.post(service.url + "/", timeout=30).status_code == 401


@pytest.mark.integration
def test_the_api_stays_keyed(service: Service) -> None:
    assert httpx.get(service.url + "/v1/namespaces", timeout=30).status_code == 401
    assert httpx.get(service.url + "/v1/key", timeout=30).status_code == 401


@pytest.mark.integration
def test_key_scope_tells_each_key_what_it_reaches(service: Service) -> None:
    want = {
        KEY_A: ([service.ns_a], True),
        KEY_A_READ: ([service.ns_a], False),
        KEY_B: ([service.ns_b], True),
        KEY_ALL: (None, True),
    }
    for key, (namespaces, write) in want.items():
        with service.client(key) as http:
            r = http.get("/v1/key")
        assert r.status_code == 200, r.text
        assert r.json() == {"namespaces": namespaces, "write": write}


@pytest.mark.integration
def test_the_overview_has_the_most_connected_concepts_and_the_embedder(service: Service) -> None:
    with service.client(KEY_A_READ) as http:
        r = http.get(f"/v1/namespaces/{service.ns_a}/overview", params={"limit": 5})
    assert r.status_code == 200, r.text
    got = r.json()
    top = got["top_concepts"]
    assert 0 < len(top) <= 5
    assert [c["passages"] for c in top] == sorted((c["passages"] for c in top), reverse=True)
    assert top[0]["passages"] >= 2 and all(c["name"] for c in top)
    # The sample corpus names Volkswagen in most of its passages
    assert "Volkswagen" in {c["name"] for c in top}
    assert got["embedding_model"] and got["embedding_dimensions"] > 0
    assert got["ingesting"] is False
    with service.client(KEY_B) as http:
        assert http.get(f"/v1/namespaces/{service.ns_a}/overview").status_code == 403
        assert http.get("/v1/namespaces/no-such-ns-here/overview").status_code == 403
    with service.client(KEY_ALL) as http:
        assert http.get("/v1/namespaces/no-such-ns-here/overview").status_code == 404


@pytest.mark.integration
def test_the_document_list_says_where_each_was_read_from(service: Service) -> None:
    with service.client(KEY_A_READ) as http:
        docs = http.get(f"/v1/namespaces/{service.ns_a}/documents").json()["documents"]
    assert len(docs) == 8
    for d in docs:
        assert d["source"] and Path(d["source"]).name == Path(d["id"]).name, d
        assert d["pages"] is None  # Markdown: no pages


@pytest.mark.parametrize("name", ["js/documents.js"])
def test_the_upload_filter_knows_the_services_file_types(name: str) -> None:
    """The page skips files of a type the service cannot read (a folder's stray files) with
    the service's own list of suffixes."""
    js = (CONSOLE / name).read_text(encoding="utf-8")
    listed = re.search(r"const SUFFIXES = \[([^\]]*)\]", js)
    assert listed, "documents.js lost its SUFFIXES list"
    assert set(re.findall(r'"(\.[a-z]+)"', listed.group(1))) == set(SUPPORTED_SUFFIXES)


def test_the_package_ships_every_console_file() -> None:
    on_disk = {str(p.relative_to(CONSOLE)) for p in CONSOLE.rglob("*") if p.is_file() and p.suffix}
    assert set(shipped()) == on_disk
    # A small page: the graph library is most of it
    assert sum(len(b) for n, b in shipped().items() if n.endswith((".js", ".css"))) <= 600_000


@pytest.mark.integration
def test_without_a_reader_the_console_still_retrieves_and_ask_says_why(
    base_settings: Settings, tenants: tuple[str, str], tmp_path: Path
) -> None:
    """A service whose Ollama is not there (being built on a first run): it is ready, the page
    loads, a spaCy-built namespace retrieves, and ask streams its passages, then says the reader
    is unavailable (503) instead of failing before them."""
    env = service_env(base_settings, *tenants)
    env.pop("TERAG_EXTRACTOR")  # the default, Ollama: new graphs would need it, queries not
    env.update(
        OLLAMA_HOST=f"http://127.0.0.1:{free_port()}",
        TERAG_LLM_RETRIES="1",
        TERAG_LLM_RETRY_BACKOFF_S="0",
    )
    with running_service(env, base_settings, tenants, tmp_path / "serve.log") as svc:
        assert httpx.get(svc.url + "/", timeout=30).status_code == 200
        body = {"question": "Who designed the Volkswagen Beetle?", "top_k": 3, "stream": True}
        with (
            svc.client(KEY_A_READ) as http,
            http.stream("POST", f"/v1/namespaces/{svc.ns_a}/ask", json=body) as r,
        ):
            assert r.status_code == 200
            lines = [json.loads(x) for x in r.iter_lines() if x.strip()]
    assert lines[0]["event"] == "passages" and len(lines[0]["passages"]) == 3
    assert lines[-1]["event"] == "error" and lines[-1]["status"] == 503, lines[-1]
    # which part is down, not where it lives (the service log has the address)
    assert "LLM is not answering" in lines[-1]["error"]["message"]
