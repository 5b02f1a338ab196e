"""Every setting is documented in .env.example, and the README's table matches that file."""

import sys
from pathlib import Path

from terag_neo4j.config import Settings

ROOT = Path(__file__).resolve().parents[2]


def env_names() -> set[str]:
    names = set()
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        choices = getattr(alias, "choices", None)
        names.add(str(choices[0]) if choices else f"TERAG_{name.upper()}")
    return names


def test_every_setting_is_in_env_example() -> None:
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    missing = sorted(n for n in env_names() if f"{n}=" not in text)
    assert not missing, f"add to .env.example: {missing}"


def test_readme_table_is_generated_from_env_example() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from env_table import table

    assert table() in (ROOT / "README.md").read_text(encoding="utf-8"), (
        "README's configuration table is stale: run `python scripts/env_table.py`"
    )
