"""The bounds a caller's arguments are held to, the same on every surface: the HTTP routes
declare them (FastAPI, the request models) and the MCP tools check them with these functions,
first, before the key is looked at or any other work is done. Each bound is one constant
(`schemas`) that both use; a refusal quotes at most a short, escaped prefix of what was sent."""

from __future__ import annotations

from terag_neo4j.errors import echo
from terag_neo4j.service.asking import check_question
from terag_neo4j.service.http_errors import ServiceError
from terag_neo4j.service.schemas import MAX_CONCEPT_CHARS, MAX_ID_CHARS, MAX_PASSAGE_ID_CHARS
from terag_neo4j.store.ids import NAMESPACE_RE


def check_namespace_arg(namespace: object) -> str:
    """A namespace name (`schemas.NAMESPACE_PATTERN`): 422 otherwise. The length is checked
    before the pattern, so a megabyte costs no more than a short name."""
    if (
        not isinstance(namespace, str)
        or len(namespace) > 64
        or not NAMESPACE_RE.fullmatch(namespace)
    ):
        raise ServiceError(
            422,
            f"namespace: {echo(namespace)} is not a namespace name: use 1-64 letters, digits, "
            "'_' or '-', starting with a letter or digit",
        )
    return namespace


def check_text(field: str, value: object, limit: int) -> str:
    """A string argument of 1 to `limit` characters (an id, a concept's name): 422 otherwise."""
    if not isinstance(value, str) or not value:
        raise ServiceError(422, f"{field}: a non-empty string, got {echo(value)}")
    if len(value) > limit:
        raise ServiceError(422, f"{field}: at most {limit} characters, got {len(value):,}")
    return value


def check_document_id(value: object) -> str:
    return check_text("document_id", value, MAX_ID_CHARS)


def check_passage_id(value: object) -> str:
    return check_text("passage_id", value, MAX_PASSAGE_ID_CHARS)


def check_job_id(value: object) -> str:
    return check_text("job_id", value, MAX_ID_CHARS)


def check_concept(value: object) -> str:
    return check_text("concept", value, MAX_CONCEPT_CHARS)


def check_question_arg(value: object, limit: int) -> str:
    if not isinstance(value, str):
        raise ServiceError(422, f"question: a string, got {echo(value)}")
    return check_question(value, limit)
