"""Where the repository is, for tests that read its files (schemas, static pages, deploy)."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
