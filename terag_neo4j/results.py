"""What a retrieval and an answer return: typed results that cross from the retriever to the
client, the LangChain and neo4j-graphrag integrations and the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from terag_neo4j.restart import MatchedConcept

Mode = Literal["pagerank", "dense", "hybrid"]


@dataclass(frozen=True)
class RetrievedPassage:
    id: str
    doc_id: str
    title: str
    text: str
    score: float


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
    input_tokens: int = 0
    output_tokens: int = 0
    # How the walk ran: "global" (the namespace's projection) or "local" (the question's
    # neighbourhood), its graph's size, and the restart vector it started from
    walk: str = ""
    graph_nodes: int = 0
    graph_relationships: int = 0
    restart: list[list[float]] = field(default_factory=list)


@dataclass
class AnswerResult:
    answer: str
    retrieval: RetrievalResult
    input_tokens: int
    output_tokens: int


__all__ = ["AnswerResult", "MatchedConcept", "Mode", "RetrievalResult", "RetrievedPassage"]
