"""`python -m terag_ollama_build CACHE VERSION`: build (or find) the binary and print its path.

terag itself calls :func:`terag_ollama_build.ensure_binary`; this entry lets a script build
without the library installed.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from terag_ollama_build.build import ensure_binary
from terag_ollama_build.errors import OllamaBuildError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="terag-ollama-build", description=__doc__)
    parser.add_argument("cache", type=Path, help="cache folder, e.g. ~/.cache/terag-neo4j/ollama")
    parser.add_argument("version", help="Ollama version, e.g. 0.17.4")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        print(ensure_binary(args.cache.expanduser(), args.version))
    except OllamaBuildError as exc:
        print(f"terag-ollama-build: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
