"""`terag bench-job-progress`'s accounting: the text it sends (one-line paragraphs of a corpus's
words) and what it reads from the polls of a job (first move, gaps, the gap still open)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from terag_bench.job_progress import met, one_line_paragraphs, summarize


def test_the_text_has_the_lines_asked_about_the_size_asked(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("It was a dark and stormy night; the rain fell in torrents.")
    text = one_line_paragraphs(tmp_path, 1_000, 22_000)
    lines = text.split("\n\n")
    assert len(lines) == 1_000 and all(line and "\n" not in line for line in lines)
    assert 20_000 <= len(text) <= 30_000  # words are not cut: lines end past the size
    assert lines[0].startswith("It was a dark")


def poll(t: float, state: str, done: int, total: int, doc: str | None = None) -> dict[str, Any]:
    return {
        "t_s": t, "state": state, "passages_done": done, "passages_total": total, "document": doc,
    }  # fmt: skip


def test_moves_and_gaps_are_read_from_the_polls() -> None:
    polls = [
        poll(0.0, "queued", 0, 50),
        poll(1.0, "running", 0, 50),
        poll(4.0, "running", 0, 3000, "d"),  # chunked: the estimate turns into the count
        poll(9.0, "running", 32, 3000, "d"),
        poll(20.0, "running", 32, 3000, "d"),
        poll(21.0, "running", 90, 3000, "d"),
        poll(40.0, "running", 3000, 3000, "d"),
        poll(41.0, "succeeded", 3000, 3000),
    ]
    s = summarize(polls, None)
    assert (s["running_s"], s["chunked_s"], s["first_move_s"]) == (1.0, 4.0, 9.0)
    assert s["first_move_after_start_s"] == 8.0 and s["moves"] == 3
    assert s["gaps_s"] == [8.0, 12.0, 19.0] and s["max_gap_s"] == 19.0
    assert s["open_gap_at_end_s"] is None and s["documents_named"] == ["d"]
    assert met(s)


def test_a_job_still_running_counts_its_open_gap_and_one_with_no_move_misses() -> None:
    polls = [poll(0.0, "running", 0, 10), poll(5.0, "running", 5, 10), poll(50.0, "running", 5, 10)]
    s = summarize(polls, 50.0)
    assert s["open_gap_at_end_s"] == 45.0 and s["max_gap_s"] == 45.0 and not met(s)
    s = summarize([poll(0.0, "running", 0, 10), poll(60.0, "running", 0, 10)], None)
    assert s["first_move_s"] is None and s["max_gap_s"] is None and not met(s)
