# Two commands on a fresh machine: `make demo` and `make test`. Each sets up .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo debs test chromium docs lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

DEMO_OUT := out/quick

# The main job: benchmarks/grids/quick.yaml on embedded Spark (a fresh dataset each time), then its report.
demo: $(STAMP)
	rm -rf $(DEMO_OUT)
	$(BIN)/odrp bench benchmarks/grids/quick.yaml --out $(DEMO_OUT)
	$(BIN)/odrp report $(DEMO_OUT)
	@echo "dataset: $(DEMO_OUT)/rows/ (Parquet, one file per instance, by problem); manifest: $(DEMO_OUT)/manifest.json"
	@echo "pictures and HTML page: $(DEMO_OUT)/report/ (open $(DEMO_OUT)/report/index.html)"

# The exact ODRP optima of the paper's DEBS 2015 instances, as a table.
debs: $(STAMP)
	$(BIN)/python -m benchmarks.demo

# Style, the import layers (import-linter contracts in pyproject.toml), the documentation (a broken link or
# reference fails), then every test.
test: $(STAMP) chromium
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir $$(mktemp -d)
	$(BIN)/python -m pytest

# The report's browser test (tests/test_report_browser.py) renders the page in headless Chromium: Debian's
# chromium package, installed here with apt-get when it is missing and we are root; without it that test fails.
chromium:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium package for the report's browser test"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 \
	  || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1; } \
	  || echo "note: apt-get could not install chromium: the report's browser test will fail"; \
	else echo "note: no chromium and not root: the report's browser test will fail (apt-get install chromium)"; fi

# The documentation site (mkdocs, Material theme, API reference by mkdocstrings) into site/.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python -m benchmarks.odrp_formulations

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
