"""`terag retrieve/ask/index` through a running service (`--url`, or TERAG_URL; TERAG_API_KEY for
its key), with the in-process commands' output.

The URL and the key come from the command line and the environment only, never from ./.env
(`remote_settings`).

Retrieve and ask import the standard library only (no torch, no Neo4j driver, no model, not
even httpx or pydantic), so a call costs the interpreter's start and one request; index also
reads the files as `terag index` does. Errors are mapped to the CLI's exit codes here, so that
reporting one does not import the driver either.
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, TextIO
from urllib.parse import urlsplit

from terag_neo4j.cli.remote_settings import setting
from terag_neo4j.errors import TeragError
from terag_neo4j.service.paths import job_path, namespace_path

# The CLI's exit codes (terag_neo4j.cli), by the service's status
_EXIT_BY_STATUS = {400: 2, 401: 6, 403: 6, 404: 4, 413: 2, 415: 2, 422: 2, 429: 3, 503: 3}
BATCH_DOCUMENTS = 500
BATCH_CHARS = 8_000_000  # well under the service's default body limit (32 MiB)
TIMEOUT_S = 600.0  # an answer waits on the reader LLM


class Service:
    """The few calls the CLI makes, over the standard library's HTTP client.

    Not `TeragRemote`: importing httpx, httpcore and pydantic, and setting up TLS, costs a call
    about 0.25 s of CPU, more than the retrieval itself; this costs a few milliseconds. Answers
    stay the JSON the service sent (a library user gets the typed models from `TeragRemote`)."""

    def __init__(self, url: str, api_key: str | None) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise _Usage(f"service URL {url!r}: give http://HOST:PORT or https://HOST:PORT")
        self.url = url.rstrip("/")
        self.base = parts.path.rstrip("/")
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            from terag_neo4j.service.plain_http import warn_if_plain

            warn_if_plain(url, api_key)
            self.headers["Authorization"] = f"Bearer {api_key}"
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self.conn = cls(parts.hostname, parts.port, timeout=TIMEOUT_S)

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        try:
            self.conn.request(method, self.base + path, body=data, headers=self.headers)
            r = self.conn.getresponse()
            raw = r.read()
        except (OSError, http.client.HTTPException) as e:
            raise self._unreachable(e) from e
        if r.status >= 400:
            raise _call_error(r.status, raw)
        return json.loads(raw) if raw else None

    def stream(self, path: str, body: Any) -> Iterator[dict[str, Any]]:
        """POST `body` and yield the NDJSON lines of the answer as they arrive."""
        data = json.dumps(body).encode("utf-8")
        headers = {**self.headers, "Accept": "application/x-ndjson"}
        try:
            self.conn.request("POST", self.base + path, body=data, headers=headers)
            r = self.conn.getresponse()
            if r.status >= 400:
                raise _call_error(r.status, r.read())
            while raw := r.readline():
                if raw.strip():
                    yield json.loads(raw)
        except (OSError, http.client.HTTPException) as e:
            raise self._unreachable(e) from e
        except ValueError as e:  # not a line of the answer's stream (a proxy's page?)
            raise ServiceCallError(502, f"the service sent a line that is not JSON: {e}") from e

    def _unreachable(self, e: Exception) -> ServiceUnreachable:
        return ServiceUnreachable(
            f"cannot reach the service at {self.url} ({type(e).__name__}: {e}); is terag serve up?"
        )

    def ns(self, namespace: str, tail: str) -> str:
        return namespace_path(namespace, tail)

    def close(self) -> None:
        self.conn.close()


class ServiceUnreachable(TeragError, RuntimeError):
    """The service did not answer (not running, wrong address, connection lost)."""


class ServiceCallError(TeragError, RuntimeError):
    """An error answer of the service: its status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


def _call_error(status: int, raw: bytes) -> ServiceCallError:
    try:
        return ServiceCallError(status, str(json.loads(raw)["error"]["message"]))
    except (ValueError, KeyError, TypeError):
        return ServiceCallError(status, raw[:200].decode("utf-8", "replace"))


def _namespace(args: argparse.Namespace | None) -> str:
    ns = getattr(args, "namespace", None) if args is not None else None
    return ns or setting("TERAG_NAMESPACE") or "default"


def _top_k(args: argparse.Namespace) -> int:
    k = getattr(args, "top_k", None) or setting("TERAG_TOP_K")
    return int(k) if k else 5


class _Usage(TeragError, ValueError):
    """An option the service cannot honour (exit 2)."""


def _refuse_extractor(args: argparse.Namespace) -> None:
    if getattr(args, "extractor", None):
        raise _Usage(
            "-e/--extractor picks the query backend of an in-process call; a service uses its "
            "own settings (unset TERAG_URL, or drop --url, to choose)"
        )


