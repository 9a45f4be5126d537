# The two commands the README starts with.
.PHONY: up test lint

up:  ## install what is needed, then run secondbrain (embedded mode)
	@scripts/install.sh
	.venv/bin/secondbrain up

test:  ## install with test tools, then run the whole suite against real components
	@scripts/install.sh --dev
	.venv/bin/python -m pytest -q

lint:
	@scripts/install.sh --dev
	.venv/bin/ruff check secondbrain services tests
	.venv/bin/mypy secondbrain services
