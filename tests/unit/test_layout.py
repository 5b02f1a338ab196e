"""The package's shape: modules small, a short root, stages in their own packages, no import
cycle (imports inside functions count too: a cycle hidden in a function is still one)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "terag_neo4j"
# The bench, a distribution of its own, keeps to the same size rule.
BENCH = PACKAGE.parent / "tools" / "terag-bench" / "terag_bench"
MAX_LINES = 400
MAX_ROOT_MODULES = 12


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for t in targets:
            if t in known and t != name:
                found.add(t)
    return found


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(p.relative_to(PACKAGE.parent)): n
        for folder in (PACKAGE, BENCH)
        for p in folder.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"split these: {long}"


def test_the_root_is_short_and_the_stages_have_packages() -> None:
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= MAX_ROOT_MODULES, root
    for stage in ("indexing", "retrieval", "service", "local", "cli"):
        assert (PACKAGE / stage / "__init__.py").is_file(), stage


def test_there_is_no_import_cycle() -> None:
    modules = _modules()
    known = set(modules)
    graph = {m: _imports(m, p, known) for m, p in modules.items()}
    # a package imports its own submodules to re-export them; that is not a cycle
    for m, deps in graph.items():
        graph[m] = {d for d in deps if not d.startswith(m + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycles.append([*stack[stack.index(d) :], d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert cycles == [], cycles


def test_no_two_modules_share_a_name() -> None:
    # A name should say which room it is in: two `remote.py` or `errors.py` make a reader open
    # both to find the one they want. Packages (`__init__.py`) and the package roots are exempt.
    seen: dict[str, list[str]] = {}
    for root in (PACKAGE, BENCH):
        for path in root.rglob("*.py"):
            if path.name != "__init__.py":
                seen.setdefault(path.stem, []).append(str(path.relative_to(PACKAGE.parent)))
    shared = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not shared, f"rename one of each: {shared}"
