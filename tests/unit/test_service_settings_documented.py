"""Every setting of the service and of its clients is documented in .env.example."""

from pathlib import Path

from terag_neo4j.service.settings import ServiceSettings

ROOT = Path(__file__).resolve().parents[2]
# Read outside ServiceSettings: by `terag mcp` and by the CLI's path through a running service
OTHERS = {"TERAG_MCP_KEY", "TERAG_URL", "TERAG_API_KEY"}


def service_env_names() -> set[str]:
    names = set()
    for name, field in ServiceSettings.model_fields.items():
        alias = field.validation_alias
        names.add(str(alias) if isinstance(alias, str) else f"TERAG_{name.upper()}")
    return names | OTHERS


def test_every_service_setting_is_in_env_example() -> None:
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    names = service_env_names()
    assert {"TERAG_SERVE_HOST", "TERAG_API_KEYS", "TERAG_MAX_QUEUE"} <= names
    missing = sorted(n for n in names if f"{n}=" not in text)
    assert not missing, f"add to .env.example: {missing}"
