"""What the front door decides from a request's method, path and headers alone, before a byte
of its body is read: which route it is (public, any key, or a key scoped to the path's namespace
for reading or writing), how large and of what type its body may be, whether its Host and Origin
are the service's own, and whether its key is within its request rate.

The route table here mirrors the routers' paths: `classify` reads the path exactly as Starlette
routes it (`scope["path"]`, already percent-decoded), so the namespace it checks is the one the
route will act on.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

from terag_neo4j.errors import echo
from terag_neo4j.service.settings import Principal

KIB = 1024
MIB = 1024 * KIB
# A question (QUESTION_MAX characters, even JSON-escaped) with its options, a namespace's name
QUERY_BODY_BYTES = 64 * KIB
# One MCP tool call: add_text's one document is the largest
MCP_BODY_BYTES = 4 * MIB

# Answered without a key: liveness, readiness (without its detail) and the API's own description
PUBLIC_PATHS = frozenset(
    {"/v1/health", "/v1/ready", "/v1/version", "/openapi.json", "/docs", "/redoc"}
)
# The console's page and its static files (routes_console): no data in them, so no key; the
# calls the page makes to /v1 carry the key the user signs in with
CONSOLE_PAGE = "/"
CONSOLE_FILES = "/console/"
NAMESPACES = "/v1/namespaces/"
# POSTs under a namespace that only read it; every other method but GET/HEAD writes
READ_POSTS = frozenset({"retrieve", "ask"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
JSON = "application/json"
MULTIPART = "multipart/form-data"
UPLOAD = "documents/upload"
DOCUMENTS = "documents"
IMPORT = "import"
ZIP = "application/zip"


@dataclass(frozen=True)
class Rule:
    """What a request may be: `public` needs no key; `namespace` (when the path names one) is
    checked against the key for reading or `write`; a body over `max_body` bytes is a 413, and
    one (on POST/PUT/PATCH) that is not `content_type` a 415."""

    public: bool
    namespace: str | None
    write: bool
    max_body: int
    content_type: str | None


def classify(
    method: str, path: str, max_body_bytes: int, max_archive_bytes: int | None = None
) -> Rule:
    """The rule for a request. The one table of body limits: documents (JSON, whose one document
    may hold up to MAX_DOCUMENT_CHARS characters) and uploads get `max_body_bytes`
    (TERAG_MAX_BODY_BYTES), a namespace archive's import `max_archive_bytes`
    (TERAG_MAX_ARCHIVE_BYTES; default: `max_body_bytes`), MCP calls MCP_BODY_BYTES, everything
    else QUERY_BODY_BYTES."""
    if path in PUBLIC_PATHS or (
        method in SAFE_METHODS and (path == CONSOLE_PAGE or path.startswith(CONSOLE_FILES))
    ):
        return Rule(True, None, False, QUERY_BODY_BYTES, None)
    if path == "/mcp":
        return Rule(False, None, False, MCP_BODY_BYTES, None)
    content_type = JSON if path.startswith("/v1/") else None
    if not path.startswith(NAMESPACES):
        # /v1/namespaces (its body names the namespace: the route checks it), /v1/jobs (the job
        # names it), anything else: a key is enough here
        return Rule(False, None, False, QUERY_BODY_BYTES, content_type)
    namespace, _, tail = path[len(NAMESPACES) :].partition("/")
    write = method not in SAFE_METHODS and not (method == "POST" and tail in READ_POSTS)
    limit = QUERY_BODY_BYTES
    if method == "POST" and tail in (DOCUMENTS, UPLOAD):
        limit = max_body_bytes
    if tail == UPLOAD:
        content_type = MULTIPART
    if method == "POST" and tail == IMPORT:
        limit = max_body_bytes if max_archive_bytes is None else max_archive_bytes
        content_type = ZIP
    return Rule(False, namespace, write, limit, content_type)


# ---------------------------------------------------------------------------------- browsers

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def host_name(host: str) -> str:
    """The name in a Host header, without its port, brackets or a trailing dot, lower-case."""
    host = host.strip().lower()
    if host.startswith("["):
        name = host[1 : host.find("]")] if "]" in host else host[1:]
    elif host.count(":") == 1:
        name = host.partition(":")[0]
    else:
        name = host  # a bare name, or an IPv6 address without brackets
    return name.rstrip(".")


def allowed_hosts(bind: str, extra: list[str]) -> frozenset[str] | None:
    """The Host names the service answers to: the address it binds, the loopback names and
    TERAG_ALLOWED_HOSTS; None (any) when that holds "*", or when it binds every address and no
    names are configured (it cannot know its own, and such a bind needs keys)."""
    names = {host_name(h) for h in extra}
    if "*" in names or (bind.strip("[]") in WILDCARD_BINDS and not names):
        return None
    names |= LOOPBACK_NAMES
    if bind.strip("[]") not in WILDCARD_BINDS:
        names.add(host_name(bind))
    return frozenset(names)


def host_refusal(headers: Mapping[str, str], allowed: frozenset[str] | None) -> str | None:
    """Why the request's Host is not this service's (DNS rebinding), or None. A request without
    Host (HTTP/1.0) is not a browser's and passes."""
    host = headers.get("host")
    if allowed is None or host is None or host_name(host) in allowed:
        return None
    return (
        f"Host {echo(host)} is not one this service answers to: add its name to "
        "TERAG_ALLOWED_HOSTS if it should be"
    )


