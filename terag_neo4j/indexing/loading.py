"""Input stage: documents from files or Python objects, split into passages.

A passage id is stable across runs: the id the input gives it, else a hash of its content, so
re-ingesting the same input maps onto the same graph nodes. A file's document id is its absolute
path (`document_id`), so two files are never one document, whatever their names.
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from terag_neo4j.core import documents as inputs
from terag_neo4j.core.documents import (
    Document,
    InputError,
    InputNotFound,
    Passage,
    ShouldStop,
    absolute,
    content_hash,
    stop_if_asked,
)
from terag_neo4j.core.passage_ids import passage_id
from terag_neo4j.indexing.chunking import Chunk, chunk_spans
from terag_neo4j.indexing.readers.text import jsonl_records

if TYPE_CHECKING:
    from terag_neo4j.indexing.report import IngestReport
    from terag_neo4j.store import GraphStore

log = logging.getLogger(__name__)

# Document, Passage and their errors live in `core.documents`, file reading in `readers`;
# importable from here too.
__all__ = [
    "Document",
    "InputError",
    "InputNotFound",
    "Passage",
    "absolute",
    "content_hash",
    "default_tokenizer",
    "document_id",
    "document_id_candidates",
    "gather_documents",
    "iter_files",
    "iter_sources",
    "jsonl_records",
    "load_documents",
    "split_document",
    "to_passages",
]


class Tokenizer(Protocol):
    def __call__(self, text: str, **kwargs: object) -> object: ...


@lru_cache(maxsize=4)
def default_tokenizer(model: str | None = None) -> object:
    """The embedding model's own tokenizer (TERAG_EMBEDDING_MODEL; default, and for a served
    model: the uncased WordPiece of MiniLM and bge): passages are sized in the tokens that
    matter. Only a sentence-transformers hub name needs transformers (the `st` extra)."""
    from terag_neo4j.embeddings import onnx as onnx_models
    from terag_neo4j.embeddings import settings_home
    from terag_neo4j.embeddings.model import model_spec
    from terag_neo4j.embeddings.tokenizer import SizingTokenizer, wordpiece_tokenizer

    spec = model_spec(model) if model else None
    if spec is None or spec.kind not in {"packaged", "onnx", "st"}:
        # A served model's tokenizer is not on this machine
        return wordpiece_tokenizer()
    if spec.kind == "packaged":
        return onnx_models.sizing_tokenizer(spec.target, settings_home())
    if spec.kind == "onnx":
        return onnx_models.folder_tokenizer(Path(spec.target))
    if (Path(spec.target) / "tokenizer.json").is_file():
        return SizingTokenizer.from_file(Path(spec.target) / "tokenizer.json")
    from terag_neo4j.embeddings.base import import_st

    transformers = import_st("transformers", f"the embedding model {model}")
    local = Path(spec.target).is_dir()
    return transformers.AutoTokenizer.from_pretrained(spec.target, local_files_only=local)


def split_document(
    doc: Document,
    max_tokens: int,
    overlap: int,
    tokenizer: object | None = None,
    model: str | None = None,
    should_stop: ShouldStop | None = None,
) -> list[Passage]:
    """A document's passages: a benchmark record whole, anything else by its structure
    (`chunking`); a passage's title is its heading path under the document's title.
    `should_stop` is asked every so often while chunking; `IngestCancelled` when it says so.
    A document over `inputs.MAX_DOCUMENT_CHARS` characters is refused before chunking, one
    that makes more than `inputs.MAX_DOCUMENT_PASSAGES` passages as soon as it does
    (`InputError`)."""
    name = doc.title if doc.title_is_name else ""
    where = f"document {doc.id!r} ({doc.source or 'python object'})"
    if len(doc.text) > inputs.MAX_DOCUMENT_CHARS:
        raise InputError(
            f"{where} has {len(doc.text):,} characters, over the "
            f"{inputs.MAX_DOCUMENT_CHARS:,} limit; split it into smaller files"
        )
    if doc.is_passage:
        text = doc.text.strip()
        return [Passage(passage_id(doc.id), doc.id, 0, doc.title, text, name, doc.source)]
    tok = tokenizer or default_tokenizer(model)
    limit = inputs.MAX_DOCUMENT_PASSAGES
    parts: list[Chunk] = []
    for c in chunk_spans(doc.text, max_tokens, overlap, tok, should_stop):
        if len(parts) == limit:
            raise InputError(
                f"{where} makes more than {limit:,} passages of {max_tokens} tokens (the limit "
                "per document); split it into smaller files"
            )
        parts.append(c)
    out = []
    for i, c in enumerate(parts):
        heads = tuple(h for h in c.path if h != doc.title)
        title = " > ".join(h for h in (doc.title, *heads) if h)
        heading = heads[-1] if heads else name
        pid = passage_id(doc.id, None if len(parts) == 1 else i)
        first, last = _page(doc.pages, c.start), _page(doc.pages, c.end - 1)
        span = {"char_start": c.start, "char_end": c.end, "page_start": first, "page_end": last}
        out.append(Passage(pid, doc.id, i, title, c.text, heading, doc.source, heads, **span))
    return out


def _page(pages: tuple[int, ...], offset: int) -> int | None:
    """The 1-based page holding character `offset` of a text whose pages start at `pages`."""
    return bisect_right(pages, offset) if pages else None


def to_passages(
    docs: Iterable[Document],
    max_tokens: int,
    overlap: int,
    tokenizer: object | None = None,
    model: str | None = None,
    should_stop: ShouldStop | None = None,
) -> Iterator[Passage]:
    """Passages of every usable document, sized by `tokenizer` (default: that of the embedding
    model `model`); empty documents are skipped with a warning, never silently. `should_stop`
    is asked before each document and while chunking it (`IngestCancelled`)."""
    seen: set[str] = set()
    for doc in docs:
        stop_if_asked(should_stop, "chunking")
        if len(doc.text) <= inputs.MAX_DOCUMENT_CHARS and not doc.text.strip():
            log.warning("skipping empty document %r (%s)", doc.id, doc.source or "python object")
            continue
        for p in split_document(doc, max_tokens, overlap, tokenizer, model, should_stop):
            if p.id in seen:
                log.warning("duplicate passage id %r in the input; keeping the first", p.id)
                continue
            seen.add(p.id)
            yield p


def document_id(path: str | Path) -> str:
    """The id of a file: its absolute path.

    Only the whole path tells `a/docs/readme.md` from `b/docs/readme.md`: an id made of the
    last folder names would make them one document (the second replacing the first, and a
    delete of any `.../docs/readme.md` removing it). The absolute path is the same however the
    path was typed (`docs/`, `./docs`, `/abs/docs`, `.` inside it) and wherever the command
    runs, and whether the file was named on its own or found in a folder. Moving a corpus makes
    new documents: delete the old ones by their old paths (`terag delete OLD_PATH`, which works
    when the file is gone too).
    """
    return absolute(path)


def document_id_candidates(path: str | Path) -> list[str]:
    """The id `index` gave the file at `path` (its absolute path): one candidate, worked out
    from the path alone, so a file deleted from the disk still resolves; never a file at
    another path whose last folders have the same names."""
    return [absolute(path)]


def iter_sources(
    paths: Sequence[str | Path], include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> Iterator[tuple[Path, str]]:
    """(file, document id) for every supported file under `paths`, in a stable order: folders
    walked recursively (`terag_neo4j.indexing.readers.discovery`: hidden and unsupported files skipped,
    symbolic link loops detected, `include` / `exclude` globs applied); a file named itself is
    taken whatever the globs say."""
    from terag_neo4j.indexing.readers import SUPPORTED_SUFFIXES, readable_kind
    from terag_neo4j.indexing.readers.discovery import walk

    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise InputNotFound(f"{p}: no such file or directory")
        if p.is_dir():
            files = list(walk(p, include, exclude))
            if not files:
                selected = " matching --include / --exclude" if include or exclude else ""
                raise InputNotFound(
                    f"{p}: no supported files{selected} in this folder (nor below it); "
                    f"supported: {', '.join(sorted(SUPPORTED_SUFFIXES))}"
                )
            for f in files:
                yield f, document_id(f)
        elif p.suffix.lower() in SUPPORTED_SUFFIXES:
            yield p, document_id(p)
        else:
            readable_kind(p)  # a PDF, .docx or HTML page under another name is read as such
            yield p, document_id(p)


def iter_files(paths: Sequence[str | Path]) -> Iterator[Path]:
    for path, _ in iter_sources(paths):
        yield path


def load_documents(
    paths: Sequence[str | Path],
    errors: list[str] | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Iterator[Document]:
    """Documents from files and folders (recursively; see `iter_sources`), each file read by
    the reader its content calls for (`terag_neo4j.indexing.readers`); ids as `document_id` makes them.

    With `errors` given, an unreadable file is reported there (one line naming it) and skipped
    so one bad file does not stop a large ingest; without it the first bad file raises
    `InputError`.
    """
    from terag_neo4j.indexing.readers import read_file

    for path, doc_id in iter_sources(paths, include, exclude):
        try:
            yield from read_file(path, doc_id, absolute(path))
        except InputError as e:
            if errors is None:
                raise
            log.error("%s", e)
            errors.append(str(e))


def gather_documents(
    source: object,
    errors: list[str] | None,
    include: Sequence[str],
    exclude: Sequence[str],
) -> tuple[list[Document], list[Path]]:
    """What `index` takes, as Documents: paths (files, folders: read with `load_documents`),
    Documents and LangChain Documents, one or an iterable of them; and the paths named."""
    from langchain_core.documents import Document as LCDocument

    if isinstance(source, str | Path | Document | LCDocument):
        source = [source]  # one item, not a string's characters or a model's fields
    if not isinstance(source, Iterable):
        raise InputError(f"index() takes paths or Documents, not a {type(source).__name__}")
    items = list(source)
    for i, x in enumerate(items):
        if not isinstance(x, str | Path | Document | LCDocument):
            raise InputError(
                f"index() item {i} is a {type(x).__name__}, not a path or a Document: wrap "
                "records as Document(id=..., text=..., title=...)"
            )
    paths = [Path(x) for x in items if isinstance(x, str | Path)]
    loaded = load_documents(paths, errors, include, exclude) if paths else ()
    docs: list[Document] = [*loaded, *(x for x in items if isinstance(x, Document))]
    lc_docs = [x for x in items if isinstance(x, LCDocument)]
    if lc_docs:
        from terag_neo4j.indexing.langchain_documents import from_langchain

        docs += from_langchain(lc_docs)
    return docs, paths


def remove_stale(
    store: GraphStore,
    ns: str,
    doc_ids: Sequence[str],
    passages: Sequence[Passage],
    report: IngestReport,
) -> dict[str, list[str]]:
    """Delete the passages changed documents no longer have; returns them by document."""
    if not doc_ids:
        return {}
    stale = store.documents.stale_by_document(ns, doc_ids, [p.id for p in passages])
    ids = [pid for pids in stale.values() for pid in pids]
    if ids:
        report.passages_removed = store.passages.delete(ns, ids)
        log.info("removed %d passages that changed documents no longer have", len(ids))
    return stale
