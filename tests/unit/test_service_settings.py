"""Service settings: API keys, the loopback rule, error mapping and admission, without services."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from terag_neo4j.core.documents import InputError
from terag_neo4j.errors import TeragError
from terag_neo4j.service.admission import Admission
from terag_neo4j.service.http_errors import ServiceError, public_message, status_for
from terag_neo4j.service.settings import (
    MIN_KEY_CHARS,
    KeyRing,
    ServiceConfigError,
    ServiceSettings,
    check_bind,
    check_exposure,
    is_loopback,
    parse_keys,
)
from terag_neo4j.store import InvalidNamespace, NamespaceNotFound, Neo4jUnavailable

KEYS = {
    "alice-key-123-0123456789ab": {"namespaces": ["wiki"], "access": "write"},
    "reader-key-456-0123456789ab": {"namespaces": "*"},
}


def test_keys_from_json_text_and_from_a_file(tmp_path: Path) -> None:
    ring = KeyRing(parse_keys(json.dumps(KEYS)))
    alice = ring.lookup("alice-key-123-0123456789ab")
    assert alice is not None and alice.can_write("wiki") and not alice.can_read("other")
    reader = ring.lookup("reader-key-456-0123456789ab")
    assert reader is not None and reader.can_read("anything") and not reader.can_write("wiki")
    assert ring.lookup("alice-key-123-0123456789a") is None and ring.lookup(None) is None
    f = tmp_path / "keys.json"
    f.write_text(json.dumps(KEYS))
    f.chmod(0o600)  # a key file others may read is refused
    assert len(KeyRing(parse_keys(str(f)))) == 2
    assert parse_keys("") == {} and parse_keys(None) == {}


def test_keys_are_kept_as_digests_and_never_in_errors_or_reprs() -> None:
    ring = KeyRing(parse_keys(json.dumps(KEYS)))
    assert "alice-key-123-0123456789ab" not in repr(ring.__dict__)
    assert "alice-key-123-0123456789ab" not in repr(ServiceSettings(api_keys=json.dumps(KEYS)))
    with pytest.raises(ServiceConfigError) as e:
        parse_keys('{"alice-key-123-0123456789ab": ')
    assert "alice-key-123-0123456789ab" not in str(e.value)
    with pytest.raises(ServiceConfigError) as e:
        parse_keys('{"alice-key-123-0123456789ab": {"namespaces": 5}}')
    assert "alice-key-123-0123456789ab" not in str(e.value)


@pytest.mark.parametrize(
    "raw",
    [
        "[1, 2]",
        "/no/such/file.json",
        '{"short": {"namespaces": "*"}}',
        '{"long-enough-0123456789ab": {"namespaces": ["a"], "access": "admin"}}',
    ],
)
def test_bad_key_settings_are_one_line_errors(raw: str) -> None:
    with pytest.raises(ServiceConfigError):
        KeyRing(parse_keys(raw))


def test_without_keys_only_loopback_binds() -> None:
    empty = KeyRing({})
    for host in ("127.0.0.1", "::1", "localhost", "127.0.0.2"):
        assert is_loopback(host)
        check_bind(host, empty)
    with pytest.raises(ServiceConfigError, match=r"refusing to bind 0\.0\.0\.0 without API keys"):
        check_bind("0.0.0.0", empty)
    check_bind("0.0.0.0", KeyRing(parse_keys(json.dumps(KEYS))))


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERAG_SERVE_PORT", "9123")
    monkeypatch.setenv("TERAG_CORS_ORIGINS", "http://a.example, http://b.example")
    s = ServiceSettings()
    assert s.port == 9123 and s.cors_origins == ["http://a.example", "http://b.example"]
    assert ServiceSettings(port=1).port == 1
    assert ServiceSettings().host == "127.0.0.1"


@pytest.mark.parametrize(
    ("error", "status", "type_"),
    [
        (
            NamespaceNotFound("namespace 'x' does not exist (known: a, b); index"),
            404,
            "NamespaceNotFound",
        ),
        (InvalidNamespace("bad"), 422, "InvalidNamespace"),
        (InputError("bad"), 422, "InputError"),
        (Neo4jUnavailable("down"), 503, "Neo4jUnavailable"),
        (TeragError("?"), 500, "TeragError"),
        (ValueError("x"), 500, "InternalError"),
    ],
)
def test_project_errors_map_to_statuses(error: Exception, status: int, type_: str) -> None:
    assert status_for(error) == (status, type_)


def test_not_found_message_hides_the_other_namespaces() -> None:
    e = NamespaceNotFound("namespace 'x' does not exist (known: tenant-b, c); index it first")
    assert public_message(e) == "namespace 'x' does not exist; index it first"


def test_admission_refuses_beyond_its_queue_and_never_hangs() -> None:
    release = threading.Event()

    async def main() -> list[object]:
        adm = Admission(running=1, waiting=1, timeout_s=0.5)
        blocked = asyncio.ensure_future(adm.run(lambda: release.wait(5)))
        await asyncio.sleep(0.05)
        waiting = asyncio.ensure_future(adm.run(lambda: 1))
        await asyncio.sleep(0.05)
        with pytest.raises(ServiceError) as refused:
            await adm.run(lambda: 2)
        assert refused.value.status == 429 and "Retry-After" in refused.value.headers
        with pytest.raises(ServiceError) as timed_out:  # the waiting one gives up in 0.5 s
            await waiting
        assert timed_out.value.status == 503
        release.set()
        out = [await blocked, await adm.run(lambda: 3)]
        adm.close()
        return out

    assert asyncio.run(main()) == [True, 3]


def test_a_key_under_128_bits_is_refused_with_the_command_that_makes_one() -> None:
    short = "k" * (MIN_KEY_CHARS - 1)
    with pytest.raises(ServiceConfigError) as e:
        KeyRing(parse_keys(json.dumps({"x" * 40: {"namespaces": "*"}, short: {"namespaces": "*"}})))
    message = str(e.value)
    assert message.startswith("TERAG_API_KEYS: key 2 has 21 characters; a key needs at least 22")
    assert "secrets.token_urlsafe(32)" in message and short not in message
    assert "\n" not in message
    assert len(KeyRing(parse_keys(json.dumps({"k" * MIN_KEY_CHARS: {"namespaces": "*"}})))) == 1


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("cors_origins", ["*"]),
        ("cors_origins", ["http://localhost:3000", "https://evil.example"]),
        ("allowed_hosts", ["*"]),
        ("allowed_hosts", ["terag.example.org"]),
    ],
)
def test_a_keyless_service_refuses_other_sites_and_host_names(
    setting: str, value: list[str]
) -> None:
    service = ServiceSettings.model_validate({setting: value})
    with pytest.raises(ServiceConfigError) as e:
        check_exposure(service, KeyRing({}))
    assert str(e.value).startswith(f"TERAG_{setting.upper()}: ")
    assert "TERAG_API_KEYS" in str(e.value) and "\n" not in str(e.value)
    # With keys, or with loopback names only, the same setting is taken
    check_exposure(service, KeyRing(parse_keys(json.dumps(KEYS))))
    loopback = ["http://127.0.0.1:8080"] if setting == "cors_origins" else ["localhost:8000"]
    check_exposure(ServiceSettings.model_validate({setting: loopback}), KeyRing({}))
