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
        ("TERAG_EXTRACTOR", "bogus", "'ollama', 'spacy' or 'recorded'"),
        ("TERAG_DAMPING", "1.5", "TERAG_DAMPING='1.5': must be less than 1"),
        ("TERAG_DAMPING", "-0.1", "TERAG_DAMPING='-0.1': must be greater than or equal to 0"),
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
    assert Settings(damping=0.0).damping == 0.0
    with pytest.raises(SettingsError, match="TERAG_DAMPING"):
        Settings(damping=1.0)


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
        ({"damping": 1.5}, "damping (TERAG_DAMPING)=1.5"),
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


def test_the_paper_preset_applies_where_nothing_is_set_explicitly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TERAG_PRESET", "paper")
    monkeypatch.setenv("TERAG_DAMPING", "0.6")
    s = Settings(home=tmp_path)
    assert (s.linking, s.orientation, s.walk_cooccurrence, s.passage_seed_weight) == (
        "ner",
        "directed",
        True,
        0.0,
    )
    assert s.damping == 0.6  # given explicitly: wins over the preset
    back = s.with_overrides(preset="default")
    assert back.preset == "default" and back.damping == 0.6  # kept: it was set on the base
    paper = Settings(home=tmp_path, preset="default").with_overrides(preset="paper")
    assert paper.linking == "ner" and paper.damping == 0.85
