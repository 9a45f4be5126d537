"""The one sender every connector shares with ``secondbrain import``: captures in batches through the import
batch route (``POST /v1/imports/batch``), waiting, like any capture, while the person has ``SB_MAX_PENDING_JOBS``
captures in the pipeline or the server is away; then following their jobs until they are searchable (or
failed), with a tally for the progress line and the summary.

Each capture carries an idempotency key of the item and its content, so a batch sent again (after Ctrl-C, a
lost server, the next pass of a periodic connector) adds nothing twice.
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tenacity import RetryCallState

from connectors.patience import server_asked_wait, server_patience

BATCH_ITEMS = 100
BATCH_BYTES = 16 * 1024 * 1024
POLL_WINDOW = 200  # unfinished jobs asked about per round, in one request (a person's captures go through in order)
# The window a round starts from: twice what finished in the round before, and never under this.  Jobs finish in
# about the order they were sent, so the rest of a full window was asked about again and again for nothing (in a
# 5,000-note import, a few dozen of the 200 finish between two rounds half a second apart).
MIN_POLL_WINDOW = 32
OLD_POLL_WINDOW = 16  # the same, one request each, from a server without GET /v1/jobs
# While batches go out, their jobs are asked about at most this often, however small and quick the batches: the
# progress line shows no more than twice a second, and each round is a look-up of up to 200 jobs.
POLL_EVERY_S = 0.5
ROOM_POLL_S = 1.0  # while paused for a full backlog: how often to ask whether there is room again
FINAL = ("succeeded", "failed", "duplicate", "superseded")
# What a reverse proxy answers while the server behind it is down or too slow (the gateway never sends these for
# a batch): waited out like a server that is away.  A 503 is not among them: the gateway sends it for a
# process with no vector store, which no wait mends.  A batch sent again adds nothing it already took.
BEHIND_PROXY = (502, 504)


@dataclass
class Item:
    """One capture sent, and what became of it."""

    label: str
    kind: str
    job_id: str | None = None
    status: str = "sending"  # imported -> queued/running -> succeeded | failed | duplicate | superseded; unchanged
    reason: str | None = None
    http_status: int | None = None  # a refused item's: the whole batch's answer, when that was the refusal
    earlier: bool = False  # imported by an earlier run
    capture: Any = field(default=None, repr=False, compare=False)  # what was sent


@dataclass
class Tally:
    """Everything an import did, for the progress line and the summary."""

    total: int
    started: float = field(default_factory=time.monotonic)
    items: list[Item] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (label, reason)
    repeats: list[tuple[str, str]] = field(default_factory=list)  # items the export holds twice
    waiting: str | None = None
    pauses: int = 0  # times the server said the person's backlog was full (SB_MAX_PENDING_JOBS)
    paused_s: float = 0.0  # how long the import waited for it, in all

    def count(self, *statuses: str, earlier: bool | None = None) -> int:
        return sum(1 for i in self.items if i.status in statuses and (earlier is None or i.earlier == earlier))

    @property
    def seen(self) -> int:
        return len(self.items) + len(self.skipped) + len(self.repeats)

    @property
    def finished(self) -> int:
        return self.count(*FINAL, "refused") + self.seen - len(self.items)

    def line(self, current: str = "") -> str:
        elapsed = max(time.monotonic() - self.started, 1e-6)
        done = self.finished
        rate = done / elapsed
        total = max(self.total, self.seen)
        parts = [f"{self.seen}/{total} read", f"{self.count('succeeded')} searchable"]
        if self.count("duplicate"):
            parts.append(counted(self.count("duplicate"), "duplicate"))
        bad = self.count("failed", "refused")
        if bad:
            parts.append(f"{bad} failed")
        if done and elapsed > 2:
            left = max(total - done, 0) / rate if rate > 0 else 0
            parts.append(f"{rate:.1f} items/s, {clock(left)} left" if left else f"{rate:.1f} items/s")
        if self.waiting:
            parts.append(self.waiting)
        elif current:
            parts.append(current[:50])
        return " · ".join(parts)


def clock(seconds: float) -> str:
    """A duration as people say it: 45 s, 3 min 20 s, 1 h 05 min."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class Progress:
    """One line redrawn on a terminal; a line every few seconds otherwise (a log)."""

    def __init__(self, tally: Tally, *, quiet: bool) -> None:
        self.tally = tally
        self.tty = sys.stderr.isatty() and not quiet
        self.quiet = quiet
        self.shown = 0.0

    def show(self, current: str = "", *, force: bool = False) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if self.tty:
            if force or now - self.shown > 0.1:
                sys.stderr.write("\r\x1b[K" + self.tally.line(current))
                sys.stderr.flush()
                self.shown = now
        elif force or now - self.shown > 10:
            say(self.tally.line(current))
            self.shown = now

    def done(self) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


