"""A warning, once per host, when a client sends an API key over plain http:// to a host that
is not loopback: anyone on the path reads the key. Standard library only: the CLI's light
client (`cli/remote_commands.py`) imports it on every call."""

from __future__ import annotations

import ipaddress
import logging
import threading
from urllib.parse import urlsplit

log = logging.getLogger("terag_neo4j.remote")

_warned: set[str] = set()
_lock = threading.Lock()


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def warn_if_plain(url: str, api_key: str | None) -> None:
    """Log one warning per host (per process) when `api_key` would go over plain HTTP to a
    host that is not loopback."""
    if not api_key:
        return
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return  # the caller reports a bad URL its own way
    if parts.scheme.lower() != "http" or not host or _loopback(host):
        return
    with _lock:
        if host in _warned:
            return
        _warned.add(host)
    log.warning(
        "sending the API key to %s over plain http://: anyone on the way can read it; "
        "use https:// (a TLS-terminating proxy in front of terag serve)",
        host,
    )
