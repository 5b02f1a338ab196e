"""The events of a streamed ask as `TeragRemote.answer_stream` yields them, read from the NDJSON
lines of `POST .../ask` with `"stream": true` (`streaming.py` writes them).

Imports pydantic and the schemas only, like `remote_client.py`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from terag_neo4j.errors import TeragError
from terag_neo4j.service.schemas import Answer, Citation, Passage, Retrieval

if TYPE_CHECKING:
    import httpx


class RemoteError(TeragError):
    """An error answer of the service: `status`, `type` and `message` as it sent them."""

    def __init__(self, status: int, type_: str, message: str) -> None:
        super().__init__(f"{status} {type_}: {message}")
        self.status = status
        self.type = type_
        self.message = message


def raise_for(r: httpx.Response) -> None:
    """`RemoteError` for an error answer (read whole: a streamed one is read first)."""
    if r.status_code < 400:
        return
    try:
        err = r.json()["error"]
        raise RemoteError(r.status_code, str(err["type"]), str(err["message"]))
    except (ValueError, KeyError, TypeError):
        raise RemoteError(r.status_code, "HTTPError", r.text[:200]) from None


@dataclass(frozen=True)
class StreamedPassages:
    """The first event: the passages the reader is given, in the order its markers number."""

    passages: list[Passage]


@dataclass(frozen=True)
class StreamedText:
    """A piece of the answer as the reader writes it; the pieces joined are the answer before
    its whitespace is collapsed."""

    text: str


@dataclass(frozen=True)
class StreamedAnswer:
    """The last event: the whole answer, as `answer()` returns it."""

    answer: Answer


AskEvent = StreamedPassages | StreamedText | StreamedAnswer


def incomplete() -> RemoteError:
    return RemoteError(
        502, "IncompleteStream", "the answer's stream ended before its last line; ask again"
    )


def stream_event(raw: str) -> AskEvent | None:
    """One line of the stream as an event; None for a line the events do not carry (the
    `answer` line: `done` says the same, with the tokens and the retrieval). An `error` line
    raises it as `RemoteError`."""
    d: dict[str, Any] = json.loads(raw)
    kind = d.get("event")
    if kind == "passages":
        return StreamedPassages([Passage.model_validate(p) for p in d["passages"]])
    if kind == "token":
        return StreamedText(str(d["text"]))
    if kind == "done":
        retrieval = Retrieval.model_validate(d["retrieval"])
        return StreamedAnswer(
            Answer(
                answer=d["answer"],
                passage_ids=[p.id for p in retrieval.passages],
                citations=[Citation.model_validate(c) for c in d["citations"]],
                uncited=d.get("uncited", []),
                retrieval=retrieval,
                input_tokens=d["input_tokens"],
                output_tokens=d["output_tokens"],
                cut=bool(d.get("cut", False)),
            )
        )
    if kind == "error":
        err = d.get("error") or {}
        raise RemoteError(
            int(d.get("status", 500)), str(err.get("type", "Error")), str(err.get("message", ""))
        )
    return None
