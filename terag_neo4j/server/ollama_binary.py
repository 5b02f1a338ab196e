"""Which `ollama` binary to run: one on PATH, else one built from source by the optional build
support (the `terag-ollama-build` distribution in `tools/ollama-build/`, which `make` installs).

The library wheel carries no build code and no C/C++ headers, so without either a clear line says
what to do instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType

from terag_neo4j.config import Settings
from terag_neo4j.server import versions
from terag_neo4j.server.ollama_home import OllamaSetupError, normalize_host, ollama_dir

BUILD_SUPPORT = "terag_ollama_build"
NO_OLLAMA = (
    "no Ollama answers at {host} and there is no `ollama` to start: install Ollama and set "
    "OLLAMA_HOST to its server (or put `ollama` on PATH), or build it from source with "
    "`pip install ./tools/ollama-build` in a terag-neo4j checkout (`make` does it; needs Go)"
)


def on_path() -> Path | None:
    found = shutil.which("ollama")
    return Path(found) if found else None


def build_support() -> ModuleType | None:
    """The build support, if installed."""
    try:
        import terag_ollama_build
    except ImportError:
        return None
    return terag_ollama_build


def ensure_binary(settings: Settings, host: str | None = None) -> Path:
    """An `ollama` binary to serve with: the one on PATH, else the cached build (built now, in
    minutes, when missing)."""
    found = on_path()
    if found is not None:
        return found
    return build_binary(settings, host)


def build_binary(settings: Settings, host: str | None = None) -> Path:
    """The binary built from source by the build support (cached; built when missing)."""
    build = build_support()
    if build is None:
        raise OllamaSetupError(NO_OLLAMA.format(host=normalize_host(host or settings.ollama_host)))
    try:
        path: Path = build.ensure_binary(ollama_dir(settings), versions.OLLAMA)
    except build.OllamaBuildError as exc:
        raise OllamaSetupError(str(exc)) from exc
    return path


def describe_binary(settings: Settings) -> str:
    """Where `start` gets its binary from, for `terag ollama status`."""
    found = on_path()
    if found is not None:
        return f"{found} (on PATH)"
    build = build_support()
    if build is None:
        return "none (no `ollama` on PATH, no build support: `pip install ./tools/ollama-build`)"
    path: Path = build.binary_path(ollama_dir(settings), versions.OLLAMA)
    return f"{path} ({'built' if path.is_file() else 'not built'})"
