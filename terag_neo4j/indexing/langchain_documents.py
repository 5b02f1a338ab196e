"""LangChain documents (a loader's or a splitter's output) as TERAG documents, for
`TeragClient.index` and the retriever's `add_documents`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from langchain_core.documents import Document

from terag_neo4j.core.documents import Document as TeragDocument
from terag_neo4j.core.documents import InputError, content_hash


def from_langchain(
    docs: Sequence[Document], ids: Sequence[str] | None = None
) -> list[TeragDocument]:
    """TERAG documents for LangChain documents (a loader's or a splitter's output).

    A document's id is, first that is set: `ids[i]`, its `id`, `metadata["id"]`, else its
    `metadata["source"]` (with `#page=N` when the metadata has a `page`, as PDF loaders give),
    numbered `#0`, `#1`, ... in order where several documents of one call share it; a document
    without any of these gets a hash of its text (the same text, the same id). Indexing an id
    that is already in the namespace replaces that document, so give ids to documents you will
    update or delete.
    `metadata["title"]` becomes the title (a title concept, as a Markdown heading does) and
    `metadata["source"]` the source; other metadata is not stored.
    """
    if ids is not None and len(ids) != len(docs):
        raise InputError(f"{len(ids)} ids for {len(docs)} documents: give one id per document")
    explicit: list[str | None] = []
    for i, d in enumerate(docs):
        meta = d.metadata or {}
        given = ids[i] if ids is not None else (d.id or meta.get("id"))
        explicit.append(str(given) if given not in (None, "") else None)
    dupes = [k for k, n in Counter(e for e in explicit if e is not None).items() if n > 1]
    if dupes:
        raise InputError(f"document ids must be unique in one call; repeated: {dupes[:3]}")
    derived: list[str] = []
    by_source: list[str] = []  # the derived ids that name a source (numbered when shared)
    for d, e in zip(docs, explicit, strict=True):
        meta = d.metadata or {}
        source = meta.get("source")
        if source not in (None, ""):
            page = f"#page={meta['page']}" if meta.get("page") is not None else ""
            derived.append(f"{source}{page}")
            if e is None:
                by_source.append(derived[-1])
        else:  # the same text is the same document: it keeps one id
            derived.append(content_hash(d.page_content)[:16])
    shared = Counter(by_source)
    seen: Counter[str] = Counter()
    out = []
    for d, e, base in zip(docs, explicit, derived, strict=True):
        doc_id = e
        if doc_id is None:
            doc_id = base
            if shared[base] > 1:
                doc_id = f"{base}#{seen[base]}"
                seen[base] += 1
        meta = d.metadata or {}
        out.append(
            TeragDocument(
                id=doc_id,
                text=d.page_content,
                title=str(meta.get("title") or ""),
                source=str(meta.get("source") or ""),
            )
        )
    return out
