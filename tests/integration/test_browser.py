"""The Neo4j Browser kit (cypher/browser/): its queries on the real server, and a real headless
Chromium driving the Neo4j Browser that the local server serves.

The Chromium test needs Debian's `chromium` and `chromium-driver` and the `selenium` package; it
skips, saying which is missing, when they are not installed. Set TERAG_BROWSER_SCREENSHOT=path to
keep a copy of the screenshot (docs/browser.png is made that way).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from terag_neo4j.client import TeragClient
from tests.fixtures.chromium import headless_chrome

KIT = Path(__file__).resolve().parents[2] / "cypher" / "browser"
QUERIES = sorted(p.stem for p in KIT.glob("*.cypher"))
PARAM_LINE = re.compile(r"^//\s*:param\s+(\w+)\s*=>\s*(.+?)\s*$")

# The fill colours terag.grass gives each kind of node.
PASSAGE_FILL, ENTITY_FILL, CONCEPT_FILL = "#4C8EDA", "#F79767", "#8DCC93"


def kit_text(name: str) -> str:
    return (KIT / f"{name}.cypher").read_text(encoding="utf-8")


def header_params(text: str) -> dict[str, str]:
    """The `:param name => literal` lines of a kit file's header, literal as written."""
    out = {}
    for line in text.splitlines():
        m = PARAM_LINE.match(line.strip())
        if m:
            out[m.group(1)] = m.group(2)
    return out


def query_body(text: str) -> str:
    """The statement without its comment lines, on one line (what a person pastes and runs)."""
    return " ".join(
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.strip().startswith("//")
    )


def test_every_kit_query_declares_its_parameters() -> None:
    assert set(QUERIES) == {
        "concept_neighbourhood",
        "concept_passages",
        "concept_synonyms",
        "namespace_overview",
        "top_concepts",
        "why_retrieved",
    }
    for name in QUERIES:
        text = kit_text(name)
        used = set(re.findall(r"\$(\w+)", query_body(text)))
        declared = header_params(text)
        assert used == set(declared), f"{name}: uses {sorted(used)}, header has {sorted(declared)}"
        assert ";" not in query_body(text), f"{name}: one statement, no trailing ';'"


def test_grass_styles_passages_entities_and_concepts() -> None:
    grass = (KIT / "terag.grass").read_text(encoding="utf-8")
    # The Browser's GraSS parser knows no comments: a comment would become part of a selector.
    assert "/*" not in grass and "//" not in grass
    rules = dict(re.findall(r"^([\w.]+)\s*\{(.*?)^\}", grass, re.S | re.M))
    assert 'caption: "{title}"' in rules["node.Passage"]
    assert (
        'caption: "{name}"' in rules["node.Concept"] and 'caption: "{name}"' in rules["node.Entity"]
    )
    fills = {
        sel: m.group(1)
        for sel, body in rules.items()
        if sel.startswith("node.") and (m := re.search(r"(?m)^\s*color:\s*(#\w+)", body))
    }
    assert (fills["node.Passage"], fills["node.Entity"], fills["node.Concept"]) == (
        PASSAGE_FILL,
        ENTITY_FILL,
        CONCEPT_FILL,
    )
    # Entities also carry :Concept; the Browser applies matching rules in order, last wins.
    assert list(rules).index("node.Entity") > list(rules).index("node.Concept")


# ---------------------------------------------------------------------------- on the server


def kit_params(client: TeragClient, name: str) -> dict[str, Any]:
    """The header's :param values, evaluated by Neo4j as the Browser does, for this namespace."""
    params: dict[str, Any] = {}
    with client.store.session() as s:
        for key, literal in header_params(kit_text(name)).items():
            params[key] = s.run(f"RETURN {literal} AS v").single()["v"]  # type: ignore[index]
    params["namespace"] = client.settings.namespace
    return params


