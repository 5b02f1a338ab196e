"""What the Ollama build gets besides Go modules: the llama.cpp vendor/ headers the build support
(tools/ollama-build) ships.

Against the real pinned Ollama module source (`go mod download`, no build): its Makefile.sync names
the llama.cpp revision the shipped headers come from, and the two llama.cpp sources of that module
that include them compile (syntax only) with the include path the build hands to cgo.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import terag_ollama_build as build

from terag_neo4j.core import versions

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def source() -> Path:
    try:
        go = build.find_go()
    except build.OllamaBuildError as exc:
        pytest.skip(str(exc))
    return build.module_source(go, versions.OLLAMA)


def test_pinned_ollama_vendors_the_revision_of_the_shipped_headers(source: Path) -> None:
    assert build.llama_cpp_revision(source) == build.LLAMA_CPP_REVISION
    assert build.vendor_headers(source) == build.VENDOR_HEADERS
    # The module zip really lacks them (else shipping them would be pointless).
    assert not (source / "llama" / "llama.cpp" / "vendor").exists()


@pytest.mark.parametrize(
    "unit",
    [
        "llama/llama.cpp/tools/mtmd/mtmd-helper.cpp",
        "llama/llama.cpp/common/json-schema-to-grammar.cpp",
    ],
    ids=["stb+miniaudio", "nlohmann-json"],
)
def test_sources_that_include_them_compile(source: Path, unit: str) -> None:
    compiler = shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler")
    llama = source / "llama" / "llama.cpp"
    includes = [
        build.vendor_headers(source),
        llama / "include",
        llama / "common",
        llama / "tools" / "mtmd",
        source / "ml" / "backend" / "ggml" / "ggml" / "include",
    ]
    cmd = [
        compiler,
        "-std=c++17",
        "-fsyntax-only",
        *(f"-I{p}" for p in includes),
        str(source / unit),
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    # Without the shipped headers the same unit does not compile: the check above is not vacuous.
    bare = [c for c in cmd if c != f"-I{build.VENDOR_HEADERS}"]
    result = subprocess.run(bare, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode != 0 and "No such file" in result.stderr