def origin_refusal(
    method: str, headers: Mapping[str, str], scheme: str, cors: frozenset[str]
) -> str | None:
    """Why a state-changing request comes from another site's page, or None: its Origin is
    neither the service's own nor one of TERAG_CORS_ORIGINS, or (without Origin) the browser
    says it is cross-site. A form or multipart POST needs no CORS preflight, so without this
    any page the user visits could upload or delete through a keyless service."""
    if method not in UNSAFE_METHODS:
        return None
    origin = headers.get("origin")
    if origin is not None:
        own = f"{scheme}://{headers.get('host', '')}".lower()
        if origin.lower() == own or origin in cors or "*" in cors:
            return None
        return (
            f"cross-origin {method} from {echo(origin)} refused: add the origin to "
            "TERAG_CORS_ORIGINS to allow it"
        )
    if headers.get("sec-fetch-site", "").lower() == "cross-site":
        return f"cross-site {method} refused: add the page's origin to TERAG_CORS_ORIGINS"
    return None


# ---------------------------------------------------------------------------------- rates


class RateLimiter:
    """A token bucket per key: `rate` requests a second on average, bursts of up to one
    second's worth (at least one request). A key's own rate (its "rate" in TERAG_API_KEYS)
    overrides the service's; 0 means no limit."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        # key name -> (tokens, when counted); only the event loop touches it
        self._buckets: dict[str, tuple[float, float]] = {}

    def limit(self, who: Principal) -> float:
        return who.rate if who.rate is not None else self.rate

    def take(self, who: Principal) -> float:
        """0 when the request may go ahead (a token taken), else the seconds until it may."""
        rate = self.limit(who)
        if rate <= 0:
            return 0.0
        burst = max(1.0, rate)
        now = time.monotonic()
        tokens, at = self._buckets.get(who.name, (burst, now))
        tokens = min(burst, tokens + (now - at) * rate)
        if tokens >= 1.0:
            self._buckets[who.name] = (tokens - 1.0, now)
            return 0.0
        self._buckets[who.name] = (tokens, now)
        return (1.0 - tokens) / rate


def retry_after(seconds: float) -> str:
    return str(max(1, math.ceil(seconds)))


# Requests without a valid key, per client address: a public route (/v1/ready, the console's
# files, the API's description), or one refused for its key, Host or Origin. Enough for a
# browser loading the console and monitors polling readiness; far below what a flood needs.
# Constants, not settings: behind a proxy every user shares its address, and the bound is
# still a hundred pages a second. /v1/health is never throttled (it costs nothing, and a
# probe must see it answer).
ANON_RATE = 20.0  # requests a second
ANON_BURST = 100.0
ANON_ADDRESSES = 10_000  # addresses remembered; the one seen least recently goes first
UNTHROTTLED = frozenset({"/v1/health"})


class AddressThrottle:
    """A token bucket per client address, for requests that carry no valid key; its table
    holds at most `size` addresses, so a caller with many addresses cannot grow it."""

    def __init__(
        self, rate: float = ANON_RATE, burst: float = ANON_BURST, size: int = ANON_ADDRESSES
    ) -> None:
        self.rate, self.burst, self.size = rate, burst, size
        # address -> (tokens, when counted), least recently seen first; only the event loop
        # touches it
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, address: str) -> float:
        """0 when the request may go ahead (a token taken), else the seconds until it may."""
        now = time.monotonic()
        tokens, at = self._buckets.pop(address, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate)
        wait = 0.0
        if tokens >= 1.0:
            tokens -= 1.0
        else:
            wait = (1.0 - tokens) / self.rate
        self._buckets[address] = (tokens, now)
        while len(self._buckets) > self.size:
            self._buckets.popitem(last=False)
        return wait
