"""The llama.cpp vendor/ headers that the Ollama build needs and Go's module zip leaves out.

Go module zips drop every folder named ``vendor``, and llama.cpp keeps three header-only libraries
there (nlohmann/json, stb_image, miniaudio). They ship in ``llama_vendor/``, copied from Ollama's
own tree at its v-tag, and are used only once shown to be the ones the Ollama source expects: the
llama.cpp revision its ``Makefile.sync`` names, and the pinned sha256 of each file. A bump of the
Ollama version without new headers therefore stops with a clear error instead of a broken build.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Final

from terag_ollama_build.errors import OllamaBuildError

VENDOR_HEADERS = Path(__file__).resolve().parent / "llama_vendor"

# The llama.cpp revision that the pinned Ollama (terag_neo4j.core.versions.OLLAMA) vendors:
# FETCH_HEAD in its Makefile.sync, checked before every build.
LLAMA_CPP_REVISION: Final = "ec98e2002"
LLAMA_CPP_VENDOR_SHA256: Final = {
    "miniaudio/miniaudio.h": "05b75871465913f1e3f5b05f0dcca1d487f3099e653477e071acc40317e68f38",
    "nlohmann/json.hpp": "aaf127c04cb31c406e5b04a63f1ae89369fccde6d8fa7cdda1ed4f32dfc5de63",
    "nlohmann/json_fwd.hpp": "fb6aa70cbece087f37ab4685c182b287c53be54f785f981b9db9d30d2d028b37",
    "stb/stb_image.h": "594c2fe35d49488b4382dbfaec8f98366defca819d916ac95becf3e75f4200b3",
}


def llama_cpp_revision(source: Path) -> str:
    """The llama.cpp revision an Ollama source tree vendors (FETCH_HEAD in its Makefile.sync)."""
    try:
        text = (source / "Makefile.sync").read_text(encoding="utf-8")
    except OSError as exc:
        raise OllamaBuildError(f"{source} has no readable Makefile.sync: {exc}") from exc
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "FETCH_HEAD":
            return value.strip()
    raise OllamaBuildError(f"{source / 'Makefile.sync'} names no FETCH_HEAD")


def vendor_headers(source: Path, headers: Path = VENDOR_HEADERS) -> Path:
    """The shipped vendor/ headers, once they are shown to be the ones Ollama's source expects."""
    revision = llama_cpp_revision(source)
    if revision != LLAMA_CPP_REVISION:
        raise OllamaBuildError(
            f"{source.name} vendors llama.cpp {revision}, but the headers in {headers} "
            f"are from {LLAMA_CPP_REVISION}; copy that revision's vendor/ headers there "
            "(see its README.md)"
        )
    return vendor_headers_checked(headers)


def vendor_headers_checked(headers: Path) -> Path:
    """`headers`, once each file in it is shown to have its pinned sha256."""
    for name, digest in LLAMA_CPP_VENDOR_SHA256.items():
        path = headers / name
        try:
            actual = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise OllamaBuildError(f"{path} is missing: reinstall terag-ollama-build") from exc
        if actual != digest:
            raise OllamaBuildError(f"{path} has sha256 {actual}, not the pinned {digest}")
    return headers
