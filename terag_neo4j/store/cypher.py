"""The Cypher text of `cypher/*.cypher`, loaded by name.

The statements live in files so a person can paste the same text into Neo4j Browser. Every
statement takes parameters; nothing user-supplied is ever spliced into query text.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from terag_neo4j import tracing

if TYPE_CHECKING:  # the text of a statement needs no driver
    from neo4j import ManagedTransaction, Result, Session

# terag_neo4j/store/cypher.py -> the checkout's cypher/ folder (absent in an installed wheel)
_SOURCE_CYPHER = Path(__file__).resolve().parents[2] / "cypher"


@cache
def load_cypher(name: str) -> str:
    """The text of `cypher/<name>.cypher`: from the source tree, else as packaged in a wheel."""
    path = _SOURCE_CYPHER / f"{name}.cypher"
    if path.is_file():
        return path.read_text(encoding="utf-8")
    return (
        resources.files("terag_neo4j.cypher").joinpath(f"{name}.cypher").read_text(encoding="utf-8")
    )


def cypher_statements(name: str) -> list[str]:
    """A multi-statement file split on `;` at line ends, comments removed."""
    text = "\n".join(
        line for line in load_cypher(name).splitlines() if not line.lstrip().startswith("//")
    )
    return [s.strip() for s in re.split(r";\s*\n", text) if s.strip().rstrip(";").strip()]


class Unprinted(list[Any]):
    """A list parameter whose repr is its length. The driver (neo4j 6.4, `Bolt.run`) formats
    every query's parameters for its debug log whether that log is on or not: 100 ms of Python
    for a batch of 500 passages with their vectors, seven times what packing them takes. It is
    packed as the list it is."""

    def __repr__(self) -> str:
        return f"[{len(self)} values]"


def run_cypher(tx: ManagedTransaction | Session, name: str, /, **params: Any) -> Result:
    """`cypher/<name>.cypher` run in `tx` with `params`, its lists never formatted as text.
    Traced as a span `cypher <name>` (until Neo4j answers the statement: its records stream
    after), with the file's name and never a parameter's value."""
    quiet = {k: Unprinted(v) if isinstance(v, (list, tuple)) else v for k, v in params.items()}
    with tracing.statement(name):
        return tx.run(load_cypher(name), quiet)
