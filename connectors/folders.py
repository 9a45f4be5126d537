"""Keep folders in sync with secondbrain through its HTTP API (``secondbrain watch``, ``SB_WATCH_DIRS``).

Each file is one source, named for good by ``file://<absolute path>``: a changed file is sent
again under the same name and becomes a new version of that source; a deleted file's source is
deleted.  A file that moves keeps its source: a path that disappeared and a new one with the same
content (SHA-256) in the same round are the same file, so nothing is sent or deleted.  New and
changed files go in batches through the connectors' one sender (:mod:`connectors.sender`: the
import batch route, waiting while the person's pipeline is full or the server is away), like mail
and calendars.

What was synced is kept in a small JSON state file (path -> mtime, size, SHA-256, source), so a
restart compares the folder with it and only sends what changed while nobody was watching.
Changes are noticed by watchfiles (which also groups an editor's burst of writes into one); each
round walks the folders again and compares sizes and times, hashing only what looks changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
from tenacity import RetryCallState

from connectors.patience import server_patience
from connectors.sender import Item, Progress, Sender, Tally, api_client, say
from connectors.state import read_state, state_path, write_state
from secondbrain import ids
from services.importers.model import Capture

STATE_VERSION = 1
IGNORE_FILE = ".secondbrainignore"
# Editors' and browsers' files that are not (yet) the person's document.
TEMP_PREFIXES = ("~$", ".~", ".#")
TEMP_SUFFIXES = ("~", ".swp", ".swo", ".swx", ".crdownload", ".part", ".partial", ".tmp", ".temp", ".download",
                 ".lock")
# A moved file's old path is forgotten only after this long, so a move that watchfiles reports
# in two rounds (the delete, then the create) still finds its content again.
MOVE_GRACE_S = 2.0
SAVE_EVERY = 25  # state writes: after this many changes, and at the end of each round
BATCH_FILES = 100  # files a batch of the import batch route (fewer when their bytes pass the sender's bound)
UNREADABLE = "cannot read it"  # the sender's reason for a file it could not read


def file_uri(path: Path) -> str:
    """The source name of a file: its absolute path as a file:// URI."""
    return path.absolute().as_uri()


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1024 * 1024), b""):
            h.update(block)
    return h.hexdigest()


def guess_type(path: Path) -> str:
    import mimetypes

    if path.suffix.lower() in (".md", ".markdown", ".mdown", ".mkd"):
        return "text/markdown"
    return mimetypes.guess_type(path.name)[0] or "application/octet-stream"


