"""Service settings (`TERAG_*`) and API keys scoped to namespaces.

`TERAG_API_KEYS` is JSON, or the path of a JSON file, mapping each key to its scope:

    {"k-alice": {"namespaces": ["wiki"], "access": "write"},
     "k-reader": {"namespaces": "*", "access": "read"},
     "k-ops": {"namespaces": "*", "access": "read", "admin": true}}

`admin` lets a key read `/metrics`, which shows every namespace's load.

A key is kept only as its SHA-256 digest and looked up by comparing digests in constant time
(`hmac.compare_digest` against every entry), so neither the key nor a timing difference leaks.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from terag_neo4j.errors import TeragError

Access = Literal["read", "write"]
ALL = "*"


class ServiceConfigError(TeragError, ValueError):
    """A service setting that cannot be used (bad key file, public bind without keys)."""


class KeySpec(BaseModel):
    namespaces: list[str] | Literal["*"]
    access: Access = "read"
    admin: bool = False
    # This key's requests per second, instead of TERAG_RATE_LIMIT
    rate: float | None = Field(default=None, gt=0)


@dataclass(frozen=True)
class Principal:
    """Who is calling: the namespaces the key reaches (None: all) and whether it may write.

    `name` is a short digest prefix, safe to log, never the key."""

    name: str
    namespaces: frozenset[str] | None
    write: bool
    admin: bool = False
    rate: float | None = None  # requests per second; None: the service's TERAG_RATE_LIMIT

    def can_read(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces

    def can_write(self, namespace: str) -> bool:
        return self.write and self.can_read(namespace)

    def visible(self, names: list[str]) -> list[str]:
        return [n for n in names if self.can_read(n)]


# 22 URL-safe base64 characters carry 128 bits; a key guessed offline from a leaked digest, or
# online at any rate, must take longer than the service will ever run
MIN_KEY_CHARS = 22
MAKE_KEY = """python -c 'import secrets; print(secrets.token_urlsafe(32))'"""

# What a service without keys (loopback only) grants: everything
OPEN = Principal("open", None, True, admin=True)


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


class KeyRing:
    """The configured keys as digests; `lookup` compares against every one in constant time."""

    def __init__(self, keys: dict[str, KeySpec]) -> None:
        self._entries: list[tuple[bytes, Principal]] = []
        for i, (key, spec) in enumerate(keys.items(), 1):
            if len(key) < MIN_KEY_CHARS:
                # The entry's number, never the key: the message goes to logs
                raise ServiceConfigError(
                    f"TERAG_API_KEYS: key {i} has {len(key)} characters; a key needs at least "
                    f"{MIN_KEY_CHARS} random ones (128 bits): make one with {MAKE_KEY}"
                )
            d = _digest(key)
            ns = None if spec.namespaces == ALL else frozenset(spec.namespaces)
            principal = Principal(d.hex()[:8], ns, spec.access == "write", spec.admin, spec.rate)
            self._entries.append((d, principal))

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, key: str | None) -> Principal | None:
        if not key:
            return None
        d = _digest(key)
        found: Principal | None = None
        for digest, principal in self._entries:  # no early exit: time does not tell which
            if hmac.compare_digest(d, digest):
                found = principal
        return found


def _check_private(path: Path) -> None:
    """Refuse a key file other users may read or change, as ssh refuses such a private key."""
    if os.name != "posix":
        return
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise ServiceConfigError(
            f"TERAG_API_KEYS: {path} is open to other users (mode {mode:o}); run chmod 600 {path}"
        )


def parse_keys(raw: str | None) -> dict[str, KeySpec]:
    """`TERAG_API_KEYS` as JSON text or a JSON file's path; empty or unset means no keys."""
    if raw is None or not raw.strip():
        return {}
    text = raw.strip()
    if not text.startswith("{"):
        path = Path(text).expanduser()
        if not path.is_file():
            raise ServiceConfigError(
                "TERAG_API_KEYS: neither a JSON object nor the path of a readable JSON file"
            )
        _check_private(path)
        text = path.read_text(encoding="utf-8")
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as e:
        # The message names the position only: the text may hold keys
        raise ServiceConfigError(
            f"TERAG_API_KEYS: not valid JSON (line {e.lineno}, column {e.colno})"
        ) from None
    if not isinstance(data, dict):
        raise ServiceConfigError('TERAG_API_KEYS: a JSON object {"key": {"namespaces": [...]}}')
    out: dict[str, KeySpec] = {}
    for i, (key, spec) in enumerate(data.items(), 1):
        try:
            out[str(key)] = KeySpec.model_validate(spec)
        except ValueError:
            raise ServiceConfigError(
                f'TERAG_API_KEYS: entry {i} needs namespaces (a list, or "*") and access '
                "(read or write)"
            ) from None
    return out


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="TERAG_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    host: str = Field(default="127.0.0.1", validation_alias="TERAG_SERVE_HOST")
    port: int = Field(default=8000, ge=0, le=65535, validation_alias="TERAG_SERVE_PORT")
    # JSON text or a file path (see the module docstring); repr=False keeps keys out of logs
    api_keys: str | None = Field(default=None, repr=False)
    # Origins allowed to call from a browser; empty: CORS off
    cors_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # Host names it answers to besides the bound address and loopback ("*": any); see policy.py
    allowed_hosts: Annotated[list[str], NoDecode] = Field(default_factory=list)
    # Requests per second per key (token bucket, bursts of one second's worth); 0: no limit
    rate_limit: float = Field(default=0.0, ge=0)
    # Retrievals run at once (threads), and how many more may wait; beyond that: 429
    max_concurrency: int = Field(default=4, ge=1)
    max_queue: int = Field(default=32, ge=0)
    # A request that waited this long for a thread gets 503 rather than hanging
    queue_timeout_s: float = Field(default=30.0, gt=0)
    max_body_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)
    # Largest namespace archive one import may send: it streams to a file in the spool
    # (TERAG_HOME/spool), never into memory, so this bounds disk, not memory
    max_archive_bytes: int = Field(default=4 * 1024**3, ge=1024)
    # Open connections one client address may hold (behind a reverse proxy: raise it, or let
    # the proxy limit them); past it a new one is refused with 503
    max_connections_per_client: int = Field(default=64, ge=1)
    # Uploaded files read at once (each in a worker process), and the time one may take
    parse_workers: int = Field(default=2, ge=1, le=64)
    parse_timeout_s: float = Field(default=120.0, gt=0)
    max_question_chars: int = Field(default=2000, ge=1)
    # Unfinished ingest jobs one API key may have; beyond that: 429
    max_jobs_queued: int = Field(default=16, ge=1)
    # Ingest jobs one API key may submit in a minute; beyond that: 429. Each job is a write of
    # up to 10,000 documents, so this bounds what one key stores per minute
    max_jobs_per_minute: int = Field(default=60, ge=1)
    # Log lines as text or as one JSON object each (for a log collector)
    log_format: Literal["text", "json"] = "text"
    # /metrics (Prometheus) and the per-request counting behind it
    metrics: bool = True
    # /docs and /redoc: FastAPI's pages load their scripts from a CDN without integrity checks,
    # on the console's origin (where the console keeps its key), so they are off unless asked
    # for; /openapi.json is served either way
    api_docs: bool = False
    # How long finished ingest jobs are kept (then their id answers 404 "expired")
    job_retention_hours: float = Field(default=24.0, gt=0)
    # A worker's hold on the job it runs, renewed every second: a job whose process died is
    # taken over by another (or by the restarted service) once this has run out
    job_lease_s: float = Field(default=30.0, ge=1)
    # The queue this process's jobs go to and its worker takes them from: processes of one
    # service share one; services with other settings on the same Neo4j use their own
    job_queue: str = Field(default="default", min_length=1, max_length=64)

    @field_validator("cors_origins", "allowed_hosts", mode="before")
    @classmethod
    def _split_origins(cls, v: Any) -> Any:
        if isinstance(v, str):  # a JSON list, or comma-separated
            text = v.strip()
            return (
                json.loads(text)
                if text.startswith("[")
                else [o.strip() for o in text.split(",") if o.strip()]
            )
        return v

    def keyring(self) -> KeyRing:
        return KeyRing(parse_keys(self.api_keys))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _origin_host(origin: str) -> str:
    from urllib.parse import urlsplit

    try:
        return urlsplit(origin.strip()).hostname or ""
    except ValueError:
        return ""


