"""No ticket numbers in the product's text and code: a comment or a page says why something is
so, not which issue asked for it ("issue 21", "issue #21", "(#21)", "task 30" are refused)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKED = [
    "terag_neo4j",
    "cypher",
    "docs",
    "tests",
    "scripts",
    "tools",
    "bench",
    "README.md",
    "Makefile",
    "Dockerfile",
    "docker-compose.yml",
    ".env.example",
    "mkdocs.yml",
    "pyproject.toml",
]
# Third-party files shipped as they are (llama.cpp's header-only libraries; BERT's WordPiece
# vocabulary, whose word pieces such as "##00" read as ticket numbers)
THIRD_PARTY = (
    "tools/ollama-build/terag_ollama_build/llama_vendor/",
    "terag_neo4j/data/wordpiece-uncased-vocab.txt",
)
SUFFIXES = {".py", ".md", ".cypher", ".grass", ".toml", ".yml", ".yaml", ".txt", ".cfg", ".sh"}
REFERENCE = re.compile(
    r"\b(?:issues?|tasks?|tickets?|PRs?|pull requests?)\s*#?\s*\d+(?:\.\d+)?\b|\(#\d+\)|(?<![\w&])#\d{2,4}\b",
    re.IGNORECASE,
)


def files() -> list[Path]:
    out: list[Path] = []
    for name in CHECKED:
        path = ROOT / name
        if path.is_file():
            out.append(path)
        elif path.is_dir():
            out += [
                p
                for p in path.rglob("*")
                if p.is_file()
                and (p.suffix in SUFFIXES or p.name in {"Makefile", "Dockerfile"})
                and "__pycache__" not in p.parts
                and not p.relative_to(ROOT).as_posix().startswith(THIRD_PARTY)
                and "results" not in p.relative_to(ROOT).parts[:2]
                and p != Path(__file__).resolve()  # its own examples
            ]
    return out


def references(text: str) -> list[str]:
    return [m.group(0) for m in REFERENCE.finditer(text)]


def test_the_pattern_catches_ticket_references() -> None:
    for text in (
        "see issue 21",
        "Issue #21:",
        "issues 20, 23.5",
        "fixed (#21)",
        "task 30",
        "#21 again",
    ):
        assert references(text), text
    for text in (
        "color: #4C8EDA",
        "color: #000000",
        "top 20 issues",
        "HTTP 404",
        "a task of 3",
        "`#page=3`",
    ):
        assert not references(text), text


def test_no_issue_references_in_product_text_and_code() -> None:
    checked = files()
    assert len(checked) > 100
    hits = []
    for path in checked:
        for n, line in enumerate(
            path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
        ):
            hits += [f"{path.relative_to(ROOT)}:{n}: {ref}" for ref in references(line)]
    assert not hits, "say why, not which ticket:\n" + "\n".join(hits)
