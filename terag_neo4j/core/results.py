"""What a retrieval and an answer return: typed results that cross from the retriever to the
client, the LangChain and neo4j-graphrag integrations and the CLI."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from terag_neo4j.core.provenance import PROVENANCE_FIELDS, Provenance

# `flat` ranks without the graph: full-text (BM25) and vector search fused by reciprocal rank,
# the baseline a user compares the graph with.
Mode = Literal["pagerank", "dense", "hybrid", "flat"]
# What a passage's `score` is, by the mode that ranked it: its personalised-PageRank mass (the
# passages' scores sum to at most 1), Neo4j's vector-index cosine similarity ((1 + cos) / 2, in
# [0, 1]), or its reciprocal-rank-fusion score (sum of 1 / (60 + rank) over PageRank and dense,
# or over BM25 and dense).
# A reranker's own score where one re-scored the ranking (`reranker` names it).
ScoreKind = Literal["pagerank_mass", "cosine", "rrf", "rerank"]
SCORE_KINDS: dict[str, ScoreKind] = {
    "pagerank": "pagerank_mass",
    "dense": "cosine",
    "hybrid": "rrf",
    "flat": "rrf",
}


MatchKind = Literal["exact", "semantic"]


@dataclass(frozen=True)
class MatchedConcept:
    entity: str  # what in the question matched: a span or an entity
    uid: str
    key: str
    name: str
    type: str
    match: MatchKind
    similarity: float
    frequency: int
    weight: float = 0.0
    node: int = -1  # GDS node id
    support: float = 0.0  # verified: the flat relevance of its best passage


@dataclass(frozen=True)
class RetrievedPassage:
    id: str
    doc_id: str
    title: str
    text: str
    score: float
    provenance: Provenance = field(default_factory=Provenance)

    def citation(self) -> str:
        """Its provenance as one line (`Provenance.citation`), the document id without a source."""
        return self.provenance.citation(self.doc_id)

    @classmethod
    def from_row(cls, r: Mapping[str, Any]) -> RetrievedPassage:
        """A passage as the Cypher statements return one (`id`, `doc_id`, ..., `provenance`)."""
        return cls(
            r["id"],
            r["doc_id"],
            r["title"] or "",
            r["text"] or "",
            float(r["score"]),
            Provenance.from_map(r.get("provenance")),
        )


@dataclass
class RetrievalResult:
    query: str
    namespace: str
    entities: list[str]
    matches: list[MatchedConcept]
    passages: list[RetrievedPassage]
    mode: Mode
    fallback_reason: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    # The LLM's tokens as its server counted them; None: it sent no counts (unknown)
    input_tokens: int | None = 0
    output_tokens: int | None = 0
    # How the walk ran: "global" (the namespace's projection) or "local" (the question's
    # neighbourhood), its graph's size, and the restart vector it started from
    walk: str = ""
    graph_nodes: int = 0
    graph_relationships: int = 0
    restart: list[list[float]] = field(default_factory=list)
    reranker: str = ""  # the reranker that re-scored the passages (empty: none did)

    # Derived fields that machine-readable output (the CLI's --json) carries too
    json_properties: ClassVar[tuple[str, ...]] = ("score_kind",)

    @property
    def score_kind(self) -> ScoreKind:
        """What the passages' `score` is (see `ScoreKind`): it follows `mode`, which says how
        they were ranked in the end (`dense` also when the walk fell back, see
        `fallback_reason`)."""
        return "rerank" if self.reranker else SCORE_KINDS[self.mode]


@dataclass(frozen=True)
class Citation:
    """A marker of an answer (`[2]`) and what it names: the retrieved passage it numbers
    (1-based, in the order the reader was given them) with that passage's provenance."""

    marker: int
    passage_id: str
    doc_id: str
    provenance: Provenance


@dataclass
class AnswerResult:
    answer: str
    retrieval: RetrievalResult
    input_tokens: int | None  # None: the LLM server sent no counts
    output_tokens: int | None
    # The passages the answer's markers name, in order of first use, and its sentences that
    # carry no marker (a claim the reader did not attribute)
    citations: list[Citation] = field(default_factory=list)
    uncited: list[str] = field(default_factory=list)
    # The reply stopped at the reader's token cap: the answer is what came before it
    cut: bool = False


