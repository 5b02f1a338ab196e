"""Every projection name a walk can make is found by its namespace's pattern (a drop) and by
the any-namespace pattern (eviction): a projection whose flag the patterns lacked would match
neither, and stay in GDS memory for good."""

from __future__ import annotations

import itertools

from terag_neo4j.recipes import RetrievalConfig
from terag_neo4j.store import gds
from terag_neo4j.store.ids import projection_name_re

FLAGS = ("walk_cooccurrence", "walk_titles")


def test_every_walk_is_found_by_the_namespace_and_the_eviction_patterns() -> None:
    seen = set()
    for orientation, hub_cap, *on in itertools.product(
        ("directed", "undirected"), (0, 20), *[(False, True)] * len(FLAGS)
    ):
        rc = RetrievalConfig(
            orientation=orientation, hub_cap=hub_cap, **dict(zip(FLAGS, on, strict=True))
        )
        for name in (gds.graph_name(rc, "wiki", 7), gds.graph_name(rc, "wiki", 7, "0a1b2c3d")):
            seen.add(name)
            m = projection_name_re("wiki").fullmatch(name)
            assert m is not None and m["version"] == "7", name
            assert projection_name_re("wiki", gds.projection_spec(rc).code).fullmatch(name), name
            assert gds._PROJECTION.fullmatch(name), name
            assert not projection_name_re("wik").fullmatch(name)
            assert not projection_name_re("wiki_en").fullmatch(name)
    assert len(seen) == 2 * 2 * 2 * 2 ** len(FLAGS)  # every flag makes a name of its own


def test_another_namespaces_projection_is_not_this_ones() -> None:
    rc = RetrievalConfig(walk_cooccurrence=True)
    assert not projection_name_re("wiki").fullmatch(gds.graph_name(rc, "wiki_en", 3))
    assert not projection_name_re("wiki").fullmatch(gds.local_name())


def test_names_of_removed_walk_flags_are_still_found() -> None:
    # Projections made before the synonym and adjacent-passage knobs went may still be in GDS.
    for code in ("ustn", "ucstnah20", "dcna"):
        name = f"terag_wiki_{code}_v7"
        assert projection_name_re("wiki").fullmatch(name), name
        assert gds._PROJECTION.fullmatch(name), name


def test_a_folded_projection_is_named_by_its_damping() -> None:
    # The fold's self-loops and rescaling depend on the damping: another damping is another graph
    a, b = RetrievalConfig(damping=0.5), RetrievalConfig(damping=0.6)
    assert gds.projection_spec(a).folded and gds.projection_spec(b).folded
    assert gds.graph_name(a, "wiki", 7) != gds.graph_name(b, "wiki", 7)
    for rc in (a, b):
        assert gds._PROJECTION.fullmatch(gds.graph_name(rc, "wiki", 7, "0a1b2c3d"))
    # Only the undirected walk over HAS_PASSAGE alone is folded
    assert not gds.projection_spec(RetrievalConfig(orientation="directed")).folded
    assert not gds.projection_spec(RetrievalConfig(walk_cooccurrence=True)).folded
