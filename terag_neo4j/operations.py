"""The operations every front end offers, listed once.

`TeragOperations` is the synchronous surface (`TeragClient`, `TeragRemote`),
`AsyncTeragOperations` the asynchronous one (`AsyncTeragClient`, `AsyncTeragRemote`): the same
names and parameters. The MCP tools and the CLI commands are not Python methods, so each names
its tool or command per operation below. Where a surface deliberately lacks an operation, or
takes it in another shape, `EXEMPT` says so and why: the one place a gap is allowed.
`tests/unit/test_operations.py` checks all five surfaces against these lists, both ways.

Where every Python surface returns the library's own type (`why`, `neighbourhood`,
`documents`: the service sends these types as they are) the protocols name it; the other results
differ by surface (the library's dataclasses, the service's pydantic models), so the protocols
type them `Any`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from terag_neo4j.core.results import DocumentPage, Neighbourhood, WhyRetrieved


class TeragOperations(Protocol):
    def index(self, source: Any, namespace: str | None = None) -> Any: ...

    def retrieve(
        self,
        query: str,
        top_k: int | None = None,
        namespace: str | None = None,
        mode: Any = None,
        rerank: bool | None = None,
    ) -> Any: ...

    def answer(self, query: str, top_k: int | None = None, namespace: str | None = None) -> Any: ...

    def why(
        self, passage_id: str, question: str, namespace: str | None = None, top_k: int = 5
    ) -> WhyRetrieved: ...

    def neighbourhood(
        self, concept: str, namespace: str | None = None, depth: int = 1, max_nodes: int = 50
    ) -> Neighbourhood: ...

    def documents(
        self, namespace: str | None = None, offset: int = 0, limit: int = 100
    ) -> DocumentPage: ...

    def delete(self, document: Any, namespace: str | None = None) -> int: ...

    def stats(self, namespace: str | None = None) -> Any: ...

    def namespaces(self) -> Sequence[Any]: ...

    def drop(self, namespace: str | None = None) -> None: ...


class AsyncTeragOperations(Protocol):
    async def index(self, source: Any, namespace: str | None = None) -> Any: ...

    async def retrieve(
        self,
        query: str,
        top_k: int | None = None,
        namespace: str | None = None,
        mode: Any = None,
        rerank: bool | None = None,
    ) -> Any: ...

    async def answer(
        self, query: str, top_k: int | None = None, namespace: str | None = None
    ) -> Any: ...

    async def why(
        self, passage_id: str, question: str, namespace: str | None = None, top_k: int = 5
    ) -> WhyRetrieved: ...

    async def neighbourhood(
        self, concept: str, namespace: str | None = None, depth: int = 1, max_nodes: int = 50
    ) -> Neighbourhood: ...

    async def documents(
        self, namespace: str | None = None, offset: int = 0, limit: int = 100
    ) -> DocumentPage: ...

    async def delete(self, document: Any, namespace: str | None = None) -> int: ...

    async def stats(self, namespace: str | None = None) -> Any: ...

    async def namespaces(self) -> Sequence[Any]: ...

    async def drop(self, namespace: str | None = None) -> None: ...


# The remote clients send texts to the service's job queue: the service cannot read the
# caller's files, so `index` is `index_texts(documents)` there (the CLI reads files first)
REMOTE_METHODS: dict[str, str] = {"index": "index_texts"}

# Each operation's MCP tool; None: the tool is missing on purpose (see EXEMPT)
MCP_TOOLS: dict[str, str | None] = {
    "index": "add_text",
    "retrieve": "search",
    "answer": "ask",
    "why": "why_retrieved",
    "neighbourhood": "concept_neighbourhood",
    "documents": "list_documents",
    "delete": "delete_document",
    "stats": None,
    "namespaces": "list_namespaces",
    "drop": None,
}
# Tools of the service itself, not library operations: a background ingest's status
MCP_SERVICE_TOOLS = frozenset({"ingest_status"})

# Each operation's `terag` command; None: missing on purpose (see EXEMPT)
CLI_COMMANDS: dict[str, str | None] = {
    "index": "index",
    "retrieve": "retrieve",
    "answer": "ask",
    "why": None,
    "neighbourhood": None,
    "documents": None,
    "delete": "delete",
    "stats": "stats",
    "namespaces": "namespaces",
    "drop": "delete",  # `terag delete --all`
}
# Commands that are not library operations: running the service, the local servers, the demo
# and the benchmarks (any `bench*` command); and a namespace's archive, an operator's task that
# the Python clients and the HTTP API offer (`export_namespace`, `import_namespace`; over HTTP
# the import is a job) and MCP does not: an agent never replaces a whole namespace
CLI_TOOLING = frozenset({"serve", "mcp", "server", "ollama", "demo", "export", "import"})

# (surface, operation) -> why it is missing there or takes another shape
EXEMPT: dict[tuple[str, str], str] = {
    ("mcp", "stats"): "list_namespaces gives an agent the counts it needs",
    ("mcp", "drop"): "an agent never drops a whole namespace; an operator does",
    ("cli", "why"): "a debugging view of the service and the console, not a command",
    ("cli", "neighbourhood"): "a viewer's read (the console); Neo4j Browser shows the graph",
    ("cli", "documents"): "terag stats counts documents; the console lists them",
    ("remote", "index"): "texts, not paths: `index_texts(documents)` queues a job",
}
