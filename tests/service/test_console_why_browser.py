"""The console's Why view in a real headless Chromium against a real `terag serve`: it draws the
walk's paths, so every passage drawn is joined to a concept of the question or marked a seed,
every edge is one of the walk's paths, and the summary counts the nodes drawn: on the sample and
on a 2Wiki question whose passages the walk reaches over bridges.

No reader LLM: the Why view retrieves only. Needs Debian's `chromium` and `chromium-driver` and
`selenium` (skips saying which is missing); TERAG_CONSOLE_SCREENSHOTS keeps the screenshots.
"""

from __future__ import annotations

import itertools
import re
import uuid
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from tests.fixtures.chromium import headless_chrome
from tests.fixtures.wiki import WIKI_QUESTION, wiki_documents
from tests.service.conftest import KEY_A_READ, KEY_ALL, Service
from tests.service.test_console_browser import Page

pytestmark = [pytest.mark.integration, pytest.mark.browser]

QUESTIONS = ["Who designed the Volkswagen Beetle?", "Where was Ferdinand Porsche born?"]
# The graph the page drew, read from Cytoscape's own registry on its container
GRAPH_JS = """
const cy = document.getElementById('why-graph')._cyreg.cy;
return {
  nodes: cy.nodes().map((n) => ({id: n.id(), classes: n.classes()})),
  edges: cy.edges().map((e) => ({source: e.source().id(), target: e.target().id(),
                                 classes: e.classes()})),
};
"""


@pytest.fixture
def chrome(tmp_path: Path) -> Any:
    with headless_chrome(tmp_path / "chromium-profile", (1280, 800)) as driver:
        yield driver


def explain(page: Page, question: str) -> dict[str, Any]:
    page.css("#why-question").clear()
    page.css("#why-question").send_keys(question)
    page.css("#why-form button[type=submit]").click()
    page.wait.until(lambda d: page.all("#why-summary"))
    graph: dict[str, Any] = page.d.execute_script(GRAPH_JS)
    return graph


def joined(graph: dict[str, Any]) -> dict[str, bool]:
    """Each passage node: whether an edge path leads to it from a question concept or a seed."""
    into = defaultdict(set)
    for e in graph["edges"]:
        into[e["target"]].add(e["source"])
    cls = {n["id"]: set(n["classes"]) for n in graph["nodes"]}

    def reached(node: str, seen: set[str]) -> bool:
        if "question" in cls[node] or "seed" in cls[node]:
            return True
        seen.add(node)
        return any(reached(s, seen) for s in into[node] if s not in seen)

    return {n: reached(n, set()) for n, c in cls.items() if "passage" in c}


def check_drawn(
    page: Page, service: Service, key: str, namespace: str, question: str
) -> dict[str, set[str]]:
    """Explain `question` in the Why view and check what it drew: five returned passages, each
    passage joined to the question or a seed, the list and summary matching the nodes, the edges
    the service's paths; the nodes drawn, with their classes."""
    graph = explain(page, question)
    cls = {n["id"]: set(n["classes"]) for n in graph["nodes"]}
    returned = [n for n, c in cls.items() if "returned" in c]
    assert len(returned) == 5, cls
    for node, ok in joined(graph).items():
        assert ok, f"{node} is neither a seed nor reached from a concept of the question"
    # Every node in the list is a node drawn, and the other way round
    listed = {b.get_attribute("data-node") for b in page.all("#why-nodes button")}
    assert listed == set(cls)
    # The summary's counts are the nodes drawn
    summary = page.css("#why-summary").text
    counts = {
        k: int(v)
        for v, k in re.findall(
            r"(\d+) (linked concept|seed passage|bridge node|passage)\(s\)", summary
        )
    }
    assert counts["linked concept"] == sum("question" in c for c in cls.values()), summary
    assert counts["seed passage"] == sum("seed" in c for c in cls.values()), summary
    assert counts["bridge node"] == sum("bridge" in c for c in cls.values()), summary
    assert counts["passage"] == len(returned), summary
    # The edges are the explanations' paths, as the service gives them
    with service.client(key) as http:
        want: set[tuple[str, str]] = set()
        for node in returned:
            pid = node[2:]
            w = http.get(
                f"/v1/namespaces/{quote(namespace, safe='')}/passages/{quote(pid, safe='')}/why",
                params={"question": question, "top_k": 5},
            ).json()
            for path in w["paths"]:
                keys = [
                    ("c:" + s["name"]) if s["kind"] == "concept" else ("p:" + s["id"])
                    for s in path["steps"]
                ]
                want |= set(itertools.pairwise(keys))
    drawn = {(e["source"], e["target"]) for e in graph["edges"]}
    assert drawn == want
    assert drawn, "no path drawn"
    return cls


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_why_view_draws_every_passage_joined_to_the_question(
    chrome: Any, service: Service, tmp_path: Path, question: str
) -> None:
    page = Page(chrome, service.url, tmp_path)
    page.sign_in(KEY_A_READ)
    page.tab("why")
    check_drawn(page, service, KEY_A_READ, service.ns_a, question)
    page.shot("why-paths-" + str(QUESTIONS.index(question)))


@pytest.fixture(scope="module")
def wiki_ns(base_settings: Settings) -> Iterator[str]:
    """A slice of 2Wiki indexed in a namespace of its own (the service reads it with KEY_ALL)."""
    docs = wiki_documents()
    ns = f"why-wiki-{uuid.uuid4().hex[:8]}"
    with TeragClient(base_settings, namespace=ns, cooccurrence="eager") as client:
        client.index(docs, progress=False)
        try:
            yield ns
        finally:
            client.drop(ns)


def test_a_2wiki_bridged_question_draws_every_passage_joined_to_it(
    chrome: Any, service: Service, tmp_path: Path, wiki_ns: str
) -> None:
    """The multi-hop case: passages the walk reached over a bridge ("Dharti") are drawn with the
    bridge, joined to the question."""
    from selenium.webdriver.support.ui import Select

    page = Page(chrome, service.url, tmp_path)
    page.sign_in(KEY_ALL)
    Select(page.css("#namespace")).select_by_value(wiki_ns)
    page.wait.until(lambda d: page.css("#namespace").get_attribute("value") == wiki_ns)
    page.tab("why")
    cls = check_drawn(page, service, KEY_ALL, wiki_ns, WIKI_QUESTION)
    assert any("bridge" in c for c in cls.values()), f"no bridge drawn: {cls}"
    page.shot("why-paths-2wiki")
