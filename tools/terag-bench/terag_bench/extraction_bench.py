"""Extraction quality: an extractor's concepts against reference entities on a fixed sample.

The reference is the recorded extraction of a dataset folder (``recorded_extractions.jsonl``,
HippoRAG's GPT-3.5 named entities). Names are compared by ``extraction.normalize_name``.

Per row (an extractor, a model, a prompt, a batch size) on the first N passages of the corpus:

- entity recall and precision: the extractor's named entities (concepts of an entity type,
  after the grounding filter the index applies) against the reference's names, micro-averaged;
  ``recall_all`` also counts reference names found among the document-level concepts;
- concepts and entities per passage (after grounding), and the share of extracted names that do
  not occur in their passage (``ungrounded``, before the filter: copies from the prompt's
  examples, inventions);
- input and output tokens per passage as the server counts them, the passage's own tokens
  (the passage alone, raw, through the same model's tokenizer), and passages per second;
- for batched prompts, the passages whose ``[n]`` section was missing from the answer.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import ollama

from terag_bench.datasets import RECORDED_FILE, load_dataset
from terag_bench.token_figures import per, show, total
from terag_neo4j.config import Settings
from terag_neo4j.indexing.extraction import (
    Concept,
    SpacyExtractor,
    grounded,
    normalize_name,
)
from terag_neo4j.indexing.extraction.json_reply import is_whole_json
from terag_neo4j.indexing.extraction.prompts import PASSAGE_PROMPTS
from terag_neo4j.indexing.loading import InputNotFound, Passage, jsonl_records
from terag_neo4j.llm import Stage, make_llm

log = logging.getLogger(__name__)


@dataclass
class Row:
    extractor: str  # spacy | ollama
    model: str
    batch: int
    passages: int
    entity_recall: float
    entity_precision: float
    recall_all: float
    concepts_per_passage: float
    entities_per_passage: float
    ungrounded: float
    input_tokens_per_passage: float | None  # None: a call's count unknown
    output_tokens_per_passage: float | None
    passage_tokens: float | None
    passages_per_s: float
    missing_sections: int = 0
    # Parse failures: passages whose answer gave no concepts (after grounding), and answers of
    # a structured prompt that were not whole JSON (read leniently)
    no_concepts: int = 0
    not_json: int = 0
    prompt: str = "v2"  # v2: the index's prompt (full type names, two examples); compact
    wall_s: float = 0.0
    samples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def input_ratio(self) -> float | None:
        """Input tokens per passage over the passage's own tokens (1.0 = no prompt overhead)."""
        if not self.passage_tokens or self.input_tokens_per_passage is None:
            return None
        return self.input_tokens_per_passage / self.passage_tokens


def sample_passages(folder: str | Path, n: int) -> tuple[list[Passage], dict[str, set[str]]]:
    """The first `n` corpus passages that have a reference extraction, and those references."""
    dataset = load_dataset(folder)
    path = dataset.path / RECORDED_FILE
    if not path.is_file():
        raise InputNotFound(f"{path}: the extraction benchmark needs reference extractions")
    reference: dict[str, set[str]] = {}
    with path.open(encoding="utf-8") as handle:
        for _, rec in jsonl_records(handle, path):
            names = {normalize_name(str(e)) for e in rec.get("named_entities") or ()}
            reference[str(rec["passage_id"])] = {n for n in names if n}
    passages = [
        Passage(id=d.id, doc_id=d.id, position=0, title=d.title, text=d.text.strip())
        for d in dataset.documents
        if d.id in reference
    ][:n]
    return passages, reference


@dataclass(frozen=True)
class Scores:
    entity_recall: float
    entity_precision: float
    recall_all: float
    concepts_per_passage: float
    entities_per_passage: float
    ungrounded: float


def score(
    passages: Sequence[Passage],
    raw: Sequence[Sequence[Concept]],
    reference: dict[str, set[str]],
) -> Scores:
    """Micro-averaged scores of raw (ungrounded) extractions; grounding is applied here."""
    hits = hits_all = ref_total = pred_total = raw_total = raw_out = concepts = 0
    for passage, found in zip(passages, raw, strict=True):
        kept = grounded(found, passage.content)
        raw_total += len(found)
        raw_out += len(found) - len(kept)
        entities = {c.norm for c in kept if c.is_entity}
        everything = {c.norm for c in kept}
        ref = reference.get(passage.id, set())
        hits += len(entities & ref)
        hits_all += len(everything & ref)
        ref_total += len(ref)
        pred_total += len(entities)
        concepts += len(kept)
    n = max(1, len(passages))
    return Scores(
        entity_recall=hits / ref_total if ref_total else 0.0,
        entity_precision=hits / pred_total if pred_total else 0.0,
        recall_all=hits_all / ref_total if ref_total else 0.0,
        concepts_per_passage=concepts / n,
        entities_per_passage=pred_total / n,
        ungrounded=raw_out / raw_total if raw_total else 0.0,
    )


