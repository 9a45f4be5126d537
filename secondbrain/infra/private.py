"""Embedded mode's data directory is its owner's alone: directories 0700, files 0600.

``secondbrain up`` runs with the umask :data:`PRIVATE_UMASK`, so whatever it and its children (the
broker, PostgreSQL, the vector engine) create is private; :func:`make_private` tightens a data
directory made by an earlier version (directories were 0755, raw files 0644).

Run as root, the embedded PostgreSQL runs as the system user ``pgserver`` (see
:mod:`secondbrain.infra.postgres`), which must pass through the data directory to reach its own
``postgres`` folder: the data directory itself is then 0711 (others may pass, not list or read), and
pgserver widens it to 0755 whenever it starts a server, so ``up`` tightens it again afterwards
(:func:`tighten_top`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_UMASK = 0o077
GROUP_OTHER = 0o077


def top_mode(others_may_pass: bool) -> int:
    """The data directory's own mode."""
    return 0o711 if others_may_pass else 0o700


def tighten_top(root: Path, *, others_may_pass: bool = False) -> None:
    """Set the data directory's own mode (not what is inside)."""
    if stat.S_IMODE(root.stat().st_mode) != top_mode(others_may_pass):
        root.chmod(top_mode(others_may_pass))


def make_private(root: Path, *, others_may_pass: bool = False) -> int:
    """Make ``root`` private: its own mode, and when it was open to others (a data directory from an
    earlier version), every directory and regular file below it without group or other bits.  Links,
    sockets and the like are left alone.  Returns how many entries below ``root`` changed."""
    allowed = top_mode(others_may_pass)
    was_open = bool(stat.S_IMODE(root.stat().st_mode) & GROUP_OTHER & ~allowed)
    tighten_top(root, others_may_pass=others_may_pass)
    if not was_open:
        return 0
    changed = 0
    for dirpath, dirnames, filenames in os.walk(root):  # does not follow links to directories
        for name in (*dirnames, *filenames):
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except FileNotFoundError:  # removed meanwhile
                continue
            mode = stat.S_IMODE(st.st_mode)
            if (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)) and mode & GROUP_OTHER:
                os.chmod(path, mode & ~GROUP_OTHER)
                changed += 1
    return changed
