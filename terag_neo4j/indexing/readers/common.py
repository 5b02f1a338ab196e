"""What every reader shares: optional imports, size limits, one-line messages."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from terag_neo4j.indexing import inputs
from terag_neo4j.indexing.inputs import InputError

EXTRA = "pip install 'terag-neo4j[documents]'"


class MissingReader(InputError):
    """A document format whose reader library is not installed."""


def require(module: str) -> ModuleType:
    """The reader library `module`, or an error that says how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingReader(f"reading this format needs the {module!r} package: {EXTRA}") from e


def check_size(path: Path, chars: int) -> None:
    # Read at call time: tests and callers may lower the limit.
    limit = inputs.MAX_DOCUMENT_CHARS
    if chars > limit:
        raise InputError(
            f"{path}: over {chars:,} characters of text, beyond the {limit:,}-character limit "
            "of a document; split it into smaller files"
        )


def one_line(e: BaseException, limit: int = 160) -> str:
    """An exception as a short single line, for a message that names the file."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"
