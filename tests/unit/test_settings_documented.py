"""Every setting is documented in .env.example, and the docs' configuration page shows that file's
tables (the docs build generates them: scripts/docs_hooks.py)."""

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


def test_configuration_page_is_generated_from_env_example() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    from docs_hooks import render
    from env_table import rows, table

    page = render((ROOT / "docs" / "configuration.md").read_text(encoding="utf-8"))
    assert table("user") in page and table("advanced") in page, (
        "docs/configuration.md lost a `<!-- generated: settings ... -->` marker"
    )
    assert len(rows("user")) <= 20, "the user's table is what a user sets: at most 20 rows"


def test_every_retrieval_knob_is_in_docs() -> None:
    from terag_neo4j.recipes import PAPER, RetrievalConfig

    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name, field in RetrievalConfig.model_fields.items():
        row = next((line for line in doc.splitlines() if line.startswith(f"| `{name}` |")), None)
        assert row is not None, f"knob {name} is not in docs/configuration.md"
        assert f"`{field.default}`" in row, (
            f"knob {name}: its default {field.default!r} is not shown"
        )
        if name in PAPER.model_fields_set:
            assert f"`{getattr(PAPER, name)}`" in row, (
                f"knob {name}: the paper's value is not shown"
            )
