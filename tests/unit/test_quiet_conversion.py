"""Third-party warnings raised while a model is converted are held back: one INFO line counts
them, DEBUG has each in full, and none reaches the terminal."""

from __future__ import annotations

import logging
import sys
import warnings

import pytest

from terag_neo4j.embeddings.quiet import captured


def _library_logger() -> logging.Logger:
    """A logger set up the way transformers sets up its own: a stderr handler, no propagation."""
    logger = logging.getLogger("transformers.modeling_utils")
    parent = logging.getLogger("transformers")
    parent.handlers = [logging.StreamHandler(sys.stderr)]
    parent.propagate = False
    return logger


def test_warnings_and_library_logs_are_counted_not_printed(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    library = _library_logger()
    ours = logging.getLogger("terag_neo4j.embeddings")
    caplog.set_level(logging.DEBUG)
    with captured() as noise:
        for _ in range(3):  # the tracer warns once per traced call: one message, counted 3x
            warnings.warn("Converting a tensor to a Python boolean", stacklevel=1)
        warnings.warn("torch.jit.trace is deprecated", FutureWarning, stacklevel=1)
        library.warning("`loss_type=None` was set in the config but it is unrecognised")
        library.info("below WARNING: not counted")
    noise.log(ours, "converted the embedder to OpenVINO in 3s")

    out, err = capfd.readouterr()
    assert "loss_type" not in err + out and "tensor" not in err + out
    assert len(noise) == 3
    info = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert info == [
        "converted the embedder to OpenVINO in 3s (3 third-party warnings held back; -v shows them)"
    ]
    debug = "\n".join(r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)
    assert "(3x): UserWarning: Converting a tensor" in debug
    assert "FutureWarning: torch.jit.trace is deprecated" in debug
    assert "transformers.modeling_utils: `loss_type=None`" in debug


def test_the_block_restores_filters_and_handlers() -> None:
    parent = logging.getLogger("transformers")
    before = (parent.handlers[:], parent.propagate, warnings.filters[:])
    with captured():
        pass
    assert (parent.handlers, parent.propagate, warnings.filters) == before


def test_nothing_held_back_is_one_plain_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with captured() as noise:
        pass
    noise.log(logging.getLogger("terag_neo4j.embeddings"), "converted")
    assert [r.getMessage() for r in caplog.records] == ["converted"]


def test_an_error_inside_still_restores(capfd: pytest.CaptureFixture[str]) -> None:
    library = _library_logger()
    with pytest.raises(RuntimeError), captured():
        raise RuntimeError("conversion failed")
    library.warning("after the block")
    assert "after the block" in capfd.readouterr().err
