"""Print the README's configuration table from .env.example (the one list of settings).

python scripts/env_table.py > /tmp/table.md
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rows() -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    comment: list[str] = []
    for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines():
        if line.startswith("# ---") or not line.strip():
            comment = []
            continue
        m = re.match(r"#\s*([A-Z0-9_]+)=(.*)", line) or re.match(r"([A-Z0-9_]+)=(.*)", line)
        if m:
            out.append((m.group(1), m.group(2), " ".join(comment) or "(see above)"))
            comment = []
        elif line.startswith("#"):
            comment.append(line.lstrip("# ").strip())
    return out


def table() -> str:
    lines = ["| variable | default / example | meaning |", "|---|---|---|"]
    lines += [
        f"| `{n}` | `{v}` | {c.replace('|', '/')} |" for n, v, c in rows() if n != "HF_HUB_OFFLINE"
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
