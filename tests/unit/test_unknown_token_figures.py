"""No LLM figure is a guess: where a server sent no token count, the ledger's summary, the
ingest report, the bench's per-query and per-passage tokens and their tables show `unknown`
(or `+?` beside a partial sum), never a 0 that stands in for the missing count. No LLM: the
calls and results are built as the ledger and the bench record them."""

from __future__ import annotations

from terag_bench import extraction_bench as eb
from terag_bench.outputs import detail_table
from terag_bench.runs import MethodRun, QuestionRun
from terag_bench.token_figures import pair, per, show, total

from terag_neo4j.indexing.report import IngestReport
from terag_neo4j.llm.ledger import LLMCall, Stage, TokenLedger


def _call(stage: Stage, tin: int | None, tout: int | None) -> LLMCall:
    return LLMCall(stage, "r", "m", tin, tout, 0.1, 1)


def test_the_ledger_summary_marks_partial_and_unknown_stages() -> None:
    ledger = TokenLedger()
    ledger.record(_call(Stage.QUERY_NER, None, None))
    ledger.record(_call(Stage.ANSWER, 40, 8))
    ledger.record(_call(Stage.ANSWER, None, None))
    lines = ledger.summary().splitlines()
    ner = next(line for line in lines if line.startswith("query_ner")).split()
    assert ner[3:7] == ["unknown"] * 4 and ner[7] == "1"
    answer = next(line for line in lines if line.startswith("answer")).split()
    assert answer[3:5] == ["40+?", "8+?"]
    total_row = next(line for line in lines if line.startswith("total")).split()
    assert total_row[3:5] == ["40+?", "8+?"] and total_row[-1] == "2"
    assert "unknown for 2 call(s)" in lines[-1]


def test_the_ingest_report_averages_known_counts_and_says_unknown_otherwise() -> None:
    report = IngestReport("r", "ns", "ollama", "m", extracted_fresh=4, tokens_unknown=1)
    report.input_tokens, report.output_tokens = 300, 30
    # three extractions were counted: 100 each, not 300 / 4 = 75
    assert (report.input_per_passage, report.output_per_passage) == (100.0, 10.0)
    assert "(over the extractions with known counts)" in report.summary()
    none_known = IngestReport("r", "ns", "ollama", "m", extracted_fresh=2, tokens_unknown=2)
    assert none_known.input_per_passage is None and none_known.output_per_passage is None
    assert "unknown per passage" in none_known.summary()
    assert none_known.to_record()["input_per_passage"] is None
    budget = IngestReport(
        "r", "ns", "ollama", "m", passages_total=10, llm_budget=0.5, tokens_unknown=1
    )
    assert budget.input_per_passage is None
    spacy = IngestReport("r", "ns", "spacy", "-")
    assert spacy.input_per_passage == 0.0  # no LLM call: nothing spent, known


def test_sums_and_means_are_unknown_as_soon_as_one_count_is() -> None:
    assert total([3, 4]) == 7 and total([3, None]) is None
    assert total([3, -1]) is None  # the caches' stored unknown
    assert per(None, 4) is None and per(8, 4) == 2.0 and per(0, 0) == 0.0
    assert show(None) == "unknown" and show(2.0) == "2.0"
    assert pair(1.0, None) == "unknown" and pair(1.0, 2.0) == "1.0/2.0"


def test_a_bench_method_with_an_uncounted_query_shows_unknown_tokens() -> None:
    run = MethodRun("terag", "terag")
    run.questions = [
        QuestionRun("q1", ["p"], {"R@2": 1.0, "R@5": 1.0}, 5.0, 30, 6),
        QuestionRun("q2", ["p"], {"R@2": 0.0, "R@5": 1.0}, 5.0, None, None),
    ]
    s = run.summary(index_tokens=(None, None))
    assert s["query_tokens"] == {
        "input": None,
        "output": None,
        "input_per_query": None,
        "output_per_query": None,
    }
    table = detail_table({"methods": {"terag": s}})
    row = table.splitlines()[-1]
    assert row.count("unknown") == 2 and "| 0.0/0.0 |" not in row
    counted = MethodRun("terag", "terag", questions=run.questions[:1]).summary((10, 2))
    assert counted["query_tokens"]["input_per_query"] == 30.0
    assert "| 30.0/6.0 | 10/2 |" in detail_table({"methods": {"terag": counted}})


def test_the_extraction_table_shows_unknown_tokens_per_passage() -> None:
    r = eb.Row("ollama", "m", 1, 10, 0.5, 0.5, 0.5, 4.0, 3.0, 0.1, None, None, 150.0, 0.5)
    line = eb.markdown([r]).splitlines()[-1]
    assert "| unknown | unknown |" in line and r.input_ratio is None
