"""Build Ollama from source with the Go toolchain, for terag-neo4j.

Ollama publishes no binary through a package registry, so the binary is built with `go install`
from the version the caller pins and cached under ``<cache>/v<version>/cpu-<key>/ollama``.
:mod:`~terag_ollama_build.headers` holds the llama.cpp headers that Go's module zip leaves out and
their checks, :mod:`~terag_ollama_build.build` the toolchain, the compiler flags and the build.
"""

from terag_ollama_build.build import (
    BUILD_TIMEOUT_S,
    OLLAMA_MODULE,
    binary_path,
    build_env,
    build_progress,
    cpu_flags,
    cpu_key,
    ensure_binary,
    find_go,
    finished_build,
    module_source,
    shared_headers,
)
from terag_ollama_build.errors import OllamaBuildError
from terag_ollama_build.headers import (
    LLAMA_CPP_REVISION,
    LLAMA_CPP_VENDOR_SHA256,
    VENDOR_HEADERS,
    llama_cpp_revision,
    vendor_headers,
    vendor_headers_checked,
)

__all__ = [
    "BUILD_TIMEOUT_S",
    "LLAMA_CPP_REVISION",
    "LLAMA_CPP_VENDOR_SHA256",
    "OLLAMA_MODULE",
    "VENDOR_HEADERS",
    "OllamaBuildError",
    "binary_path",
    "build_env",
    "build_progress",
    "cpu_flags",
    "cpu_key",
    "ensure_binary",
    "find_go",
    "finished_build",
    "llama_cpp_revision",
    "module_source",
    "shared_headers",
    "vendor_headers",
    "vendor_headers_checked",
]
