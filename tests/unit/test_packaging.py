"""The wheel ships every package of the source tree: pyproject.toml lists packages by hand, so a
new folder that is left out installs fine in a checkout and fails only for wheel users."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_folder_is_in_the_wheel() -> None:
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    listed = set(tool["setuptools"]["packages"])
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "terag_neo4j").rglob("__init__.py")
    }
    assert on_disk, "no package found under terag_neo4j/"
    assert on_disk <= listed, f"missing from [tool.setuptools] packages: {sorted(on_disk - listed)}"
