"""A local `ollama serve`: start it on a host (or a free port), stop it, and the pid file that lets
the CLI find the server it started."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from terag_neo4j.config import Settings
from terag_neo4j.local._process import pid_alive
from terag_neo4j.local.ollama_binary import ensure_binary
from terag_neo4j.local.ollama_home import (
    OllamaSetupError,
    bind_address,
    free_port,
    models_dir,
    normalize_host,
    pid_file,
    serve_log,
)

log = logging.getLogger(__name__)

START_TIMEOUT_S = 60.0


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


def is_reachable(host: str, timeout_s: float = 2.0) -> bool:
    try:
        response = httpx.get(f"{normalize_host(host)}/api/version", timeout=timeout_s)
    except httpx.HTTPError:
        return False
    return response.status_code == 200


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
    binary = ensure_binary(settings, host)
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
            "OLLAMA_HOST": bind_address(url),
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
            log.info("Ollama (%s) serving at %s (pid %d)", binary, url, process.pid)
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