class Ignore:
    """What a folder's sync leaves out: hidden files and folders (``.git``, ``.obsidian``...), editors'
    temporary and partial downloads, and what the folder's ``.secondbrainignore`` lists (gitignore syntax)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.spec: Any = None
        rules = root / IGNORE_FILE
        if rules.is_file():
            import pathspec

            self.spec = pathspec.GitIgnoreSpec.from_lines(rules.read_text(errors="replace").splitlines())

    def skips(self, path: Path, *, is_dir: bool = False) -> bool:
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return True
        if any(part.startswith(".") for part in rel.parts):
            return True
        name = rel.name
        if not is_dir and (name.startswith(TEMP_PREFIXES) or name.lower().endswith(TEMP_SUFFIXES)
                           or (name.startswith("#") and name.endswith("#"))):
            return True
        if self.spec is not None:
            text = rel.as_posix() + ("/" if is_dir else "")
            return bool(self.spec.match_file(text))
        return False


@dataclass
class Entry:
    """What was last synced for one file."""

    mtime_ns: int
    size: int
    sha256: str
    source_uri: str
    source_id: str | None  # None: the server refused it (too big, empty, unreadable); sent again when it changes,
    # is touched, or a new sync process starts (after a limit was raised, say)
    job_id: str | None = None
    artifact_id: str | None = None  # the server's id of the bytes (learnt from its source list, without a hash)


@dataclass
class Report:
    """What one round did."""

    added: int = 0
    updated: int = 0
    moved: int = 0
    deleted: int = 0
    unchanged: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)
    jobs: list[str] = field(default_factory=list)

    def changed(self) -> bool:
        return bool(self.added or self.updated or self.moved or self.deleted or self.failed)

    def line(self) -> str:
        parts = [f"{n} {what}" for n, what in ((self.added, "new"), (self.updated, "changed"),
                                                (self.moved, "moved"), (self.deleted, "deleted"),
                                                (self.unchanged, "unchanged")) if n]
        if self.failed:
            parts.append(f"{len(self.failed)} refused")
        return ", ".join(parts) or "nothing to sync"


class FolderSync:
    """Sync ``roots`` with the server behind ``client`` (which sends the user's key)."""

    def __init__(self, client: httpx.Client, roots: Iterable[Path], state_path: Path, *,
                 say: Callable[[str], None] = print) -> None:
        self.client = client
        self.roots = [Path(r).absolute() for r in roots]
        self.state_path = state_path
        self.say = say
        self.files: dict[str, Entry] = {}
        self.gone_since: dict[str, float] = {}  # recorded paths not found on disk, waiting out MOVE_GRACE_S
        self.lock = threading.Lock()
        self._dirty = 0
        self._refused_retried = False  # the first round of a process sends the files refused before again
        self.user_id = self._whoami()
        self._load()

    # --- state
    def _whoami(self) -> str:
        resp = self._call("GET", "/v1/me")
        return str(resp.json()["user_id"])

    def _load(self) -> None:
        try:
            raw = read_state(self.state_path)
        except (OSError, ValueError):
            return
        if not isinstance(raw, dict) or raw.get("version") != STATE_VERSION or raw.get("user_id") != self.user_id:
            return  # another user's (or an older) record: start afresh; same bytes again are only duplicates
        self.files = {p: Entry(**e) for p, e in raw.get("files", {}).items()}

    def adopt_server_sources(self) -> int:
        """Without a record of a folder (first run here, or the state file lost), learn what the server
        already holds from it: its file:// sources under the roots.  Unchanged files are then not sent
        again (the server's artifact id is a hash of the bytes), and sources of files deleted meanwhile
        are deleted.  Returns how many sources were found."""
        if any(self._mine(p) for p in self.files):
            return 0
        from urllib.parse import unquote, urlsplit

        adopted, offset = 0, 0
        while True:
            # copies too: a file whose bytes another file already brought is known to the server all the same
            rows = self._call("GET", "/v1/sources", params={"limit": 500, "offset": offset,
                                                            "copies": "true"}).json()["sources"]
            for r in rows:
                uri = r.get("source_uri") or ""
                if not uri.startswith("file://") or r.get("superseded") or r.get("status") == "failed":
                    continue
                path = unquote(urlsplit(uri).path)
                if not self._mine(path) or path in self.files:
                    continue
                self.files[path] = Entry(-1, -1, "", uri, r["source_id"], r.get("job_id"), r.get("artifact_id"))
                adopted += 1
            if len(rows) < 500:
                return adopted
            offset += 500

    def save(self) -> None:
        with self.lock:
            body = {"version": STATE_VERSION, "user_id": self.user_id,
                    "files": {p: asdict(e) for p, e in sorted(self.files.items())}}
            self._dirty = 0
        write_state(self.state_path, body)  # never a half-written state file

    def _touched(self) -> None:
        with self.lock:
            self._dirty += 1
            due = self._dirty >= SAVE_EVERY
        if due:
            self.save()

    # --- HTTP with patience: a busy or restarting server is waited for, not given up on
    def _call(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        def before_retry(state: RetryCallState) -> None:
            assert state.outcome is not None
            if state.attempt_number == 1 and state.outcome.failed:  # said once, when the first try found no server
                self.say(f"secondbrain is not reachable ({state.outcome.exception()}); trying again until it is")

        patience = server_patience(statuses=(429, 502, 503, 504), asked_default_s=2.0, asked_max_s=30.0,
                                   unreachable=httpx.TransportError, unreachable_wait_s=2.0,
                                   before_sleep=before_retry)
        resp: httpx.Response = patience(self.client.request, method, url, **kwargs)
        return resp

    # --- one round
    def walk(self) -> dict[str, os.stat_result]:
        """Every file to sync under the roots, with its stat."""
        found: dict[str, os.stat_result] = {}
        for root in self.roots:
            ignore = Ignore(root)
            for dirpath, dirnames, filenames in os.walk(root):
                here = Path(dirpath)
                dirnames[:] = [d for d in dirnames if not ignore.skips(here / d, is_dir=True)]
                for name in filenames:
                    path = here / name
                    if ignore.skips(path):
                        continue
                    with contextlib.suppress(OSError):
                        st = path.stat()
                        if os.path.isfile(path):
                            found[str(path)] = st
        return found

    def _mine(self, path: str) -> bool:
        return any(path.startswith(str(r) + os.sep) for r in self.roots)

    def sync(self, *, final: bool = False) -> Report:
        """Compare the folders with the record and send the differences.  Deletions wait MOVE_GRACE_S
        (in case the file reappears elsewhere) unless ``final``."""
        report = Report()
        now = self.walk()
        recorded = {p: e for p, e in self.files.items() if self._mine(p)}
        missing = {p: e for p, e in recorded.items() if p not in now}
        todo: list[tuple[str, os.stat_result, Entry | None]] = []
        again, self._refused_retried = not self._refused_retried, True
        for path, st in now.items():
            old = recorded.get(path)
            if old is not None and old.mtime_ns == st.st_mtime_ns and old.size == st.st_size \
                    and not (again and old.source_id is None):
                report.unchanged += 1
                continue
            todo.append((path, st, old))
        # Hash what looks new or changed (in parallel: hashing and uploading wait on I/O).
        hashed: list[tuple[str, os.stat_result, Entry | None, str]] = []
        for path, st, old in todo:
            try:
                hashed.append((path, st, old, sha256_of(Path(path))))
            except OSError:
                continue  # gone or unreadable meanwhile: the next round sees it
        by_hash: dict[str, list[str]] = {}
        for p, e in missing.items():
            by_hash.setdefault(e.sha256, []).append(p)
        uploads: list[tuple[str, os.stat_result, Entry | None, str]] = []
        for path, st, old, digest in hashed:
            if old is not None and old.source_id is not None \
                    and (old.sha256 == digest or old.artifact_id == ids.artifact_id(self.user_id, digest)):
                # touched, not changed (or found unchanged on the server); one refused before is sent again
                self._record(path, Entry(st.st_mtime_ns, st.st_size, digest, old.source_uri, old.source_id,
                                         old.job_id, old.artifact_id))
                report.unchanged += 1
            elif old is None and by_hash.get(digest):  # moved or renamed: the same content, its source kept
                was = by_hash[digest].pop(0)
                moved = missing.pop(was)
                with self.lock:
                    self.files.pop(was, None)
                    self.gone_since.pop(was, None)
                self._record(path, Entry(st.st_mtime_ns, st.st_size, digest, moved.source_uri, moved.source_id,
                                         moved.job_id, moved.artifact_id))
                report.moved += 1
                self.say(f"moved: {self._show(was)} -> {self._show(path)}")
            else:
                uploads.append((path, st, old, digest))
        if uploads:
            self._send_all(uploads, report)
        clock = time.monotonic()
        for path, entry in missing.items():
            since = self.gone_since.setdefault(path, clock)
            if final or clock - since >= MOVE_GRACE_S:
                self._delete(path, entry, report)
        for path in list(self.gone_since):
            if path not in missing:
                self.gone_since.pop(path, None)
        self.save()
        return report

    def pending_deletions(self) -> bool:
        return bool(self.gone_since)

    def _send_all(self, uploads: list[tuple[str, os.stat_result, Entry | None, str]], report: Report) -> None:
        """Send new and changed files through the connectors' one sender (the import batch route), a batch at a
        time, the record saved as each batch is answered."""
        total, done, shown = len(uploads), 0, time.monotonic()
        if total > 1:
            self.say(f"sending {total} files...")
        tally = Tally(total)
        sender = Sender(self.client, tally, Progress(tally, quiet=True), "folder", batch_items=BATCH_FILES)
        for start in range(0, total, BATCH_FILES):
            batch = uploads[start:start + BATCH_FILES]
            items = sender.send([self._capture(path, old) for path, _st, old, _digest in batch])
            for (path, st, old, digest), item in zip(batch, items, strict=True):
                self._took(path, st, old, digest, item, report, named=total <= 20)
            done += len(batch)
            if total > 20 and (time.monotonic() - shown > 2 or done == total):
                self.say(f"  {done}/{total} files sent")
                shown = time.monotonic()

    def _capture(self, path: str, old: Entry | None) -> Capture:
        """A file as the batch route takes it: under its file:// address for good (a changed file is the next
        version of the same source), its bytes streamed from disk when its batch goes (never held whole)."""
        p = Path(path)
        return Capture(source_uri=old.source_uri if old is not None else file_uri(p), kind="file",
                       label=self._show(path), title=None, captured_at=None, path=p,
                       content_type=guess_type(p), filename=p.name)

    def _took(self, path: str, st: os.stat_result, old: Entry | None, digest: str, item: Item, report: Report, *,
              named: bool) -> None:
        """Record what the server made of one file, and say it."""
        source_uri = item.capture.source_uri
        if item.status == "refused":
            if not (item.reason or "").startswith(UNREADABLE):  # gone or unreadable: the next round sees it
                # Recorded with its hash: it is not sent again until it changes.
                self._record(path, Entry(st.st_mtime_ns, st.st_size, digest, source_uri, None))
            report.failed.append(f"{self._show(path)}: {item.reason}")
            self.say(f"refused: {self._show(path)}: {item.reason}")
            return
        self._record(path, Entry(st.st_mtime_ns, st.st_size, digest, source_uri,
                                 ids.source_id(self.user_id, source_uri), item.job_id,
                                 ids.artifact_id(self.user_id, digest)))
        if item.job_id is not None:
            report.jobs.append(item.job_id)
        if old is None:
            report.added += 1
        else:
            report.updated += 1
        if named:
            self.say(f"{'changed' if old else 'new'}: {self._show(path)}")

    def _delete(self, path: str, entry: Entry, report: Report) -> None:
        if entry.source_id is not None:
            resp = self._call("DELETE", f"/v1/sources/{entry.source_id}")
            if resp.status_code not in (204, 404):  # 404: already gone (deleted in the web app, say)
                report.failed.append(f"{self._show(path)}: delete answered HTTP {resp.status_code}")
                return
        with self.lock:
            self.files.pop(path, None)
            self.gone_since.pop(path, None)
        report.deleted += 1
        self.say(f"deleted: {self._show(path)}")
        self._touched()

    def _record(self, path: str, entry: Entry) -> None:
        with self.lock:
            self.files[path] = entry
        self._touched()

    def _show(self, path: str) -> str:
        for root in self.roots:
            with contextlib.suppress(ValueError):
                return str(Path(path).relative_to(root.parent))
        return path

    # --- watching
    def watch(self, stop: threading.Event | None = None) -> None:
        """Sync once, then after every change until ``stop`` is set (or Ctrl-C)."""
        import watchfiles

        stop = stop or threading.Event()
        t0 = time.monotonic()
        known = self.adopt_server_sources()
        if known:
            self.say(f"no record of these folders here: the server already holds {known} of their files")
        first = self.sync()
        took = time.monotonic() - t0
        self.say(f"in sync ({first.line()}) in {took:.1f}s; watching {', '.join(map(str, self.roots))}")
        # rust_timeout with yield_on_timeout: a quiet second still comes back, so deletions waiting
        # out MOVE_GRACE_S are done without a further change.
        for changes in watchfiles.watch(*self.roots, stop_event=stop, rust_timeout=1000, yield_on_timeout=True,
                                        watch_filter=None, raise_interrupt=False):
            if not changes and not self.pending_deletions():
                continue
            report = self.sync()
            if report.changed():
                self.say(f"synced: {report.line()}")


def default_state_path(url: str, user_hint: str, roots: Iterable[Path]) -> Path:
    """Where ``secondbrain watch`` keeps its record: one file per server, key and set of folders."""
    return state_path("watch", url, user_hint, *sorted(str(Path(r).absolute()) for r in roots))


class Watcher:
    """SB_WATCH_DIRS: the folder sync, on a thread of its own, as a client of this server with the local key."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self, url: str, key_file: Path, roots: list[Path], state: Path) -> None:
        def run() -> None:
            missing = [str(r) for r in roots if not r.is_dir()]
            if missing:
                say(f"  not watching {', '.join(missing)}: not a folder (SB_WATCH_DIRS)")
            roots_ok = [r for r in roots if r.is_dir()]
            if not roots_ok:
                return
            try:
                with api_client(url, key_file) as c:
                    FolderSync(c, roots_ok, state, say=lambda m: say(f"watch: {m}")).watch(self.event)
            except Exception as exc:  # the server keeps serving; the person sees why the sync stopped
                say(f"watch: stopped: {type(exc).__name__}: {exc}")

        say(f"  keeping in sync: {', '.join(map(str, roots))} (SB_WATCH_DIRS)")
        self.thread = threading.Thread(target=run, name="folder-sync", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.event.set()
        if self.thread is not None:
            self.thread.join(timeout=5)
