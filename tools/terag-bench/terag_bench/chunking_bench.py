"""`terag bench-chunking`: seconds to split an export of one-line paragraphs into passages.

Each size is a text of N lines like "Line 123 of the export.", blank-line separated (N
paragraphs of one section) and not (one paragraph of N lines), split by `split_document` with
the default tokenizer, as `terag index` does. A text over the document character limit
(`inputs.MAX_DOCUMENT_CHARS`, which an ingest refuses before chunking) is measured with the
limit lifted: the number is the chunker's own speed. Writes `<out>/chunking.json`.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_OUT = Path("bench") / "results"
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
TARGET_S = 10.0  # for a million lines


def export_text(lines: int, separator: str) -> str:
    return separator.join(f"Line {i} of the export." for i in range(lines))


def measure(lines: int, separator: str, chunk_tokens: int, overlap: int) -> dict[str, Any]:
    from terag_neo4j.core import documents as inputs
    from terag_neo4j.core.documents import Document
    from terag_neo4j.indexing.loading import default_tokenizer, split_document

    text = export_text(lines, separator)
    tok = default_tokenizer()
    limit = inputs.MAX_DOCUMENT_CHARS
    over = len(text) > limit
    inputs.MAX_DOCUMENT_CHARS = max(limit, len(text))
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        passages = split_document(Document(id="export", text=text), chunk_tokens, overlap, tok)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        inputs.MAX_DOCUMENT_CHARS = limit
    return {
        "lines": lines,
        "blank_lines": separator == "\n\n",
        "chars": len(text),
        "over_char_limit": over,
        "passages": len(passages),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
    }


def run(sizes: list[int], chunk_tokens: int, overlap: int) -> dict[str, Any]:
    import os

    from terag_neo4j.core.documents import Document
    from terag_neo4j.indexing.loading import default_tokenizer, split_document

    split_document(Document(id="warm", text="Warm up."), chunk_tokens, overlap, default_tokenizer())
    rows = [
        measure(n, separator, chunk_tokens, overlap) for n in sizes for separator in ("\n\n", "\n")
    ]
    return {
        "chunk_tokens": chunk_tokens,
        "chunk_overlap": overlap,
        "load_average": list(os.getloadavg()),
        "target_s_per_million_lines": TARGET_S,
        "runs": rows,
    }


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-chunking",
        help="Splitting exports of 10k to 1M one-line paragraphs into passages: seconds",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument(
        "--lines",
        type=int,
        nargs="+",
        default=list(DEFAULT_SIZES),
        help="text sizes in lines (default 10000 100000 1000000)",
    )
    s.add_argument("--chunk-tokens", type=int, default=256, help="passage size (default 256)")
    s.add_argument("--chunk-overlap", type=int, default=32, help="passage overlap (default 32)")
    s.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})"
    )
    s.set_defaults(func=cmd_bench_chunking)


def cmd_bench_chunking(args: argparse.Namespace) -> int:
    from terag_bench.runinfo import write_result

    result = run(args.lines, args.chunk_tokens, args.chunk_overlap)
    path = write_result(args.out, "chunking", result)
    load = ", ".join(f"{x:.2f}" for x in result["load_average"])
    lines = [f"chunking one-line paragraphs (load average {load}):"]
    for r in result["runs"]:
        kind = "blank-line separated" if r["blank_lines"] else "one paragraph"
        lines.append(
            f"  {r['lines']:>9,} lines, {kind:<20} {r['chars']:>12,} chars -> "
            f"{r['passages']:>7,} passages in {r['wall_s']:>6} s ({r['cpu_s']} s CPU)"
            + (
                " [over the document limit, measured with it lifted]"
                if r["over_char_limit"]
                else ""
            )
        )
    lines.append(f"  wrote {path}")
    print("\n".join(lines))
    return 0
