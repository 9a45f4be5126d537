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
