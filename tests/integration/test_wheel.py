"""The built wheel works outside the checkout: `terag server start`, `terag index` and
`terag retrieve` from a fresh virtual environment against the session's local Neo4j.

This is what catches files a checkout has and the wheel lacks (version pins, Cypher files, the
sample corpus). The venv gets only the wheel; its dependencies come from the running
environment's site-packages through a path entry in a .pth file, which appends those folders to
sys.path without running their own .pth files (so an editable install of the checkout found
there stays inert).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from terag_neo4j.core import versions
from tests.fixtures.neo4j import Neo4jConn

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
BUILD_LEFTOVERS = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache")


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def build_wheel(src: Path, dist: Path) -> Path:
    """The wheel of the project in `src`, built the way pip builds it for an install."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    pip = [sys.executable, "-m", "pip"]
    run(
        [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), str(src)],
        dist.parent,
        env,
    )
    (wheel,) = dist.glob("*.whl")
    return wheel


def venv_with(wheel: Path, venv: Path) -> Path:
    """A venv holding `wheel` only; its dependencies come from this environment (see above)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    base = venv.parent
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base, env)
    python = str(venv / "bin" / "python")
    pip = [sys.executable, "-m", "pip", "--python", python]
    run([*pip, "install", "-q", "--no-deps", "--no-index", str(wheel)], base, env)
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(run([python, "-c", purelib], base, env).strip())
    ours = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "zz_dependencies.pth").write_text("".join(f"{p}\n" for p in ours))
    return venv


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The library's wheel, built from a clean copy of the checkout."""
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    # A clean copy: setuptools builds in the source tree and would pack stale files from an
    # earlier build/ folder into the wheel.
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*BUILD_LEFTOVERS))
    return build_wheel(src, base / "dist")


@pytest.fixture(scope="module")
def wheel_venv(wheel: Path) -> Path:
    """A venv outside the checkout holding the package only as the wheel built from it."""
    return venv_with(wheel, wheel.parent.parent / "venv")


@pytest.fixture()
def cli_env(neo4j_conn: Neo4jConn) -> dict[str, str]:
    if neo4j_conn.source != "local":
        pytest.skip("`terag server start` manages the local server; this session uses another")
    return {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "NEO4J_URI"}}


def test_wheel_cli_starts_indexes_and_retrieves_outside_the_checkout(
    wheel_venv: Path, cli_env: dict[str, str], namespace: str, tmp_path: Path
) -> None:
    python, terag = str(wheel_venv / "bin" / "python"), str(wheel_venv / "bin" / "terag")
    where = run(
        [
            python,
            "-c",
            "import terag_neo4j, importlib.util as u; "
            "print(terag_neo4j.__file__); print(u.find_spec('tests') is None)",
        ],
        cwd=tmp_path,
        env=cli_env,
    ).split()
    assert Path(where[0]).is_relative_to(wheel_venv) and where[1] == "True"

    # The running server is found through the pins and the home layout the wheel carries.
    status = json.loads(run([terag, "server", "start", "--json"], cwd=tmp_path, env=cli_env))
    assert status["started"] is False
    assert (status["neo4j_version"], status["gds_version"]) == (versions.NEO4J, versions.GDS)

    sample = Path(where[0]).parent / "data" / "sample"
    report = json.loads(
        run(
            [terag, "index", str(sample), "-n", namespace, "-e", "spacy", "-q", "--json"],
            cwd=tmp_path,
            env=cli_env,
        )
    )
    assert (report["namespace"], report["extractor"]) == (namespace, "spacy")
    assert report["passages_new"] == report["passages_total"] >= len(list(sample.glob("*.md")))

    # A question whose spaCy query NER finds a concept, so PageRank ranks (no dense fallback).
    question = "Where are the headquarters of the company that makes the Beetle?"
    ask = [terag, "retrieve", question, "-e", "spacy", "-k", "3", "-n", namespace, "--json"]
    res = json.loads(run(ask, cwd=tmp_path, env=cli_env))
    assert res["mode"] == "pagerank", res["fallback_reason"]
    assert [m["name"] for m in res["matches"]] == ["Beetle"]
    assert any(p["doc_id"].endswith("beetle.md") for p in res["passages"])


