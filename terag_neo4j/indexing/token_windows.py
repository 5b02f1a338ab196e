"""Token windows: a text longer than a passage cut, at word boundaries, into overlapping windows
of at most `max_tokens` tokens (`chunk_text`), tokenized a bounded piece at a time so a sentence
of megabytes never holds the tokenizer (and a cancel) for long (`_token_offsets`)."""

from __future__ import annotations

from array import array

from terag_neo4j.config import SettingsError
from terag_neo4j.core.documents import ShouldStop, stop_if_asked

# A token is at most this many characters on average in a chunk: a 2 MB "word" (a base64 blob, a
# line without spaces) is one [UNK] token to WordPiece, so token windows alone do not bound size.
MAX_CHARS_PER_TOKEN = 32
# Characters per tokenizer call, in a block of sentences and in a sentence too long for a
# passage: at most 0.1 s of CPU each (the Rust tokenizer does about 1 MB/s here, holding the
# GIL), so the lease heartbeat and a cancel never wait long behind one call.
TOKENIZE_CHARS = 50_000


def _token_offsets(
    text: str, tokenizer: object, should_stop: ShouldStop | None = None
) -> tuple[array[int], array[int]]:
    """The start and end of every token of `text`. A text over `TOKENIZE_CHARS` is tokenized a
    piece at a time, each piece ending at whitespace (tokenizers split there, so the tokens are
    those of the whole), asking `should_stop` before each. Two arrays, not a list of pairs: a
    4 MB sentence is 1.3 million tokens, whose tuples were 100 MB and 0.1 s of CPU to free in
    one go, between two looks at `should_stop`."""
    starts: array[int] = array("q")
    ends: array[int] = array("q")
    start = 0
    while start < len(text):
        end = len(text)
        if end - start > TOKENIZE_CHARS:
            limit = start + TOKENIZE_CHARS
            # The last whitespace of the piece's second half; a run without any is cut hard
            # (one "word" of 50,000 characters is a single unknown token either way)
            cut = max(text.rfind(" ", start + TOKENIZE_CHARS // 2, limit), -1)
            end = cut if cut > start else limit
        if start:
            stop_if_asked(should_stop, "chunking")
        # verbose=False: no "Token indices sequence length is longer than the specified maximum"
        # warning; a document longer than the model's window is exactly what chunking is for.
        enc = tokenizer(  # type: ignore[operator]
            text[start:end], add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )
        starts.extend(a + start for a, _ in enc["offset_mapping"])
        ends.extend(b + start for _, b in enc["offset_mapping"])
        start = end
    return starts, ends


def chunk_text(
    text: str,
    max_tokens: int,
    overlap: int,
    tokenizer: object,
    should_stop: ShouldStop | None = None,
) -> list[str]:
    """`text` in windows of at most `max_tokens` tokens, `overlap` tokens shared.

    Windows are cut from the original string by character offsets, so nothing is re-spelled by
    decoding, and each cut is moved back to the nearest whitespace so words stay whole.
    `should_stop` is asked between the tokenizer's pieces of a long text.
    """
    if max_tokens <= 0:
        raise SettingsError("max_tokens must be positive")
    if not 0 <= overlap < max_tokens:
        raise SettingsError("overlap must be >= 0 and smaller than max_tokens")
    starts, ends = _token_offsets(text, tokenizer, should_stop)
    n = len(starts)
    max_chars = max_tokens * MAX_CHARS_PER_TOKEN
    if n <= max_tokens:
        return cap_chars(text.strip(), max_chars) if text.strip() else []
    chunks: list[str] = []
    start_tok = 0
    while start_tok < n:
        end_tok = min(start_tok + max_tokens, n)
        start_char = starts[start_tok]
        end_char = ends[end_tok - 1] if end_tok == n else starts[end_tok]
        chunk = text[start_char:end_char].strip()
        if chunk:
            chunks.extend(cap_chars(chunk, max_chars))
        if end_tok == n:
            break
        start_tok += max_tokens - overlap
    return chunks


def cap_chars(chunk: str, max_chars: int) -> list[str]:
    """`chunk` cut into pieces of at most `max_chars`, at whitespace where there is some."""
    pieces: list[str] = []
    while len(chunk) > max_chars:
        cut = chunk.rfind(" ", max_chars // 2, max_chars + 1)
        cut = cut if cut > 0 else max_chars
        pieces.append(chunk[:cut].strip())
        chunk = chunk[cut:].strip()
    if chunk:
        pieces.append(chunk)
    return [p for p in pieces if p]
