"""Where the local Ollama lives: its folders under ``settings.home/ollama``, its host address, and
the error every Ollama set-up step raises."""

from __future__ import annotations

import socket
from pathlib import Path
from urllib.parse import urlsplit

from terag_neo4j.config import Settings
from terag_neo4j.core import versions
from terag_neo4j.errors import TeragError

OLLAMA_VERSION = f"v{versions.OLLAMA}"
PID_FILE = "server.json"


class OllamaSetupError(TeragError, RuntimeError):
    """Ollama could not be built, started or provisioned; the message says what to do."""


def ollama_dir(settings: Settings) -> Path:
    return settings.home / "ollama"


def serve_log(settings: Settings, port: int | None) -> Path:
    """Where `start` writes the log of the server it runs on `port`."""
    return ollama_dir(settings) / "logs" / f"serve-{port}.log"


def models_dir(settings: Settings) -> Path:
    return ollama_dir(settings) / "models"


def pid_file(settings: Settings) -> Path:
    return ollama_dir(settings) / PID_FILE


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


def bind_address(host: str) -> str:
    parts = urlsplit(normalize_host(host))
    return f"{parts.hostname}:{parts.port}"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
