"""The one error the build raises; its message says what to do."""


class OllamaBuildError(RuntimeError):
    """Ollama could not be built (no Go, a failed download or compile, headers that do not fit)."""
