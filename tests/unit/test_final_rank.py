"""The final ranking's rule on hand-made rankings (no services): which passage is pinned, where
the walk's passages go, and the flat fusion a question without links is answered with."""

from terag_neo4j.core.results import RetrievedPassage
from terag_neo4j.recipes import PAPER, RetrievalConfig, resolve
from terag_neo4j.retrieval.final_rank import pin
from terag_neo4j.retrieval.flat import anchor_node, rrf_nodes


def p(pid: str, score: float) -> RetrievedPassage:
    return RetrievedPassage(pid, "d", "", "", score)


def test_the_vector_first_is_the_anchor_when_the_fused_flat_ranking_has_it_in_its_top_two() -> None:
    # BM25 ranks the vector's first third: the fusion still has it second (1/61 + 1/63)
    assert anchor_node(text=[7, 8, 1], vector=[1, 9, 7]) == 1
    # both channels agree
    assert anchor_node(text=[1, 2], vector=[1, 3]) == 1


def test_no_anchor_when_bm25_contradicts_the_vector_first() -> None:
    # BM25 never ranks it, and two passages both channels rank well fuse above it
    assert anchor_node(text=[5, 6, 7], vector=[1, 5, 6]) is None
    assert anchor_node(text=[1, 2], vector=[]) is None


def test_rrf_of_nodes_rewards_agreement_and_breaks_ties_by_node() -> None:
    fused = rrf_nodes([3, 1], [2, 1])
    assert [n for n, _ in fused] == [1, 2, 3]  # 2 and 3 tie at 1/61: the lower node first
    assert fused[0][1] == 2 / 62
    assert [n for n, _ in rrf_nodes(list(range(100)), [], depth=50)] == list(range(50))


def test_pin_moves_the_anchor_first_and_keeps_the_walks_order_below() -> None:
    walked = [p("a", 0.5), p("b", 0.3), p("c", 0.2), p("d", 0.1)]
    out = pin(walked, p("c", 0.0), 3)
    assert [x.id for x in out] == ["c", "a", "b"]
    # scores still fall down the list: the anchor takes at least the first one's mass
    assert [x.score for x in out] == [0.5, 0.5, 0.3]


def test_an_anchor_the_walk_did_not_return_displaces_the_last_place() -> None:
    walked = [p("a", 0.5), p("b", 0.3)]
    assert [x.id for x in pin(walked, p("z", 0.0), 2)] == ["z", "a"]
    assert [x.id for x in pin([], p("z", 0.0), 2)] == ["z"]


def test_without_an_anchor_the_walk_is_the_answer() -> None:
    walked = [p("a", 0.5), p("b", 0.3), p("c", 0.2)]
    assert pin(walked, None, 2) == walked[:2]
    assert pin(walked, p("a", 0.0), 3) == walked  # already first: nothing moves


def test_the_default_is_learned_and_the_papers_preset_keeps_the_walks_order() -> None:
    assert RetrievalConfig().final_rank == "learned"
    assert resolve("default").final_rank == "learned"
    assert resolve("paper").final_rank == "walk"
    assert PAPER.final_rank == "walk"
