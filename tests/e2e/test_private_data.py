"""`secondbrain up` keeps its data directory to its owner: no file or folder in it is open to others.

Started from a shell with the usual umask (022) on a data directory an earlier version left open
(folders 0755, raw files 0644), it closes what was there and creates everything new private: raw
files, sidecars, logs, keys, the vector shards and PostgreSQL's files.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.e2e.harness import Service, readable_tmp, wait_jobs

pytestmark = pytest.mark.e2e


def open_entries(data: Path) -> list[str]:
    """Folders and regular files below ``data`` that others (group or world) may read, write or enter."""
    found = []
    for dirpath, dirnames, filenames in os.walk(data):
        for name in (*dirnames, *filenames):
            path = Path(dirpath, name)
            st = os.lstat(path)
            if (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)) and st.st_mode & 0o077:
                found.append(f"{path.relative_to(data)} {oct(stat.S_IMODE(st.st_mode))}")
    return found


def test_up_keeps_its_data_directory_private(tmp_path: Path) -> None:
    before = os.umask(0o022)  # the child inherits it, as from a shell
    try:
        with readable_tmp("sb-private-") as base:
            data = base / "data"
            old = data / "objects" / "users" / "local"
            old.mkdir(parents=True)
            (old / "from-an-earlier-version.md").write_text("# kept\n")
            for path in (data, data / "objects", data / "objects" / "users", old, old / "from-an-earlier-version.md"):
                path.chmod(0o644 if path.is_file() else 0o755)
            svc = Service("up", ["up", "--data-dir", str(data)], {}, tmp_path / "logs").start()
            try:
                svc.wait_ready(timeout=120)
                with svc.client() as client:
                    note = client.post("/v1/notes", json={"text": "The spare key is under the blue pot."})
                    upload = client.post("/v1/artifacts", files={"file": ("plan.md", b"# Plan\n\nPaint the fence.",
                                                                          "text/markdown")})
                    jobs = wait_jobs(client, [note.json()["job_id"], upload.json()["job_id"]])
                    assert all(j["status"] == "succeeded" for j in jobs.values()), jobs
                assert {p.name for p in data.iterdir()} >= {"objects", "vectors", "postgres", "logs", "api-key"}
                assert sum(p.is_file() for p in (data / "objects").rglob("*")) >= 4  # two raw files, their sidecars
                assert open_entries(data) == []
            finally:
                svc.stop()
            assert open_entries(data) == []
            # The data directory itself: the owner's; run as root, the embedded PostgreSQL's own user
            # (pgserver) may pass through it to its folder, nothing more.
            top = stat.S_IMODE(data.stat().st_mode)
            assert top == (0o711 if os.geteuid() == 0 else 0o700), oct(top)
            assert stat.S_IMODE((old / "from-an-earlier-version.md").stat().st_mode) == 0o600
    finally:
        os.umask(before)