def test_the_wheel_is_the_library_without_the_ollama_build(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    headers = [n for n in names if n.endswith((".h", ".hpp", ".c", ".cc", ".cpp"))]
    assert headers == []
    assert not [n for n in names if "llama_vendor" in n or "terag_ollama_build" in n]
    # nor the bench (tools/terag-bench): no benchmark, no replayed recorded extractions
    assert not [n for n in names if "/eval/" in n or "bench" in n or "recorded" in n]
    assert "terag_neo4j/store/__init__.py" in names and "terag_neo4j/cypher/schema.cypher" in names
    # typed (PEP 561), with the errors' base and both integrations
    for name in ("py.typed", "errors.py", "integrations/langchain.py", "integrations/graphrag.py"):
        assert f"terag_neo4j/{name}" in names
    (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    metadata = zipfile.ZipFile(wheel).read(meta).decode()
    assert "Provides-Extra: graphrag" in metadata
    assert 'neo4j-graphrag<2,>=1.22; extra == "graphrag"' in metadata


def test_ollama_start_without_ollama_says_what_to_do_in_one_line(
    wheel_venv: Path, tmp_path: Path
) -> None:
    python, terag = str(wheel_venv / "bin" / "python"), str(wheel_venv / "bin" / "terag")
    path = [p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "ollama").exists()]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(
        PATH=os.pathsep.join(path),
        TERAG_HOME=str(tmp_path / "home"),
        OLLAMA_HOST="http://127.0.0.1:9",  # the discard port: nothing answers there
    )
    spec = "import importlib.util as u; print(u.find_spec('terag_ollama_build') is None)"
    if run([python, "-c", spec], tmp_path, env).strip() != "True":
        pytest.skip("the build support is installed non-editable beside the test environment")
    proc = subprocess.run(
        [terag, "ollama", "start"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 3, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "http://127.0.0.1:9" in line and "OLLAMA_HOST" in line
    assert "pip install ./tools/ollama-build" in line and "`make`" in line


def test_the_build_support_wheel_carries_the_checked_llama_cpp_headers(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # The Ollama build hands these to cgo; without them it could only build from a checkout.
    base = tmp_path_factory.mktemp("build-support")
    src = base / "src"
    shutil.copytree(
        ROOT / "tools" / "ollama-build", src, ignore=shutil.ignore_patterns(*BUILD_LEFTOVERS)
    )
    venv = venv_with(build_wheel(src, base / "dist"), base / "venv")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    check = (
        "import hashlib, terag_ollama_build as b; print(b.VENDOR_HEADERS); "
        "print(all(hashlib.sha256((b.VENDOR_HEADERS / n).read_bytes()).hexdigest() == d "
        "for n, d in b.LLAMA_CPP_VENDOR_SHA256.items()))"
    )
    where, ok = run([str(venv / "bin" / "python"), "-c", check], base, env).split()
    assert Path(where).is_relative_to(venv) and ok == "True"


def test_the_bench_wheel_carries_the_benchmarks_and_their_commands(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    base = tmp_path_factory.mktemp("bench")
    src = base / "src"
    shutil.copytree(
        ROOT / "tools" / "terag-bench", src, ignore=shutil.ignore_patterns(*BUILD_LEFTOVERS)
    )
    wheel = zipfile.ZipFile(build_wheel(src, base / "dist"))
    names = wheel.namelist()
    for name in ("subcommands.py", "bench.py", "recorded.py", "latency.py", "py.typed"):
        assert f"terag_bench/{name}" in names
    (points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(points).decode()
    assert "[terag_neo4j.commands]\nbench = terag_bench.subcommands" in text
    assert "terag-bench = terag_bench.subcommands:main" in text
