"""One base class for every error: `except TeragError` catches whatever terag-neo4j raises.

`test_every_error_class_is_a_terag_error` walks every module of the package, so an error class
added anywhere later is held to the rule too; `test_the_package_raises_no_bare_builtin_errors`
reads the source, so a `raise ValueError(...)` added later fails here instead of escaping a
caller's `except TeragError`.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
import terag_bench

import terag_neo4j
from terag_neo4j.errors import TeragError

PACKAGE = Path(terag_neo4j.__file__).parent
# The bench (tools/terag-bench) is held to the same rule: its errors reach terag's CLI too.
BENCH = Path(terag_bench.__file__).parent


def package_modules() -> list[str]:
    return sorted(
        m.name
        for folder, prefix in ((PACKAGE, "terag_neo4j."), (BENCH, "terag_bench."))
        for m in pkgutil.walk_packages([str(folder)], prefix=prefix)
    )


def test_every_module_is_walked() -> None:
    names = package_modules()
    # The walk reaches the subpackages (a silent empty walk would pass the test below).
    for expected in (
        "terag_neo4j.store.connection",
        "terag_neo4j.local.models",
        "terag_bench.datasets",
        "terag_neo4j.integrations.langchain",
        "terag_bench.recorded",
    ):
        assert expected in names


def test_every_error_class_is_a_terag_error() -> None:
    defined: list[type[BaseException]] = []
    for name in package_modules():
        module = importlib.import_module(name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__.startswith(
                ("terag_neo4j", "terag_bench")
            ):
                defined.append(obj)
    assert len(defined) >= 15, defined
    # A BaseException that is no Exception is a control-flow signal raised through a library
    # that swallows every Exception (pypdf's operator callbacks), caught again inside the module
    outside = sorted(
        f"{c.__module__}.{c.__qualname__}"
        for c in defined
        if issubclass(c, Exception) and not issubclass(c, TeragError)
    )
    assert outside == [], "derive these from terag_neo4j.errors.TeragError"


@pytest.mark.parametrize(
    ("path", "builtin"),
    [
        ("terag_neo4j.indexing.loading.InputError", ValueError),
        ("terag_neo4j.indexing.loading.InputNotFound", ValueError),
        ("terag_neo4j.config.SettingsError", ValueError),
        ("terag_neo4j.recipes.KnobError", ValueError),
        ("terag_neo4j.retrieval.retriever.RetrievalError", ValueError),
        ("terag_neo4j.store.InvalidNamespace", ValueError),
        ("terag_neo4j.store.GraphStoreError", RuntimeError),
        ("terag_neo4j.store.NamespaceNotFound", RuntimeError),
        ("terag_neo4j.store.Neo4jUnavailable", RuntimeError),
        ("terag_neo4j.llm.LLMError", RuntimeError),
        ("terag_neo4j.llm.LLMUnavailableError", RuntimeError),
        ("terag_neo4j.llm.ModelNotFoundError", RuntimeError),
        ("terag_neo4j.errors.DependencyError", ImportError),
        ("terag_neo4j.errors.DependencyError", RuntimeError),
        ("terag_neo4j.embeddings.EmbeddingError", RuntimeError),
    ],
)
def test_errors_keep_their_builtin_base(path: str, builtin: type[Exception]) -> None:
    # `except ValueError` / `except RuntimeError` written before TeragError still catch them.
    module, _, name = path.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, TeragError) and issubclass(cls, builtin)


def test_server_and_bench_errors_are_terag_errors() -> None:
    from terag_bench.datasets import DatasetError

    from terag_neo4j.cli import UsageError
    from terag_neo4j.local.models import ModelIntegrityError
    from terag_neo4j.local.neo4j_home import ServerError
    from terag_neo4j.local.ollama_home import OllamaSetupError

    for cls in (UsageError, DatasetError, ModelIntegrityError, ServerError, OllamaSetupError):
        assert issubclass(cls, TeragError), cls


def test_check_namespace_raises_a_terag_error() -> None:
    from terag_neo4j.store import check_namespace

    with pytest.raises(TeragError, match="invalid namespace") as info:
        check_namespace("no spaces allowed")
    assert isinstance(info.value, ValueError)


# Functions whose ValueError pydantic turns into a ValidationError, which Settings reports as a
# SettingsError: the one place a builtin error is the right thing to raise.
VALIDATOR_DECORATORS = {"field_validator", "model_validator"}
BUILTIN_ERRORS = {
    "Exception",
    "ValueError",
    "RuntimeError",
    "TypeError",
    "KeyError",
    "LookupError",
    "OSError",
    "IOError",
    "FileNotFoundError",
    "PermissionError",
    "ConnectionError",
    "TimeoutError",
    "ImportError",
    "ModuleNotFoundError",
}


def _decorator_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    names = set()
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if isinstance(target, ast.Name):
            names.add(target.id)
        elif isinstance(target, ast.Attribute):
            names.add(target.attr)
    return names


def bare_raises(source: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, in_validator: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            in_validator = in_validator or bool(_decorator_names(node) & VALIDATOR_DECORATORS)
        if isinstance(node, ast.Raise) and node.exc is not None and not in_validator:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id in BUILTIN_ERRORS:
                found.append((node.lineno, exc.id))
        for child in ast.iter_child_nodes(node):
            visit(child, in_validator)

    visit(ast.parse(source), False)
    return found


def test_the_scan_finds_a_bare_raise() -> None:
    src = "def f():\n    raise ValueError('x')\n\n@field_validator('a')\ndef g(v):\n    raise ValueError('y')\n"
    assert bare_raises(src) == [(2, "ValueError")]


def test_the_package_raises_no_bare_builtin_errors() -> None:
    offenders = {
        str(path.relative_to(folder)): hits
        for folder in (PACKAGE, BENCH)
        for path in sorted(folder.rglob("*.py"))
        if (hits := bare_raises(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}, "raise a TeragError subclass (terag_neo4j.errors) instead"
