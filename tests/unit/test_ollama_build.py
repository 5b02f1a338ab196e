"""Unit tests of the optional Ollama build support (tools/ollama-build): its cache layout, compiler
flags and the checks of the llama.cpp headers it ships (no Go, no build)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import terag_ollama_build as build
from terag_ollama_build import build as build_module

from terag_neo4j.config import Settings
from terag_neo4j.server import ollama as srv
from terag_neo4j.server import versions


def test_the_binary_is_cached_under_home_by_version_and_cpu(tmp_path: Path) -> None:
    settings = Settings().model_copy(update={"home": tmp_path})
    path = build.binary_path(srv.ollama_dir(settings), versions.OLLAMA)
    assert path.name == "ollama" and path.parent.name == f"cpu-{build.cpu_key()}"
    assert path.parent.parent == settings.home / "ollama" / srv.OLLAMA_VERSION
    assert "-mno-amx-tile" in build.cpu_flags() or "x86" not in build_module.platform.machine()
    if srv.on_path() is None:  # an `ollama` on PATH would be used instead of a build
        assert srv.describe_binary(settings) == f"{path} (not built)"


def ollama_source(tmp_path: Path, revision: str) -> Path:
    """A stand-in for Ollama's module source: only the Makefile.sync line the check reads."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "Makefile.sync").write_text(
        f"UPSTREAM=https://example.invalid/llama.cpp.git\nWORKDIR=llama/vendor\nFETCH_HEAD={revision}\n"
    )
    return tmp_path


def test_shipped_vendor_headers_are_the_pinned_revision(tmp_path: Path) -> None:
    source = ollama_source(tmp_path, build.LLAMA_CPP_REVISION)
    include = build.vendor_headers(source)
    assert include == build.VENDOR_HEADERS
    for name in build.LLAMA_CPP_VENDOR_SHA256:
        assert (include / name).is_file()


def test_another_llama_cpp_revision_stops_the_build(tmp_path: Path) -> None:
    source = ollama_source(tmp_path, "0123456789")
    with pytest.raises(
        build.OllamaBuildError, match=r"vendors llama\.cpp 0123456789, but .* are from ec98e2002"
    ):
        build.vendor_headers(source)


def test_a_changed_header_stops_the_build(tmp_path: Path) -> None:
    source = ollama_source(tmp_path / "src", build.LLAMA_CPP_REVISION)
    headers = tmp_path / "include"
    shutil.copytree(build.VENDOR_HEADERS, headers)
    json_hpp = headers / "nlohmann" / "json.hpp"
    json_hpp.write_bytes(json_hpp.read_bytes() + b"\n")
    with pytest.raises(build.OllamaBuildError, match=r"json\.hpp has sha256"):
        build.vendor_headers(source, headers)
    json_hpp.unlink()
    with pytest.raises(build.OllamaBuildError, match=r"json\.hpp is missing"):
        build.vendor_headers(source, headers)


def test_makefile_sync_without_fetch_head_is_refused(tmp_path: Path) -> None:
    (tmp_path / "Makefile.sync").write_text("UPSTREAM=x\n")
    with pytest.raises(build.OllamaBuildError, match="names no FETCH_HEAD"):
        build.llama_cpp_revision(tmp_path)
    with pytest.raises(build.OllamaBuildError, match=r"no readable Makefile\.sync"):
        build.llama_cpp_revision(tmp_path / "missing")


def test_a_build_error_reaches_the_cli_as_a_setup_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(cache: Path, version: str) -> Path:
        raise build.OllamaBuildError("no Go here")

    monkeypatch.setattr(build, "ensure_binary", fail)
    settings = Settings().model_copy(update={"home": tmp_path})
    with pytest.raises(srv.OllamaSetupError, match="no Go here"):
        srv.build_binary(settings)


def test_the_build_needs_no_pip() -> None:
    # venvs made by uv have no pip: the Ollama build must not shell out to it.
    for path in Path(build.__file__).parent.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert '"pip"' not in text and "pip download" not in text, path


def test_the_build_support_needs_only_the_standard_library() -> None:
    # It installs next to terag wherever a user wants builds, and adds nothing but itself.
    import ast
    import sys

    for path in Path(build.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top == "terag_ollama_build", (path, name)
