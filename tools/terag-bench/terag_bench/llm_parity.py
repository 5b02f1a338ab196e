"""`terag bench-llm-parity`: the same Ollama model through its own API (`ollama:`) and through its
OpenAI-compatible `/v1` (`openai:`), at temperature 0, on the first N passages of a corpus: the
share of passages whose concept sets are identical, and the tokens each protocol counted."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from terag_bench.datasets import load_dataset
from terag_neo4j.config import Settings
from terag_neo4j.indexing.extraction.ollama_extractor import OllamaExtractor
from terag_neo4j.indexing.extraction.prompts import PASSAGE_PROMPTS
from terag_neo4j.indexing.loading import Passage
from terag_neo4j.llm import make_llm

log = logging.getLogger(__name__)


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-llm-parity",
        help="The same Ollama model through ollama: and openai: (/v1): identical concepts, tokens",
    )
    s.add_argument("dataset", help="dataset folder, or its name under $TERAG_DATASETS")
    s.add_argument("--passages", type=int, default=200, help="first N passages of the corpus")
    s.add_argument(
        "--start", type=int, default=0, help="skip the first S passages (a rerun goes on)"
    )
    s.add_argument(
        "--prompt",
        choices=list(PASSAGE_PROMPTS),
        default="v2",
        help="extraction prompt (json: structured replies, the server asked for its schema)",
    )
    s.add_argument("--out", type=Path, default=Path("bench") / "results")
    s.set_defaults(func=cmd_llm_parity)


def compare(
    settings: Settings, passages: list[Passage], path: Path | None = None, prompt: str = "v2"
) -> dict[str, Any]:
    """Both protocols on every passage, one passage at a time, alternating (a loaded machine
    slows both alike); with `path`, what is done so far is written there after each passage."""
    native = make_llm(settings.with_overrides(llm_temperature=0.0))
    compat = make_llm(
        settings.with_overrides(
            llm_temperature=0.0,
            llm_model=f"openai:{settings.llm_name}",
            llm_url=settings.ollama_host.rstrip("/") + "/v1",
        )
    )
    a, b = OllamaExtractor(native, prompt=prompt), OllamaExtractor(compat, prompt=prompt)
    same = 0
    differ: list[str] = []
    wall = {"ollama": 0.0, "openai": 0.0}
    # Per protocol: concepts found, and parse failures (a passage's warnings: no concepts, or
    # a structured reply that was not JSON)
    found = {"ollama": 0, "openai": 0}
    failures = {"ollama": 0, "openai": 0}
    concepts: dict[str, list[str]] = {}
    for p in passages:
        t = time.perf_counter()
        x = a.extract([p], "parity-ollama")[0]
        wall["ollama"] += time.perf_counter() - t
        t = time.perf_counter()
        y = b.extract([p], "parity-openai")[0]
        wall["openai"] += time.perf_counter() - t
        for side, e in (("ollama", x), ("openai", y)):
            found[side] += len(e.concepts)
            failures[side] += bool(e.warnings)
        concepts[p.id] = sorted(f"{c.type}: {c.name}" for c in x.concepts)
        if set(x.concepts) == set(y.concepts):
            same += 1
        else:
            differ.append(p.id)
        if path is not None:
            done = same + len(differ)
            part = summary(settings, done, same, differ, native, compat, wall)
            path.write_text(json.dumps(part | _counts(prompt, found, failures, concepts)))
    whole = summary(settings, len(passages), same, differ, native, compat, wall)
    return whole | _counts(prompt, found, failures, concepts)


def _counts(
    prompt: str, found: dict[str, int], failures: dict[str, int], concepts: dict[str, list[str]]
) -> dict[str, Any]:
    return {
        "prompt": prompt,
        "concepts": found,
        "parse_failures": failures,
        "ollama_concepts": concepts,
    }


def summary(
    settings: Settings,
    n: int,
    same: int,
    differ: list[str],
    native: Any,
    compat: Any,
    wall: dict[str, float],
) -> dict[str, Any]:
    ta, tb = native.ledger.totals(), compat.ledger.totals()
    return {
        "model": settings.llm_name,
        "passages": n,
        "identical_concept_sets": same,
        "identical_share": same / n if n else 0.0,
        "differ": differ,
        "tokens": {
            "ollama": [ta.input_tokens, ta.output_tokens, ta.uncounted],
            "openai": [tb.input_tokens, tb.output_tokens, tb.uncounted],
        },
        "wall_s": wall,
    }


def cmd_llm_parity(args: Any) -> int:
    settings = Settings()
    dataset = load_dataset(args.dataset)
    passages = [
        Passage(id=d.id, doc_id=d.id, position=0, title=d.title, text=d.text.strip())
        for d in dataset.documents
    ][args.start : args.start + args.passages]
    args.out.mkdir(parents=True, exist_ok=True)
    name = Path(args.dataset).name + ("" if args.prompt == "v2" else f"-{args.prompt}")
    path = args.out / f"llm-parity-{name}-from{args.start}.json"
    result = compare(settings, passages, path, args.prompt)
    path.write_text(json.dumps(result, indent=2), encoding="utf-8")  # the whole run
    ti, to = result["tokens"]["ollama"][:2]
    oi, oo = result["tokens"]["openai"][:2]
    print(
        f"{result['passages']} passages, identical concept sets "
        f"{result['identical_concept_sets']} ({result['identical_share']:.1%}); tokens in/out "
        f"ollama: {ti}/{to}, openai: {oi}/{oo} "
        f"(unknown calls {result['tokens']['openai'][2]}); concepts ollama/openai "
        f"{result['concepts']['ollama']}/{result['concepts']['openai']}, parse failures "
        f"{result['parse_failures']['ollama']}/{result['parse_failures']['openai']}; "
        f"written to {path}"
    )
    return 0
