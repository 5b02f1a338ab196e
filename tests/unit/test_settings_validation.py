"""Settings errors are one line naming the variable and what it accepts, at settings time, for
the environment and for keyword overrides alike (error handling only: no services)."""

from __future__ import annotations

from pathlib import Path

import pytest

from terag_neo4j import cli
from terag_neo4j.config import Settings, SettingsError


@pytest.mark.parametrize(
    ("var", "value", "expected"),
    [
        ("TERAG_TOP_K", "abc", "TERAG_TOP_K='abc': must be a valid integer"),
        ("TERAG_EXTRACTOR", "bogus", "'ollama' or 'spacy'"),
        ("TERAG_RETRIEVAL", '{"damping": 1.5}', "damping=1.5: must be less than 1"),
        ("TERAG_RETRIEVAL", '{"dampign": 0.5}', "unknown retrieval knob dampign"),
        ("TERAG_RETRIEVAL", "not json", "TERAG_RETRIEVAL"),
        ("TERAG_DAMPING", "0.3", "retrieval knobs are no longer settings of their own"),
        ("NEO4J_URI", "http://127.0.0.1:7474", "bolt://, bolt+s://, bolt+ssc://, neo4j://"),
        ("TERAG_TOP_K", "0", "TERAG_TOP_K='0'"),
        ("TERAG_CHUNK_OVERLAP", "256", "must be smaller than TERAG_CHUNK_TOKENS"),
    ],
)
def test_bad_environment_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, var: str, value: str, expected: str
) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(SettingsError) as info:
        Settings()
    message = str(info.value)
    assert "\n" not in message and expected in message and var in message


@pytest.mark.parametrize(
    "uri",
    ["bolt://h:7687", "bolt+s://h", "bolt+ssc://h", "neo4j://h", "neo4j+s://h", "neo4j+ssc://h"],
)
def test_bolt_schemes_are_accepted(monkeypatch: pytest.MonkeyPatch, uri: str) -> None:
    monkeypatch.setenv("NEO4J_URI", uri)
    assert Settings().neo4j_uri == uri


def test_damping_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(retrieval={"damping": 0.0}).retrieval.damping == 0.0
    with pytest.raises(SettingsError, match="damping"):
        Settings(retrieval={"damping": 1.0})
    with pytest.raises(SettingsError, match="retrieval knobs go in retrieval="):
        Settings(damping=0.3)


def test_keyword_overrides_are_validated(tmp_path: Path) -> None:
    base = Settings(home=tmp_path)
    assert base.with_overrides(home="~/x").home == Path("~/x").expanduser()
    assert base.with_overrides(top_k="7").top_k == 7
    small = base.with_overrides(chunk_tokens=32, chunk_overlap=4)  # checked together, not in turn
    assert (small.chunk_tokens, small.chunk_overlap) == (32, 4)
    with pytest.raises(SettingsError, match="must be smaller than TERAG_CHUNK_TOKENS"):
        base.with_overrides(chunk_overlap=300)
    for bad, needle in (
        ({"extractor": "bogus"}, "extractor (TERAG_EXTRACTOR)='bogus'"),
        ({"retrieval": {"damping": 1.5}}, "damping=1.5"),
        ({"damping": 0.5}, "damping is a retrieval knob: pass retrieval={'damping': ...}"),
        ({"top_k": 0}, "top_k (TERAG_TOP_K)=0"),
        ({"neo4j_uri": "http://x"}, "neo4j_uri (NEO4J_URI)='http://x'"),
        ({"topk": 3}, "unknown setting topk"),
    ):
        with pytest.raises(SettingsError) as info:
            base.with_overrides(**bad)
        assert needle in str(info.value) and "\n" not in str(info.value)
    assert base.extractor == "ollama" and base.top_k == 5  # the base is left alone


def test_client_overrides_fail_before_connecting(tmp_path: Path) -> None:
    from terag_neo4j.client import TeragClient

    with pytest.raises(SettingsError, match="TERAG_EXTRACTOR"):
        TeragClient(Settings(home=tmp_path, neo4j_uri="bolt://127.0.0.1:1"), extractor="bogus")


def test_cli_bad_setting_exits_2_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TERAG_TOP_K", "abc")
    assert cli.main(["stats", "-n", "x"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "TERAG_TOP_K='abc'" in err[0]


def test_a_preset_then_the_knobs_given_whichever_way_they_arrive(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TERAG_PRESET", "paper")
    monkeypatch.setenv("TERAG_RETRIEVAL", '{"damping": 0.6}')
    s = Settings(home=tmp_path).retrieval
    assert (s.linking, s.orientation, s.walk_cooccurrence, s.seeds) == (
        "ner",
        "directed",
        True,
        "none",
    )
    assert s.damping == 0.6  # given explicitly: wins over the preset
    back = Settings(home=tmp_path).with_overrides(preset="default")
    assert back.retrieval.linking == "names" and back.retrieval.damping == 0.6  # still given
    monkeypatch.delenv("TERAG_RETRIEVAL")
    monkeypatch.delenv("TERAG_PRESET")
    paper = Settings(home=tmp_path, preset="default").with_overrides(preset="paper")
    assert paper.retrieval.linking == "ner" and paper.retrieval.damping == 0.85
    more = paper.with_overrides(retrieval={"hub_cap": 5}).with_overrides(retrieval={"damping": 0.7})
    assert (more.retrieval.hub_cap, more.retrieval.damping) == (5, 0.7)  # knobs add up


def test_env_example_copied_to_dot_env_leaves_the_preset_in_charge(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`.env.example` must not set any knob explicitly: `TERAG_PRESET=paper` in a `.env`
    copied from it would give the default retrieval under the paper's name."""
    example = (Path(__file__).resolve().parents[2] / ".env.example").read_text(encoding="utf-8")
    (tmp_path / ".env").write_text(example + "\nTERAG_PRESET=paper\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    s = Settings()
    assert s.preset == "paper"
    assert s.retrieval.model_dump() == Settings(preset="paper").retrieval.model_dump()
    assert s.retrieval.linking == "ner" and s.retrieval.damping == 0.85


def test_a_store_made_without_settings_builds_cooccurrence_as_the_setting_does() -> None:
    """`GraphStore(driver)` must keep CO_OCCURRENCE as the setting's default does (lazy), not
    eagerly: the default lives in `Settings` only."""
    from neo4j import GraphDatabase

    from terag_neo4j.store import GraphStore

    driver = GraphDatabase.driver("bolt://127.0.0.1:9", auth=None)  # never connected
    try:
        assert GraphStore(driver).cooccurrence_mode == Settings().cooccurrence == "lazy"
    finally:
        driver.close()
