"""The one LLM entry point of the project: the `LLM` interface (`base`) every caller uses, its
backends (`ollama_chat`, the default; `openai_chat`; `langchain_chat`), chosen by `make_llm`
(`factory`), and the ledger of every call's tokens (`ledger`)."""

from terag_neo4j.llm.factory import make_llm
from terag_neo4j.llm.failures import (
    MAX_RETRY_WAIT_S,
    LLMError,
    LLMUnavailableError,
    ModelNotFoundError,
)
from terag_neo4j.llm.interface import LLM, Format
from terag_neo4j.llm.ledger import Completion, LLMCall, Message, Stage, TokenLedger, TokenTotals
from terag_neo4j.llm.ollama_chat import OllamaLLM, is_transient

__all__ = [
    "LLM",
    "MAX_RETRY_WAIT_S",
    "Completion",
    "Format",
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
    "make_llm",
]
