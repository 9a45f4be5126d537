"""MkDocs hooks (mkdocs.yml's ``hooks:``): each page's ``<!-- generated: ... -->`` markers become the reference
they name, built from the code at build time by :mod:`devtools.docgen`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # mkdocs loads this file by its path: the checkout's packages come from here
    sys.path.insert(0, str(REPO))

from devtools import docgen  # noqa: E402


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Expand the page's markers (a page without one is returned as it is)."""
    return docgen.expand(markdown)