def check_exposure(service: ServiceSettings, keys: KeyRing) -> None:
    """Without keys every caller has every right, so no page of another site (CORS) and no
    host name other than loopback may reach the service: one line naming the setting."""
    check_bind(service.host, keys)
    if len(keys):
        return
    open_origins = [o for o in service.cors_origins if not is_loopback(_origin_host(o))]
    if open_origins:
        raise ServiceConfigError(
            f"TERAG_CORS_ORIGINS: {open_origins[0][:60]!a} lets pages of other sites call "
            "a service without API keys, with every right; set TERAG_API_KEYS, or allow "
            "loopback origins only"
        )
    open_hosts = [h for h in service.allowed_hosts if not is_loopback(_host_name(h))]
    if open_hosts:
        raise ServiceConfigError(
            f"TERAG_ALLOWED_HOSTS: {open_hosts[0][:60]!a} lets a service without API keys "
            "answer other host names, with every right; set TERAG_API_KEYS, or allow "
            "loopback names only"
        )


def _host_name(host: str) -> str:
    """The name in a Host value, without its port or brackets (as policy.host_name reads it;
    not imported from there: policy imports this module)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    return (host.partition(":")[0] if host.count(":") == 1 else host).rstrip(".")


def check_bind(host: str, keys: KeyRing) -> None:
    """Without keys the service answers anyone who reaches it, so it binds loopback only."""
    if not len(keys) and not is_loopback(host):
        raise ServiceConfigError(
            f"refusing to bind {host} without API keys: set TERAG_API_KEYS, or bind 127.0.0.1"
        )
