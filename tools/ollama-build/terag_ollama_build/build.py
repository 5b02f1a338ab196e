"""`go install` of a pinned Ollama version for the host CPU, cached by version and CPU features.

The build fetches nothing but Go modules (`go mod download` from the Go module proxy); the
llama.cpp headers the module zip lacks come from :mod:`terag_ollama_build.headers`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import platform
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from terag_ollama_build.errors import OllamaBuildError
from terag_ollama_build.headers import vendor_headers, vendor_headers_checked

log = logging.getLogger(__name__)

OLLAMA_MODULE = "github.com/ollama/ollama"
BUILD_TIMEOUT_S = 3600.0
# A command of `go install -x` that compiles one C/C++ file (cgo runs them one by one, and
# compiling llama.cpp is most of the build): its file is the progress callback's step.
COMPILE = re.compile(r"\s-c\s+(?:\S*/)?([\w.+-]+\.(?:c|cc|cpp))\s*$")


def tag(version: str) -> str:
    """`0.17.4` or `v0.17.4` -> the module version `v0.17.4`."""
    return "v" + version.removeprefix("v")


def binary_path(cache: Path, version: str) -> Path:
    """One binary per Ollama version and CPU feature set: it is built for the host CPU, so a cache
    shared by machines with different CPUs keeps one build for each."""
    return cache / tag(version) / f"cpu-{cpu_key()}" / "ollama"


def cpu_flags() -> str:
    """Compiler flags for the host CPU (GGML_NATIVE's equivalent).

    AMX is switched off: with it, ggml's CPU backend references AMX kernels that live in a
    directory cgo does not compile, and the link fails on Sapphire Rapids and newer.
    GGML_USE_CPU_REPACK is what llama.cpp's CMake build sets (GGML_CPU_REPACK=ON) and Ollama's
    cgo build leaves out: it lays Q4_0/Q4_K weights out for the AVX2/AVX-512 GEMM kernels, and
    made prompt evaluation 1.44x faster for Qwen2.5-1.5B Q4_K_M on a 2-core Xeon.
    """
    flags = "-O2 -march=native -DGGML_USE_CPU_REPACK"
    if platform.machine().lower() in {"x86_64", "amd64"}:
        flags += " -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    return flags


def cpu_key() -> str:
    """A short hash of the CPU's feature flags and the compiler flags, naming the build."""
    features = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            features = next((line for line in f if line.startswith(("flags", "Features"))), "")
    except OSError:
        pass
    words = " ".join(sorted(set(features.partition(":")[2].split())))
    text = f"{platform.machine()}|{words}|{cpu_flags()}"
    return hashlib.sha256(text.encode()).hexdigest()[:10]


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Serialise builds between processes (two pytest sessions, a CLI call and a test run)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def find_go() -> Path:
    found = shutil.which("go")
    candidates = [Path(found)] if found else []
    candidates.append(Path("/usr/local/go/bin/go"))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise OllamaBuildError(
        "The Go toolchain (>= 1.24) is needed to build Ollama and was not found on PATH or in "
        "/usr/local/go/bin; install Go, or point OLLAMA_HOST at a running Ollama server."
    )


def module_source(go: Path, version: str) -> Path:
    """Ollama's module source in the Go module cache (`go mod download`, from the proxy)."""
    module = f"{OLLAMA_MODULE}@{tag(version)}"
    cmd = [str(go), "mod", "download", "-json", module]
    try:
        result = subprocess.run(
            cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise OllamaBuildError(
            f"`go mod download` of Ollama exceeded {BUILD_TIMEOUT_S:.0f}s"
        ) from exc
    try:
        info = json.loads(result.stdout)
    except json.JSONDecodeError:
        info = {}
    directory = info.get("Dir") if isinstance(info, dict) else None
    if result.returncode != 0 or not directory:
        detail = (info.get("Error") if isinstance(info, dict) else None) or result.stderr.strip()
        raise OllamaBuildError(f"`go mod download {module}` failed: {str(detail)[-2000:]}")
    return Path(directory)


def build_env(include: Path, gobin: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "GOBIN": str(gobin),
            "CGO_ENABLED": "1",
            "CGO_CPPFLAGS": f"-I{include}",
            # llama.cpp builds for the host CPU by default (GGML_NATIVE); without it ggml falls
            # back to SSE2 kernels. The cache is keyed by CPU features, so native is safe.
            "CGO_CFLAGS": cpu_flags(),
            "CGO_CXXFLAGS": cpu_flags(),
        }
    )
    return env


def shared_headers(include: Path, version: str) -> Path:
    """`include` copied to one fixed folder per Ollama version under the user's cache.

    Go's build cache keys each cgo compile by its flags, and the headers' folder is in
    CGO_CPPFLAGS: from a fixed folder a second checkout (or a second TERAG_HOME) reuses every
    compiled llama.cpp object, where from the installed package's folder each checkout compiles
    llama.cpp again (minutes). The copy is checked again before use.
    """
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    target = root / "terag-ollama-build" / f"llama-vendor-{tag(version)}"
    try:
        return vendor_headers_checked(target)
    except OllamaBuildError:
        pass
    staging = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        shutil.copytree(include, staging)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(staging, target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        return include  # an unwritable cache only costs the reuse
    return vendor_headers_checked(target)


def finished_build(cache: Path, version: str) -> Path | None:
    """The binary in `cache`, once a build of it that is running now (another process holds its
    lock) has finished; None when there is none."""
    target = binary_path(cache, version)
    lock = target.parent / "build.lock"
    if lock.is_file():
        with lock.open("a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log.info("waiting for the Ollama build running in %s", target.parent)
                fcntl.flock(handle, fcntl.LOCK_EX)
            fcntl.flock(handle, fcntl.LOCK_UN)
    return target if target.is_file() and os.access(target, os.X_OK) else None


def ensure_binary(
    cache: Path, version: str, progress: Callable[[str, int], None] | None = None
) -> Path:
    """The cached Ollama binary; builds it with `go install` when it is missing (minutes).

    `progress` is called with each C/C++ file as the build compiles it, and how many it will
    compile in all (0: unknown). The count is also kept in a file beside the build's lock, for
    other processes to tell how far a build is (`build_progress`)."""
    target = binary_path(cache, version)
    if target.is_file() and os.access(target, os.X_OK):
        return target
    with _file_lock(target.parent / "build.lock"):
        if target.is_file() and os.access(target, os.X_OK):
            return target
        state = target.parent / PROGRESS_FILE
        count = 0

        def step(source: str, total: int) -> None:
            nonlocal count
            count += 1
            with contextlib.suppress(OSError):  # the count is only told, never needed
                state.write_text(json.dumps({"compiled": count, "total": total}))
            if progress is not None:
                progress(source, total)

        state.write_text(json.dumps({"compiled": 0, "total": 0}))
        try:
            _build(target, tag(version), step)
        finally:
            state.unlink(missing_ok=True)
        return target


PROGRESS_FILE = "build.progress"


def build_progress(cache: Path, version: str) -> tuple[int, int] | None:
    """(C/C++ files compiled, how many in all or 0) of a build of `version` that another process
    is running in `cache` now; None when none is (its lock is free, or it is not there)."""
    folder = binary_path(cache, version).parent
    lock = folder / "build.lock"
    if not lock.is_file():
        return None
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # held: a build is running
        else:
            fcntl.flock(handle, fcntl.LOCK_UN)
            return None
    try:
        state = json.loads((folder / PROGRESS_FILE).read_text())
        return int(state["compiled"]), int(state["total"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0, 0  # held, and nothing compiled yet (or the count is being written)


def _build(target: Path, version: str, progress: Callable[[str, int], None] | None = None) -> None:
    go = find_go()
    build_log = target.parent / "build.log"
    gobin = target.parent / "gobin"
    shutil.rmtree(gobin, ignore_errors=True)
    include = shared_headers(vendor_headers(module_source(go, version)), version)
    env = build_env(include, gobin)
    cmd = [
        str(go),
        "install",
        "-x",  # prints each command: every C/C++ file compiled is a step of the progress
        "-trimpath",
        "-ldflags",
        f"-s -w -X github.com/ollama/ollama/version.Version={version.removeprefix('v')}",
        f"{OLLAMA_MODULE}@{version}",
    ]
    log.info(
        "Building Ollama %s with `go install` (first run only, minutes); log: %s",
        version,
        build_log,
    )
    total = _planned_compiles(cmd, env) if progress is not None else 0
    started = time.monotonic()
    with build_log.open("w") as out:
        returncode = _run(cmd, env, out, progress, total)
    elapsed = time.monotonic() - started
    built = gobin / "ollama"
    if returncode != 0 or not built.is_file():
        tail = build_log.read_text(errors="replace")[-3000:]
        raise OllamaBuildError(
            f"`go install {OLLAMA_MODULE}@{version}` failed (exit {returncode}) "
            f"after {elapsed:.0f}s; log {build_log}:\n{tail}"
        )
    os.replace(built, target)
    shutil.rmtree(gobin, ignore_errors=True)
    log.info("Built Ollama %s in %.0fs -> %s", version, elapsed, target)


def _planned_compiles(cmd: list[str], env: dict[str, str]) -> int:
    """How many C/C++ files the build will compile (those Go's build cache lacks), from a dry
    run (`-n`, seconds); 0 when that fails."""
    dry = [cmd[0], cmd[1], "-n", *cmd[3:]]
    try:
        result = subprocess.run(dry, env=env, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in result.stderr.splitlines() if COMPILE.search(line))


def _run(
    cmd: list[str],
    env: dict[str, str],
    out: IO[str],
    progress: Callable[[str, int], None] | None,
    total: int = 0,
) -> int:
    """Run the build, its output into `out`, each compiled C/C++ file to `progress`."""
    with subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as proc:
        watchdog = threading.Timer(BUILD_TIMEOUT_S, proc.kill)
        watchdog.start()
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                out.write(line)
                step = COMPILE.search(line) if progress is not None else None
                if step is not None and progress is not None:
                    progress(step.group(1), total)
            returncode = proc.wait()
        finally:
            timed_out = not watchdog.is_alive()
            watchdog.cancel()
    if timed_out:
        raise OllamaBuildError(f"Ollama build exceeded {BUILD_TIMEOUT_S:.0f}s")
    return returncode
