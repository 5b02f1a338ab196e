"""Why a passage was retrieved, and a concept's neighbourhood: `TeragClient.why` and
`TeragClient.neighbourhood` over HTTP."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from terag_neo4j.core.results import Neighbourhood, WhyRetrieved
from terag_neo4j.service.asking import check_question
from terag_neo4j.service.auth import ReadNamespace
from terag_neo4j.service.deps import ERRORS, RuntimeDep
from terag_neo4j.service.reads import as_reader
from terag_neo4j.service.schemas import MAX_CONCEPT_CHARS, MAX_PASSAGE_ID_CHARS

router = APIRouter(prefix="/v1")


@router.get(
    "/namespaces/{namespace}/passages/{passage_id:path}/why",
    response_model=WhyRetrieved,
    tags=["query"],
    responses=ERRORS,
)
async def why_retrieved(
    rt: RuntimeDep,
    namespace: ReadNamespace,
    passage_id: Annotated[str, Path(max_length=MAX_PASSAGE_ID_CHARS)],
    question: Annotated[str, Query(min_length=1)],
    top_k: Annotated[int, Query(ge=1, le=100)] = 5,
) -> WhyRetrieved:
    """Why a passage was (or was not) retrieved for a question: its rank and score in the top
    k, its weight as a flat-ranking seed, and the question's linked concepts that name it."""
    q = check_question(question, rt.service.max_question_chars)
    return await rt.call(as_reader(namespace, lambda c: c.why(passage_id, q, namespace, top_k)))


@router.get(
    "/namespaces/{namespace}/graph", response_model=Neighbourhood, tags=["graph"], responses=ERRORS
)
async def concept_graph(
    rt: RuntimeDep,
    namespace: ReadNamespace,
    concept: Annotated[
        str, Query(min_length=1, max_length=MAX_CONCEPT_CHARS, examples=["Ferdinand Porsche"])
    ],
    depth: Annotated[int, Query(ge=1, le=3)] = 1,
    max_nodes: Annotated[int, Query(ge=1, le=500)] = 50,
) -> Neighbourhood:
    """A concept's neighbourhood (concepts and passages, the walk's edges), bounded by depth and
    node count; `truncated` says whether the bound cut it."""
    return await rt.call(
        as_reader(namespace, lambda c: c.neighbourhood(concept, namespace, depth, max_nodes))
    )
