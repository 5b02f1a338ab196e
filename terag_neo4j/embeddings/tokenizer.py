"""Tokenizers that size passages, on the `tokenizers` library alone (no transformers, no torch).

Chunking calls a tokenizer as it would a Hugging Face fast tokenizer (`tok(text,
add_special_tokens=False, return_offsets_mapping=True)`, and `tok.backend_tokenizer` for the
batch counts); `SizingTokenizer` answers those calls from a model's own `tokenizer.json`.

A served model's tokenizer (Ollama, an embeddings endpoint) is not on this machine: its passages
are sized by BERT's uncased WordPiece, the vocabulary MiniLM and bge-small ship (their
`tokenizer.json` files differ only in padding and truncation, which sizing turns off). The
vocabulary ships in the package, so sizing needs no download.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers.models import WordPiece

WORDPIECE_VOCAB = Path(__file__).resolve().parent.parent / "data" / "wordpiece-uncased-vocab.txt"
SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class SizingTokenizer:
    """A `tokenizers.Tokenizer` called the way chunking calls a fast tokenizer; padding and
    truncation off, as a fast tokenizer's plain call has them."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self.backend_tokenizer = tokenizer

    @classmethod
    def from_file(cls, path: Path) -> SizingTokenizer:
        return cls(Tokenizer.from_file(str(path)))

    def __call__(
        self,
        text: str,
        add_special_tokens: bool = True,
        return_offsets_mapping: bool = False,
        **_: object,
    ) -> dict[str, Any]:
        enc = self.backend_tokenizer.encode(text, add_special_tokens=add_special_tokens)
        out: dict[str, Any] = {
            "input_ids": enc.ids,
            "token_type_ids": enc.type_ids,
            "attention_mask": enc.attention_mask,
        }
        if return_offsets_mapping:
            out["offset_mapping"] = enc.offsets
        return out


@lru_cache(maxsize=1)
def wordpiece_tokenizer() -> SizingTokenizer:
    """BERT's uncased WordPiece (MiniLM's and bge-small's tokenizer) from the shipped vocabulary."""
    words = WORDPIECE_VOCAB.read_text(encoding="utf-8").splitlines()
    vocab = {w: i for i, w in enumerate(words)}
    tok = Tokenizer(WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.BertProcessing(
        ("[SEP]", vocab["[SEP]"]), ("[CLS]", vocab["[CLS]"])
    )
    tok.add_special_tokens(list(SPECIAL))
    return SizingTokenizer(tok)