@pytest.mark.integration
@pytest.mark.parametrize("name", QUERIES)
def test_kit_query_explains_and_answers_on_the_sample(
    sample_client: TeragClient, name: str
) -> None:
    params = kit_params(sample_client, name)
    body = query_body(kit_text(name))
    with sample_client.store.session() as s:
        s.run("EXPLAIN " + body, **params).consume()
        rows = [r.data() for r in s.run(body, **params)]
    assert rows, f"{name} found nothing on the sample corpus with its header parameters"
    if name == "namespace_overview":
        assert rows[0]["passages"] == 8 and rows[0]["concepts"] > 8
    if name == "why_retrieved":
        assert {r["hops"] for r in rows} <= {1, 2}
        assert all(r["matched_concept"] in {"Beetle", "Volkswagen"} for r in rows)


@pytest.mark.integration
def test_why_retrieved_explains_a_real_retrieval(sample_client: TeragClient) -> None:
    """Every passage PageRank returns is reachable from the matched concepts within two hops."""
    res = sample_client.retrieve(
        "Where are the headquarters of the company that makes the Beetle?", top_k=3
    )
    assert res.mode == "pagerank"
    concepts = [m.name for m in res.matches]
    with sample_client.store.session() as s:
        for p in res.passages:
            rows = s.run(
                query_body(kit_text("why_retrieved")),
                namespace=sample_client.settings.namespace,
                concepts=concepts,
                passage=p.id,
                limit=100,
            ).data()
            assert rows, f"no route from {concepts} to {p.id}"
            assert {r["matched_concept"] for r in rows} <= set(concepts)


# ---------------------------------------------------------------------------- real Chromium


@pytest.fixture
def chrome(tmp_path: Path) -> Iterator[Any]:
    with headless_chrome(tmp_path / "chromium-profile", (1400, 1000)) as driver:
        yield driver


class BrowserSession:
    """A person at the Neo4j Browser: fills the connect form, types into the editor, runs."""

    def __init__(self, driver: Any, shots: Path) -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        self.d = driver
        self.wait = WebDriverWait(driver, 60)
        self.shots = shots

    def css(self, selector: str) -> Any:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec

        return self.wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, selector)))

    def connect(self, http_url: str, host_port: str, user: str, password: str) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys
        from selenium.webdriver.support.ui import Select

        self.d.get(http_url)
        self.css("[data-testid=boltaddress]")
        time.sleep(1)  # the form re-renders once the Browser has discovered the server
        Select(self.css("[data-testid=bolt-scheme-select]")).select_by_value("bolt://")
        addr = self.css("[data-testid=boltaddress]")
        addr.send_keys(Keys.CONTROL, "a")
        addr.send_keys(Keys.DELETE)
        addr.send_keys(host_port)
        self.css("[data-testid=username]").send_keys(user)
        self.css("[data-testid=password]").send_keys(password)
        self.css("[data-testid=connect]").click()
        self.wait.until(
            lambda d: any(
                "You are connected" in f.text
                for f in d.find_elements(By.CSS_SELECTOR, "[data-testid=frame]")
            )
        )

    def run(self, command: str) -> Any:
        """Type one command into the editor, run it, return its (newest) result frame."""
        from selenium.webdriver.common.by import By

        before = len(self.d.find_elements(By.CSS_SELECTOR, "[data-testid=frame]"))
        self.css("[data-testid=activeEditor]").click()
        # The editor takes one insertText like a paste; typing key by key (ActionChains) works
        # too but takes a second per 40 characters on a small machine.
        self.d.execute_script("document.execCommand('insertText', false, arguments[0])", command)
        self.css("[data-testid=editor-Run]").click()
        self.wait.until(
            lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=frame]")) > before,
            f"the Browser showed no result frame for {command[:60]!r}",
        )
        return self.d.find_elements(By.CSS_SELECTOR, "[data-testid=frame]")[0]

    def run_kit(self, name: str, **values: str) -> Any:
        """Paste a kit query as its header says: the :param lines first, then the query."""
        for key, literal in header_params(kit_text(name)).items():
            frame = self.run(f":param {key} => {values.get(key, literal)}")
            self.wait.until(
                _frame_says(frame, "Successfully set your parameters"),
                f"the Browser did not set :param {key}",
            )
        return self.run(query_body(kit_text(name)))

    def graph_nodes(self, frame: Any, at_least: int) -> list[tuple[str, str]]:
        """(fill colour, caption) of each node the graph view drew, once the layout settles."""
        from selenium.webdriver.common.by import By

        error = "[data-testid=cypherFrameErrorMessage]"
        self.wait.until(
            lambda d: (
                len(frame.find_elements(By.CSS_SELECTOR, "svg g.node")) >= at_least
                or frame.find_elements(By.CSS_SELECTOR, error)
            )
        )
        errors = frame.find_elements(By.CSS_SELECTOR, error)
        assert not errors, f"the query failed in the Browser: {errors[0].text}"
        time.sleep(3)  # let the force layout settle for the screenshot
        nodes = []
        for g in frame.find_elements(By.CSS_SELECTOR, "svg g.node"):
            fill = g.find_element(By.CSS_SELECTOR, "circle.b-outline").get_attribute("fill") or ""
            caption = " ".join(t.text for t in g.find_elements(By.CSS_SELECTOR, "text.caption"))
            nodes.append((fill.upper(), caption.strip()))
        return nodes


