"""The one LLM entry point of the project: Ollama chat calls (`ollama_chat`) with a token
ledger (`ledger`)."""

from terag_neo4j.llm.ledger import Completion, LLMCall, Message, Stage, TokenLedger, TokenTotals
from terag_neo4j.llm.ollama_chat import (
    MAX_RETRY_WAIT_S,
    LLMError,
    LLMUnavailableError,
    ModelNotFoundError,
    OllamaLLM,
    is_transient,
)

__all__ = [
    "MAX_RETRY_WAIT_S",
    "Completion",
    "LLMCall",
    "LLMError",
    "LLMUnavailableError",
    "Message",
    "ModelNotFoundError",
    "OllamaLLM",
    "Stage",
    "TokenLedger",
    "TokenTotals",
    "is_transient",
]
