"""Versioned SQL migrations of the Postgres metadata store.

Each file is named ``NNNN_name.sql``; versions are applied in ascending order by
:meth:`secondbrain.stores.metadata_pg.PostgresMetadataStore.migrate`.  The files are
package data read through :mod:`importlib.resources`, so they work from a wheel too.

Each file runs inside one transaction together with its ``schema_migrations`` row, so a
file must not contain ``BEGIN``/``COMMIT`` nor statements that refuse a transaction
(``CREATE INDEX CONCURRENTLY``, ``ALTER TYPE ... ADD VALUE`` on old servers).  Never edit
an applied file; add the next version instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

_NAME = re.compile(r"^(\d{4})_([A-Za-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    """One migration file: its version, name and SQL text."""

    version: int
    name: str
    sql: str


def load_migrations() -> list[Migration]:
    """All migrations shipped with the package, sorted by version.

    Raises ``ValueError`` when two files share a version (a merge mistake that would
    otherwise silently skip one of them).
    """
    found: dict[int, Migration] = {}
    for entry in resources.files(__name__).iterdir():
        match = _NAME.match(entry.name)
        if match is None or not entry.is_file():
            continue
        version = int(match.group(1))
        if version in found:
            raise ValueError(f"duplicate migration version {version}: {found[version].name} and {entry.name}")
        found[version] = Migration(version, match.group(2), entry.read_text(encoding="utf-8"))
    return [found[v] for v in sorted(found)]


class NewerSchema(Exception):
    """The database carries migrations this version does not ship: a newer secondbrain wrote it, and this
    one could misread or damage what it wrote.  The message says what to do."""

    def __init__(self, unknown: dict[int, str], known: int) -> None:
        self.unknown = dict(sorted(unknown.items()))
        self.known = known
        listed = ", ".join(f"{v} ({name})" for v, name in self.unknown.items())
        super().__init__(
            f"this data was written by a newer secondbrain: its database has migration{'s' * (len(unknown) > 1)} "
            f"{listed}, which this version (schema {known}) does not know. Start the newer version again "
            "(in a git clone: `git pull`, then `make up`); to go back to this version, restore the backup the "
            "newer one took before it upgraded, as it was (`secondbrain restore ARCHIVE --data-dir DIR --as-it-was`, "
            "run with the newer version; see Upgrading in docs/at-home.md).")


def check_known(applied: dict[int, str]) -> None:
    """Raise :class:`NewerSchema` when ``applied`` (version -> name, as ``schema_migrations`` holds them) has a
    version this code does not ship."""
    shipped = {m.version for m in load_migrations()}
    unknown = {v: name for v, name in applied.items() if v not in shipped}
    if unknown:
        raise NewerSchema(unknown, max(shipped))
