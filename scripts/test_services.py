"""The services `make test` runs its suite against, and what it leaves running.

`start` starts Neo4j + GDS (unless NEO4J_URI names one) and Ollama, as `terag demo --prepare`
does, and notes in TERAG_HOME which of them were not running before; `stop`, after the suite,
stops those and prints one line: what it stopped, and what still runs (what ran before
`make test`, or a server a test left) with the command that stops it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from terag_neo4j.config import Settings
from terag_neo4j.local import neo4j as local_neo4j
from terag_neo4j.local import ollama as local_ollama
from terag_neo4j.local.services import start_services


def _note(settings: Settings) -> Path:
    return Path(settings.home) / "make-test-started.json"


def _running(settings: Settings) -> dict[str, bool]:
    return {
        "neo4j": settings.neo4j_uri is None and local_neo4j.status(settings).running,
        "ollama": local_ollama.running_server(settings) is not None,
    }


def start() -> None:
    settings = Settings()
    before = _running(settings)
    start_services(settings, ollama=True)
    started = [name for name, up in _running(settings).items() if up and not before[name]]
    _note(settings).parent.mkdir(parents=True, exist_ok=True)
    _note(settings).write_text(json.dumps(started), encoding="utf-8")


def stop() -> str:
    settings = Settings()
    note = _note(settings)
    started = json.loads(note.read_text(encoding="utf-8")) if note.exists() else []
    stopped = []
    if "neo4j" in started and local_neo4j.stop(settings):
        stopped.append("Neo4j")
    server = local_ollama.running_server(settings)
    if "ollama" in started and server is not None:
        local_ollama.stop(server)
        local_ollama.pid_file(settings).unlink(missing_ok=True)
        stopped.append("Ollama")
    note.unlink(missing_ok=True)
    left = _running(settings)
    still = [
        what
        for name, what in (
            ("neo4j", "Neo4j (`terag server stop` stops it)"),
            ("ollama", "Ollama (`terag ollama stop` stops it)"),
        )
        if left[name]
    ]
    done = f"stopped {' and '.join(stopped)}" if stopped else "started no server"
    kept = f"; still running: {', '.join(still)}" if still else ""
    return f"make test: {done}{kept}"


if __name__ == "__main__":
    if sys.argv[1:] == ["start"]:
        start()
    elif sys.argv[1:] == ["stop"]:
        print(stop())
    else:
        sys.exit("usage: python scripts/test_services.py start|stop")
