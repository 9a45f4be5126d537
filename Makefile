# The two commands the README starts with.
.PHONY: up test test-fast lint whisperx extension service docs

up:  ## install what is needed, then run secondbrain (embedded mode)
	@scripts/install.sh
	.venv/bin/secondbrain up

service:  ## install what is needed, then run secondbrain at login and keep it running (again after git pull)
	@scripts/install.sh
	.venv/bin/secondbrain service install

test:  ## install with test tools, then run the whole suite against real components
	@scripts/install.sh --dev
	.venv/bin/python -m pytest -q

test-fast:  ## the stage logic and store contracts on the in-memory twins, no services (well under a minute)
	@scripts/install.sh --dev
	.venv/bin/python -m pytest -q -m fast

lint:
	@scripts/install.sh --dev
	.venv/bin/ruff check secondbrain services connectors app tests bench devtools
	.venv/bin/mypy secondbrain services connectors app devtools

whisperx:  ## the opt-in WhisperX transcriber in its own .venv-whisperx (torch 2.8, several GB), then its tests
	@scripts/install-whisperx.sh
	SB_TRANSCRIBER=whisperx .venv-whisperx/bin/python -m pytest -q \
		tests/contracts/test_transcriber_contract.py tests/secondbrain/test_transcribe_whisperx.py

extension:  ## the browser extension as a zip, in dist/ (standard library only)
	python3 -m devtools.extension_zip

docs:  ## the documentation site, built from docs/ and the code into site/ (strict: a broken link or a page left out of the navigation fails)
	@scripts/install.sh --dev
	.venv/bin/mkdocs build --strict
