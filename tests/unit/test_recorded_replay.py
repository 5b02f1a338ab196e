"""The recorded backend's replay (file parsing, no database): names become deduplicated concepts
when their passage is extracted, invalid names are dropped, a passage without a record warns."""

from __future__ import annotations

import json
from pathlib import Path

from terag_bench.recorded import RecordedExtractor

from terag_neo4j.core.documents import Passage


def test_replayed_names_become_deduplicated_concepts(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    rows = [
        {
            "passage_id": "p1",
            "model": "m",
            "named_entities": ["Berlin", "berlin", " ", "The Rhine"],
        },
        {"passage_id": "p2", "model": "m", "named_entities": []},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ex = RecordedExtractor(path)
    passages = [Passage(pid, pid, 0, "", "Berlin and the Rhine.") for pid in ("p1", "p2", "p3")]
    first, second, missing = ex.extract(passages, "run")
    assert [(c.type, c.name) for c in first.concepts] == [
        ("other", "Berlin"),
        ("other", "The Rhine"),
    ]
    assert [c.norm for c in first.concepts] == ["berlin", "rhine"]
    assert second.concepts == () and not second.warnings
    assert missing.concepts == () and "no recorded extraction" in missing.warnings[0]
    again = ex.extract(passages[:1], "run")[0]
    assert again.concepts == first.concepts and first.input_tokens > 0
