"""The settings of `terag` through a service (`remote_commands`): the service to call, its key
and the defaults of its commands, from the environment and ./.env.

The URL and the key come from the command line and the environment only, never from ./.env: the
folder a command runs in may be a checkout someone else wrote, whose .env would otherwise pick
the server that receives the user's key.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def _dotenv(name: str, path: Path = Path(".env")) -> str | None:
    """`name` from ./.env, read as the settings read it (KEY=value, optionally quoted)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        key, sep, value = line.strip().removeprefix("export ").partition("=")
        if sep and key.strip() == name:
            return value.strip().strip("'\"") or None
    return None


# Where the key goes and the key itself: from the environment only (see the module's docstring)
ENVIRONMENT_ONLY = ("TERAG_URL", "TERAG_API_KEY")
_warned: set[str] = set()


def setting(name: str) -> str | None:
    value = os.environ.get(name)
    if value is not None:
        return value.strip() or None
    if name in ENVIRONMENT_ONLY:
        if _dotenv(name) is not None and name not in _warned:
            _warned.add(name)
            print(
                f"terag: warning: ignoring {name} in ./.env: the service and its key are taken "
                f"from the environment or --url only; export {name} to use it",
                file=sys.stderr,
            )
        return None
    return _dotenv(name)


def service_url(args: argparse.Namespace) -> str | None:
    """The service the command should use: --url, else TERAG_URL; None: run in-process."""
    url: str | None = getattr(args, "url", None)
    return url or setting("TERAG_URL")
