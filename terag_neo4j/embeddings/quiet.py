"""Third-party chatter, held back: what torch, transformers, sentence-transformers and OpenVINO
warn about while a model is converted (tracer and deprecation warnings the user can do nothing
about) is collected, counted in one line and kept in full at DEBUG level."""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# Libraries that log through their own loggers, several with a handler of their own and
# propagation off (transformers), so a handler on the root logger would not see them.
THIRD_PARTY_LOGGERS = (
    "transformers",
    "torch",
    "sentence_transformers",
    "openvino",
    "nncf",
    "py.warnings",
)


@dataclass
class Captured:
    """The distinct messages seen in a `captured` block, in order, with how often each came."""

    messages: dict[str, int] = field(default_factory=dict)

    def add(self, text: str) -> None:
        self.messages[text] = self.messages.get(text, 0) + 1

    def __len__(self) -> int:
        return len(self.messages)

    def log(self, logger: logging.Logger, done: str) -> None:
        """One INFO line (`done` and the count), then each message at DEBUG."""
        if not self.messages:
            logger.info("%s", done)
            return
        logger.info(
            "%s (%d third-party warnings held back; -v shows them)", done, len(self.messages)
        )
        for text, times in self.messages.items():
            logger.debug("held back%s: %s", f" ({times}x)" if times > 1 else "", text)


class _Collector(logging.Handler):
    def __init__(self, into: Captured) -> None:
        super().__init__(logging.DEBUG)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            self.into.add(f"{record.name}: {record.getMessage()}")


def _transformers_logging() -> Any:
    """transformers' logging module, set up: transformers adds its own stderr handler when its
    first logger is asked for, which would otherwise happen inside the block, after the swap."""
    if importlib.util.find_spec("transformers") is None:
        return None
    from transformers.utils import logging as hf_logging

    hf_logging.get_logger()
    return hf_logging


@contextlib.contextmanager
def captured() -> Iterator[Captured]:
    """Collect Python warnings and third-party WARNING+ log records raised inside the block
    instead of printing them. Warnings are process-wide state: callers hold a lock around the
    block (the embedder's export lock does)."""
    into = Captured()
    handler = _Collector(into)
    bars = _transformers_logging()
    bars_were_on = bars is not None and bars.is_progress_bar_enabled()
    if bars is not None:
        bars.disable_progress_bar()  # "Loading weights": instant, one more line on the terminal
    saved = []
    for name in THIRD_PARTY_LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.handlers[:], logger.propagate))
        logger.handlers = [handler]
        logger.propagate = False
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                yield into
            finally:
                for w in seen:
                    into.add(f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})")
    finally:
        if bars_were_on:
            bars.enable_progress_bar()
        for logger, handlers, propagate in saved:
            logger.handlers = handlers
            logger.propagate = propagate
