"""OpenVINO: a sentence-transformers embedder exported once per model and precision under
TERAG_HOME (torch, the `st` extra, converts it), then run without torch."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from terag_neo4j.embeddings.base import EmbeddingError, Vectors, import_st
from terag_neo4j.embeddings.quiet import captured

log = logging.getLogger(__name__)

# Bumped whenever the export recipe changes, so stale exports are not reused.
EXPORT_VERSION = 1


_EXPORT_LOCK = threading.Lock()


_IMPORT_LOCK = threading.Lock()


def local_only(path: Path | str) -> dict[str, Any]:
    """Loader options for a model at `path`: a local folder never asks a model hub."""
    return {"local_files_only": True} if Path(path).is_dir() else {}


def openvino_available() -> bool:
    """Whether the package the `openvino` backend needs is installed."""
    return importlib.util.find_spec("openvino") is not None


def load_openvino() -> Any:
    """`import openvino` without its usage reporting.

    OpenVINO's converter sends usage events to Google Analytics (and writes a client id under
    ~/intel) unless a consent file there declines; when `openvino_telemetry` cannot be imported it
    uses a no-op stub instead. constraints.txt leaves that package out; this keeps it out of the
    process for installs that have it.
    """
    if "openvino" not in sys.modules:
        with _IMPORT_LOCK:
            hidden = sys.modules.get("openvino_telemetry")
            sys.modules["openvino_telemetry"] = None  # type: ignore[assignment]
            try:
                import openvino  # noqa: F401
            finally:
                if hidden is None:
                    del sys.modules["openvino_telemetry"]
                else:
                    sys.modules["openvino_telemetry"] = hidden
    return sys.modules["openvino"]


def st_dimensions(st: Any) -> int:
    # sentence-transformers 6 renamed get_sentence_embedding_dimension (the old name warns)
    get = getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
    return int(get() or 0)


def compile_encoder(path: Path, precision: str) -> Any:
    """An encoder compiled for the CPU in streams: each request runs on its own share of the
    cores, so a question takes one thread and leaves the rest to the database calls and other
    queries beside it, while a batch of passages fills every stream (`infer_sorted`). Against
    one request on every core: a question's CPU about two thirds, batches faster, one copy of
    the weights (docs/benchmarks.md)."""
    core = load_openvino().Core()
    config = {"INFERENCE_PRECISION_HINT": precision, "PERFORMANCE_HINT": "THROUGHPUT"}
    return core.compile_model(core.read_model(str(path)), "CPU", config)


class OpenVinoModel:
    """A sentence-transformers model converted to OpenVINO IR, run in bf16 where the CPU has it.

    Tokenises as sentence-transformers does (stripped text, optional lower case, truncation at the
    model's max_seq_length), sorts texts by token count so each batch pads little, and returns the
    L2-normalised pooled vectors the converted graph computes.
    """

    # A smaller batch pads less and stays in cache; 16 was the fastest measured (the numbers are
    # in docs/architecture.md). The embedding_batch setting caps it.
    MAX_BATCH = 16

    def __init__(self, model_xml: Path, meta: dict[str, Any], precision: str) -> None:
        from tokenizers import Tokenizer

        self._compiled = compile_encoder(model_xml, precision)
        tok = Tokenizer.from_file(meta["tokenizer"])
        tok.no_padding()
        tok.enable_truncation(int(meta["max_seq_length"]))
        self._tok = tok
        self._pad_id = int(meta["pad_id"])
        self._lower = bool(meta.get("do_lower_case", False))
        self.dimensions = int(meta["dimensions"])

    def encode(self, texts: list[str], batch_size: int) -> Vectors:
        prepared = [t.strip() for t in texts]
        if self._lower:
            prepared = [t.lower() for t in prepared]
        output = self._compiled.output(0)  # the converted graph pools and normalises itself
        return infer_sorted(
            self._compiled,
            self._tok.encode_batch(prepared),
            self.dimensions,
            min(batch_size, self.MAX_BATCH),
            self._pad_id,
            lambda result, mask: result[output],
        )


def infer_sorted(
    compiled: Any,
    encodings: Sequence[Any],
    dimensions: int,
    batch_size: int,
    pad_id: int,
    vectors: Callable[[Any, npt.NDArray[np.int64]], Any],
) -> Vectors:
    """Run a compiled encoder over tokenised texts, sorted by token count so each batch pads
    little; `vectors(result, attention_mask)` turns a batch's result into its rows. Batches run
    as concurrent requests, as many as the compiled model has streams."""
    lengths = np.array([len(e.ids) for e in encodings])
    order = np.argsort(-lengths, kind="stable")
    out = np.empty((len(encodings), dimensions), dtype=np.float32)
    names = {i.get_any_name() for i in compiled.inputs}

    def feeds(idx: npt.NDArray[np.int64]) -> tuple[dict[str, Any], npt.NDArray[np.int64]]:
        width = max(int(lengths[idx].max()), 1)
        ids = np.full((len(idx), width), pad_id, dtype=np.int64)
        mask = np.zeros((len(idx), width), dtype=np.int64)
        types = np.zeros((len(idx), width), dtype=np.int64)
        for row, i in enumerate(idx):
            n = int(lengths[i])
            ids[row, :n] = encodings[i].ids
            mask[row, :n] = 1
            types[row, :n] = encodings[i].type_ids
        given = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return {k: v for k, v in given.items() if k in names}, mask

    batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    if len(batches) <= 1:  # one request of its own: calls may be concurrent
        for idx in batches:
            inputs, mask = feeds(idx)
            out[idx] = vectors(compiled.create_infer_request().infer(inputs), mask)
        return out
    # One request per stream, each started as soon as its last batch is read back. Results are
    # read on this thread: AsyncInferQueue's callbacks ran on OpenVINO's threads, and when one
    # of them held the queue's last reference its destructor joined its own thread and aborted
    # the process ("Resource deadlock avoided"; 2 of 6 runs of tests/integration/test_embedder.py).
    jobs = max(1, int(compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")))
    requests = [compiled.create_infer_request() for _ in range(min(jobs, len(batches)))]
    running: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None] = [None] * len(
        requests
    )

    def collect(slot: int) -> None:
        batch = running[slot]
        if batch is not None:
            requests[slot].wait()
            out[batch[0]] = vectors(_Outputs(requests[slot]), batch[1])  # rows of its own
            running[slot] = None

    try:
        for n, idx in enumerate(batches):
            slot = n % len(requests)
            collect(slot)
            inputs, mask = feeds(idx)
            requests[slot].start_async(inputs)
            running[slot] = (idx, mask)
        for slot in range(len(requests)):
            collect(slot)
    finally:  # after an error, none is left running under the caller's arrays
        for slot, batch in enumerate(running):
            if batch is not None:
                with contextlib.suppress(Exception):
                    requests[slot].wait()
    return out


class _Outputs:
    """A finished request's outputs, indexed as `infer()`'s result is: by position or port."""

    def __init__(self, request: Any) -> None:
        self._request = request

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, int):
            return self._request.get_output_tensor(key).data
        return self._request.get_tensor(key).data


def _model_fingerprint(path: Path) -> str:
    """Identifies the model's files (names, sizes, mtimes) and the export recipe."""
    h = hashlib.sha256(f"v{EXPORT_VERSION}\x1f{path.resolve()}".encode())
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        st = f.stat()
        h.update(f"\x1f{f.relative_to(path)}:{st.st_size}:{int(st.st_mtime)}".encode())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Serialises exports across threads (one lock) and processes (flock on `path`)."""
    import fcntl

    with _EXPORT_LOCK, path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _export_openvino(model_path: Path, out_dir: Path) -> None:
    """Convert the sentence-transformers model at `model_path` to `out_dir/model.xml` (fp32 IR)."""
    import_st("sentence_transformers", f"converting the embedding model {model_path}")
    import torch
    from sentence_transformers import SentenceTransformer

    ov = load_openvino()
    st = SentenceTransformer(str(model_path), device="cpu", local_files_only=True).eval()
    first: Any = st[0]  # the Transformer module: its Hugging Face model and tokenizer
    tokenizer_file = Path(model_path) / "tokenizer.json"
    if not tokenizer_file.is_file():
        raise EmbeddingError(f"{model_path} has no tokenizer.json (a fast tokenizer is needed)")
    names = ["input_ids", "attention_mask"]
    if "token_type_ids" in first.tokenizer.model_input_names:
        names.append("token_type_ids")

    class Graph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.st = st

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor | None = None,
        ) -> torch.Tensor:
            features = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                features["token_type_ids"] = token_type_ids
            vec = self.st(features)["sentence_embedding"]
            return torch.nn.functional.normalize(vec, p=2.0, dim=1)

    example = {n: torch.ones(2, 8, dtype=torch.long) for n in names}
    with torch.no_grad():
        model = ov.convert_model(
            Graph().eval(),
            example_input=example,
            input=[(n, [-1, -1], ov.Type.i64) for n in names],
        )
    ov.save_model(model, str(out_dir / "model.tmp.xml"), compress_to_fp16=False)
    pad = st.tokenizer.pad_token_id
    meta = {
        "model": str(model_path),
        "backend": "openvino",
        "export_version": EXPORT_VERSION,
        "dimensions": st_dimensions(st),
        "max_seq_length": int(st.max_seq_length or first.tokenizer.model_max_length),
        "do_lower_case": bool(getattr(first, "do_lower_case", False)),
        "pad_id": int(pad if pad is not None else 0),
        "tokenizer": str(tokenizer_file),
        "inputs": names,
    }
    # An IR is two files read by the .xml's name: the .bin first, then the .xml, meta.json last
    # (its presence marks a complete export).
    os.replace(out_dir / "model.tmp.bin", out_dir / "model.bin")
    os.replace(out_dir / "model.tmp.xml", out_dir / "model.xml")
    (out_dir / "meta.tmp.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    os.replace(out_dir / "meta.tmp.json", out_dir / "meta.json")


def openvino_model(model_path: Path, home: Path) -> tuple[Path, dict[str, Any]]:
    """The cached OpenVINO conversion of a local sentence-transformers model, made on first use.

    Cached under `home/openvino/<model>-<fingerprint>/`; concurrent callers (threads or processes)
    wait for one conversion. Offline: everything comes from the model's folder.
    """
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in model_path.name) or "model"
    out_dir = home / "openvino" / f"{name}-{_model_fingerprint(model_path)}"
    meta_file = out_dir / "meta.json"
    if not meta_file.is_file():
        out_dir.mkdir(parents=True, exist_ok=True)
        with _file_lock(out_dir / ".lock"):
            if not meta_file.is_file():
                log.info("converting the embedder %s to OpenVINO (once)", model_path.name)
                started = time.monotonic()
                with captured() as noise:
                    _export_openvino(model_path, out_dir)
                noise.log(
                    log, f"converted the embedder to OpenVINO in {time.monotonic() - started:.0f}s"
                )
    return out_dir / "model.xml", json.loads(meta_file.read_text(encoding="utf-8"))


def openvino_precision() -> str:
    """`bf16` where the CPU computes it natively (AVX512_BF16, AMX), else `f32`."""
    caps = load_openvino().Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    return "bf16" if "BF16" in caps else "f32"