__all__ = [
    "PROVENANCE_FIELDS",
    "SCORE_KINDS",
    "AnswerResult",
    "Citation",
    "MatchedConcept",
    "Mode",
    "Provenance",
    "RetrievalResult",
    "RetrievedPassage",
    "ScoreKind",
]


# What the library shows of a namespace beyond a retrieval (`namespace_views`); the HTTP API
# and the remote clients send and return these same types.


@dataclass(frozen=True)
class DocumentInfo:
    id: str
    title: str
    passages: int
    # Where it was read from (its passages' provenance) and its last page, when it has pages
    source: str | None = None
    pages: int | None = None


@dataclass(frozen=True)
class DocumentPage:
    """A page of a namespace's documents, by id, and how many it holds in all."""

    namespace: str
    documents: list[DocumentInfo]
    total: int


@dataclass(frozen=True)
class GraphNode:
    id: str
    label: Literal["Concept", "Passage"]
    name: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GraphEdge:
    source: str
    target: str
    type: str


@dataclass(frozen=True)
class Neighbourhood:
    """A concept's neighbourhood; `truncated` says whether the node bound cut it."""

    namespace: str
    concept: str
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: bool


@dataclass(frozen=True)
class WhyConcept:
    name: str
    weight: float
    frequency: int
    match: str


# A step of a walk's path: where its mass started (a linked concept of the question, or a passage
# the flat ranking seeded), a concept or passage it crossed, or the passage explained.
StepRole = Literal["question", "seed", "bridge", "passage"]


@dataclass(frozen=True)
class WhyStep:
    kind: Literal["concept", "passage"]
    # A concept's uid or a passage's id
    id: str
    # A concept's name or a passage's title (its document id where it has none)
    name: str
    role: StepRole
    # The relationship the walk took from the step before (None on the first): HAS_PASSAGE
    # (stored concept -> passage; an undirected walk takes it either way) or CO_OCCURRENCE
    rel: str | None = None
    # The first step's weight in the restart vector
    weight: float | None = None


@dataclass(frozen=True)
class WhyPath:
    """One way the walk's mass reached the passage: from a restart node over the projection's
    relationships. `strength` is the share of the restart mass the path carries there: the
    first step's weight times damping / degree for each step taken (degrees in the namespace's
    projection), so paths compare by how much they gave."""

    steps: list[WhyStep]
    strength: float


@dataclass(frozen=True)
class WhyRetrieved:
    """A passage's rank and score in the top k (None: not in it), its weight as a flat-ranking
    seed, the question's linked concepts that point at it, and the walk's strongest paths to it
    (bounded: `paths_left_out` counts the weaker ones not shown)."""

    namespace: str
    passage_id: str
    question: str
    top_k: int
    # 1-based rank in the top k, or None (with score None) when the passage is not in it
    rank: int | None
    score: float | None
    score_kind: str
    # Its weight in the restart vector when the flat ranking seeded it, else 0
    seed_weight: float
    # The question's linked concepts that point at this passage over HAS_PASSAGE
    concepts: list[WhyConcept]
    # The walk's strongest paths to it, strongest first, together at most `WHY_MAX_NODES` nodes;
    # none where no walk ranked the question (a dense fallback) or none reaches the passage
    paths: list[WhyPath] = field(default_factory=list)
    paths_left_out: int = 0


@dataclass(frozen=True)
class TopConcept:
    """One of a namespace's most connected concepts: the passages it occurs in (its frequency)
    and the concepts it co-occurs with."""

    name: str
    type: str | None
    entity: bool
    passages: int
    co_occurring: int


@dataclass(frozen=True)
class Overview:
    """What a namespace's counts leave out: its most connected concepts (by the passages they
    occur in, then the concepts they co-occur with), the embedding model of its vectors, and
    whether an ingest is writing it now."""

    namespace: str
    top_concepts: list[TopConcept]
    embedding_model: str | None
    embedding_dimensions: int | None
    ingesting: bool