def retrieval_json(data: dict[str, Any]) -> dict[str, Any]:
    """The service's retrieval JSON with the keys in `terag retrieve --json`'s order (the
    dataclass's fields, then score_kind)."""
    d = dict(data)
    d["score_kind"] = d.pop("score_kind")
    return d


def view(data: dict[str, Any]) -> SimpleNamespace:
    """Attribute access over a retrieval's JSON, as `format_retrieval` reads a result."""
    return SimpleNamespace(
        **{
            **data,
            "matches": [SimpleNamespace(**m) for m in data["matches"]],
            "passages": [SimpleNamespace(**p) for p in data["passages"]],
        }
    )


def emit(args: argparse.Namespace, obj: Any, text: str) -> None:
    print(json.dumps(obj, indent=2, default=str) if getattr(args, "json", False) else text)


def _fail(e: Exception) -> int:
    if isinstance(e, ServiceCallError):
        msg, code = e.message, _EXIT_BY_STATUS.get(e.status, 1)
    else:  # the service is not there, or did not answer
        msg, code = str(e), 3
    print(f"terag: error: {msg}", file=sys.stderr)
    return code


def run(args: argparse.Namespace, url: str) -> int:
    """The command of `args` against the service at `url`; the CLI's exit code."""
    command = {"retrieve": _retrieve, "ask": _ask, "index": _index}[args.command]
    try:
        service = Service(url, setting("TERAG_API_KEY"))
        try:
            return command(args, service)
        finally:
            service.close()
    except _Usage as e:
        print(f"terag: error: {e}", file=sys.stderr)
        return 2
    except (ServiceCallError, ServiceUnreachable) as e:
        return _fail(e)


def _retrieve(args: argparse.Namespace, service: Service) -> int:
    from terag_neo4j.cli.output import format_retrieval

    _refuse_extractor(args)
    body: dict[str, Any] = {"question": args.question, "top_k": _top_k(args)}
    if args.mode:
        body["mode"] = args.mode
    if getattr(args, "rerank", None) is not None:
        body["rerank"] = args.rerank
    res = service.call("POST", service.ns(_namespace(args), "/retrieve"), body)
    emit(args, retrieval_json(res), format_retrieval(view(res)))
    return 0


def _ask(args: argparse.Namespace, service: Service) -> int:
    """The JSON waits for the whole answer; the text shows it as the reader writes it, and ends
    as the same text."""
    _refuse_extractor(args)
    body: dict[str, Any] = {"question": args.question, "top_k": _top_k(args)}
    path = service.ns(_namespace(args), "/ask")
    if getattr(args, "json", False):
        ans = service.call("POST", path, body)
        obj = {  # the keys of `terag ask --json` in-process (AnswerResult's fields), in its order
            "answer": ans["answer"],
            "retrieval": retrieval_json(ans["retrieval"]),
            "input_tokens": ans["input_tokens"],
            "output_tokens": ans["output_tokens"],
            "citations": ans.get("citations", []),
            "uncited": ans.get("uncited", []),
        }
        emit(args, obj, "")
        return 0
    _print_streamed(service, path, {**body, "stream": True}, sys.stdout)
    return 0


def answer_text(ans: dict[str, Any]) -> str:
    """`terag ask`'s text of the service's answer (its JSON, or a stream's `done` line)."""
    from terag_neo4j.cli.output import format_answer, format_retrieval, tokens

    r = ans["retrieval"]
    spent = (
        f"tokens: retrieval {tokens(r['input_tokens'], r['output_tokens'])}, answer "
        f"{tokens(ans['input_tokens'], ans['output_tokens'])}"
    )
    cited = SimpleNamespace(
        answer=ans["answer"],
        citations=[SimpleNamespace(**c) for c in ans.get("citations", [])],
        uncited=ans.get("uncited", []),
        cut=ans.get("cut", False),
    )
    return f"{format_answer(cited)}\n\n{format_retrieval(view(r))}\n\n{spent}"