class Sender:
    """Sends captures in batches, waits for their jobs, and keeps the tally."""

    def __init__(self, client: Any, tally: Tally, progress: Progress, fmt: str, *, batch_items: int) -> None:
        self.client = client
        self.tally = tally
        self.progress = progress
        self.fmt = fmt
        self.batch_items = max(1, min(batch_items, 500))
        self.batch: list[Any] = []
        self.batch_bytes = 0
        self.polled = 0  # items before this index are all finished
        self.polled_at = -POLL_EVERY_S  # time.monotonic() of the last round
        self.window = POLL_WINDOW  # how many unfinished jobs the next round asks about (see MIN_POLL_WINDOW)
        self.wave = 0  # captures of a later wave wait until the jobs sent so far have finished
        self.conversations: list[Any] = []

    # --- sending
    def add(self, capture: Any) -> None:
        try:
            data: bytes | Path = capture.path if capture.path is not None else (
                b"" if capture.kind == "url" else capture.data())
            size = data.stat().st_size if isinstance(data, Path) else len(data)
        except OSError as exc:  # a file gone or unreadable since it was listed: refused here, the rest go on
            self._unreadable(capture, exc)
            return
        self.batch.append((capture, data))
        self.batch_bytes += size
        self.progress.show(capture.label)
        if len(self.batch) >= self.batch_items or self.batch_bytes >= BATCH_BYTES:
            self.flush()

    def _unreadable(self, capture: Any, exc: OSError) -> None:
        """A file gone or unreadable since it was listed: refused, with why."""
        self.tally.items.append(Item(capture.label, capture.kind, status="refused", capture=capture,
                                     reason=f"cannot read it ({exc.strerror or exc})"))

    def next_wave(self, wave: int, timeout_s: float | None) -> None:
        """An item's next version: sent once every job sent so far has finished (it would replace one still
        in the pipeline before it was indexed)."""
        if wave > self.wave:
            self.flush()
            self.wait(timeout_s)
            self.wave = wave

    def add_conversation(self, conversation: Any) -> None:
        self.conversations.append(conversation)
        if len(self.conversations) >= 50:
            self._send_conversations()

    def _send_conversations(self) -> None:
        sent, self.conversations = self.conversations, []
        manifest = {"format": self.fmt, "captures": [], "conversations": [c.json() for c in sent]}
        resp = self.client.post("/v1/imports/batch", files=[("manifest", (None, json.dumps(manifest),
                                                                          "application/json"))], timeout=300)
        if resp.status_code != 200:
            reason = f"HTTP {resp.status_code}: {detail_of(resp)[:200]}"
            self.tally.items += [Item(c.label, "conversation", status="refused", reason=reason) for c in sent]
            return
        for c, r in zip(sent, resp.json()["results"], strict=True):
            status = {"imported": "succeeded", "unchanged": "succeeded"}.get(r["status"], "refused")
            self.tally.items.append(Item(c.label, "conversation", status=status, reason=r.get("reason"),
                                         earlier=r["status"] == "unchanged"))

    def send_all(self, captures: list[Any]) -> list[str]:
        """Send ``captures`` and return once the gateway answered for each: each one's status, in order
        ("refused" when it was refused).  A connector's state moves on only after this returns."""
        return [item.status for item in self.send(captures)]

    def send(self, captures: list[Any]) -> list[Item]:
        """Send ``captures`` and return once the gateway answered for each: what became of each (its job, or
        why it was refused), in the order of ``captures`` (those left waiting a while are answered later)."""
        before = len(self.tally.items)
        for capture in captures:
            self.add(capture)
        self.flush()
        answered = {id(item.capture): item for item in self.tally.items[before:]}
        return [answered[id(capture)] for capture in captures]

    def flush(self) -> None:
        batch, self.batch, self.batch_bytes = self.batch, [], 0
        if batch:
            self._send(batch)
        if self.conversations:
            self._send_conversations()

    def _send(self, batch: list[Any]) -> None:
        """Send a batch; what the server leaves waiting (the person's backlog is full) goes again once the
        pipeline has caught up, however long that takes (Ctrl-C stops; nothing sent is sent twice)."""
        while batch:
            resp = self._post(batch)
            if resp is None:
                return
            batch = self._take(batch, resp)
            if batch:
                body = resp.json()
                self._wait_for_room(server_asked_wait(resp, 5.0, 30.0), body.get("pending"),
                                    body.get("max_pending"), waiting=len(batch))

    def _wait_for_room(self, seconds: float, pending: Any, limit: Any, *, waiting: int) -> None:
        self.tally.pauses += 1
        self.tally.waiting = (f"paused: {pending} of yours still being processed (the limit is {limit}, "
                              "SB_MAX_PENDING_JOBS)")
        # Room for what waits (or, under a smaller limit, for as much as the limit holds) once that many finish
        self._paused(seconds, room_for=min(waiting, limit) if isinstance(limit, int) and limit > 0 else waiting)

    def _paused(self, seconds: float, *, room_for: int | None = None) -> None:
        """Wait ``seconds`` for the pipeline, following the jobs sent so far meanwhile (the tally says why); or
        until ``room_for`` of them have finished since, so the backlog has room for what waits again.  Waiting
        out the whole pause let the pipeline run dry before the next batch came (both cores idle for a few
        seconds of each pause in a 5,000-note import)."""
        started = time.monotonic()
        deadline = started + seconds
        finished = self.tally.finished
        while time.monotonic() < deadline:
            self.poll()
            self.progress.show()
            if room_for is not None and self.tally.finished - finished >= room_for:
                break
            time.sleep(min(ROOM_POLL_S, max(0.0, deadline - time.monotonic())))
        self.tally.paused_s += time.monotonic() - started
        self.tally.waiting = None

    def _post(self, batch: list[Any]) -> Any:
        """The server's answer to a batch (after waiting out a full pipeline or an absent server), or None when
        it refused the batch (each capture then says why)."""
        manifest = {"format": self.fmt, "captures": [c.json(None if c.kind == "url" else f"p{i}")
                                                       for i, (c, _d) in enumerate(batch)]}
        # Always multipart, even for a batch of web pages only (no bytes): the manifest is a part of its own.
        told = False

        def post() -> Any:
            # Built again for each try: a file on disk is opened afresh and streamed, never held whole.
            with ExitStack() as opened:
                files: list[tuple[str, tuple[str | None, Any, str]]] = [
                    ("manifest", (None, json.dumps(manifest), "application/json"))]
                files += [(f"p{i}", (c.filename or "item",
                                     opened.enter_context(data.open("rb")) if isinstance(data, Path) else data,
                                     c.content_type or "application/octet-stream"))
                          for i, (c, data) in enumerate(batch) if c.kind != "url"]
                return self.client.post("/v1/imports/batch", files=files, timeout=300)

        def before_retry(state: RetryCallState) -> None:
            nonlocal told
            assert state.outcome is not None
            away: object = state.outcome.exception() if state.outcome.failed else None
            if away is None and state.outcome.result().status_code in BEHIND_PROXY:
                away = f"HTTP {state.outcome.result().status_code} from a proxy in front of it"
            if away is None:  # the pipeline is full of this person's captures, or the minute's limit
                self.tally.waiting = "waiting for the pipeline"
                self.tally.pauses += 1
            elif not told:
                self.progress.done()
                say(f"secondbrain is not reachable ({away}); trying again until it is (Ctrl-C stops)")
                told = True

        def pause(seconds: float) -> None:
            if self.tally.waiting is None:  # the server is away: nothing to follow meanwhile
                time.sleep(seconds)
            else:
                self._paused(seconds)  # a 429 may be the minute's limit too: finished jobs make no room there

        patience = server_patience(statuses=(429, *BEHIND_PROXY), asked_default_s=5.0, asked_max_s=30.0,
                                   unreachable=transport_errors(), unreachable_wait_s=3.0,
                                   before_sleep=before_retry, sleep=pause)
        try:
            resp = patience(post)
        except OSError as exc:  # a file gone or unreadable since it was listed
            if len(batch) > 1:
                for one in batch:  # find it: the others go on
                    self._send([one])
                return None
            self._unreadable(batch[0][0], exc)
            return None
        if resp.status_code != 200:
            if len(batch) > 1 and resp.status_code in (400, 413, 422):
                for one in batch:  # one capture spoils the batch: send each alone to find it
                    self._send([one])
                return None
            reason = f"HTTP {resp.status_code}: {detail_of(resp)[:200]}"
            for c, _d in batch:
                self.tally.items.append(Item(c.label, c.kind, status="refused", reason=reason, capture=c,
                                             http_status=resp.status_code))
            return None
        return resp

    def _take(self, batch: list[Any], resp: Any) -> list[Any]:
        """Record what the server made of each capture; the ones it left waiting, to send again."""
        again = []
        for (c, d), r in zip(batch, resp.json()["results"], strict=True):
            if r["status"] == "waiting":
                again.append((c, d))
                continue
            item = Item(c.label, c.kind, r.get("job_id"), reason=r.get("reason"), capture=c)
            if r["status"] == "imported":
                item.status = "queued"
            elif r["status"] == "unchanged":
                item.earlier = True
                item.status = r.get("job_status") or "queued"
                item.reason = r.get("error")
            else:
                item.status = "refused"
            self.tally.items.append(item)
        if time.monotonic() - self.polled_at >= POLL_EVERY_S:
            self.poll()
        return again

    # --- waiting
    def poll(self) -> None:
        """Ask about the first unfinished jobs, in the order they were sent, in one request: as many as twice what
        finished in the round before (``MIN_POLL_WINDOW`` to ``POLL_WINDOW``)."""
        asking = self._unfinished(self.window)
        if not asking:
            return
        self.polled_at = time.monotonic()
        try:
            resp = self.client.get("/v1/jobs", params=[("id", item.job_id) for item in asking])
        except transport_errors():
            return
        if resp.status_code in (404, 405):  # a server from before GET /v1/jobs
            self._poll_one_by_one(asking[:OLD_POLL_WINDOW])
        elif resp.status_code == 429:
            time.sleep(server_asked_wait(resp, 1.0, 10.0))
        elif resp.status_code == 200:
            jobs = {job["job_id"]: job for job in resp.json()["jobs"]}
            for item in asking:
                self._update(item, jobs.get(item.job_id or ""))
            finished = sum(item.status in FINAL for item in asking)
            self.window = max(MIN_POLL_WINDOW, min(POLL_WINDOW, 2 * finished))
        self._unfinished(0)  # asks for nothing: moves ``polled`` past the jobs that just finished

    def _unfinished(self, window: int) -> list[Item]:
        """The first ``window`` unfinished items with a job, moving ``polled`` past the finished ones before them."""
        out: list[Item] = []
        for i in range(self.polled, len(self.tally.items)):
            item = self.tally.items[i]
            if item.status in (*FINAL, "refused") or item.job_id is None:
                if i == self.polled:
                    self.polled += 1
                continue
            if len(out) >= window:
                break
            out.append(item)
        return out

    @staticmethod
    def _update(item: Item, job: dict[str, Any] | None) -> None:
        if job is None:  # no job of the person's any more: deleted meanwhile (they removed it)
            item.status, item.reason = "failed", "the capture was deleted while the import ran"
            return
        item.status = job["status"]
        if job["status"] == "failed":
            item.reason = job.get("reason") or job.get("error") or "no reason given"

    def _poll_one_by_one(self, asking: list[Item]) -> None:
        for item in asking:
            try:
                resp = self.client.get(f"/v1/jobs/{item.job_id}")
            except transport_errors():
                return
            if resp.status_code == 429:
                time.sleep(server_asked_wait(resp, 1.0, 10.0))
                return
            if resp.status_code in (200, 404):
                self._update(item, resp.json() if resp.status_code == 200 else None)

    def wait(self, timeout_s: float | None) -> bool:
        """Until every job has finished (True), or ``timeout_s`` passed (False)."""
        deadline = None if not timeout_s else time.monotonic() + timeout_s
        while any(i.status not in (*FINAL, "refused") for i in self.tally.items if i.job_id):
            if deadline is not None and time.monotonic() > deadline:
                return False
            self.poll()
            self.progress.show()
            time.sleep(0.5)
        return True

    def retry_failed(self) -> int:
        """Try again the items an earlier run left failed (``POST /v1/jobs/{id}/retry``)."""
        again = 0
        for item in self.tally.items:
            if item.earlier and item.status == "failed" and item.job_id:
                resp = self.client.post(f"/v1/jobs/{item.job_id}/retry")
                if resp.status_code == 202:
                    item.job_id, item.status, item.reason, item.earlier = resp.json()["job_id"], "queued", None, False
                    again += 1
        self.polled = 0
        return again


