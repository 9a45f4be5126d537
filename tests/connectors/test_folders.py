"""Folder sync against a running ``secondbrain up``: real files in a temp folder, ``secondbrain watch``
(and ``SB_WATCH_DIRS``), checked the way a person would: by searching and listing sources."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from connectors.folders import file_uri
from devtools.processes import REPO, cli_env
from secondbrain import ids
from tests.e2e.harness import Service, readable_tmp

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    with readable_tmp("sb-sync-") as path:
        yield path


@pytest.fixture(scope="module")
def server(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    svc = Service("up", ["up", "--data-dir", str(root / "data")], {}, tmp_path_factory.mktemp("sync-logs"))
    svc.start().wait_ready(timeout=120)
    yield svc
    svc.stop()


class Watcher:
    """``secondbrain watch DIR`` as a person runs it, its output kept."""

    def __init__(self, svc: Service, folder: Path, state: Path, log: Path, *, sigint_ignored: bool = False) -> None:
        import signal

        self.log = log
        # A program started in the background by a non-interactive shell inherits SIGINT ignored.
        ignore = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None
        with log.open("ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "app.cli", "watch", str(folder), "--state", str(state)],
                                         env=cli_env({"SB_URL": svc.url, "SB_API_KEY": svc.key}), cwd=REPO,
                                         stdout=out, stderr=subprocess.STDOUT, preexec_fn=ignore)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, text: str, timeout: float = 60) -> None:
        until(lambda: text in self.output(), timeout, f"watch never said {text!r}:\n{self.output()[-3000:]}")

    def stop(self, sig: int | None = None) -> None:
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT if sig is None else sig)
            self.proc.wait(20)


@pytest.mark.parametrize("how", ["sigterm", "sigint-inherited-ignored"])
def test_the_watch_stops_on_sigterm_and_on_ctrl_c_however_it_was_started(server: Service, root: Path,
                                                                         how: str) -> None:
    import signal

    folder = root / f"stop-{how}"
    folder.mkdir()
    (folder / "note.md").write_text("# Stop\n\nA note that must be in the saved record.\n")
    state = root / f"state-stop-{how}.json"
    watcher = Watcher(server, folder, state, root / f"watch-stop-{how}.log", sigint_ignored=how != "sigterm")
    try:
        watcher.wait_for("watching")
        watcher.stop(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
        assert watcher.proc.returncode == 0, watcher.output()[-2000:]
        assert "stopped watching" in watcher.output()
        assert "note.md" in state.read_text()
    finally:
        if watcher.proc.poll() is None:
            watcher.proc.kill()


def until(check: Callable[[], Any], timeout: float, why: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError(why)


def found(c: httpx.Client, words: str, needle: str) -> bool:
    hits = c.get("/v1/search", params={"q": words, "k": 10, "mode": "sparse"}).json()["hits"]
    return any(needle in h["text"] for h in hits)


def sources_under(c: httpx.Client, folder: Path) -> dict[str, list[dict[str, Any]]]:
    rows = c.get("/v1/sources", params={"limit": 500}).json()["sources"]
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r["source_uri"].startswith(file_uri(folder) + "/"):
            out.setdefault(r["source_uri"], []).append(r)
    return out


def test_create_edit_rename_move_delete_and_what_is_skipped(server: Service, root: Path) -> None:
    vault = root / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "drafts").mkdir()
    (vault / ".secondbrainignore").write_text("drafts/\n*.log\n")
    # Files the sync must leave alone.
    (vault / ".obsidian" / "workspace.md").write_text("Obsidian's own settings mention Halvorsen-ignored.")
    (vault / "~$report.docx").write_bytes(b"lock file Halvorsen-ignored")
    (vault / "note.md.swp").write_bytes(b"vim swap Halvorsen-ignored")
    (vault / "movie.mp4.crdownload").write_bytes(b"partial Halvorsen-ignored")
    (vault / "drafts" / "secret.md").write_text("A draft about Halvorsen-ignored.")
    (vault / "debug.log").write_text("Halvorsen-ignored in a log")
    watcher = Watcher(server, vault, root / "state-1.json", root / "watch-1.log")
    try:
        watcher.wait_for("watching")
        with server.client() as c:
            user = c.get("/v1/me").json()["user_id"]
            note = vault / "ferries.md"
            note.write_text("---\ntags: [travel, Ferries]\n---\n# Ferries\n\nThe night ferry to Quillon-Harbour "
                            "leaves at 22:40 from pier 9; see [[Harbour map]].\n")
            t0 = time.monotonic()
            until(lambda: found(c, "Quillon-Harbour ferry", "22:40"), 60, "a new file never became searchable")
            print(f"new file searchable after {time.monotonic() - t0:.1f}s")
            hit = c.get("/v1/search", params={"q": "Quillon-Harbour ferry", "k": 1}).json()["hits"][0]
            # The note's front-matter tags and its wikilink travel with the passage.
            assert hit["attributes"] == {"tags": "travel ferries", "links": "Harbour map"}
            assert hit["source_uri"] == file_uri(note) and hit["title"] == "Ferries"
            source_id = ids.source_id(user, file_uri(note))

            # An edit: a new version of the same source, the old text gone from search.
            note.write_text("# Ferries\n\nThe night ferry to Quillon-Harbour now leaves at 23:15 from pier 4.\n")
            t0 = time.monotonic()
            until(lambda: found(c, "Quillon-Harbour ferry", "23:15"), 60, "the edit never became searchable")
            print(f"edit searchable after {time.monotonic() - t0:.1f}s")
            assert not found(c, "Quillon-Harbour ferry", "22:40")
            detail = c.get(f"/v1/sources/{source_id}").json()
            assert detail["current_version"] == 2 and len(detail["versions"]) == 2

            # A rename, then a move into a sub-folder: the same source, nothing sent again.
            renamed = vault / "boats.md"
            note.rename(renamed)
            watcher.wait_for("moved: vault/ferries.md -> vault/boats.md")
            (vault / "travel").mkdir()
            moved = vault / "travel" / "boats.md"
            renamed.rename(moved)
            watcher.wait_for("moved: vault/boats.md -> vault/travel/boats.md")
            time.sleep(3)  # past the grace a move has: the old path must not be deleted
            assert c.get(f"/v1/sources/{source_id}").json()["current_version"] == 2
            assert found(c, "Quillon-Harbour ferry", "23:15")
            assert list(sources_under(c, vault)) == [file_uri(note)]

            # Skipped files never reach the server.
            assert not found(c, "Halvorsen-ignored", "Halvorsen")

            # A delete removes the source and its passages.
            moved.unlink()
            until(lambda: c.get(f"/v1/sources/{source_id}").status_code == 404, 30, "the source was not deleted")
            assert not found(c, "Quillon-Harbour ferry", "23:15")
            assert sources_under(c, vault) == {}
    finally:
        watcher.stop()
    assert "stopped watching" in watcher.output()


def test_a_burst_of_files_and_changes_while_the_watcher_or_the_server_is_stopped(server: Service,
                                                                                 root: Path) -> None:
    folder = root / "burst"
    folder.mkdir()
    state = root / "state-2.json"
    watcher = Watcher(server, folder, state, root / "watch-2.log")
    n = 300
    try:
        watcher.wait_for("watching")
        for i in range(n):  # written while it watches: one save burst
            (folder / f"day-{i:03d}.md").write_text(f"# Day {i}\n\nLogbook entry {i}: sighted buoy Kestrel-{i:03d}.\n")
        with server.client() as c:
            until(lambda: len(sources_under(c, folder)) == n, 180,
                  f"not every file was captured:\n{watcher.output()[-2000:]}")
            until(lambda: all(r[0]["status"] == "succeeded" for r in sources_under(c, folder).values()), 300,
                  "not every capture finished")
            assert found(c, "buoy Kestrel-217", "Kestrel-217")
        assert f"{n}/{n} files sent" in watcher.output() or "new" in watcher.output()
    finally:
        watcher.stop()

    # While nobody watches: one file edited, one deleted, one added.
    (folder / "day-007.md").write_text("# Day 7\n\nLogbook entry 7 rewritten: sighted whale Borealis-77.\n")
    (folder / "day-008.md").unlink()
    (folder / "day-300.md").write_text("# Day 300\n\nLogbook entry 300: sighted lighthouse Skerry-300.\n")
    recorded = json.loads(state.read_text())["files"]
    assert str(folder / "day-008.md") in recorded
    watcher = Watcher(server, folder, state, root / "watch-3.log")
    try:
        watcher.wait_for("watching")
        assert "1 new, 1 changed" in watcher.output() and "298 unchanged" in watcher.output()
        with server.client() as c:
            user = c.get("/v1/me").json()["user_id"]
            until(lambda: found(c, "whale Borealis-77", "Borealis-77"), 60, "the offline edit was not picked up")
            until(lambda: found(c, "lighthouse Skerry-300", "Skerry-300"), 60, "the offline file was not picked up")
            gone = ids.source_id(user, file_uri(folder / "day-008.md"))
            until(lambda: c.get(f"/v1/sources/{gone}").status_code == 404, 30, "the offline delete was missed")
            assert c.get(f"/v1/sources/{ids.source_id(user, file_uri(folder / 'day-007.md'))}"
                         ).json()["current_version"] == 2
            until(lambda: not state_has(state, folder / "day-008.md"), 30, "the record kept a deleted file")
    finally:
        watcher.stop()

    # The record lost (another machine, a wiped state folder), and a file deleted meanwhile: the
    # server's own list of the folder's sources stands in for it; nothing unchanged is sent again.
    state.unlink()
    (folder / "day-009.md").unlink()
    watcher = Watcher(server, folder, state, root / "watch-4.log")
    try:
        watcher.wait_for("watching")
        assert "the server already holds 300 of their files" in watcher.output()
        assert "299 unchanged" in watcher.output() and "new" not in watcher.output()
        with server.client() as c:
            user = c.get("/v1/me").json()["user_id"]
            gone = ids.source_id(user, file_uri(folder / "day-009.md"))
            until(lambda: c.get(f"/v1/sources/{gone}").status_code == 404, 30, "the unrecorded delete was missed")
            assert len(sources_under(c, folder)) == 299
    finally:
        watcher.stop()


def state_has(state: Path, path: Path) -> bool:
    return str(path) in json.loads(state.read_text())["files"]


def test_sb_watch_dirs_keeps_a_folder_in_sync_across_a_restart_of_up(root: Path,
                                                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    notes = root / "notes"
    notes.mkdir()
    (notes / "plants.md").write_text("# Plants\n\nWater the Ficus-Lyrata every Sunday.\n")
    svc = Service("up-watch", ["up", "--data-dir", str(root / "data-watch")], {"SB_WATCH_DIRS": str(notes)},
                  tmp_path_factory.mktemp("watch-logs"))
    svc.start().wait_ready(timeout=120)
    try:
        with svc.client() as c:
            until(lambda: found(c, "Ficus-Lyrata water", "Sunday"), 90, f"not captured:\n{svc.tail()}")
        svc.stop()
        (notes / "plants.md").write_text("# Plants\n\nWater the Ficus-Lyrata every Wednesday now.\n")
        svc.start().wait_ready(timeout=120)
        with svc.client() as c:
            until(lambda: found(c, "Ficus-Lyrata water", "Wednesday"), 90, f"edit missed:\n{svc.tail()}")
            assert not found(c, "Ficus-Lyrata water", "Sunday")
        assert "keeping in sync" in svc.tail(200)
    finally:
        svc.stop()


def test_a_file_refused_over_the_limit_is_sent_again_once_the_limit_is_raised(
        root: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    notes = root / "limited"
    notes.mkdir()
    (notes / "bins.md").write_text("# Bins\n\nThe Brennholz-bins go out on Thursday evening.\n")
    (notes / "orchard.md").write_text("# Orchard\n\n" + "The Quittenbaum-orchard needs pruning in February. " * 60)
    svc = Service("up-limit", ["up", "--data-dir", str(root / "data-limit")],
                  {"SB_WATCH_DIRS": str(notes), "SB_MAX_UPLOAD_BYTES": "2000"}, tmp_path_factory.mktemp("limit-logs"))
    svc.start().wait_ready(timeout=120)

    def refusals() -> int:
        return sum("orchard.md" in line and "413" in line for line in svc.tail(400).splitlines())

    try:
        with svc.client() as c:
            until(lambda: found(c, "Brennholz-bins", "Thursday"), 90, f"not captured:\n{svc.tail()}")
            until(lambda: refusals() == 1, 30, f"the refusal was not said:\n{svc.tail()}")
            os.utime(notes / "orchard.md")  # touched, not changed: sent again (and refused again)
            until(lambda: refusals() == 2, 30, f"the touched file was not sent again:\n{svc.tail()}")
            assert not found(c, "Quittenbaum-orchard pruning", "February")
        svc.stop()
        svc.env["SB_MAX_UPLOAD_BYTES"] = str(1024 * 1024)  # raised; the file itself is as it was
        svc.start().wait_ready(timeout=120)
        with svc.client() as c:
            until(lambda: found(c, "Quittenbaum-orchard pruning", "February"), 90,
                  f"the refused file was not sent again:\n{svc.tail()}")
    finally:
        svc.stop()
