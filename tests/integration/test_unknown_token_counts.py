"""A namespace built in part by extractions whose LLM server sent no token counts says so:
the listing and the stats count them apart (`tokens_unknown`) and their tokens stay out of the
sums, never added as 0 unannounced. The run without counts is recorded as the pipeline records
one (`IngestReport.to_record`) into the real Neo4j; the graph itself is built by spaCy."""

from __future__ import annotations

from terag_neo4j.client import TeragClient
from terag_neo4j.config import Settings
from terag_neo4j.indexing.report import IngestReport

from .conftest import SAMPLE


def test_namespace_listing_and_stats_count_extractions_of_unknown_count(
    base_settings: Settings, namespace: str
) -> None:
    with TeragClient(base_settings, namespace=namespace) as client:
        client.index([SAMPLE / "beetle.md"], progress=False)
        before = client.stats()
        assert before.tokens_unknown == 0
        report = IngestReport(
            "run-without-usage", namespace, "ollama", "openai:m", extracted_fresh=3
        )
        report.input_tokens, report.output_tokens, report.tokens_unknown = 120, 12, 2
        client.store.namespaces.record_run(namespace, report.to_record())
        listed = next(n for n in client.namespaces() if n.name == namespace)
        stats = client.stats()
    assert (listed.tokens_unknown, stats.tokens_unknown) == (2, 2)
    assert listed.input_tokens == before.input_tokens + 120 == stats.input_tokens
    run = next(r for r in stats.runs if r["run_id"] == "run-without-usage")
    # the run's mean is over the one counted extraction, not 120 / 3
    assert run["input_per_passage"] == 120.0 and run["tokens_unknown"] == 2
