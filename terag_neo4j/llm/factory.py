"""Which LLM backend runs: a LangChain chat model handed in, else the one TERAG_LLM_MODEL names
(`openai:<model>`, or a bare name / `ollama:<model>` for Ollama, the default)."""

from __future__ import annotations

from typing import Any

from terag_neo4j.config import Settings, SettingsError
from terag_neo4j.llm.interface import LLM
from terag_neo4j.llm.ledger import TokenLedger


def make_llm(settings: Settings, ledger: TokenLedger | None = None, llm: Any = None) -> LLM:
    """The LLM for `settings`; `llm`: an `LLM` or a LangChain `BaseChatModel` to use instead."""
    if llm is not None:
        from langchain_core.language_models import BaseChatModel

        if isinstance(llm, BaseChatModel):
            from terag_neo4j.llm.langchain_chat import LangChainLLM

            return LangChainLLM(llm, settings, ledger)
        if isinstance(llm, LLM):
            return llm
        raise SettingsError(
            f"llm= takes a LangChain chat model (BaseChatModel) or a terag LLM, not a "
            f"{type(llm).__name__}"
        )
    if settings.llm_backend == "openai":
        from terag_neo4j.llm.openai_chat import OpenAILLM

        return OpenAILLM(settings, ledger)
    from terag_neo4j.llm.ollama_chat import OllamaLLM

    return OllamaLLM(settings, ledger)
