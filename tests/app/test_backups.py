"""An archive written by an older secondbrain (its database at an earlier migration) is restored and brought up
to this version's schema; the restore says which migrations it applied."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from app.backups import back_up_data_dir, restore_data_dir
from secondbrain.backup.restore import check_only
from secondbrain.infra.postgres import EmbeddedPostgres
from secondbrain.stores import migrations
from secondbrain.stores.postgres import base
from secondbrain.stores.postgres.base import PostgresDatabase
from tests.e2e.harness import readable_tmp


def test_an_older_secondbrains_archive_is_restored_and_migrated(monkeypatch: pytest.MonkeyPatch) -> None:
    every = migrations.load_migrations()
    older, newest = every[:-1], every[-1]
    with readable_tmp("sb-older-") as root:
        data = root / "data"
        # An instance as the secondbrain before the newest migration left it, with a user in it.
        monkeypatch.setattr(base, "load_migrations", lambda: older)
        with EmbeddedPostgres(data / "postgres") as pg:
            db = PostgresDatabase(pg.dsn, min_size=0, max_size=2)
            try:
                assert db.migrate() == [m.version for m in older]
            finally:
                db.close()
            with psycopg.connect(pg.dsn, autocommit=True) as conn:
                conn.execute("INSERT INTO users (user_id) VALUES ('ada')")
        archive = back_up_data_dir(data, root / "older.sbk")
        assert check_only(archive, None).fields["schema_version"] == older[-1].version
        monkeypatch.undo()

        restored = restore_data_dir(archive, root / "restored")
        assert restored.applied_migrations == [newest.version]
        with EmbeddedPostgres(Path(root / "restored" / "postgres")) as pg, psycopg.connect(pg.dsn) as conn:
            versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
            assert versions == [m.version for m in every]
            assert conn.execute("SELECT user_id FROM users").fetchall() == [("ada",)]