def _print_streamed(service: Service, path: str, body: dict[str, Any], out: TextIO) -> None:
    """`answer: ` once the passages are in, the answer's characters as the reader writes them
    (their whitespace collapsed, as the answer has it), then the rest of `answer_text`. A
    failure ends the line first, so its error stands on a line of its own."""
    head, raw, shown = "answer: ", "", ""
    started = False
    try:
        for event in service.stream(path, body):
            kind = event.get("event")
            if kind == "passages" and not started:
                out.write(head)
                started = True
            elif kind == "token":
                raw += str(event["text"])
                now = " ".join(raw.split())  # grows by appending: what was shown stays
                out.write(now[len(shown) :])
                shown = now
            elif kind == "done":
                text = answer_text(event)
                shown_line = head + shown
                # A reader that ignored the answer format streamed nothing (or something else)
                out.write(text[len(shown_line) :] if text.startswith(shown_line) else "\n" + text)
                out.write("\n")
                started = False
                return
            elif kind == "error":
                err = event.get("error") or {}
                raise ServiceCallError(int(event.get("status", 500)), str(err.get("message", "")))
            out.flush()
        raise ServiceUnreachable(
            f"the service at {service.url} ended the answer's stream before its last line; "
            "ask again"
        )
    finally:
        if started:
            out.write("\n")
        out.flush()


def _batches(docs: list[Any]) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = [[]]
    size = 0
    for d in docs:
        body = d.record()
        if out[-1] and (len(out[-1]) >= BATCH_DOCUMENTS or size + len(d.text) > BATCH_CHARS):
            out.append([])
            size = 0
        out[-1].append(body)
        size += len(d.text)
    return [b for b in out if b]


def _wait(service: Service, job_id: str, bar: Any = None) -> dict[str, Any]:
    """Poll the job until it ends, moving `bar` (a tqdm bar, or None) with its passages."""
    while True:
        job: dict[str, Any] = service.call("GET", job_path(job_id))
        if bar is not None:
            bar.total = max(int(job["passages_total"]), int(job["passages_done"]), 1)
            bar.n = int(job["passages_done"])
            bar.set_postfix_str(str(job.get("document") or ""), refresh=False)
            bar.refresh()
        if job["state"] in ("succeeded", "failed", "cancelled"):
            return job
        time.sleep(0.5)


def _index(args: argparse.Namespace, service: Service) -> int:
    """Files are read here, as `terag index` reads them (the same ids, titles and records), and
    sent as documents; each batch is a job of the service, waited for in turn."""
    from tqdm import tqdm

    from terag_neo4j.indexing.loading import load_documents

    if getattr(args, "extractor", None) or getattr(args, "llm_budget", None) is not None:
        raise _Usage(
            "extraction options apply to an in-process index; a service indexes with its own "
            "settings (unset TERAG_URL, or drop --url, to choose)"
        )
    t0 = time.perf_counter()
    errors: list[str] = []
    globs = (getattr(args, "include", ()), getattr(args, "exclude", ()))
    docs = list(load_documents(args.paths, errors, *globs))
    ns = _namespace(args)
    keys = ("passages_total", "passages_new", "passages_unchanged", "passages_replaced")
    total: dict[str, Any] = {
        k: 0 for k in (*keys, "input_tokens", "output_tokens", "tokens_unknown")
    }
    warnings: list[str] = []
    jobs: list[str] = []
    for batch in _batches(docs):
        job = service.call("POST", service.ns(ns, "/documents"), {"documents": batch})
        with tqdm(
            total=max(1, int(job["passages_total"])),
            desc=f"indexing {ns} (job {job['id']})",
            unit="passage",
            disable=getattr(args, "quiet", False) or getattr(args, "json", False),
        ) as bar:
            job = _wait(service, job["id"], bar)
        jobs.append(job["id"])
        for k in total:
            total[k] += job.get(k) or 0  # a service of an earlier version sends no tokens_unknown
        warnings.extend(job["errors"])
        if job["state"] != "succeeded":
            warnings.append(f"job {job['id']} {job['state']}")
            break
    took = time.perf_counter() - t0
    text = (
        f"ingest through {service.url} into {ns!r}: {len(docs)} documents, "
        f"{total['passages_total']} passages, {total['passages_new']} written "
        f"({total['passages_replaced']} replaced), {total['passages_unchanged']} unchanged\n"
        f"  tokens spent: {total['input_tokens']} in / {total['output_tokens']} out"
        + (
            f" (+{total['tokens_unknown']} extractions of unknown count)"
            if total["tokens_unknown"]
            else ""
        )
        + "; "
        f"time: {took:.1f}s; jobs {', '.join(jobs) or '-'}"
    )
    if warnings:
        text += "\n  " + "\n  ".join(warnings)
    if errors:
        text += f"\n  skipped {len(errors)} file(s):\n" + "\n".join(f"    {e}" for e in errors)
    obj = {"namespace": ns, "documents": len(docs), **total, "total_s": round(took, 2)}
    emit(args, {**obj, "jobs": jobs, "warnings": warnings, "skipped": errors}, text)
    failed = any(w.startswith("job ") for w in warnings)
    return 1 if failed else (5 if errors else 0)
