"""`terag bench-documents`: reading a long PDF, in seconds and peak memory.

Generates a PDF of `--pages` pages of text (fpdf2, a development dependency), reads it with the
PDF reader and splits it into passages as `terag index` does; reports seconds per stage and
peak memory twice: Python allocations (tracemalloc, in a second pass, since tracing slows
Python down) and the process's peak RSS. With `--index` it then indexes the document into a
namespace of its own (dropped first) and reports that wall time and peak RSS too;
`--trace-index` indexes under tracemalloc for the peak Python memory of indexing. Writes
`<out>/documents_pdf_<pages>p.json`.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from terag_neo4j.errors import TeragError

log = logging.getLogger(__name__)

DEFAULT_OUT = Path("bench") / "results"
MEMORY_TARGET_MIB = 1024
WORDS = [
    "harbour",
    "lighthouse",
    "keeper",
    "river",
    "valley",
    "bridge",
    "council",
    "ledger",
    "survey",
    "merchant",
    "railway",
    "station",
    "archive",
    "charter",
    "mill",
    "quarry",
    "canal",
    "school",
    "parish",
    "market",
]


def write_long_pdf(path: Path, pages: int, paragraphs: int = 6) -> Path:
    """A PDF of `pages` pages, each a heading-like first line and `paragraphs` paragraphs of
    varied sentences (about 450 words a page, like a dense report)."""
    try:
        from fpdf import FPDF
    except ImportError as e:
        raise TeragError(
            "bench-documents writes its PDF with fpdf2: pip install 'terag-neo4j[eval]'"
        ) from e
    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    for n in range(1, pages + 1):
        pdf.add_page()
        pdf.multi_cell(0, 5, f"Section {n}\n")
        for p in range(paragraphs):
            sentences = [
                f"The {WORDS[(n + p + s) % len(WORDS)]} of district {n} was recorded in "
                f"{1800 + (n * 7 + p * 3 + s) % 200} by clerk number {p * 10 + s}."
                for s in range(6)
            ]
            pdf.multi_cell(0, 5, " ".join(sentences) + "\n")
    pdf.output(str(path))
    return path


def _read_and_split(path: Path, chunk_tokens: int, overlap: int) -> tuple[Any, int, float, float]:
    from terag_neo4j.indexing.loading import document_id, to_passages
    from terag_neo4j.indexing.readers import read_file

    t = time.perf_counter()
    (doc,) = read_file(path, document_id(path), str(path))
    read_s = time.perf_counter() - t
    t = time.perf_counter()
    n = sum(1 for _ in to_passages([doc], chunk_tokens, overlap))
    return doc, n, read_s, time.perf_counter() - t


def run(
    pages: int, chunk_tokens: int, overlap: int, index: bool, trace_index: bool = False
) -> dict[str, Any]:
    from terag_bench.runinfo import peak_rss_mib
    from terag_neo4j.indexing.loading import default_tokenizer

    with tempfile.TemporaryDirectory(prefix="terag-bench-documents-") as tmp:
        path = Path(tmp) / f"long_{pages}p.pdf"
        t = time.perf_counter()
        write_long_pdf(path, pages)
        generate_s = time.perf_counter() - t
        default_tokenizer()  # loaded before the clock starts: a model load is not reading
        doc, passages, read_s, split_s = _read_and_split(path, chunk_tokens, overlap)
        rss = peak_rss_mib()
        tracemalloc.start()
        _read_and_split(path, chunk_tokens, overlap)
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        result: dict[str, Any] = {
            "pages": pages,
            "pdf_bytes": path.stat().st_size,
            "text_chars": len(doc.text),
            "pages_read": len(doc.pages),
            "passages": passages,
            "chunk_tokens": chunk_tokens,
            "chunk_overlap": overlap,
            "generate_s": round(generate_s, 2),
            "read_s": round(read_s, 2),
            "read_pages_per_s": round(pages / read_s, 1) if read_s else None,
            "split_s": round(split_s, 2),
            "extract_s": round(read_s + split_s, 2),
            "peak_python_mib": round(traced_peak / 2**20, 1),
            "peak_rss_mib": round(rss, 1),
            "target_peak_mib": MEMORY_TARGET_MIB,
        }
        peaks = [result["peak_python_mib"]]
        if index or trace_index:
            result["index"] = _index(path, trace_index)
            peaks.append(result["index"].get("peak_python_mib", 0))
        # The target is on Python memory. RSS is reported beside it but not held to it: it
        # counts the interpreter, torch and the tokenizer (and, indexing, the spaCy and
        # embedding models), which a long PDF does not grow.
        result["within_target"] = max(peaks) <= MEMORY_TARGET_MIB
    return result


def _index(path: Path, trace: bool) -> dict[str, Any]:
    import contextlib

    from terag_bench.runinfo import peak_rss_mib
    from terag_neo4j.client import TeragClient
    from terag_neo4j.config import Settings
    from terag_neo4j.store import NamespaceNotFound

    settings = Settings()
    if settings.neo4j_uri is None:
        from terag_neo4j.local.neo4j_process import start

        start(settings)  # the managed local server: a no-op when it already runs
    with TeragClient(settings, namespace="bench_documents") as client:
        with contextlib.suppress(NamespaceNotFound):
            client.drop()
        if trace:
            tracemalloc.start()
        t = time.perf_counter()
        report = client.index([path], progress=False)
        wall = time.perf_counter() - t
        out: dict[str, Any] = {"wall_s": round(wall, 2), "traced": trace}
        if trace:
            out["peak_python_mib"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
            tracemalloc.stop()
        client.drop()
    return {**out, "passages": report.passages_total, "peak_rss_mib": round(peak_rss_mib(), 1)}


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-documents",
        help="Reading a generated long PDF: seconds and peak memory (tracemalloc and RSS)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("--pages", type=int, default=300, help="pages of the PDF (default 300)")
    s.add_argument("--chunk-tokens", type=int, default=256, help="passage size (default 256)")
    s.add_argument("--chunk-overlap", type=int, default=32, help="passage overlap (default 32)")
    s.add_argument(
        "--index", action="store_true", help="also index it (namespace bench_documents, dropped)"
    )
    s.add_argument(
        "--trace-index",
        action="store_true",
        help="index it with tracemalloc on: peak Python memory of indexing (slower, so its "
        "seconds are not a throughput)",
    )
    s.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})"
    )
    s.set_defaults(func=cmd_bench_documents)


def cmd_bench_documents(args: argparse.Namespace) -> int:
    from terag_bench.runinfo import write_result

    result = run(args.pages, args.chunk_tokens, args.chunk_overlap, args.index, args.trace_index)
    path = write_result(args.out, f"documents_pdf_{args.pages}p", result)
    lines = [
        f"{result['pages']}-page PDF ({result['pdf_bytes'] / 2**20:.1f} MiB, "
        f"{result['text_chars']:,} characters, {result['passages']} passages)",
        f"  read {result['read_s']} s ({result['read_pages_per_s']} pages/s), "
        f"split {result['split_s']} s",
        f"  peak Python memory {result['peak_python_mib']} MiB (tracemalloc), "
        f"peak RSS {result['peak_rss_mib']} MiB; target <= {MEMORY_TARGET_MIB} MiB: "
        + ("met" if result["within_target"] else "MISSED"),
    ]
    if "index" in result:
        ix = result["index"]
        traced = (
            f" (under tracemalloc), peak Python memory {ix['peak_python_mib']} MiB"
            if ix["traced"]
            else ""
        )
        lines.append(f"  indexed in {ix['wall_s']} s{traced}, peak RSS {ix['peak_rss_mib']} MiB")
    lines.append(f"  wrote {path}")
    print("\n".join(lines))
    return 0 if result["within_target"] else 1
