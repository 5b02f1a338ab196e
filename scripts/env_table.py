"""Print the docs' configuration tables from .env.example (the one list of settings).

The docs build inserts them itself (scripts/docs_hooks.py); this prints them for a look.

python scripts/env_table.py > /tmp/table.md
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


ADVANCED = "# === advanced settings"


def rows(section: str = "user") -> list[tuple[str, str, str]]:
    """The variables of .env.example's user section (what a user sets) or its advanced one."""
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    user, _, advanced = text.partition(ADVANCED)
    out: list[tuple[str, str, str]] = []
    comment: list[str] = []
    for line in (user if section == "user" else advanced).splitlines():
        if line.startswith(("# ---", "# ===")) or not line.strip():
            comment = []
            continue
        m = re.match(r"#\s*([A-Z0-9_]+)=(.*)", line) or re.match(r"([A-Z0-9_]+)=(.*)", line)
        if m:
            out.append((m.group(1), m.group(2), " ".join(comment) or "(see above)"))
            comment = []
        elif line.startswith("#"):
            comment.append(line.lstrip("# ").strip())
    return out


def table(section: str = "user") -> str:
    lines = ["| variable | default / example | meaning |", "|---|---|---|"]
    lines += [
        f"| `{n}` | `{v}` | {c.replace('|', '/')} |"
        for n, v, c in rows(section)
        if n != "HF_HUB_OFFLINE"
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    print(table(sys.argv[1] if len(sys.argv) > 1 else "user"))
