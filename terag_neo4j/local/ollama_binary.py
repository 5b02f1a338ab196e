"""Which `ollama` binary to run: one on PATH, else one built from source by the optional build
support (the `terag-ollama-build` distribution in `tools/ollama-build/`, which `make` installs).

The library wheel carries no build code and no C/C++ headers, so without either a clear line says
what to do instead.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from types import ModuleType

from tqdm import tqdm

from terag_neo4j.config import Settings, default_home
from terag_neo4j.core import versions
from terag_neo4j.local.ollama_home import OllamaSetupError, normalize_host, ollama_dir

log = logging.getLogger(__name__)

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


def shared_build(settings: Settings, build: ModuleType) -> Path | None:
    """The build under the default home, when `settings.home` is another one and it has it (or is
    building it): its path names the Ollama version and the CPU build, so it is the binary this
    home would build."""
    if settings.home.resolve() == default_home().resolve():
        return None
    # A build running there (the one `make` starts first) is waited for, not started again.
    shared: Path | None = build.finished_build(default_home() / "ollama", versions.OLLAMA)
    return shared


def build_binary(settings: Settings, host: str | None = None) -> Path:
    """The binary built from source by the build support: cached under the home (built now, in
    minutes, when missing), or the same build already made under the default home."""
    build = build_support()
    if build is None:
        raise OllamaSetupError(NO_OLLAMA.format(host=normalize_host(host or settings.ollama_host)))
    # This home's build, or one running (the build `make` starts first) once it is done.
    own: Path | None = build.finished_build(ollama_dir(settings), versions.OLLAMA)
    if own is not None:
        return own
    shared = shared_build(settings, build)
    if shared is not None:
        log.info("using the Ollama %s build in %s", versions.OLLAMA, shared.parent)
        return shared
    bar = tqdm(desc=f"building Ollama {versions.OLLAMA} (once)", unit=" files", mininterval=2)

    def compiled(source: str, total: int) -> None:
        if total and bar.total != total:
            bar.total = total
        bar.set_postfix_str(source, refresh=False)
        bar.update()

    try:
        path: Path = build.ensure_binary(ollama_dir(settings), versions.OLLAMA, progress=compiled)
    except build.OllamaBuildError as exc:
        raise OllamaSetupError(str(exc)) from exc
    finally:
        bar.close()
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
    shared: Path = build.binary_path(default_home() / "ollama", versions.OLLAMA)
    # A status does not wait for a build running there.
    elsewhere = settings.home.resolve() != default_home().resolve()
    if not path.is_file() and elsewhere and shared.is_file():
        return f"{shared} (built under the default home)"
    return f"{path} ({'built' if path.is_file() else 'not built'})"


def build_running(settings: Settings) -> str | None:
    """How far an Ollama build running now is (this home's, or the default home's that `make`
    starts first), in one line; None when none is running or an `ollama` is on PATH."""
    build = build_support()
    progress = getattr(build, "build_progress", None)
    if progress is None or on_path() is not None:
        return None
    for cache in dict.fromkeys((ollama_dir(settings), default_home() / "ollama")):
        got = progress(cache, versions.OLLAMA)
        if got is not None:
            done, total = got
            return (
                f"Ollama {versions.OLLAMA} is still being built on this machine: {done} of "
                f"{total or '?'} C/C++ files compiled"
            )
    return None
