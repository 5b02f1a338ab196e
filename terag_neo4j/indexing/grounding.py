"""Mention grounding: every passage is linked to each concept whose name it contains.

An extractor sees a concept where it happens to tag it (spaCy's noun chunks vary with the
sentence, an LLM skips names), so a concept's passages are a sample of where it is named. After
an ingest writes its passages, each is linked (HAS_PASSAGE {mention: true}) to every concept of
the namespace whose normalised name occurs in its normalised text as whole words: zero tokens.
A concept's frequency then counts where it is named, which is what specificity (1/f) should
measure, and the walk can reach every passage that names it. A concept still exists only while
some passage's extraction has it (`prune_concepts.cypher`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from tqdm import tqdm

from terag_neo4j.core.concepts import normalize_name, stopwords
from terag_neo4j.core.documents import Passage, ShouldStop, stop_if_asked
from terag_neo4j.indexing.report import IngestReport
from terag_neo4j.store import GraphStore, passage_uid

GROUND_BATCH = 2000  # passages grounded per transaction
# Passages whose names are looked up together: the words they share are asked about once
# (one large lookup beats several small ones; docs/architecture.md has the measurement)
LOOKUP_BATCH = 10_000
# Up to this many concepts, grounding reads all their names once; a larger namespace is asked
# about the new passages' words only (`named_concepts`): reading every name per ingest made
# each ingest into a growing namespace slower than the last (docs/architecture.md).
VOCABULARY_SCAN_MAX = 50_000

MAX_WORDS = 6  # longer names are rare; every n-gram length costs a pass over the text


def candidates(text: str, max_words: int = MAX_WORDS) -> set[str]:
    """The n-grams of `text` that could be a concept's name: no stopword at either end, no
    single word of fewer than three letters."""
    words = normalize_name(text).split()
    stop = stopwords()
    out: set[str] = set()
    for i, first in enumerate(words):
        if first in stop:
            continue
        if len(first) >= 3:
            out.add(first)
        gram = first  # grown a word at a time: one join per n-gram is most of the cost
        for last in words[i + 1 : i + max_words]:
            gram = f"{gram} {last}"
            if last not in stop:
                out.add(gram)
    return out


def passage_candidates(passage: Passage) -> set[str]:
    return candidates(passage.content)


def named_concepts(store: GraphStore, ns: str, passages: Sequence[Passage]) -> dict[str, list[str]]:
    """{passage id: uids of the namespace's concepts it names}: the concepts whose names are
    `candidates` of its text, found without reading the vocabulary or asking about every
    candidate. Word runs grow one word at a time while they begin some concept's name, so a
    word no name starts with is asked about once, and most of a text stops there."""
    words = {p.id: normalize_name(p.content).split() for p in passages}
    stop = stopwords()
    # {passage id: [(start, the n words from it)]}: a run grows by one word a round, so each
    # round joins only the runs still growing instead of joining every run anew
    growing = {
        pid: [(i, w) for i, w in enumerate(ws) if w not in stop] for pid, ws in words.items()
    }
    found: dict[str, set[str]] = {pid: set() for pid in words}
    for n in range(1, MAX_WORDS + 1):
        grams = {gram for runs in growing.values() for _, gram in runs}
        if not grams:
            break
        known = store.passages.concept_prefixes(ns, sorted(grams))
        for pid, ws in words.items():
            longer = []
            for i, gram in growing[pid]:
                uids, grows = known.get(gram, ((), False))
                if uids and ws[i + n - 1] not in stop and (n > 1 or len(gram) >= 3):
                    found[pid].update(uids)
                if grows and i + n < len(ws):
                    longer.append((i, f"{gram} {ws[i + n]}"))
            growing[pid] = longer
    return {pid: sorted(uids) for pid, uids in found.items()}


def mentions(passages: Iterable[Passage], vocabulary: dict[str, list[str]]) -> dict[str, list[str]]:
    """{passage id: uids of the concepts it names}, from {normalised name: concept uids}."""
    out: dict[str, list[str]] = {}
    for p in passages:
        found = sorted({uid for n in passage_candidates(p) for uid in vocabulary.get(n, ())})
        if found:
            out[p.id] = found
    return out


def ground(
    store: GraphStore,
    ns: str,
    passages: Sequence[Passage],
    report: IngestReport,
    progress: bool,
    should_stop: ShouldStop | None = None,
) -> None:
    """Link every passage not grounded yet to the concepts it names (`passage_candidates`):
    after an ingest's batches, so a passage also finds concepts that later batches brought."""
    t = time.perf_counter()
    pending = store.passages.ungrounded(ns, [p.id for p in passages])
    todo = [p for p in passages if p.id in pending]
    if not todo:
        return
    rows = store.read("namespace_version", namespace=ns)
    # A small namespace's names are read once; a large one's are looked up per batch.
    small = bool(rows) and int(rows[0]["concepts"] or 0) <= VOCABULARY_SCAN_MAX
    whole = store.passages.concept_vocabulary(ns) if small else None
    bar = tqdm(total=len(todo), desc=f"grounding {ns}", unit="passage", disable=not progress)
    try:
        for i in range(0, len(todo), LOOKUP_BATCH):
            stop_if_asked(should_stop, "grounding passages")
            block = todo[i : i + LOOKUP_BATCH]
            if whole is not None:
                cands = {p.id: passage_candidates(p) for p in block}
                found = {
                    pid: sorted({u for n in names for u in whole.get(n, ())})
                    for pid, names in cands.items()
                }
            else:
                found = named_concepts(store, ns, block)
            links = [{"passage": passage_uid(ns, pid), "concepts": u} for pid, u in found.items()]
            for j in range(0, len(links), GROUND_BATCH):
                stop_if_asked(should_stop, "grounding passages")
                report.mention_links += store.passages.link_mentions(
                    ns, links[j : j + GROUND_BATCH]
                )
                bar.update(len(links[j : j + GROUND_BATCH]))
    finally:
        bar.close()
    report.grounding_s += time.perf_counter() - t
