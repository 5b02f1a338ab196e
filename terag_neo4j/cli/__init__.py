"""`terag`, the command line: `parser` builds it, `commands` run in-process, `remote` through a
running service, `output` prints, `exits` holds the exit codes, `main` ties them together."""

from terag_neo4j.cli.exits import (
    EXIT_AUTH,
    EXIT_BAD_FILES,
    EXIT_ERROR,
    EXIT_NEO4J,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    UsageError,
)
from terag_neo4j.cli.main import error_line, main
from terag_neo4j.cli.output import to_jsonable
from terag_neo4j.cli.parser import OPTIONAL_COMMANDS, build_parser

__all__ = [
    "EXIT_AUTH",
    "EXIT_BAD_FILES",
    "EXIT_ERROR",
    "EXIT_NEO4J",
    "EXIT_NOT_FOUND",
    "EXIT_OK",
    "EXIT_UNAVAILABLE",
    "EXIT_USAGE",
    "OPTIONAL_COMMANDS",
    "UsageError",
    "build_parser",
    "error_line",
    "main",
    "to_jsonable",
]