def run_spacy(passages: Sequence[Passage], reference: dict[str, set[str]]) -> Row:
    extractor = SpacyExtractor()
    started = time.perf_counter()
    results = extractor.extract(passages, run_id="bench-extraction")
    wall = time.perf_counter() - started
    s = score(passages, [r.concepts for r in results], reference)
    return Row(
        "spacy", extractor.model, 1, len(passages), **asdict(s),
        input_tokens_per_passage=0.0, output_tokens_per_passage=0.0, passage_tokens=None,
        passages_per_s=len(passages) / wall if wall else 0.0, wall_s=wall,
    )  # fmt: skip


_OWN_TOKENS: dict[tuple[str, str, tuple[str, ...]], float] = {}


def passage_tokens(settings: Settings, model: str, passages: Sequence[Passage]) -> float:
    """Mean tokens of the passages alone in `model`'s tokenizer: a raw prompt, one output token.

    Counted once per server, model and sample in a process.
    """
    key = (settings.ollama_host, model, tuple(p.hash for p in passages))
    if key not in _OWN_TOKENS:
        _OWN_TOKENS[key] = _count_tokens(settings, model, passages)
    return _OWN_TOKENS[key]


def _count_tokens(settings: Settings, model: str, passages: Sequence[Passage]) -> float:
    client = ollama.Client(host=settings.ollama_host, timeout=settings.llm_timeout_s)
    total = 0
    for p in passages:
        response = client.generate(
            model=model,
            prompt=p.content,
            raw=True,
            options={"num_predict": 1, "num_thread": settings.llm_num_thread},
        )
        total += response.prompt_eval_count or 0
    return total / max(1, len(passages))


def run_ollama(
    settings: Settings,
    model: str,
    batch: int,
    passages: Sequence[Passage],
    reference: dict[str, set[str]],
    *,
    prompt: str = "v2",
    count_passage_tokens: bool = True,
) -> Row:
    """One model, prompt and batch size with the index's parser; answers kept ungrounded."""
    llm = make_llm(settings.with_overrides(llm_model=model))
    try:
        llm.check_model()
        groups = [list(passages[i : i + batch]) for i in range(0, len(passages), batch)]
        spec = PASSAGE_PROMPTS[prompt]
        prompts = [spec.messages(g) for g in groups]
        cap = settings.llm_max_tokens
        started = time.perf_counter()
        completions = llm.map(
            prompts, stage=Stage.EXTRACTION, run_id="bench-extraction",
            items_per_prompt=batch, max_tokens=cap * batch, format=spec.format(groups[0]),
        )  # fmt: skip
        wall = time.perf_counter() - started
    finally:
        llm.close()
    raw: list[tuple[Concept, ...]] = []
    missing = no_concepts = not_json = 0
    samples: list[dict[str, Any]] = []
    for group, comp in zip(groups, completions, strict=True):
        truncated = comp.done_reason == "length"
        parsed = spec.parse(comp.text, len(group), truncated)
        missing += sum(1 for cs in parsed if cs is None)
        no_concepts += sum(
            1 for p, cs in zip(group, parsed, strict=True) if not grounded(cs or (), p.content)
        )
        not_json += spec.format(group) is not None and not is_whole_json(comp.text)
        raw.extend(cs or () for cs in parsed)
        if len(samples) < 3:
            samples.append({"passages": [p.id for p in group], "answer": comp.text})
    s = score(passages, raw, reference)
    n = len(passages)
    own = passage_tokens(settings, model, passages) if count_passage_tokens else None
    return Row(
        "ollama", model, batch, n, **asdict(s),
        input_tokens_per_passage=per(total(c.input_tokens for c in completions), n, 6),
        output_tokens_per_passage=per(total(c.output_tokens for c in completions), n, 6),
        passage_tokens=own, passages_per_s=n / wall if wall else 0.0,
        missing_sections=missing, no_concepts=no_concepts, not_json=not_json,
        wall_s=wall, samples=samples, prompt=prompt,
    )  # fmt: skip


HEADER = (
    "| extractor | prompt | batch | passages | entity R | entity P | R (all) | concepts/p | ungrounded "
    "| in tok/p | out tok/p | passage tok | in/passage | passages/s | missing [n] | no concepts | not JSON |"
)


def markdown(rows: Sequence[Row]) -> str:
    lines = [HEADER, "|" + "---|" * 17]
    for r in rows:
        spacy = r.extractor == "spacy"
        name, prompt = ("spaCy", "-") if spacy else (r.model, r.prompt)
        ratio = f"{r.input_ratio:.2f}" if r.input_ratio is not None else "-"
        own = f"{r.passage_tokens:.0f}" if r.passage_tokens else "-"
        lines.append(
            f"| {name} | {prompt} | {r.batch} | {r.passages} | {r.entity_recall:.1%} | "
            f"{r.entity_precision:.1%} | {r.recall_all:.1%} | {r.concepts_per_passage:.1f} | "
            f"{r.ungrounded:.1%} | {show(r.input_tokens_per_passage, '.0f')} | "
            f"{show(r.output_tokens_per_passage)} | {own} | {ratio} | {r.passages_per_s:.2f} | "
            f"{r.missing_sections} | {r.no_concepts} | {r.not_json} |"
        )
    return "\n".join(lines)


