# Two commands for a new user (see README):
#   make demo   set everything up, start Neo4j+GDS and Ollama, index the sample corpus, answer a question
#   make test   set everything up and run the whole test suite against real services
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HASH := $(shell cat pyproject.toml constraints.txt tools/ollama-build/pyproject.toml | sha1sum | cut -c1-12)
STAMP := $(VENV)/.installed-$(HASH)
PART := $(VENV)/.part-$(HASH)-
LOCK := $(VENV)/lock
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

.PHONY: setup system-deps prepare demo test unit lint bench bench-eval clean-venv

# constraints.txt is the complete, tested set, so it is installed as it stands (--no-deps, no
# resolver), by nine pip processes at once: pip fetches one file after another, so a hundred
# small wheels wait on round trips and the GBs of torch and CUDA on one connection.
PARTS := base1 base2 base3 base4 base5 base6 torch cuda1 cuda2
setup:
	@$(MAKE) --no-print-directory -j10 $(STAMP)

$(STAMP): $(PART)self $(addprefix $(PART),torch cuda1 cuda2)
	@rm -f $(VENV)/.installed-*
	@touch $@

$(VENV)/.lock-$(HASH): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is needed")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@rm -f $(VENV)/.lock-* $(VENV)/.part-*
	@mkdir -p $(LOCK)
	@grep -vE '^(#|$$)' constraints.txt | grep -vE '$(NOT_ON_CPU)' > $(LOCK)/all.txt
	@for i in 1 2 3 4 5 6; do grep -vE '^(torch|nvidia-)' $(LOCK)/all.txt \
	   | awk -v i=$$i 'NR % 6 == i % 6' > $(LOCK)/base$$i.txt; done
	@grep -E '^torch==' $(LOCK)/all.txt > $(LOCK)/torch.txt
	@grep -E '^nvidia-' $(LOCK)/all.txt | awk 'NR % 2 == 1' > $(LOCK)/cuda1.txt
	@grep -E '^nvidia-' $(LOCK)/all.txt | awk 'NR % 2 == 0' > $(LOCK)/cuda2.txt
	@touch $@

$(addprefix $(PART),$(PARTS)): $(PART)%: $(VENV)/.lock-$(HASH)
	$(BIN)/python -m pip install -q --no-deps -r $(LOCK)/$*.txt
	@touch $@

# The package itself and the Ollama build support (tools/ollama-build) on top of everything but
# torch and CUDA: enough to start Neo4j and Ollama.
$(PART)self: $(addprefix $(PART),base1 base2 base3 base4 base5 base6)
	$(BIN)/python -m pip install -q --no-deps -e . -e ./tools/ollama-build
	@touch $@

# Neo4j's provisioning and first start, and the Ollama build, run while torch downloads.
prepare: $(PART)self
	$(BIN)/terag demo --prepare

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

demo:
	@$(MAKE) --no-print-directory -j11 $(STAMP) prepare
	$(BIN)/terag demo --answer

test: system-deps
	@$(MAKE) --no-print-directory -j11 $(STAMP) prepare
	$(BIN)/python -m pytest

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
