"""The end of `terag demo`: what it just did (where, how much, the question and its answer) and
commands to try next, which must be ones the CLI accepts."""

from __future__ import annotations

import shlex

from terag_neo4j.cli import build_parser
from terag_neo4j.cli.commands import SAMPLE_DIR
from terag_neo4j.cli.demo import recap
from terag_neo4j.config import Settings
from terag_neo4j.indexing.report import IngestReport
from terag_neo4j.store.namespaces import NamespaceInfo

QUESTION = "Who designed the Volkswagen Beetle?"


def _recap(settings: Settings) -> str:
    report = IngestReport(run_id="r1", namespace="demo", extractor="ollama", model="qwen")
    report.documents_total = 8
    info = NamespaceInfo(name="demo", version=1, passages=23, concepts=141)
    answer = "Ferdinand Porsche.\nIt was designed in the 1930s."
    return recap(settings, info, report, QUESTION, answer, str(SAMPLE_DIR))


def test_the_recap_says_what_was_indexed_where_and_the_answer() -> None:
    settings = Settings().model_copy(update={"neo4j_http_port": 7485, "neo4j_bolt_port": 7704})
    text = _recap(settings)
    assert text.startswith("what just happened:")
    assert f"indexed 8 documents from {SAMPLE_DIR}" in text
    assert "namespace 'demo' on bolt://127.0.0.1:7704: 23 passages, 141 concepts" in text
    assert f"asked: {QUESTION}" in text and "answer: Ferdinand Porsche." in text
    assert "1930s" not in text  # one line of the answer
    assert "http://127.0.0.1:7485/browser/" in text
    assert len(text.splitlines()) <= 14


def test_the_next_commands_parse() -> None:
    text = _recap(Settings())
    commands = text.split("next:\n", 1)[1].splitlines()
    terag = [shlex.split(c.split("#", 1)[0]) for c in commands if c.strip().startswith("terag")]
    assert {argv[1] for argv in terag} >= {"ask", "retrieve", "index", "serve"}
    for argv in terag:
        args = build_parser(argv[1:]).parse_args(argv[1:])
        assert args.command == argv[1]
    assert any(c.strip().startswith("make test") for c in commands)


def test_a_configured_neo4j_is_named_and_no_local_browser_is_claimed() -> None:
    settings = Settings().model_copy(update={"neo4j_uri": "neo4j://db.example:7687"})
    text = _recap(settings)
    assert "on neo4j://db.example:7687" in text and "/browser/" not in text
