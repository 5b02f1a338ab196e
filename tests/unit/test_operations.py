"""Unit tests of the operations protocol: the Python clients, the MCP tools and the CLI offer
every operation of `terag_neo4j.operations` (or the module says why not), and nothing on a
surface is left out of the lists."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import sys
from collections.abc import Callable
from typing import Any

import pytest

from terag_neo4j import operations as ops
from terag_neo4j.aio import AsyncTeragClient
from terag_neo4j.client import TeragClient
from terag_neo4j.core import results
from terag_neo4j.service.remote_client import AsyncTeragRemote, TeragRemote


def protocol_methods(proto: type) -> dict[str, Callable[..., Any]]:
    return {
        name: fn
        for name, fn in vars(proto).items()
        if not name.startswith("_") and inspect.isfunction(fn)
    }


SYNC = protocol_methods(ops.TeragOperations)
ASYNC = protocol_methods(ops.AsyncTeragOperations)


PYTHON_CLIENTS = [
    ("client", TeragClient, False),
    ("client", AsyncTeragClient, True),
    ("remote", TeragRemote, False),
    ("remote", AsyncTeragRemote, True),
]


def params(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]


def test_the_two_protocols_list_the_same_operations_with_the_same_parameters() -> None:
    assert SYNC.keys() == ASYNC.keys()
    for name, fn in SYNC.items():
        assert [p.name for p in params(fn)] == [p.name for p in params(ASYNC[name])], name
        assert inspect.iscoroutinefunction(ASYNC[name]) and not inspect.iscoroutinefunction(fn)


@pytest.mark.parametrize(("surface", "cls", "is_async"), PYTHON_CLIENTS)
def test_each_python_client_has_every_operation_with_its_parameters(
    surface: str, cls: type, is_async: bool
) -> None:
    """Every operation is a method by its name (or the declared remote name), taking the
    protocol's parameters by name in the protocol's order; any extra parameter is optional."""
    for name, proto_fn in (ASYNC if is_async else SYNC).items():
        method = getattr(cls, ops.REMOTE_METHODS.get(name, name) if surface == "remote" else name)
        if is_async:
            assert inspect.iscoroutinefunction(method), f"{cls.__name__}.{name} is not async"
        if (surface, name) in ops.EXEMPT:
            continue  # the shape differs on purpose; the method exists
        wanted = [p.name for p in params(proto_fn)]
        have = params(method)
        names = [p.name for p in have]
        assert [n for n in names if n in wanted] == wanted, f"{cls.__name__}.{name}: {names}"
        extra = [p for p in have if p.name not in wanted]
        required = [p.name for p in extra if p.default is inspect.Parameter.empty]
        assert not required, f"{cls.__name__}.{name} requires {required}"


def test_every_exemption_names_a_surface_and_an_operation_that_exist() -> None:
    for surface, name in ops.EXEMPT:
        assert surface in ("client", "remote", "mcp", "cli") and name in SYNC
    for table, surface in ((ops.MCP_TOOLS, "mcp"), (ops.CLI_COMMANDS, "cli")):
        for name, target in table.items():
            # a gap is declared in EXEMPT, with its reason, and only there
            assert (target is None) == ((surface, name) in ops.EXEMPT), (surface, name)


def mcp_tools() -> dict[str, list[str]]:
    from terag_neo4j.service.mcp_tools import build_mcp

    server = build_mcp(None, None, None)  # type: ignore[arg-type]  # the tools are not called
    tools = asyncio.run(server.list_tools())
    return {t.name: list(t.input_schema["properties"]) for t in tools}


def test_the_mcp_tools_are_the_operations_both_ways() -> None:
    tools = mcp_tools()
    assert ops.MCP_TOOLS.keys() == SYNC.keys()  # a new operation must be placed here
    mapped = {t for t in ops.MCP_TOOLS.values() if t is not None}
    assert mapped <= tools.keys(), mapped - tools.keys()
    assert tools.keys() - mapped == ops.MCP_SERVICE_TOOLS  # no tool outside the lists
    # The tools take the operations' arguments under the same names where they share them
    assert {"namespace", "question", "top_k", "mode", "rerank"} <= set(tools["search"])
    assert {"namespace", "passage_id", "question", "top_k"} <= set(tools["why_retrieved"])
    assert {"namespace", "concept", "depth", "max_nodes"} <= set(tools["concept_neighbourhood"])
    assert {"namespace", "offset", "limit"} <= set(tools["list_documents"])


def cli_commands() -> set[str]:
    from terag_neo4j.cli.parser import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def test_the_cli_commands_are_the_operations_both_ways() -> None:
    commands = cli_commands()
    assert ops.CLI_COMMANDS.keys() == SYNC.keys()  # a new operation must be placed here
    mapped = {c for c in ops.CLI_COMMANDS.values() if c is not None}
    assert mapped <= commands, mapped - commands
    others = {c for c in commands - mapped if not c.startswith("bench")}
    assert others <= ops.CLI_TOOLING, others - ops.CLI_TOOLING  # every command is placed


@pytest.mark.parametrize(("surface", "cls", "is_async"), PYTHON_CLIENTS)
def test_where_the_protocol_names_a_result_type_every_python_client_returns_it(
    surface: str, cls: type, is_async: bool
) -> None:
    """A result the protocol types (not `Any`) is the library's own class on every Python
    surface: the remote clients return what `TeragClient` does, not a look-alike model."""
    # The result types the protocol names: the classes `operations` imports from core.results
    named = {n for n, v in vars(ops).items() if getattr(v, "__module__", "") == results.__name__}
    typed = 0
    for name, proto_fn in (ASYNC if is_async else SYNC).items():
        wanted = inspect.signature(proto_fn).return_annotation
        if wanted not in named:
            continue
        typed += 1
        method = getattr(cls, ops.REMOTE_METHODS.get(name, name) if surface == "remote" else name)
        have = inspect.signature(method).return_annotation  # a string: annotations are lazy
        returned = eval(have, vars(sys.modules[method.__module__]))  # e.g. results.WhyRetrieved
        assert returned is vars(ops)[wanted], f"{cls.__name__}.{name} returns {have}, not {wanted}"
    assert typed == 3  # why, neighbourhood, documents
