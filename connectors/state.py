"""A connector's state file: what it took, so that the next pass sends only what is new and a pass stopped
half-way goes on from there.  One file per connector, server and key (a hash of the key, never the key itself),
under ``$XDG_STATE_HOME/secondbrain``; written whole or not at all, readable only by its owner (it names what
the person keeps, and a calendar's secret address by a hash)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def state_path(kind: str, url: str, user_hint: str, *more: str) -> Path:
    """Where the ``kind`` connector (``mail``, ``calendars``, ``watch``) keeps its record for the server at
    ``url`` and the key ``user_hint`` stands for (and ``more``: the folders a sync keeps)."""
    base = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    tag = hashlib.sha256("\n".join([url, user_hint, *more]).encode()).hexdigest()[:16]
    return base / "secondbrain" / f"{kind}-{tag}.json"


def read_state(path: Path) -> Any:
    """The state file's content, ``None`` when there is none yet; OSError or ValueError when it cannot be read
    (each connector says what that means for it)."""
    if not path.exists():
        return None
    return json.loads(path.read_text())


def write_state(path: Path, data: Any) -> None:
    """Replace the state file with ``data`` in one step (never a half-written file), readable by its owner only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)
