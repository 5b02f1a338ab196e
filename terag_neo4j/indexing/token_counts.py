"""How many tokens each sentence is, for many sentences at once, exactly as the tokenizer says.

Chunking sizes every sentence of a document. Calling the tokenizer once per sentence costs a
Python round trip each, and even the Rust tokenizer's normalisation is slow on short strings
(about 3 MB/s here): a million-line export would take half a minute. Two paths, both exact:

- WordPiece with BERT's normaliser and pre-tokeniser (MiniLM, bge, most English embedders) on
  plain printable ASCII: the normaliser only lowercases there, the pre-tokeniser only splits at
  whitespace and punctuation, so a sentence's count is the sum of its pieces' counts, and the
  model itself counts each distinct piece once (`_WordPieceCounter`). A sentence with anything
  else (a control or non-ASCII character, an added token such as `[MASK]`) goes the other way.
- anything else: the tokenizer's Rust backend on the whole list at once, padding and truncation
  off (as `tokenizer(text)` has them); a tokenizer without one is called per sentence.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import Any

# Printable ASCII (and the whitespace BERT's normaliser keeps): the fast path's alphabet.
_NOT_PLAIN = re.compile(r"[^\t\n\r\x20-\x7e]")
# BERT's pre-tokeniser on ASCII: runs of letters and digits, and each punctuation mark alone.
_PIECE = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9\s]")
_CACHE_MAX = 1 << 18  # distinct pieces remembered per tokenizer; cleared when full
_SEP = "\x00"  # joins plain texts: never in one, and a piece of its own


class _WordPieceCounter:
    def __init__(self, backend: Any, lowercase: bool, added: Sequence[str]) -> None:
        self._model = backend.model
        self._lowercase = lowercase
        self._added = [a.lower() for a in added if a]
        self._cache: dict[str, int] = {_SEP: 0}

    def takes(self, text: str) -> bool:
        """Whether `text` is plain: printable ASCII without an added token."""
        if _NOT_PLAIN.search(text):
            return False
        low = text.lower()
        return not any(a in low for a in self._added)

    def counts(self, texts: Sequence[str]) -> list[int]:
        """The counts of plain `texts`: all of them cut into pieces at once (one regex over
        them joined by a separator that is a piece of its own), each piece counted from the
        cache, and the counts summed between separators."""
        if not texts:
            return []
        joined = _SEP.join(texts)
        pieces = _PIECE.findall(joined.lower() if self._lowercase else joined)
        cache = self._cache
        missing = set(pieces).difference(cache)
        if len(cache) + len(missing) > _CACHE_MAX:
            cache.clear()
            cache[_SEP] = 0
            missing = set(pieces).difference(cache)
        for piece in missing:
            cache[piece] = len(self._model.tokenize(piece))
        total = list(accumulate(map(cache.__getitem__, pieces), initial=0))
        out, start, before = [], 0, 0
        for _ in range(len(texts) - 1):
            end = pieces.index(_SEP, start)
            out.append(total[end] - before)
            before, start = total[end], end + 1
        out.append(total[-1] - before)
        return out


class TokenCounter:
    """`counts(texts)`: the number of tokens of each text, without special tokens."""

    def __init__(self, tokenizer: object) -> None:
        self._tokenizer = tokenizer
        self._backend: Any = None
        self._wordpiece: _WordPieceCounter | None = None
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is None or not hasattr(backend, "to_str"):
            return
        from tokenizers import Tokenizer

        # A copy: padding and truncation set in the tokenizer's file (MiniLM's pads to 128) are
        # turned off on the copy, never on the caller's tokenizer.
        spec = backend.to_str()
        self._backend = Tokenizer.from_str(spec)
        self._backend.no_padding()
        self._backend.no_truncation()
        self._wordpiece = _wordpiece_counter(self._backend, json.loads(spec))

    def counts(self, texts: Sequence[str]) -> list[int]:
        wp = self._wordpiece
        if wp is None:
            return self._slow(list(texts))
        # Most lists are plain throughout: one look at them all, each text only if not.
        if wp.takes("\n".join(texts)):
            return wp.counts(texts)
        out = [0] * len(texts)
        plain: list[int] = []
        rest: list[int] = []  # the texts the fast path does not take
        for i, text in enumerate(texts):
            (plain if wp.takes(text) else rest).append(i)
        for i, n in zip(plain, wp.counts([texts[i] for i in plain]), strict=True):
            out[i] = n
        if rest:
            for i, n in zip(rest, self._slow([texts[i] for i in rest]), strict=True):
                out[i] = n
        return out

    def _slow(self, texts: list[str]) -> list[int]:
        if self._backend is not None:
            return [len(e) for e in self._backend.encode_batch(texts, add_special_tokens=False)]
        call: Callable[..., Any] = self._tokenizer  # type: ignore[assignment]
        return [
            len(
                call(t, add_special_tokens=False, return_offsets_mapping=True, verbose=False)[
                    "offset_mapping"
                ]
            )
            for t in texts
        ]


def _wordpiece_counter(backend: Any, spec: dict[str, Any]) -> _WordPieceCounter | None:
    normalizer, pre = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}
    model = spec.get("model") or {}
    if (
        normalizer.get("type") != "BertNormalizer"
        or pre.get("type") != "BertPreTokenizer"
        or model.get("type") != "WordPiece"
    ):
        return None
    added = [t["content"] for t in spec.get("added_tokens") or ()]
    if len(added) > 64:  # checking each sentence for so many would cost more than it saves
        return None
    return _WordPieceCounter(backend, bool(normalizer.get("lowercase")), added)


_COUNTERS: weakref.WeakKeyDictionary[Any, TokenCounter] = weakref.WeakKeyDictionary()


def token_counter(tokenizer: object) -> TokenCounter:
    """The counter of `tokenizer`, made once per tokenizer (copying a backend takes a while)."""
    try:
        counter = _COUNTERS.get(tokenizer)
    except TypeError:  # an object that cannot be weakly referenced
        return TokenCounter(tokenizer)
    if counter is None:
        counter = _COUNTERS[tokenizer] = TokenCounter(tokenizer)
    return counter
