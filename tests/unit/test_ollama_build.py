"""Unit tests of the optional Ollama build support (tools/ollama-build): its cache layout, compiler
flags and the checks of the llama.cpp headers it ships (no Go, no build)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import terag_ollama_build as build
from terag_ollama_build import build as build_module

from terag_neo4j.config import Settings
from terag_neo4j.core import versions
from terag_neo4j.local import ollama as srv
from terag_neo4j.local import ollama_binary


def test_the_binary_is_cached_under_home_by_version_and_cpu(tmp_path: Path) -> None:
    settings = Settings().model_copy(update={"home": tmp_path})
    path = build.binary_path(srv.ollama_dir(settings), versions.OLLAMA)
    assert path.name == "ollama" and path.parent.name == f"cpu-{build.cpu_key()}"
    assert path.parent.parent == settings.home / "ollama" / srv.OLLAMA_VERSION
    assert "-mno-amx-tile" in build.cpu_flags() or "x86" not in build_module.platform.machine()
    if srv.on_path() is None and ollama_binary.shared_build(settings, build) is None:
        # an `ollama` on PATH, or the default home's build, would be used instead of a build
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
    def fail(cache: Path, version: str, progress: object = None) -> Path:
        raise build.OllamaBuildError("no Go here")

    monkeypatch.setattr(build, "ensure_binary", fail)
    monkeypatch.setattr(ollama_binary, "default_home", lambda: tmp_path / "no-build-here")
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


def test_a_build_under_the_default_home_is_used_by_other_homes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stand-in binary where the default home keeps its build: found by path, never run.
    monkeypatch.setattr(ollama_binary, "default_home", lambda: tmp_path / "default")
    shared = build.binary_path(tmp_path / "default" / "ollama", versions.OLLAMA)
    shared.parent.mkdir(parents=True)
    shared.write_text("#!/bin/sh\n")
    shared.chmod(0o755)

    def no_build(cache: Path, version: str, progress: object = None) -> Path:
        raise AssertionError("built although the default home has this version's build")

    monkeypatch.setattr(build, "ensure_binary", no_build)
    other = Settings().model_copy(update={"home": tmp_path / "other"})
    assert srv.build_binary(other) == shared
    assert srv.describe_binary(other).endswith("(built under the default home)") or srv.on_path()
    # The default home itself builds (here: refuses to), and another version is not reused.
    default = Settings().model_copy(update={"home": tmp_path / "default"})
    assert ollama_binary.shared_build(default, build) is None
    monkeypatch.setattr(versions, "OLLAMA", "0.0.1")
    assert ollama_binary.shared_build(other, build) is None


def test_the_headers_folder_is_fixed_so_go_reuses_compiled_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Go keys cached cgo compiles by CGO_CPPFLAGS, which names the headers' folder.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = build.shared_headers(build.VENDOR_HEADERS, versions.OLLAMA)
    assert first.is_relative_to(tmp_path / "cache") and not first.is_relative_to(
        build.VENDOR_HEADERS
    )
    checkout = tmp_path / "another-checkout"
    shutil.copytree(build.VENDOR_HEADERS, checkout)
    assert build.shared_headers(checkout, versions.OLLAMA) == first
    assert build.build_env(first, tmp_path)["CGO_CPPFLAGS"] == f"-I{first}"
    # A damaged copy is replaced, not used.
    (first / "stb" / "stb_image.h").write_text("changed")
    assert build.shared_headers(checkout, versions.OLLAMA) == first
    build.vendor_headers_checked(first)


def test_go_install_progress_names_each_compiled_source_file() -> None:
    lines = [
        "cd /root/go/pkg/mod/github.com/ollama/ollama@v0.17.4/llama/llama.cpp/src",
        "TERM='dumb' g++ -I . -fPIC -m64 -O2 -o $WORK/b042/_x003.o -c llama-model.cpp",
        "TERM='dumb' gcc -I $WORK/b042/ -O2 -o $WORK/b042/_x001.o -c $WORK/b042/_cgo_export.c",
        "/usr/local/go/pkg/tool/linux_amd64/compile -o $WORK/b042/_pkg_.a -p main ./x.go",
        "llama.cpp:12:5: warning: unused variable 'x' -c",
    ]
    steps = [m.group(1) for line in lines if (m := build_module.COMPILE.search(line))]
    assert steps == ["llama-model.cpp", "_cgo_export.c"]


def test_a_running_build_is_waited_for_not_started_again(tmp_path: Path) -> None:
    # Another "build" holds the lock, then leaves a binary: finished_build returns it after.
    import threading

    target = build.binary_path(tmp_path, versions.OLLAMA)
    held, done = threading.Event(), []

    def builder() -> None:
        with build_module._file_lock(target.parent / "build.lock"):
            held.set()
            threading.Event().wait(0.5)
            target.write_text("#!/bin/sh\n")
            target.chmod(0o755)

    thread = threading.Thread(target=builder)
    thread.start()
    held.wait(5)
    done.append(build.finished_build(tmp_path, versions.OLLAMA))
    thread.join()
    assert done == [target]
    assert build.finished_build(tmp_path / "none", versions.OLLAMA) is None


def test_make_starts_the_build_into_the_default_home() -> None:
    # The Makefile names the default home's build folder and the pinned version itself (it runs
    # before the environment that could ask terag): they must agree with terag's.
    import subprocess

    from terag_neo4j.config import default_home

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        ["make", "-s", "-C", str(root), "print-ollama-build"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == [str(default_home() / "ollama"), versions.OLLAMA]


def test_the_early_build_of_make_leaves_a_finished_build_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from terag_ollama_build import __main__ as early

    target = build.binary_path(tmp_path, versions.OLLAMA)
    target.parent.mkdir(parents=True)
    target.write_text("#!/bin/sh\n")

    def no_build(cache: Path, version: str, progress: object = None) -> Path:
        raise AssertionError("built again")

    monkeypatch.setattr(early, "ensure_binary", no_build)
    assert early.main([str(tmp_path), versions.OLLAMA]) == 0

    def fails(cache: Path, version: str, progress: object = None) -> Path:
        raise build.OllamaBuildError("no Go here")

    monkeypatch.setattr(early, "ensure_binary", fails)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert early.main([str(tmp_path / "empty"), versions.OLLAMA]) == 1
