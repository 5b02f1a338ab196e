"""The console's Why view in a real headless Chromium against a real `terag serve`: it draws the
walk's paths, so every passage drawn is joined to a concept of the question or marked a seed,
every edge is one of the walk's paths, and the summary counts the nodes drawn.

No reader LLM: the Why view retrieves only. Needs Debian's `chromium` and `chromium-driver` and
`selenium` (skips saying which is missing); TERAG_CONSOLE_SCREENSHOTS keeps the screenshots.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.fixtures.chromium import headless_chrome
from tests.service.conftest import KEY_A_READ, Service
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


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_why_view_draws_every_passage_joined_to_the_question(
    chrome: Any, service: Service, tmp_path: Path, question: str
) -> None:
    page = Page(chrome, service.url, tmp_path)
    page.sign_in(KEY_A_READ)
    page.tab("why")
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
    with service.client(KEY_A_READ) as http:
        want: set[tuple[str, str]] = set()
        for node in returned:
            pid = node[2:]
            w = http.get(
                f"/v1/namespaces/{service.ns_a}/passages/{quote(pid, safe='')}/why",
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
    page.shot("why-paths-" + str(QUESTIONS.index(question)))
