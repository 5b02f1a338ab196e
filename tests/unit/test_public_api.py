"""The public surface: everything from one import, loaded lazily, typed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import terag_neo4j

PACKAGE = Path(terag_neo4j.__file__).parent


def test_one_import_gives_the_whole_api() -> None:
    for name in terag_neo4j.__all__:
        assert getattr(terag_neo4j, name) is not None, name
    # the errors at the top are the classes their modules raise
    from terag_neo4j.core.documents import InputError
    from terag_neo4j.errors import TeragError
    from terag_neo4j.store import GraphStoreError

    assert terag_neo4j.TeragError is TeragError and terag_neo4j.InputError is InputError
    assert terag_neo4j.GraphStoreError is GraphStoreError
    from terag_neo4j import AsyncTeragClient, TeragClient, TeragGraphRAGRetriever, TeragRetriever
    from terag_neo4j.aio import AsyncTeragClient as AioClient
    from terag_neo4j.client import TeragClient as SyncClient
    from terag_neo4j.integrations.graphrag import TeragGraphRAGRetriever as GraphRAGRetriever
    from terag_neo4j.integrations.langchain import TeragRetriever as LangChainRetriever

    assert (AsyncTeragClient, TeragClient) == (AioClient, SyncClient)
    assert (TeragRetriever, TeragGraphRAGRetriever) == (LangChainRetriever, GraphRAGRetriever)
    with pytest.raises(AttributeError):
        _ = terag_neo4j.NoSuchName


def test_star_import_leaves_out_only_the_optional_extra() -> None:
    exported = set(terag_neo4j.__all__)
    lazy = set(terag_neo4j._EXPORTS)
    assert lazy - exported == {"TeragGraphRAGRetriever"}
    assert exported - lazy == {"TeragError", "DependencyError", "__version__"}


def test_importing_the_package_loads_no_driver_or_model() -> None:
    code = (
        "import sys, terag_neo4j; "
        "from terag_neo4j import TeragError; "
        "print(sorted(m for m in ('neo4j', 'torch', 'langchain_core', 'terag_neo4j.client') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_package_is_typed() -> None:
    # PEP 561: the marker ships with the package (pyproject's package-data; the wheel test
    # checks the built wheel holds it).
    assert (PACKAGE / "py.typed").is_file()
