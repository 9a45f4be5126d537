"""Where a periodic connector command keeps its state file (see :mod:`connectors.periodic` for the passes)."""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Callable
from pathlib import Path

from app.cli.client import _find_key


def state_file(args: argparse.Namespace, default_state_path: Callable[[str, str], Path]) -> Path:
    """Where the command keeps what it took: ``--state``, else its default for this server and key (told
    apart by a hash of the key, never the key itself)."""
    if args.state:
        return Path(args.state)
    return default_state_path(args.url, hashlib.sha256((_find_key(args) or "").encode()).hexdigest()[:16])