def write(rows: Sequence[Row], out: Path, dataset: str, meta: dict[str, Any]) -> list[Path]:
    """Add the rows to `out/extraction_<dataset>.json` (same row key replaced) and the table."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"extraction_{dataset}.json"
    old: list[dict[str, Any]] = []
    if path.is_file():
        old = json.loads(path.read_text()).get("rows", [])
    fresh = [asdict(r) for r in rows]

    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        return (r["extractor"], r["model"], r.get("prompt"), r["batch"], r["passages"])

    keys = {key(r) for r in fresh}
    kept = [r for r in old if key(r) not in keys]
    merged = kept + fresh
    path.write_text(json.dumps({"dataset": dataset, **meta, "rows": merged}, indent=2))
    table = out / f"extraction_{dataset}.md"
    table.write_text(markdown([Row(**r) for r in merged]) + "\n")
    return [path, table]


# --------------------------------------------------------------------------- CLI

EPILOG = """\
examples:
  terag bench-extraction musique_hipporag_train100 --spacy-only
  terag bench-extraction musique_hipporag_train100 -m terag-qwen2.5-coder-0.5b -b 1 4 --llm-passages 50

Models are Ollama model names: the catalog's (`terag ollama models`, created on first use) or any
model already on the server. Results go to OUT/extraction_<dataset>.json and .md (rows with the
same extractor, model, batch and passage count are replaced, others kept).
"""


def register_cli(subparsers: Any) -> None:
    import argparse

    s = subparsers.add_parser(
        "bench-extraction",
        help="Entity recall/precision, grounding and tokens per passage of extractors",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("dataset", help="dataset folder with recorded_extractions.jsonl, or its name")
    s.add_argument("-m", "--model", action="append", default=[], help="Ollama model (repeatable)")
    s.add_argument("-b", "--batch", nargs="+", type=int, default=[1], help="batch sizes")
    s.add_argument(
        "-p",
        "--prompt",
        nargs="+",
        choices=list(PASSAGE_PROMPTS),
        default=["v2"],
        help="v2: the index's default prompt; compact: type codes, names grouped by type; "
        "lean: untyped names, one `n: name; name` line per passage; json: v2 answered in "
        "JSON the server is asked to hold to (its schema)",
    )
    s.add_argument("--passages", type=int, default=200, help="sample size for spaCy (200)")
    s.add_argument(
        "--llm-passages", type=int, default=50, help="first N of the sample for LLM rows (50)"
    )
    s.add_argument("--spacy-only", action="store_true", help="no LLM rows")
    s.add_argument("--no-spacy", action="store_true", help="no spaCy row")
    s.add_argument(
        "--no-passage-tokens",
        action="store_true",
        help="skip counting the passages' own tokens (one raw call per passage)",
    )
    s.add_argument("--out", type=Path, default=Path("bench") / "results")
    s.set_defaults(func=cmd_bench_extraction)


def cmd_bench_extraction(args: Any) -> int:
    from terag_neo4j.local import ollama as local

    settings = Settings()
    passages, reference = sample_passages(args.dataset, args.passages)
    dataset = Path(args.dataset).name
    rows: list[Row] = []
    if not args.no_spacy:
        rows.append(run_spacy(passages, reference))
        log.info("spaCy: %d passages in %.1fs", len(passages), rows[-1].wall_s)
    models = [] if args.spacy_only else args.model or [settings.llm_model]
    for model in models:
        local.ensure_model(settings, name=model)
        for prompt in args.prompt:
            for batch in args.batch:
                row = run_ollama(
                    settings, model, batch, passages[: args.llm_passages], reference,
                    prompt=prompt, count_passage_tokens=not args.no_passage_tokens,
                )  # fmt: skip
                log.info(
                    "%s %s batch %d: %d passages in %.1fs",
                    model, prompt, batch, row.passages, row.wall_s,
                )  # fmt: skip
                rows.append(row)
                write([row], args.out, dataset, _meta(settings))
    paths = write(rows, args.out, dataset, _meta(settings))
    print(markdown(rows))
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def _meta(settings: Settings) -> dict[str, Any]:
    return {
        "reference": "recorded_extractions.jsonl (GPT-3.5 named entities)",
        "num_thread": settings.llm_num_thread,
        "concurrency": settings.llm_concurrency,
        "max_tokens_per_passage": settings.llm_max_tokens,
    }
