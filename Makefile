# The README's two commands: `make demo` (install, then train and show a tokenizer on a
# built-in corpus) and `make test` (install, lint, cargo test, pytest). CI runs `make test`.

VENV ?= .venv
PY := $(VENV)/bin/python
SOURCES := pyproject.toml Cargo.toml Cargo.lock $(shell find src python -type f -not -name '*.so' -not -path '*/__pycache__/*' 2>/dev/null)

.PHONY: demo test lint cargo-test pytest bench clean

$(VENV)/bin/python:
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# editable install: Python edits apply at once; Rust edits rebuild on the next make.
# The demo needs bytepair alone; the tests also need the oracles and linters of [test].
$(VENV)/.installed: $(VENV)/bin/python $(SOURCES)
	@echo "installing bytepair into $(VENV) (builds the Rust core: about two minutes)"
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/bin/python $(SOURCES)
	@echo "installing bytepair and its test tools into $(VENV) (builds the Rust core: about two minutes)"
	$(PY) -m pip install -q -e '.[test]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(VENV)/bin/bytepair demo

lint: $(VENV)/.installed-test
	cargo fmt --check
	. $(VENV)/bin/activate && cargo clippy --all-targets --features python -- -D warnings
	$(VENV)/bin/ruff check python tests benches
	$(VENV)/bin/ruff format --check python tests benches
	$(PY) -m mypy.stubtest --ignore-disjoint-bases bytepair._core
	$(PY) -m mypy

cargo-test:
	cargo test

pytest: $(VENV)/.installed-test
	BYTEPAIR_REQUIRE_DATA=$${BYTEPAIR_REQUIRE_DATA:-0} $(PY) -m pytest

test: lint cargo-test pytest

# the peers (fastokens, bpe-openai, rustbpe, bpeasy) are only needed here
bench: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) benches/encode_bench.py
	$(PY) benches/encode_memory.py
	$(PY) benches/stream_rss.py
	$(PY) benches/worst_case.py
	$(PY) benches/train_bench.py

clean:
	rm -rf $(VENV) target python/bytepair/*.so