def _frame_says(frame: Any, text: str) -> Any:
    return lambda _driver: text in frame.text


def _caption_matches(caption: str, names: set[str]) -> bool:
    """The Browser wraps long captions over lines and truncates them with an ellipsis."""
    shown = " ".join(caption.replace("…", " ").split())
    return any(" ".join(n.split()).startswith(shown) or shown in " ".join(n.split()) for n in names)


@pytest.mark.integration
@pytest.mark.browser
def test_browser_renders_the_kit_graph(
    chrome: Any, sample_client: TeragClient, neo4j_conn: Any, tmp_path: Path
) -> None:
    http_url = getattr(neo4j_conn, "http_url", None)
    if not http_url:
        pytest.skip("the test Neo4j reports no HTTP address (an external NEO4J_URI): no Browser")
    import urllib.request

    with urllib.request.urlopen(http_url, timeout=10) as resp:  # the Browser app is served
        assert resp.status == 200 and b"Neo4j Browser" in resp.read()

    bolt_host_port = neo4j_conn.uri.split("://", 1)[1]
    ns = sample_client.settings.namespace
    session = BrowserSession(chrome, tmp_path)
    session.connect(http_url, bolt_host_port, neo4j_conn.user, neo4j_conn.password)
    grass = (KIT / "terag.grass").read_text(encoding="utf-8")
    session.run(":style " + " ".join(grass.split()))

    # The passages behind "Volkswagen" and their other concepts, as the database has them.
    params = kit_params(sample_client, "concept_passages")
    with sample_client.store.session() as s:
        rows = s.run(query_body(kit_text("concept_passages")), **params).data()
    titles = {n["title"] for r in rows for n in r["path"] if "title" in n}
    names = {
        n["name"]
        for r in rows
        for part in ("path", "other")
        for n in (r[part] or [])
        if "name" in n
    }
    assert titles and names

    frame = session.run_kit("concept_passages", namespace=f"'{ns}'")
    nodes = session.graph_nodes(frame, at_least=len(titles) + 2)
    passages = [c for f, c in nodes if f == PASSAGE_FILL]
    concepts = [c for f, c in nodes if f in (ENTITY_FILL, CONCEPT_FILL)]
    assert len(passages) == len(titles), nodes
    assert concepts and {f for f, _ in nodes} >= {PASSAGE_FILL, ENTITY_FILL, CONCEPT_FILL}, nodes
    assert all(_caption_matches(c, titles) for c in passages), (passages, titles)
    assert all(_caption_matches(c, names) for c in concepts), (concepts, names)

    # Why was the Wolfsburg passage retrieved for a Beetle question? (the picture in docs/operations.md)
    frame = session.run_kit("why_retrieved", namespace=f"'{ns}'")
    nodes = session.graph_nodes(frame, at_least=3)
    assert any(f == PASSAGE_FILL for f, _ in nodes) and any(f != PASSAGE_FILL for f, _ in nodes)
    shot = tmp_path / "browser.png"
    assert chrome.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    keep = os.environ.get("TERAG_BROWSER_SCREENSHOT")
    if keep:
        shutil.copyfile(shot, keep)
