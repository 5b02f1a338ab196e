"""The wheel ships every package of the source tree: pyproject.toml lists packages by hand, so a
new folder that is left out installs fine in a checkout and fails only for wheel users."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_folder_is_in_the_wheel() -> None:
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    listed = set(tool["setuptools"]["packages"])
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "terag_neo4j").rglob("__init__.py")
    }
    assert on_disk, "no package found under terag_neo4j/"
    assert on_disk <= listed, f"missing from [tool.setuptools] packages: {sorted(on_disk - listed)}"


def test_the_library_carries_no_bench() -> None:
    # The benchmarks and the replayed recorded extractions are tools/terag-bench's (terag_bench).
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    packages = tool["setuptools"]["packages"]
    assert "terag_neo4j.indexing" in packages
    assert not [p for p in packages if p.endswith(".eval") or "bench" in p]
    sources = {str(p.relative_to(ROOT)) for p in (ROOT / "terag_neo4j").rglob("*.py")}
    assert "terag_neo4j/client.py" in sources
    assert not [s for s in sources if "/eval/" in s or "bench" in s or "recorded" in s]


def test_the_bench_distribution_lists_its_packages_and_commands() -> None:
    bench = ROOT / "tools" / "terag-bench"
    doc = tomllib.loads((bench / "pyproject.toml").read_text(encoding="utf-8"))
    on_disk = {
        ".".join(init.parent.relative_to(bench).parts)
        for init in (bench / "terag_bench").rglob("__init__.py")
    }
    assert on_disk == set(doc["tool"]["setuptools"]["packages"]) == {"terag_bench"}
    assert "terag-neo4j" in doc["project"]["dependencies"]
    assert doc["project"]["scripts"] == {"terag-bench": "terag_bench.subcommands:main"}
    assert doc["project"]["entry-points"]["terag_neo4j.commands"] == {
        "bench": "terag_bench.subcommands"
    }
