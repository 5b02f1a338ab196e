"""The scale bench's synthetic corpus: deterministic, prefix-stable, Zipf-shaped, profile-dense."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from terag_bench.synthetic import (
    PROFILES,
    SyntheticEmbedder,
    concept_name,
    passage,
    passage_ranks,
    write_corpus,
)


def test_names_are_unique_per_rank() -> None:
    names = [concept_name(r) for r in range(20_000)]
    assert len(set(names)) == len(names)


def test_no_filler_word_is_a_concept_name() -> None:
    """Mention grounding links a passage to every concept it names: filler words that were also
    names would make every passage name dozens of concepts, unlike real text."""
    doc, _ = passage(PROFILES["llm"], 0, 5)
    name_words = {w.lower() for r in range(20, 5000) for w in concept_name(r).split()}
    filler = [w for w in doc.text.rstrip(".").split() if w[0].islower()]
    assert len(filler) == PROFILES["llm"].text_words
    assert not set(filler) & name_words


def test_a_passage_depends_only_on_seed_and_index() -> None:
    a, names_a = passage(PROFILES["spacy"], 7, 123)
    b, names_b = passage(PROFILES["spacy"], 7, 123)
    c, _ = passage(PROFILES["spacy"], 8, 123)
    assert (a, names_a) == (b, names_b)
    assert a.text != c.text
    assert all(n in a.text for n in names_a)


def test_profiles_have_their_density_and_a_zipf_head() -> None:
    n = 3000
    for profile, lo, hi in (("spacy", 13, 17), ("llm", 6, 8)):
        counts: Counter[int] = Counter()
        total = 0
        for i in range(n):
            ranks = passage_ranks(PROFILES[profile], 0, i)
            assert len(set(ranks.tolist())) == len(ranks)
            counts.update(ranks.tolist())
            total += len(ranks)
        assert lo <= total / n <= hi, profile
        top = counts.most_common(1)[0][1] / n
        singletons = sum(1 for v in counts.values() if v == 1) / len(counts)
        assert 0.01 < top < 0.15 and singletons > 0.8, (profile, top, singletons)


def test_written_corpus_is_a_prefix_of_a_larger_one(tmp_path: Path) -> None:
    small = write_corpus(tmp_path / "s", PROFILES["llm"], 50, questions=10)
    large = write_corpus(tmp_path / "l", PROFILES["llm"], 80, questions=10)
    lines_s = (small / "corpus.jsonl").read_text().splitlines()
    lines_l = (large / "corpus.jsonl").read_text().splitlines()
    assert lines_l[:50] == lines_s
    recorded = [
        json.loads(x) for x in (small / "recorded_extractions.jsonl").read_text().splitlines()
    ]
    assert [r["passage_id"] for r in recorded] == [json.loads(x)["id"] for x in lines_s]
    questions = [json.loads(x) for x in (small / "questions.jsonl").read_text().splitlines()]
    assert questions and all(len(q["gold_ids"]) == 1 for q in questions)


def test_synthetic_vectors_are_unit_and_deterministic() -> None:
    emb = SyntheticEmbedder(16)
    v = emb.embed(["a", "b", "a"])
    assert v.shape == (3, 16)
    assert abs(float((v[0] ** 2).sum()) - 1) < 1e-5
    assert (v[0] == v[2]).all() and not (v[0] == v[1]).all()
