# Two commands for a new user (see README):
#   make demo   set everything up, start Neo4j+GDS and Ollama, index the sample corpus, answer a question
#   make test   set everything up and run the whole test suite against real services
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# uv installs the lock: it downloads in parallel and links from its cache, where pip fetches one
# file after another. It reads UV_* settings and SSL_CERT_FILE, not pip's configuration.
UV_VERSION := 0.13.8
HASH := $(shell cat pyproject.toml constraints.txt tools/ollama-build/pyproject.toml tools/terag-bench/pyproject.toml | sha1sum | cut -c1-12)
STAMP := $(VENV)/.installed-$(HASH)
BASE := $(VENV)/.base-$(HASH)
LOCK := $(VENV)/lock
UV := $(BIN)/uv pip install --python $(BIN)/python --no-deps
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# Ollama is built with Go on first use; the Go toolchain is often installed here.
export PATH := $(PATH):/usr/local/go/bin

# torch's Linux wheel is built against CUDA: its libraries name cuDNN, cuBLAS, cuFFT, cuSPARSE(Lt),
# NCCL, NVRTC, CUPTI, NVSHMEM and the CUDA runtime as load-time dependencies, so `import torch`
# fails without them even on a CPU, and they stay. What torch uses only when present is left out
# (1.3 GB): triton (torch.compile's GPU kernels), cuSOLVER (GPU linear algebra), NVTX, the CCCL
# headers and the cuda-python bindings. tests/integration/test_embedder.py runs in this env.
NOT_ON_CPU := ^(triton|nvidia-cusolver|nvidia-nvtx|nvidia-cuda-cccl|cuda-bindings|cuda-pathfinder|cuda-toolkit)==

.PHONY: setup system-deps prepare prepare-test prepare-neo4j demo-run ollama-build print-ollama-build demo test unit lint bench bench-eval clean-venv

# constraints.txt is the complete, tested set, so it is installed as it stands (--no-deps, no
# resolver) in two steps: everything but torch and CUDA (with the package itself and the Ollama
# build support and the bench, editable), then torch and CUDA (3 GB: the `st` extra, which only
# the tests of sentence-transformers models need) while `prepare` starts the services.
setup: $(STAMP)

$(VENV)/.lock-$(HASH): pyproject.toml constraints.txt tools/ollama-build/pyproject.toml \
  tools/terag-bench/pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is needed")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@test -x $(BIN)/uv && $(BIN)/uv --version | grep -q ' $(UV_VERSION)' \
	  || $(BIN)/python -m pip install -q --disable-pip-version-check uv==$(UV_VERSION)
	@rm -f $(VENV)/.lock-* $(VENV)/.base-* $(VENV)/.installed-*
	@mkdir -p $(LOCK)
	@grep -vE '^(#|$$)' constraints.txt | grep -vE '$(NOT_ON_CPU)' > $(LOCK)/all.txt
	@grep -vE '^(torch|nvidia-)' $(LOCK)/all.txt > $(LOCK)/base.txt
	@grep -E '^(torch|nvidia-)' $(LOCK)/all.txt > $(LOCK)/torch.txt
	@touch $@

# Everything but torch and CUDA: enough to start Neo4j and Ollama.
$(BASE): $(VENV)/.lock-$(HASH)
	$(UV) -q -r $(LOCK)/base.txt -e . -e ./tools/ollama-build -e ./tools/terag-bench
	@touch $@

$(STAMP): $(BASE)
	$(UV) -q -r $(LOCK)/torch.txt
	@touch $@

# Neo4j's provisioning and first start, and the Ollama build, run while torch downloads.
prepare: $(BASE)
	$(BIN)/terag demo --prepare

# The Ollama build (minutes of compiling llama.cpp) is the longest step of a first run, so `demo`
# and `test` start it first, beside the installation, with the system Python (the build support
# needs nothing else), into the default home (terag_neo4j.config.default_home), where `prepare`
# with any TERAG_HOME finds it or waits for it. It never fails the make: `prepare` builds and
# reports. tests/unit/test_ollama_build.py checks the folder and version against terag's.
OLLAMA_VERSION = $(shell sed -n 's/^OLLAMA: Final = "\(.*\)"$$/\1/p' terag_neo4j/core/versions.py)
OLLAMA_CACHE = $(HOME)/.cache/terag-neo4j/ollama

ollama-build:
	-@PYTHONPATH=tools/ollama-build $(PYTHON) -m terag_ollama_build $(OLLAMA_CACHE) $(OLLAMA_VERSION)

print-ollama-build:
	@echo $(OLLAMA_CACHE) $(OLLAMA_VERSION)

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

# The demo starts as soon as the packages are in and Neo4j is up, beside the Ollama build: it
# loads the embedder meanwhile and waits for the build (its lock) before it needs Ollama. It
# needs no torch (the default embedder is ONNX on OpenVINO), so `make demo` installs the base
# alone; `make test` adds torch and CUDA for the tests of sentence-transformers models.
prepare-neo4j: $(BASE)
	$(BIN)/terag demo --prepare --no-ollama

demo-run: $(BASE) prepare-neo4j
	$(BIN)/terag demo --answer

demo:
	@$(MAKE) --no-print-directory -j3 ollama-build demo-run

# The suite runs against the servers `prepare-test` starts; it ends by stopping those it started
# (not those that ran before) and saying in one line what still runs and how to stop it.
test: system-deps
	@$(MAKE) --no-print-directory -j3 ollama-build $(STAMP) prepare-test
	@rc=0; $(BIN)/python -m pytest || rc=$$?; $(BIN)/python scripts/test_services.py stop; exit $$rc

prepare-test: $(BASE)
	$(BIN)/python scripts/test_services.py start

unit: setup
	$(BIN)/python -m pytest -m "not integration"

lint: setup
	$(BIN)/ruff check terag_neo4j tests tools
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
