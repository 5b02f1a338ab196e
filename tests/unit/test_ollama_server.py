"""Unit tests of the Ollama server manager's pure parts (no server, no build)."""

from __future__ import annotations

import shutil
from pathlib import Path

import ollama
import pytest

from terag_neo4j.config import Settings
from terag_neo4j.server import ollama as srv

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
    parsed = srv._parse_parameters(SHOWN_PARAMETERS)
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
    path = srv.binary_path(settings)
    assert path.name == "ollama" and path.parent.name == f"cpu-{srv.cpu_key()}"
    assert path.parent.parent == settings.home / "ollama" / srv.OLLAMA_VERSION
    assert "-mno-amx-tile" in srv.cpu_flags() or "x86" not in srv.platform.machine()
    assert srv.models_dir(settings).is_relative_to(settings.home)


def ollama_source(tmp_path: Path, revision: str) -> Path:
    """A stand-in for Ollama's module source: only the Makefile.sync line the check reads."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "Makefile.sync").write_text(
        f"UPSTREAM=https://example.invalid/llama.cpp.git\nWORKDIR=llama/vendor\nFETCH_HEAD={revision}\n"
    )
    return tmp_path


def test_shipped_vendor_headers_are_the_pinned_revision(tmp_path: Path) -> None:
    source = ollama_source(tmp_path, srv.versions.LLAMA_CPP_REVISION)
    include = srv.vendor_headers(source)
    assert include == srv.VENDOR_HEADERS
    for name in srv.versions.LLAMA_CPP_VENDOR_SHA256:
        assert (include / name).is_file()


def test_another_llama_cpp_revision_stops_the_build(tmp_path: Path) -> None:
    source = ollama_source(tmp_path, "0123456789")
    with pytest.raises(
        srv.OllamaSetupError, match=r"vendors llama\.cpp 0123456789, but .* are from ec98e2002"
    ):
        srv.vendor_headers(source)


def test_a_changed_header_stops_the_build(tmp_path: Path) -> None:
    source = ollama_source(tmp_path / "src", srv.versions.LLAMA_CPP_REVISION)
    headers = tmp_path / "include"
    shutil.copytree(srv.VENDOR_HEADERS, headers)
    json_hpp = headers / "nlohmann" / "json.hpp"
    json_hpp.write_bytes(json_hpp.read_bytes() + b"\n")
    with pytest.raises(srv.OllamaSetupError, match=r"json\.hpp has sha256"):
        srv.vendor_headers(source, headers)
    json_hpp.unlink()
    with pytest.raises(srv.OllamaSetupError, match=r"json\.hpp is missing"):
        srv.vendor_headers(source, headers)


def test_makefile_sync_without_fetch_head_is_refused(tmp_path: Path) -> None:
    (tmp_path / "Makefile.sync").write_text("UPSTREAM=x\n")
    with pytest.raises(srv.OllamaSetupError, match="names no FETCH_HEAD"):
        srv.llama_cpp_revision(tmp_path)
    with pytest.raises(srv.OllamaSetupError, match=r"no readable Makefile\.sync"):
        srv.llama_cpp_revision(tmp_path / "missing")


def test_the_build_needs_no_pip() -> None:
    # venvs made by uv have no pip: the Ollama build must not shell out to it.
    text = Path(srv.__file__).read_text(encoding="utf-8")
    assert '"pip"' not in text and "pip download" not in text
