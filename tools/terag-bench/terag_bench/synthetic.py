"""A synthetic corpus for the scale benchmark: passages whose concepts follow a Zipf law.

Real extractions cost minutes (spaCy) to hours (an LLM) per 10k passages and real corpora of a
million passages are not at hand, so the scale bench replays generated extractions (the
`recorded` backend) and measures what Neo4j and GDS do with them. Two profiles match what the
bench datasets show:

- `spacy`: dense, like the spaCy backend on 2Wiki (about 15 concepts per passage besides the
  title, most of them seen once: 2Wiki has 11 distinct concepts per passage);
- `llm`: sparse, like HippoRAG's recorded GPT-3.5 extractions on MuSiQue (about 7 per passage).

A passage's concepts are drawn from a log-uniform law over a fixed vocabulary (a Zipf law with
exponent 1: the concept of rank r has probability ∝ 1/r), so a few concepts join a few percent
of all passages and most join one. Passage i depends only on (seed, i): the first 10k passages of the
1M corpus are the 10k corpus, which lets one namespace grow from size to size.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from terag_neo4j.core.documents import Document

SYLLABLES = [
    "ba",
    "ka",
    "lo",
    "mi",
    "ra",
    "te",
    "zu",
    "no",
    "vi",
    "sa",
    "de",
    "fo",
    "gu",
    "hi",
    "ja",
    "ke",
    "lu",
    "ma",
    "ne",
    "po",
    "qui",
    "ro",
    "si",
    "ta",
    "ve",
    "wo",
    "xa",
    "yu",
    "ze",
]


@dataclass(frozen=True)
class Profile:
    name: str
    concepts_per_passage: float  # mean, Poisson-distributed, at least 1
    vocabulary: int  # ranks the Zipf law draws from
    text_words: int  # words of filler text besides the concept names
    head: int = 20  # ranks below it are never drawn: the commonest concept joins ~5% of passages


PROFILES: dict[str, Profile] = {
    "spacy": Profile("spacy", 15.0, 50_000_000, 60),
    "llm": Profile("llm", 7.0, 20_000_000, 60),
}


def concept_name(rank: int) -> str:
    """A unique, pronounceable multiword name for a vocabulary rank ("Kalo Mite Zu")."""
    words: list[str] = []
    n = rank
    while True:
        word = ""
        for _ in range(2):
            word += SYLLABLES[n % len(SYLLABLES)]
            n //= len(SYLLABLES)
        words.append(word.capitalize())
        if n == 0:
            break
    return " ".join(words)


def passage_ranks(profile: Profile, seed: int, index: int) -> npt.NDArray[np.int64]:
    """The vocabulary ranks of passage `index`'s concepts (distinct, in draw order)."""
    rng = np.random.default_rng([seed, index])
    k = max(1, int(rng.poisson(profile.concepts_per_passage)))
    # rank = h·(V/h)^u for uniform u: P(rank = r) ∝ 1/r on [h, V), Zipf with exponent 1
    span = math.log(profile.vocabulary / profile.head)
    ranks = np.floor(profile.head * np.exp(rng.random(k) * span)).astype(np.int64)
    _, first = np.unique(ranks, return_index=True)
    out: npt.NDArray[np.int64] = ranks[np.sort(first)]
    return out


def passage(profile: Profile, seed: int, index: int) -> tuple[Document, list[str]]:
    """Passage `index` and the concept names its (replayed) extraction holds."""
    names = [concept_name(int(r)) for r in passage_ranks(profile, seed, index)]
    rng = np.random.default_rng([seed, index, 1])
    # Filler words have three syllables, names' words two: no filler word is a concept's name,
    # as the common words of real text are not (mention grounding would link them otherwise).
    filler = [
        SYLLABLES[i] + SYLLABLES[j] + SYLLABLES[k]
        for i, j, k in rng.integers(0, len(SYLLABLES), (profile.text_words, 3))
    ]
    words = filler + names
    order = rng.permutation(len(words))
    text = " ".join(words[i] for i in order) + "."
    pid = f"syn:{index}"
    return Document(id=pid, title=f"Passage {index}", text=text, is_passage=True), names


def write_corpus(
    folder: Path, profile: Profile, size: int, seed: int = 0, questions: int = 200
) -> Path:
    """corpus.jsonl, recorded_extractions.jsonl and questions.jsonl for `size` passages.

    Each question names two concepts of one passage (its rarest ones, the way a multi-hop
    question names specific entities) and has that passage as its gold.
    """
    folder.mkdir(parents=True, exist_ok=True)
    done = folder / ".complete"
    if done.is_file() and done.read_text() == f"{profile.name} {size} {seed} {questions}":
        return folder
    rng = np.random.default_rng([seed, 2])
    asked = set(rng.choice(size, size=min(questions, size), replace=False).tolist())
    with (
        (folder / "corpus.jsonl").open("w", encoding="utf-8") as corpus,
        (folder / "recorded_extractions.jsonl").open("w", encoding="utf-8") as extractions,
        (folder / "questions.jsonl").open("w", encoding="utf-8") as qs,
    ):
        for i in range(size):
            doc, names = passage(profile, seed, i)
            corpus.write(json.dumps({"id": doc.id, "title": doc.title, "text": doc.text}) + "\n")
            extractions.write(
                json.dumps(
                    {
                        "passage_id": doc.id,
                        "model": f"synthetic-{profile.name}",
                        "named_entities": names,
                    }
                )
                + "\n"
            )
            if i in asked and len(names) >= 2:
                ranks = passage_ranks(profile, seed, i)
                rare = [concept_name(int(r)) for r in sorted(ranks, reverse=True)[:2]]
                qs.write(
                    json.dumps(
                        {
                            "id": f"q{i}",
                            "question": f"What links {rare[0]} and {rare[1]}?",
                            "gold_ids": [doc.id],
                        }
                    )
                    + "\n"
                )
    done.write_text(f"{profile.name} {size} {seed} {questions}")
    return folder


def read_corpus(folder: Path, start: int = 0, stop: int | None = None) -> Iterator[Document]:
    with (folder / "corpus.jsonl").open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i < start:
                continue
            if stop is not None and i >= stop:
                break
            r = json.loads(line)
            yield Document(id=r["id"], title=r["title"], text=r["text"], is_passage=True)


class SyntheticEmbedder:
    """Unit vectors drawn from a hash of the text: the cost of storing and indexing vectors
    without the cost of a model (the bench measures Neo4j and GDS, not MiniLM's throughput).
    Similar texts are not similar here, so dense passage seeding is noise on this corpus."""

    model_name = "synthetic-hash"

    def __init__(self, dimensions: int = 384) -> None:
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> npt.NDArray[np.float32]:
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "big")
            v = np.random.default_rng(seed).standard_normal(self.dimensions)
            out[i] = v / np.linalg.norm(v)
        return out

    def close(self) -> None:
        return None