def transport_errors() -> tuple[type[BaseException], ...]:
    import httpx

    return (httpx.TransportError,)

def api_client(url: str, key_file: Path) -> Any:
    """An HTTP client of the server at ``url`` sending the key kept in ``key_file`` (a connector run by
    ``secondbrain up``, beside the server it started)."""
    import httpx

    headers = {"Authorization": f"Bearer {key_file.read_text().strip()}"}
    return httpx.Client(base_url=url, headers=headers, timeout=httpx.Timeout(60.0, connect=5.0))


def detail_of(resp: Any) -> str:
    """The server's sentence for a refusal (its ``detail``), else the body as it came."""
    try:
        return str(resp.json().get("detail", resp.text))
    except ValueError:
        return str(resp.text)



def say(msg: str) -> None:
    """A line for the person, on stderr (stdout is the command's answer)."""
    print(msg, file=sys.stderr, flush=True)


def print_reasons(head: str, pairs: list[tuple[str, str]], limit: int = 5) -> None:
    """``pairs`` of (label, reason) grouped by reason, the most frequent first, a few labels each."""
    if not pairs:
        return
    print(f"  {head}:")
    groups: dict[str, list[str]] = {}
    for label, reason in pairs:
        groups.setdefault(reason, []).append(label)
    for reason, labels in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        shown = ", ".join(labels[:limit]) + (f" and {len(labels) - limit} more" if len(labels) > limit else "")
        print(f"    {reason}" + (f" ({len(labels)})" if len(labels) > 1 else "") + f": {shown}")


def counted(count: int, noun: str) -> str:
    """``count`` of ``noun``: 1 message, 2 messages."""
    return f"{count} {noun}" + ("" if count == 1 else "s")
