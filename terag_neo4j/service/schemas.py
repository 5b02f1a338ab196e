"""Request and response bodies of the HTTP API (and of `TeragRemote`, which shares them).

Imports pydantic and the package's plain result types only: the remote client uses these models
without the service's dependencies. A document page, a neighbourhood and why a passage was
retrieved are not here: the routes send the library's own dataclasses (`core.results`), and the
remote clients return those same types.
"""

from __future__ import annotations

import itertools
import operator
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from terag_neo4j.core.results import Mode  # a dataclass module: no service dependency

if TYPE_CHECKING:
    from terag_neo4j.core.documents import Document

NAMESPACE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
# What one submission may hold, however it comes (JSON texts, uploaded files, MCP): the
# parsing workers and the job store are held to the same bounds as the JSON route
MAX_DOCUMENTS = 10_000
MAX_ID_CHARS = 512  # a document's id (and a job's)
MAX_TITLE_CHARS = 1000
# A passage's id: the document's id with its '%' and '#' escaped, and '#n'
MAX_PASSAGE_ID_CHARS = 3 * MAX_ID_CHARS + 16
MAX_CONCEPT_CHARS = 200  # a concept's name, as the graph route and the MCP tool take it
# A question's length is bounded by the service's TERAG_MAX_QUESTION_CHARS alone (checked in
# asking.check_question for HTTP and MCP alike), not by these models.


class Model(BaseModel):
    # Validators are built on a model's first use, not at import: a CLI call through the service
    # validates one answer, and building all of them would cost it about 50 ms
    model_config = ConfigDict(defer_build=True)


class ErrorDetail(Model):
    type: str
    message: str


class ErrorBody(Model):
    error: ErrorDetail


class Health(Model):
    status: Literal["ok"] = "ok"


class Readiness(Model):
    ready: bool
    neo4j: bool
    gds: str | None = None
    models: bool
    detail: str | None = None


class Version(Model):
    version: str
    api: str = "v1"


class Namespace(Model):
    name: str
    version: int
    passages: int
    concepts: int
    extractor: str | None = None
    model: str | None = None
    created: str | None = None
    updated: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    # Extractions whose LLM server sent no token counts: the tokens above leave them out
    tokens_unknown: int = 0


class NamespaceStats(Namespace):
    entities: int = 0
    has_passage: int = 0
    co_occurrence: int = 0
    cooccurrence: str = "kept"
    runs: list[dict[str, Any]] = Field(default_factory=list)
    projections: list[dict[str, Any]] = Field(default_factory=list)


class NamespaceCreate(Model):
    name: str = Field(pattern=NAMESPACE_PATTERN, examples=["wiki"])


class TextDocument(Model):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=MAX_ID_CHARS, examples=["notes/beetle.md"])
    text: str = Field(min_length=1, examples=["The Beetle was designed by Ferdinand Porsche."])
    title: str = Field(default="", max_length=MAX_TITLE_CHARS)
    # As `terag index` reads files (what `terag index --url` sends): where the text was read
    # from, whether it is a passage already (indexed whole), whether its title names its content
    source: str = Field(default="", max_length=4096)
    is_passage: bool = False
    title_is_name: bool = True
    # Where each page starts in `text` (a PDF's), so its passages cite their pages
    pages: list[int] = Field(default_factory=list, max_length=1_000_000)

    @field_validator("pages")
    @classmethod
    def _pages_in_order(cls, pages: list[int]) -> list[int]:
        # map over C functions, not a Python loop: a million pages in milliseconds
        if pages and (
            min(pages) < 0 or not all(map(operator.lt, pages, itertools.islice(pages, 1, None)))
        ):
            raise ValueError("pages must be increasing character offsets, each >= 0")
        return pages

    def document(self) -> Document:
        """The `Document` the indexer takes (imported here, so the remote client, which uses
        these models, never loads the indexing package)."""
        from terag_neo4j.core.documents import Document

        return Document(**{**self.model_dump(), "pages": tuple(self.pages)})


