"""Every import runs down the declared layers (docs/architecture.md, "The layers"): a module
imports only from its own layer or those below, the rooms the second table keeps apart never
meet, and the product never imports the bench. Imports inside functions, under TYPE_CHECKING
and relative ones count: each is still an arrow between rooms."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
PRODUCT = "terag_neo4j"
# Packages checked, with the folder that holds each (the bench has its own distribution).
PACKAGES = {PRODUCT: ROOT, "terag_bench": ROOT / "tools" / "terag-bench"}
_ROOM = re.compile(r"`([\w.]+)`")


@dataclass(frozen=True)
class Rules:
    layer: dict[str, int]  # room -> layer
    never: dict[str, set[str]]  # room -> rooms it must not import


def _table(text: str, marker: str) -> list[list[str]]:
    """The rows (cells) of the Markdown table after `<!-- marker: ... -->`, header skipped."""
    after = text.split(f"<!-- {marker}:", 1)
    assert len(after) == 2, f"docs/architecture.md has no `<!-- {marker}: -->` table"
    rows = []
    for line in after[1].splitlines()[1:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows[2:]  # the header and its rule


def _rules() -> Rules:
    text = DOC.read_text(encoding="utf-8")
    layer: dict[str, int] = {}
    for cells in _table(text, "layers"):
        number = int(cells[0].split()[0])
        for room in _ROOM.findall(cells[1]):
            assert room not in layer, f"{room} is declared twice"
            layer[room] = number
    never: dict[str, set[str]] = {room: set() for room in layer}
    for importer, targets in _table(text, "apart"):
        banned = set(_ROOM.findall(targets))
        if importer.startswith("every room but"):
            rooms = set(layer) - set(_ROOM.findall(importer))
        else:
            rooms = set(_ROOM.findall(importer))
        for room in rooms:
            never[room] |= banned - {room}
    return Rules(layer, never)


def _room(module: str) -> str:
    """A module's room: the package below the product (or the product's own top-level module),
    `terag_neo4j` for the package's `__init__`, the package name for the bench."""
    parts = module.split(".")
    if parts[0] != PRODUCT:
        return parts[0]
    return parts[1] if len(parts) > 1 else PRODUCT


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for package, base in PACKAGES.items():
        for path in sorted((base / package).rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imported(module: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """(module imported, line) for every import of ours in the file."""
    is_package = path.name == "__init__.py"
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            # `from pkg import sub` imports the submodule `pkg.sub`
            targets = [
                f"{origin}.{a.name}" if f"{origin}.{a.name}" in known else origin
                for a in node.names
            ]
        found += [(t, node.lineno) for t in targets if t.split(".")[0] in PACKAGES]
    return sorted(set(found), key=lambda f: (f[1], f[0]))


def violations(rules: Rules) -> list[str]:
    modules = _modules()
    known = set(modules)
    out: list[str] = []
    for module, path in modules.items():
        room = _room(module)
        where = path.relative_to(ROOT)
        for target, line in _imported(module, path, known):
            to = _room(target)
            if to == room:
                continue
            if room not in rules.layer or to not in rules.layer:
                missing = room if room not in rules.layer else to
                out.append(f"{where}:{line}: room `{missing}` is not in the layer table")
            elif rules.layer[to] > rules.layer[room]:
                out.append(
                    f"{where}:{line}: imports {target} (layer {rules.layer[to]} `{to}`) from "
                    f"layer {rules.layer[room]} `{room}`"
                )
            elif to in rules.never[room]:
                out.append(f"{where}:{line}: imports {target}: `{room}` never imports `{to}`")
    return out


def test_every_import_runs_down_the_declared_layers() -> None:
    found = violations(_rules())
    assert found == [], f"{len(found)} imports against docs/architecture.md:\n" + "\n".join(found)


def test_the_table_declares_every_room_of_the_product() -> None:
    rules = _rules()
    rooms = {_room(m) for m in _modules() if m.split(".")[0] == PRODUCT}
    assert rooms - set(rules.layer) == set()


@pytest.mark.parametrize(
    ("importer", "source", "expected"),
    [
        ("terag_neo4j.store.x", "from terag_neo4j.indexing import loading\n", "layer 4"),
        ("terag_neo4j.core.x", "def f():\n    from ..client import TeragClient\n", "layer 5"),
        ("terag_neo4j.indexing.x", "import terag_neo4j.retrieval.linking\n", "never imports"),
        ("terag_neo4j.integrations.x", "from terag_neo4j.service import app\n", "never"),
        ("terag_neo4j.cli.x", "from terag_bench import bench\n", "`terag_bench`"),
    ],
)
def test_an_import_against_the_layers_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, importer: str, source: str, expected: str
) -> None:
    """The checker itself: each kind of wrong arrow, written into a scratch package, is found
    and named (with its file and line)."""
    parts = importer.split(".")
    for i in range(1, len(parts)):
        folder = tmp_path.joinpath(*parts[:i])
        folder.mkdir(exist_ok=True)
        (folder / "__init__.py").touch()
    tmp_path.joinpath(*parts[:-1], f"{parts[-1]}.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(__import__(__name__, fromlist=["_"]), "ROOT", tmp_path)
    monkeypatch.setitem(PACKAGES, PRODUCT, tmp_path)
    monkeypatch.setitem(PACKAGES, "terag_bench", tmp_path / "none")
    found = violations(_rules())
    assert len(found) == 1 and expected in found[0], found
    assert f"{parts[-1]}.py:" in found[0]
