"""The neo4j-admin call that sets the initial password keeps it off the command line (no server
needed; the integration test checks a real first start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from terag_neo4j.config import Settings
from terag_neo4j.server import neo4j as local


def test_initial_password_command_names_a_file_not_the_password(tmp_path: Path) -> None:
    lay = local.layout(Settings(home=tmp_path))
    password = local.read_or_create_password(lay)
    cmd = local.initial_password_command("java", lay, tmp_path / "argfile")
    assert cmd[-2:] == ["set-initial-password", f"@{tmp_path / 'argfile'}"]
    assert not any(password in part for part in cmd)


@pytest.mark.parametrize(
    ("password", "line"),
    [
        ("plain", '"plain"'),
        ('a "b" c', '"a \\"b\\" c"'),
        ("back\\slash #x", '"back\\\\slash #x"'),
    ],
)
def test_atfile_quoting(password: str, line: str) -> None:
    assert local.atfile_quote(password) == line


def test_a_password_with_a_line_break_is_refused() -> None:
    with pytest.raises(local.ServerError, match="line break"):
        local.atfile_quote("a\nb")
