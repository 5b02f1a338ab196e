"""The restart vector (verified weights, TERAG eqs. 3-5, passage seeds), the flat rankings'
scaling and rank fusion, on hand-made matches (no services)."""

import pytest

from terag_neo4j.core.results import RetrievedPassage
from terag_neo4j.recipes import RetrievalConfig
from terag_neo4j.retrieval.flat import (
    FlatRanking,
    _scaled,
    fuse_scaled,
    lucene_query,
    rrf_fuse,
)
from terag_neo4j.retrieval.restart import (
    MatchedConcept,
    paper_weights,
    passage_seeds,
    verified_weights,
)
from terag_neo4j.store.pairs import pair_deltas, pair_key
from terag_neo4j.store.search import search_fields


def m(uid: str, kind: str, s: float, f: int, node: int = -1) -> MatchedConcept:
    return MatchedConcept("e", uid, uid, uid, "other", kind, s, f, node=node)  # type: ignore[arg-type]


def restart_weights(matches: list[MatchedConcept]) -> list[MatchedConcept]:
    return paper_weights(matches)


def test_a_verified_weight_is_specificity_times_support() -> None:
    rc = RetrievalConfig()  # f^-2 * r^2
    flat = FlatRanking({10: 1.0, 11: 0.5, 12: 0.2})
    matches = [m("rare", "exact", 1.0, 1, node=1), m("common", "exact", 1.0, 10, node=2)]
    got = {
        x.uid: (x.weight, x.support)
        for x in verified_weights(matches, {1: [11, 12], 2: [10]}, flat, rc)
    }
    assert got["rare"] == (pytest.approx(0.25), 0.5)  # 1 * 0.5^2: its best passage's relevance
    assert got["common"] == (pytest.approx(0.01), 1.0)  # 10^-2 * 1
    # a concept none of whose passages the flat rankings found carries nothing
    assert verified_weights([m("lost", "exact", 1.0, 1, node=3)], {}, flat, rc) == []


def test_passage_seeds_are_the_top_relevance_to_the_power_summing_to_the_seed_weight() -> None:
    rc = RetrievalConfig(seed_top=2, seed_power=2.0, seed_weight=0.1)
    seeds = passage_seeds(FlatRanking({1: 1.0, 2: 0.5, 3: 0.4, 4: 0.0}), rc)
    assert [n for n, _ in seeds] == [1, 2]
    assert sum(w for _, w in seeds) == pytest.approx(0.1)
    assert seeds[0][1] / seeds[1][1] == pytest.approx(4.0)
    assert passage_seeds(FlatRanking({}), rc) == []


def test_each_flat_ranking_is_scaled_over_its_own_top() -> None:
    got = _scaled([[1, 9.0], [2, 5.0], [3, 3.0]])
    assert got == {1: 1.0, 2: pytest.approx(1 / 3), 3: 0.0}
    assert _scaled([[7, 2.0]]) == {7: 1.0}


def test_the_lucene_query_has_no_syntax_and_is_folded_as_the_index_is() -> None:
    q = lucene_query('What is "BCC" (basal-cell) AND how: fast?')
    assert q == "bcc basal cell fast"
    assert lucene_query("What is it?") is None  # stopwords only
    # The index holds folded text (search_fields): accented and plain spellings meet.
    assert (
        lucene_query("Where is Osnabrück, near Straße Ørsted?") == "osnabruck near strasse orsted"
    )
    assert search_fields("Baden-Württemberg", "Ørsted in Zürich")["ft_text"] == "Orsted in Zurich"


def test_weights_are_s_over_f_normalised_per_group() -> None:
    got = {
        x.uid: x.weight
        for x in restart_weights(
            [
                m("a", "exact", 1.0, 1),
                m("b", "exact", 1.0, 3),
                m("c", "semantic", 0.8, 2),
                m("d", "semantic", 0.4, 2),
            ]
        )
    }
    assert got["a"] == pytest.approx(0.75) and got["b"] == pytest.approx(0.25)
    assert got["c"] == pytest.approx(2 / 3) and got["d"] == pytest.approx(1 / 3)


def test_exact_match_wins_over_semantic_for_the_same_concept() -> None:
    got = restart_weights([m("a", "semantic", 0.9, 1), m("a", "exact", 1.0, 1)])
    assert [(x.uid, x.match, x.weight) for x in got] == [("a", "exact", 1.0)]


def test_non_positive_similarity_gets_no_weight() -> None:
    assert restart_weights([m("a", "semantic", -0.2, 1)]) == []


def test_pair_deltas_count_each_unordered_pair_once_per_passage() -> None:
    rows = pair_deltas([["b", "a", "c"], ["a", "b"], ["a", "a"]], +1)
    got = {(r["a"], r["b"]): r["delta"] for r in rows}
    assert got == {("a", "b"): 2, ("a", "c"): 1, ("b", "c"): 1}
    (row,) = pair_deltas([["y", "x"]], -1)
    assert (row["a"], row["b"], row["delta"]) == ("x", "y", -1)
    assert row["pair"] == pair_key("x", "y") != pair_key("y", "x")


def test_rrf_rewards_agreement() -> None:
    p = lambda i: RetrievedPassage(i, i, i, "", 0.0)  # noqa: E731
    fused = rrf_fuse([[p("x"), p("y"), p("z")], [p("y"), p("w")]], k=2)
    assert [q.id for q in fused] == ["y", "x"]


def test_flat_relevance_weighs_the_vector_ranking_by_dense_share() -> None:
    text, dense = {1: 1.0, 2: 0.0}, {2: 1.0, 3: 0.5}
    got = fuse_scaled(text, dense, 0.7)
    assert got == pytest.approx({1: 0.3, 2: 0.7, 3: 0.35})
    assert fuse_scaled(text, dense, 0.5) == pytest.approx({1: 0.5, 2: 0.5, 3: 0.25})
    # a question the full-text index has no word for: the vector ranking alone, whole
    assert fuse_scaled({}, dense, 0.7) == pytest.approx(dense)
    assert fuse_scaled(text, {}, 0.7) == pytest.approx(text)
