"""Folder walking: every supported file below a folder, recursively, in a stable order.

Hidden files and folders (a name starting with ".") and files of unsupported types are skipped.
Symbolic links are followed, but a folder is entered once: a link back to a folder being walked
(a loop) is skipped with a warning instead of recursing forever.

Globs select files by the path relative to the folder given (POSIX separators): a pattern
without "/" matches the file name anywhere (`*.pdf`), one with "/" the whole relative path
(`drafts/**`, `**/old/*.md`); `**` is any number of folders. `include` keeps only matching files
(all when empty); `exclude` drops matching files and folders.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from terag_neo4j.indexing.readers.detect import SUPPORTED_SUFFIXES

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """`pattern` as a regular expression over a relative POSIX path."""
    out, i = [], 0
    pattern = pattern.strip()
    pattern = pattern[2:] if pattern.startswith("./") else pattern
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def matches(rel: str, patterns: Sequence[str]) -> bool:
    """Whether the relative POSIX path `rel` matches any of `patterns` (see the module doc)."""
    name = rel.rsplit("/", 1)[-1]
    for pattern in patterns:
        target = rel if "/" in pattern.strip("/") else name
        if glob_regex(pattern.rstrip("/")).match(target):
            return True
    return False


def _excluded_folder(rel: str, exclude: Sequence[str]) -> bool:
    # `drafts/**` names what is inside the folder; `drafts` the folder itself.
    return matches(rel, exclude) or matches(rel + "/", exclude)


def walk(root: Path, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> Iterator[Path]:
    """Supported files below `root` (see the module doc), sorted by their relative path."""
    found: list[tuple[str, Path]] = []
    entered: set[str] = set()

    def on_error(e: OSError) -> None:
        log.warning("%s: cannot list this folder (%s); skipped", e.filename, e.strerror)

    for folder, dirs, files in os.walk(root, followlinks=True, onerror=on_error):
        real = os.path.realpath(folder)
        base = Path(folder)
        rel_folder = base.relative_to(root).as_posix()
        if real in entered:
            log.warning("%s: a symbolic link loop (it leads back to %s); skipped", folder, real)
            dirs[:] = []
            continue
        entered.add(real)
        keep = []
        for d in sorted(dirs):
            rel = d if rel_folder == "." else f"{rel_folder}/{d}"
            if d.startswith("."):
                log.debug("%s: hidden folder, skipped", base / d)
            elif exclude and _excluded_folder(rel, exclude):
                log.debug("%s: excluded", base / d)
            elif os.path.realpath(base / d) in entered:
                log.warning(
                    "%s: a symbolic link loop (it leads back to %s); skipped",
                    base / d,
                    os.path.realpath(base / d),
                )
            else:
                keep.append(d)
        dirs[:] = keep
        for name in files:
            rel = name if rel_folder == "." else f"{rel_folder}/{name}"
            if name.startswith("."):
                log.debug("%s: hidden file, skipped", base / name)
            elif Path(name).suffix.lower() not in SUPPORTED_SUFFIXES:
                log.debug("%s: unsupported file type, skipped", base / name)
            elif (include and not matches(rel, include)) or (exclude and matches(rel, exclude)):
                log.debug("%s: not selected by --include / --exclude", base / name)
            else:
                found.append((rel, base / name))
    found.sort(key=lambda item: item[0])
    return iter([path for _, path in found])
