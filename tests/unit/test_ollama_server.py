"""Unit tests of the Ollama server manager's pure parts (no server, no build); the build
support's are in test_ollama_build.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import ollama
import pytest

from terag_neo4j.config import Settings
from terag_neo4j.local import ollama as srv

# `ollama show` output of a model created by `ensure_model` on Ollama 0.17.4.
SHOWN_PARAMETERS = (
    "num_ctx                        2048\n"
    "num_thread                     1\n"
    "repeat_penalty                 1.1\n"
    'stop                           "<|im_start|>"\n'
    'stop                           "<|im_end|>"\n'
    'stop                           "<|endoftext|>"\n'
    "temperature                    0"
)


def show(parameters: str, template: str = srv.SMOLLM2_TEMPLATE) -> ollama.ShowResponse:
    return ollama.ShowResponse.model_validate(
        {"parameters": parameters, "template": template, "model_info": {}}
    )


def test_normalize_host() -> None:
    assert srv.normalize_host("127.0.0.1:11434") == "http://127.0.0.1:11434"
    assert srv.normalize_host("http://localhost:5000") == "http://localhost:5000"
    assert srv.normalize_host("0.0.0.0") == "http://127.0.0.1:11434"


def test_parse_show_parameters() -> None:
    parsed = srv.parse_parameters(SHOWN_PARAMETERS)
    assert parsed["stop"] == ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]
    assert parsed["num_ctx"] == ["2048"]


def test_model_is_current_detects_drift() -> None:
    settings = Settings().model_copy(update={"llm_num_ctx": 2048, "llm_temperature": 0.0})
    assert srv.model_is_current(show(SHOWN_PARAMETERS), settings)
    assert not srv.model_is_current(show(SHOWN_PARAMETERS.replace("2048", "4096")), settings)
    without_thread = "\n".join(
        line for line in SHOWN_PARAMETERS.splitlines() if "num_thread" not in line
    )
    assert not srv.model_is_current(show(without_thread), settings)
    assert not srv.model_is_current(show(SHOWN_PARAMETERS, template="{{ .Prompt }}"), settings)


def test_modelfile_uses_the_packaged_gguf_and_chatml() -> None:
    gguf = srv.gguf_path()
    assert gguf.name == srv.GGUF_FILE and gguf.stat().st_size > 50_000_000
    text = srv.modelfile(gguf, Settings())
    assert text.startswith(f"FROM {gguf}\n")
    assert "<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>" in text
    assert 'PARAMETER stop "<|im_end|>"' in text


def test_paths_live_under_home(tmp_path: Path) -> None:
    settings = Settings().model_copy(update={"home": tmp_path})
    assert srv.models_dir(settings).is_relative_to(settings.home)
    assert srv.pid_file(settings).is_relative_to(settings.home)
    assert srv.serve_log(settings, 1234).is_relative_to(settings.home)


def fake_ollama(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    binary = folder / "ollama"
    binary.write_text("#!/bin/sh\nexit 0\n")
    binary.chmod(0o755)
    return binary


def test_an_ollama_on_path_is_preferred(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = fake_ollama(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{binary.parent}{os.pathsep}{os.environ['PATH']}")
    settings = Settings().model_copy(update={"home": tmp_path / "home"})
    assert srv.ensure_binary(settings) == binary
    assert srv.describe_binary(settings) == f"{binary} (on PATH)"


def without_ollama(monkeypatch: pytest.MonkeyPatch) -> None:
    """No `ollama` on PATH and no build support importable."""
    path = [p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "ollama").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    monkeypatch.setitem(sys.modules, srv.BUILD_SUPPORT, None)  # import now raises ImportError


def test_without_ollama_and_build_support_start_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_ollama(monkeypatch)
    settings = Settings().model_copy(update={"home": tmp_path, "ollama_host": "http://127.0.0.1:9"})
    with pytest.raises(srv.OllamaSetupError) as info:
        srv.start(settings, "127.0.0.1:9")
    message = str(info.value)
    assert "\n" not in message and "http://127.0.0.1:9" in message
    assert "OLLAMA_HOST" in message and "pip install ./tools/ollama-build" in message
    assert "`make`" in message
    assert srv.describe_binary(settings).startswith("none")
    with pytest.raises(srv.OllamaSetupError, match="tools/ollama-build"):
        srv.build_binary(settings)


def test_cli_without_ollama_exits_3_with_one_line(tmp_path: Path) -> None:
    # A real `terag ollama start` in a process where the build support cannot be imported.
    path = [p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "ollama").exists()]
    env = {
        **os.environ,
        "PATH": os.pathsep.join(path),
        "TERAG_HOME": str(tmp_path),
        "OLLAMA_HOST": "http://127.0.0.1:9",
    }
    code = (
        "import sys; sys.modules['terag_ollama_build'] = None; "
        "from terag_neo4j.cli import main; sys.exit(main(['ollama', 'start']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 3, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install ./tools/ollama-build" in lines[0], proc.stderr
