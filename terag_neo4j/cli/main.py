"""`terag`: index a corpus into Neo4j and ask it questions, from the shell: the entry point."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from terag_neo4j.cli.exits import (
    EXIT_AUTH,
    EXIT_ERROR,
    EXIT_NEO4J,
    EXIT_NOT_FOUND,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
)
from terag_neo4j.cli.input_checks import check_arguments
from terag_neo4j.cli.parser import build_parser

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------- commands


# ---------------------------------------------------------------------- parser


def error_line(e: BaseException) -> tuple[str, int]:
    from terag_neo4j.core.documents import InputError, InputNotFound
    from terag_neo4j.errors import NotFound
    from terag_neo4j.store import GraphStoreError, NamespaceNotFound, Neo4jUnavailable
    from terag_neo4j.store.connection import Neo4jAuthError

    if isinstance(e, NamespaceNotFound | InputNotFound | NotFound | FileNotFoundError):
        return str(e), EXIT_NOT_FOUND
    if isinstance(e, Neo4jUnavailable):
        return str(e), EXIT_UNAVAILABLE
    if isinstance(e, Neo4jAuthError):
        return str(e), EXIT_AUTH
    if isinstance(e, GraphStoreError):
        return str(e), EXIT_NEO4J
    from terag_neo4j.local.ollama_home import OllamaSetupError

    if isinstance(e, OllamaSetupError):
        return str(e), EXIT_UNAVAILABLE
    try:
        from terag_neo4j.llm import LLMError

        if isinstance(e, LLMError):
            return str(e), EXIT_UNAVAILABLE
    except ImportError:
        pass
    if isinstance(e, InputError | ValueError):
        return str(e), EXIT_USAGE
    return f"{type(e).__name__}: {e}", EXIT_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    return run(build_parser(argv), argv)


def run(parser: argparse.ArgumentParser, argv: Sequence[str]) -> int:
    """Parse `argv` and run its command with terag's logging, one-line errors and exit codes
    (also the entry point of other distributions' command lines, e.g. `terag-bench`)."""
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for noisy in ("neo4j", "httpx", "httpx2", "openai", "sentence_transformers", "urllib3"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if not args.verbose:
        # The driver logs each retry of a lost connection; the one-line error below says it all.
        logging.getLogger("neo4j").setLevel(logging.ERROR)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        check_arguments(args)  # bad input is told before any connection fails
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if args.verbose:
            raise
        msg, code = error_line(e)
        # Kept for whoever captures DEBUG records (a test's log): the user sees one line.
        log.debug("the error's trace", exc_info=True)
        print(f"{parser.prog}: error: {msg} (run with --verbose for the trace)", file=sys.stderr)
        return code
