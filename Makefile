# raidlab developer tasks. `make help` lists them.

PYTHON ?= python3
PIP := PIP_ROOT_USER_ACTION=ignore $(PYTHON) -m pip --no-input --disable-pip-version-check
CARGO ?= cargo

.DEFAULT_GOAL := help
.PHONY: help deps install test bench

help: ## Show this list of targets
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-10s %s\n", $$1, $$2}'

deps: ## Install system tools the tests use (Debian packages; idempotent): chromium, fio
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
	command -v fio >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio)

install: ## Build the Rust extension and install raidlab (editable) with its test extras
	$(PIP) install --quiet -e '.[test]'

test: deps install ## Install, then run the Rust tests and the Python tests
	$(CARGO) test --workspace
	$(PYTHON) -m pytest -q

bench: ## Run the core's benchmarks
	$(CARGO) bench -p raidlab-core
