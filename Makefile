# The two commands the README starts with.
.PHONY: up test test-fast lint

up:  ## install what is needed, then run secondbrain (embedded mode)
	@scripts/install.sh
	.venv/bin/secondbrain up

test:  ## install with test tools, then run the whole suite against real components
	@scripts/install.sh --dev
	.venv/bin/python -m pytest -q

test-fast:  ## the stage logic and store contracts on the in-memory twins, no services (well under a minute)
	@scripts/install.sh --dev
	.venv/bin/python -m pytest -q -m fast

lint:
	@scripts/install.sh --dev
	.venv/bin/ruff check secondbrain services app tests bench devtools
	.venv/bin/mypy secondbrain services app devtools
