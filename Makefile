PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The optional extras installed with the project (`make test EXTRAS=...,torch,onnx` adds
# the frontends, several GB, so that the docs blocks that need them run; .ci/run does).
EXTRAS ?= test,jax,ray,triton

.PHONY: install vulkan-driver test test-corpus fuzz demo bench frontends lint clean

# The venv is (re)built whenever pyproject.toml changes.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $(STAMP)

install: $(STAMP) vulkan-driver

# A Vulkan device for tests/test_vulkan.py: Mesa's llvmpipe from apt-get where none can be
# opened and root (or sudo without a password) can install it; never fails (the tests skip).
vulkan-driver: $(STAMP)
	.ci/vulkan-driver $(BIN)/python

test: $(STAMP) vulkan-driver
	$(BIN)/python -m pytest -q -rs --instafail --durations=25

# Every real model of tests/data/models tuned (`make test` tunes four of the ten).
test-corpus: $(STAMP)
	AUTOTUNE_CORPUS=1 $(BIN)/python -m pytest -q -rs tests/test_real_models.py

# Many more fuzz examples than `test` runs, drawn afresh each time (FUZZ_EXAMPLES=N to change).
fuzz: $(STAMP)
	FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-50000} $(BIN)/python -m pytest -q tests/test_fuzz.py

demo: $(STAMP)
	$(BIN)/python -m examples.demo

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run

# The frontends that exported tests/data/models (pinned), in a venv of their own: export.py
# runs in it, and B14 times each model under its framework's runtime with it (several GB;
# optional: nothing else needs it).
frontends:
	test -x .venv-frontends/bin/python || $(PYTHON) -m venv .venv-frontends
	.venv-frontends/bin/python -m pip install --quiet -r tests/data/models/requirements.txt

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) build *.egg-info
