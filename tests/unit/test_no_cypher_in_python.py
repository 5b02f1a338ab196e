"""Unit test: Cypher lives in `cypher/*.cypher`, never in a string of the package's Python (so a
person can paste each statement into Neo4j Browser, and every one is reviewed as a file)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "terag_neo4j"

# Clause shapes that only a Cypher statement has (prose in a docstring names procedures
# without the call, and never opens a pattern after a clause keyword)
CYPHER = re.compile(
    r"\b(?:OPTIONAL\s+MATCH|MATCH|MERGE|CREATE)\s*\(|\bUNWIND\s+\$|\bCALL\s+(?:gds|db|apoc)\.|"
    r"\bDETACH\s+DELETE\b|\bRETURN\s+\w+(?:\.\w+)?\s+AS\s+\w+"
)


def cypher_strings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value.strip()[:60]!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and CYPHER.search(node.value)
    ]


def test_no_python_string_of_the_package_holds_cypher() -> None:
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in cypher_strings(path)]
    assert not found, "Cypher in Python (move it to cypher/*.cypher):\n" + "\n".join(found)


def test_the_scan_finds_cypher_in_a_string(tmp_path: Path) -> None:
    sample = PACKAGE / "_cypher_probe_for_test.py"
    sample.write_text('Q = """\nUNWIND $ids AS i\nMATCH (n) RETURN n.id AS id\n"""\n')
    try:
        assert len(cypher_strings(sample)) == 1
    finally:
        sample.unlink()
