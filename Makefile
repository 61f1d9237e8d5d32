# Two commands do all set-up on a fresh machine that has only python3:
#   make demo   -- the main job on a built-in default
#   make test   -- the whole test suite
# The venv is the development install: the root pyproject.toml puts all five packages in, editable,
# at the versions of constraints.txt (the lock; `make lock` refreshes it, `make test-latest` tries the newest).
#   make dists        -- a wheel and an sdist of each distribution (dists/*) in build/dists
#   make check-split  -- CI's last step: make dists, then install the core alone (lowest Python), add the games
# Checks (docs/developing.md; CI runs them all through .ci/run):
#   make lint         -- ruff lint + format check, mypy (strict on every package, plugins' public names), layer rules
#   make test-fast    -- the suite without coverage (make test measures line + branch coverage, with its floor)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Debian's OpenBLAS makes MLX's CPU matmul much faster; used when present, never required.
# FAST_ENV is expanded when a recipe runs, so `make test` sees the library sysdeps just installed.
OPENBLAS := /usr/lib/x86_64-linux-gnu/libopenblas.so.0
FAST_ENV = $(shell test -e $(OPENBLAS) && echo LD_PRELOAD=$(OPENBLAS))

.PHONY: demo test test-fast test-latest lock venv sysdeps bench clean dists check-split lint typecheck coverage

# The lock: every version the development install and CI get (scripts/lock.py, `make lock`).
LOCK   := constraints.txt

$(STAMP): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade -c $(LOCK) pip setuptools wheel
	# no build isolation: the setuptools just installed builds the editable install (saves a second
	# download); no byte-compiling of every installed file (transformers, ray, scipy): modules compile on import
	$(BIN)/python -m pip install -q --no-build-isolation --no-compile -c $(LOCK) -e ".[test]"
	touch $(STAMP)

venv: $(STAMP)

# System packages some tests use (headless Chromium for the HTML report, OpenBLAS for MLX).
# Installed when we are root on a Debian-like machine; otherwise those tests say what is missing.
sysdeps:
	@sh scripts/system-deps.sh

# A seeded MegaGem tournament among the built-in bots and the tiny local LLM player:
# leaderboard with 95% intervals, then runs/demo/report.html, summary.json and ratings.png.
demo: venv
	rm -rf runs/demo
	$(FAST_ENV) $(BIN)/arena tournament examples/tournament_demo.toml --out runs/demo

PYTEST_ALL = $(BIN)/python -m pytest -q -n 2 --dist loadfile

# The README's test command and what CI runs: the whole suite with line + branch coverage
# ([tool.coverage] in pyproject.toml holds the floor, fail_under), then the per-package table of
# docs/developing.md. `make test-fast` is the same suite without coverage (about 2x faster).
test: venv sysdeps
	rm -f .coverage .coverage.*
	$(FAST_ENV) $(PYTEST_ALL) --cov --cov-report=
	$(BIN)/python scripts/coverage_table.py

test-fast: venv sysdeps
	$(FAST_ENV) $(PYTEST_ALL)

# Drift on purpose: a fresh venv (.venv-latest) with the newest versions the ranges allow (no
# lock, no pip cache), then the whole suite in it. Run it before `make lock` (docs/developing.md).
LATEST := .venv-latest
test-latest: sysdeps
	rm -rf $(LATEST)
	$(PYTHON) -m venv $(LATEST)
	$(LATEST)/bin/python -m pip install -q --no-cache-dir --upgrade pip setuptools wheel
	$(LATEST)/bin/python -m pip install -q --no-cache-dir --no-build-isolation --no-compile -e ".[test]"
	$(LATEST)/bin/python -m pip freeze --exclude-editable > $(LATEST)/versions.txt
	$(FAST_ENV) $(LATEST)/bin/python -m pytest -q -n 2 --dist loadfile

# Refresh constraints.txt from a fresh resolution (the dev install on this Python, the base
# installs on Python 3.10); commit it once `make test-latest` has passed on those versions.
lock:
	$(PYTHON) scripts/lock.py

# Each step fails the target on a violation: lint, format, a type error, a broken layer or cycle.
lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MAKE) --no-print-directory typecheck
	$(BIN)/python -m pytest -q -p no:xdist -p no:cacheprovider tests/test_architecture.py

# mypy strict on every package ([tool.mypy] in pyproject.toml, cache in .mypy_cache), then the
# plugin packages' registered names against the core's protocol
typecheck: venv
	$(BIN)/mypy
	$(BIN)/python scripts/typecheck_public.py

coverage: test

# DISTS_DIR is read from the repository root, as a user types it; DISTS=core builds only the ones named
# (CI's check-split builds all five through here)
DISTS_DIR ?= build/dists
DISTS ?=
dists: venv
	$(BIN)/python scripts/dists.py build $(DISTS_DIR) $(DISTS)

check-split: dists
	PYTHON=$(BIN)/python LOCK=$(LOCK) WHEELS=$(DISTS_DIR) bash scripts/check_split.sh

# The verifiers bridge (dists/verifiers, issue 33) in its own throw-away venv with its own lock
# (scripts/check_verifiers.sh; no dev venv needed). .ci/run runs it in the background from the start.
.PHONY: check-verifiers check-verifiers-latest
check-verifiers:
	bash scripts/check_verifiers.sh

# Drift: the verifiers venv at the newest release (no lock); says which version broke which test.
check-verifiers-latest:
	bash scripts/check_verifiers.sh latest

# Clients we did not write (OpenSpiel's suites and agents, Shimmy, Tianshou, SB3, TextArena's wrappers;
# docs/ecosystem.md's table) in their own venv with torch, from clients/constraints.txt, kept between
# runs by the lock's hash (scripts/check_clients.sh). .ci/run runs it in the background from the start.
.PHONY: check-clients
check-clients:
	bash scripts/check_clients.sh

bench: venv
	$(BIN)/python -m pip install -q -e ".[bench]"
	$(FAST_ENV) $(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) $(LATEST) .pytest_cache .hypothesis build/dists .mypy_cache .ruff_cache .coverage