class TextsRequest(Model):
    model_config = ConfigDict(extra="forbid")
    documents: list[TextDocument] = Field(min_length=1, max_length=MAX_DOCUMENTS)


def texts_body_schema() -> dict[str, Any]:
    """The OpenAPI request body of a `TextsRequest`, its documents' schema inline (the route
    reads the body itself, off the event loop, so FastAPI does not see the model)."""
    return {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "title": "TextsRequest",
                    "type": "object",
                    "properties": {
                        "documents": {
                            "type": "array",
                            "items": TextDocument.model_json_schema(),
                            "minItems": 1,
                            "maxItems": MAX_DOCUMENTS,
                        }
                    },
                    "required": ["documents"],
                    "additionalProperties": False,
                }
            }
        },
    }


class Deleted(Model):
    namespace: str
    document: str | None = None
    passages: int = 0


JobState = Literal["queued", "running", "succeeded", "failed", "cancelled"]


class Job(Model):
    id: str
    namespace: str
    # 'import': a namespace archive's import (POST .../import), its passages counted as written
    kind: Literal["ingest", "import"] = "ingest"
    state: JobState
    documents_total: int
    documents_done: int
    passages_total: int
    passages_done: int
    passages_new: int = 0
    passages_unchanged: int = 0
    passages_replaced: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # Extractions whose LLM server sent no token counts: the tokens above leave them out
    tokens_unknown: int = 0
    errors: list[str] = Field(default_factory=list)
    created: str
    started: str | None = None
    finished: str | None = None
    # While running: the id of the document the job is indexing
    document: str | None = None


class RetrieveRequest(Model):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, examples=["Who designed the Volkswagen Beetle?"])
    top_k: int = Field(default=5, ge=1, le=100)
    mode: Mode | None = None
    # False skips the service's reranker (TERAG_RERANKER), True requires one; None: its setting
    rerank: bool | None = None


class AskRequest(Model):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, examples=["Who designed the Volkswagen Beetle?"])
    top_k: int = Field(default=5, ge=1, le=100)
    stream: bool = False


class Provenance(Model):
    """Where a passage lies in what was indexed (`terag_neo4j.core.provenance.Provenance`)."""

    source: str | None = None
    heading_path: list[str] = Field(default_factory=list)
    page_start: int | None = None
    page_end: int | None = None
    char_start: int | None = None
    char_end: int | None = None


class Passage(Model):
    id: str
    doc_id: str
    title: str
    text: str
    score: float
    provenance: Provenance = Field(default_factory=Provenance)


class Citation(Model):
    """An answer's marker (`[2]`: the 2nd passage read) and the passage it names."""

    marker: int
    passage_id: str
    doc_id: str
    provenance: Provenance


class Match(Model):
    entity: str
    uid: str
    key: str
    name: str
    type: str
    match: str
    similarity: float
    frequency: int
    weight: float = 0.0
    node: int = -1
    support: float = 0.0


class Retrieval(Model):
    query: str
    namespace: str
    entities: list[str]
    matches: list[Match]
    passages: list[Passage]
    mode: str
    score_kind: str
    fallback_reason: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    # null: the LLM server sent no token counts (unknown, never estimated)
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    walk: str = ""
    graph_nodes: int = 0
    graph_relationships: int = 0
    restart: list[list[float]] = Field(default_factory=list)
    reranker: str = ""  # the reranker that re-scored the passages (score_kind rerank)


class Answer(Model):
    answer: str
    # The passages the answer was read from; those its markers name, and its claims naming none
    passage_ids: list[str]
    citations: list[Citation]
    uncited: list[str] = Field(default_factory=list)
    retrieval: Retrieval
    # null: the LLM server sent no token counts (unknown, never estimated)
    input_tokens: int | None
    output_tokens: int | None
    # The reply stopped at the reader's token cap: `answer` is what came before it
    cut: bool = False


class KeyScope(Model):
    """What the presented key reaches: its namespaces (None: every one), and whether it writes."""

    namespaces: list[str] | None
    write: bool
