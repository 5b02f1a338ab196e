"""Starting what the project needs: the managed Neo4j (unless one is configured) and Ollama
with the configured model, side by side."""

from __future__ import annotations

from typing import Any


def start_services(settings: Any, *, ollama: bool) -> str | None:
    """Neo4j (unless TERAG_NEO4J_URI names one) and Ollama side by side: the first Neo4j start
    waits on the JVM and the first Ollama build on the compiler, so together they take about as
    long as the slower one. Returns Ollama's host when it was asked for."""
    from concurrent.futures import Future, ThreadPoolExecutor

    def neo4j() -> None:
        if settings.neo4j_uri is None:
            from terag_neo4j.local.neo4j_process import start

            start(settings)

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="terag-start") as pool:
        started_neo4j = pool.submit(neo4j)
        started_ollama: Future[str] | None = (
            # an `openai:` LLM is a server of the user's: no Ollama to start for it
            pool.submit(ensure_ollama, settings)
            if ollama and settings.llm_backend == "ollama"
            else None
        )
        started_neo4j.result()
        return started_ollama.result() if started_ollama is not None else None


def ensure_ollama(settings: Any) -> str:
    """A reachable Ollama with the configured model: the configured host, else a local one."""
    from terag_neo4j.local import ollama as local

    host: str = settings.ollama_host
    if not local.is_reachable(host):
        server = local.running_server(settings)
        if server is None:
            server = local.start(settings, host=host)
            local.write_pid_file(settings, server)
        host = server.host
    local.ensure_model(settings, host)
    return host
