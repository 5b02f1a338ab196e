"""`python -m terag_ollama_build CACHE VERSION`: build the pinned Ollama into CACHE unless it is
there or an `ollama` is on PATH. `make` starts it first, from the system Python, so the longest
step of a first run overlaps the virtual environment's installation."""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import time
from pathlib import Path

from terag_ollama_build.build import binary_path, ensure_binary
from terag_ollama_build.errors import OllamaBuildError

log = logging.getLogger("terag_ollama_build")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m terag_ollama_build")
    parser.add_argument("cache", type=Path, help="where builds are kept (TERAG_HOME/ollama)")
    parser.add_argument("version", help="the Ollama version, e.g. 0.17.4")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if shutil.which("ollama") or binary_path(args.cache, args.version).is_file():
        return 0
    count, last = 0, time.monotonic()

    def compiled(source: str, total: int) -> None:
        nonlocal count, last
        count += 1
        if time.monotonic() - last >= 30:  # a line now and then, not one per package
            last = time.monotonic()
            log.info("building Ollama: %d of %s C/C++ files compiled", count, total or "?")

    try:
        ensure_binary(args.cache, args.version, progress=compiled)
    except OllamaBuildError as exc:
        print(f"terag_ollama_build: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
