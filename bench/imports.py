"""Imports: how fast each export format goes from `secondbrain import` to searchable, next to the embedder alone.

    .venv/bin/python bench/imports.py [--keep 5000] [--per-format 150] [--formats keep,evernote,...]

Starts embedded secondbrain in a fresh data directory, writes each export the way its tool writes it
(devtools/gen_exports.py, scaled up: ``--keep`` Google Keep notes in a Takeout folder, ``--per-format``
items of every other format) and runs the CLI on it the way a person would (``secondbrain import PATH``:
read here, sent in batches, waited for until every item is searchable).  Bookmarks are fetched from a
local web site.  Per format it prints the items, the seconds from the command's start to the last item
searchable, items per second, and what was skipped or failed (with the reasons).  For the Keep notes the
passages the embedder embedded are read back (``GET /v1/export``) and embedded again in this process with
the same model and batch size: the embedder alone, and the import's share of its speed.

Numbers belong to the machine they ran on; the script prints it.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from bench.backbone import AWAY_FROM_HOME, free_port, key_headers, start, stop  # noqa: E402
from bench.bulk import cpu_by_part  # noqa: E402
from bench.modalities import embedder_alone  # noqa: E402
from devtools import gen_exports as gen  # noqa: E402
from devtools import gen_web  # noqa: E402
from devtools.loopback import LoopbackSite, QuietHandler  # noqa: E402

WORDS = ("quince", "harbour", "ledger", "walnut", "violin", "ferry", "lantern", "meadow", "copper", "orchard",
         "saffron", "tiller", "hazel", "apricot", "compass", "kettle")


def sentence(i: int) -> str:
    w = [WORDS[(i * k + k) % len(WORDS)] for k in range(1, 7)]
    return (f"Item {i}: the {w[0]} and the {w[1]} were checked against the {w[2]} on shelf {i % 97}, "
            f"then the {w[3]} went to the {w[4]} box with the {w[5]} (batch {i * 13 % 1009}).")


def when(i: int) -> datetime:
    return datetime(2021, 1, 1, 9, 0, tzinfo=UTC) + timedelta(hours=7 * i)


# --- exports at scale (the sample writers' formats, more items)
def many_evernote(root: Path, n: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    notes = [gen.enex_note(f"Ledger note {i}", f"<div><b>Entry</b> {sentence(i)}</div><div>{sentence(i + 1)}</div>",
                           f"{when(i):%Y%m%dT%H%M%SZ}", tags=["ledger"]) for i in range(n)]
    path = root / "Ledger.enex"
    path.write_text(gen.enex(notes))
    return path


def many_notion(root: Path, n: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "Export-bench.zip"
    with zipfile.ZipFile(path, "w") as z:
        for i in range(n):
            z.writestr(f"Workspace {'a' * 32}/Page {i} {i:032x}.md", f"# Page {i}\n\nCreated: "
                       f"{when(i):%B %d, %Y %I:%M %p}\n\n{sentence(i)}\n\n{sentence(i + 2)}\n")
    return path


def many_notes(root: Path, n: int) -> Path:
    folder = root / "Bear export"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        f = folder / f"Note {i}.md"
        f.write_text(f"# Note {i}\n\n{sentence(i)} #bench\n")
        os.utime(f, (when(i).timestamp(), when(i).timestamp()))
    return folder


def many_kindle(root: Path, n: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    clips = [f"Book {i % 7} (Author {i % 7})\n- Your Highlight on page {i} | Location {10 * i}-{10 * i + 2} | "
             f"Added on {when(i):%A, %B %d, %Y %I:%M:%S %p}\n\n{sentence(i)}" for i in range(n)]
    path = root / "My Clippings.txt"
    path.write_text("".join(f"{c}\n==========\n" for c in clips))
    return path


def many_readwise(root: Path, n: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    rows = [f'"{sentence(i)}",Book {i % 7},Author {i % 7},,,,,location,{i},{when(i):%Y-%m-%d %H:%M:%S}+00:00,\n'
            for i in range(n)]
    path = root / "readwise.csv"
    path.write_text("Highlight,Book Title,Book Author,Amazon Book ID,Note,Color,Tags,Location Type,Location,"
                    "Highlighted at,Document tags\n" + "".join(rows))
    return path


def many_whatsapp(root: Path, n: int) -> Path:
    """``n`` days of chat, 12 messages a day."""
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for d in range(n):
        for m in range(12):
            t = when(d * 4) + timedelta(minutes=7 * m)
            lines.append(f"{t:%d/%m/%Y, %H:%M} - {('Priya', 'Sam')[m % 2]}: {sentence(d * 12 + m)}")
    path = root / "WhatsApp Chat with Priya.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def many_telegram(root: Path, n: int) -> Path:
    folder = root / "ChatExport"
    folder.mkdir(parents=True, exist_ok=True)
    msgs = [{"id": d * 12 + m, "type": "message", "date": "", "from": ("Rosa", "Sam")[m % 2],
             "date_unixtime": str(int((when(d * 4) + timedelta(minutes=5 * m)).timestamp())),
             "text": sentence(d * 12 + m)} for d in range(n) for m in range(12)]
    (folder / "result.json").write_text(json.dumps({"name": "Rosa", "type": "personal_chat", "id": 1,
                                                    "messages": msgs}))
    return folder


def many_mem0(root: Path, n: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "mem0.json"
    path.write_text(json.dumps({"results": [{"id": f"m{i}", "memory": sentence(i), "hash": str(i),
                                             "created_at": when(i).isoformat(), "categories": ["bench"]}
                                            for i in range(n)]}))
    return path


def many_khoj(root: Path, n: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    convs = [{"title": f"Question {i}", "agent": "Khoj", "created_at": f"{when(i):%Y-%m-%d %H:%M:%S}",
              "conversation_log": {"chat": [
                  {"by": "you", "message": sentence(i), "created": f"{when(i):%Y-%m-%d %H:%M:%S}"},
                  {"by": "khoj", "message": sentence(i + 1), "created": f"{when(i):%Y-%m-%d %H:%M:%S}"}]}}
             for i in range(n)]
    path = root / "khoj-conversations.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("conversations.json", json.dumps(convs))
    return path


class PageSite(LoopbackSite):
    """A local web site of ``n`` distinct article pages, for the bookmarks."""

    def __init__(self, n: int) -> None:
        base_page = gen_web.page_meta_published().decode()

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                if self.path == "/robots.txt":
                    body = b"User-agent: *\nAllow: /\n"
                else:
                    i = int(self.path.rsplit("/", 1)[-1] or 0)
                    body = base_page.replace("How Lighthouses Keep Time", f"Bookmark {i}: {sentence(i)}").encode()
                self.reply(200, "text/html; charset=utf-8", body)

        super().__init__(Handler)


def many_bookmarks(root: Path, n: int, base: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    marks = "\n".join(f'<DT><A HREF="{base}/page/{i}" ADD_DATE="{int(when(i).timestamp())}">Page {i}</A>'
                      for i in range(n))
    path = root / "bookmarks.html"
    path.write_text("<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<TITLE>Bookmarks</TITLE><H1>Bookmarks</H1>\n<DL><p>\n"
                    f"<DT><H3>Bench</H3>\n<DL><p>\n{marks}\n</DL><p>\n</DL><p>\n")
    return path


def run_import(path: Path, port: int, data: Path, *args: str) -> tuple[dict[str, Any], float, float]:
    """The CLI's summary, its wall time and its CPU seconds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SB_")} | AWAY_FROM_HOME
    cli = [sys.executable, "-m", "app.cli", "import", str(path), "--url", f"http://127.0.0.1:{port}",
           "--data-dir", str(data), "--json", "--tz", "UTC", *args]
    t0 = time.perf_counter()
    cli0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cli, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                          check=False)
    wall = time.perf_counter() - t0
    cli1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"secondbrain import {path.name} exited with {done.returncode}")
    return json.loads(done.stdout), wall, cli1.ru_utime + cli1.ru_stime - cli0.ru_utime - cli0.ru_stime


def exported_inputs(c: httpx.Client, source_prefix: str) -> list[str]:
    """The texts the embedder stage embedded for the sources whose URI starts with ``source_prefix``."""
    from secondbrain.passage import IndexedPassage

    out: list[str] = []
    with c.stream("GET", "/v1/export", timeout=600) as r:
        r.raise_for_status()
        data = b"".join(r.iter_bytes())
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for member in zf.namelist():
            if member.startswith("documents/") and member.endswith(".json"):
                doc = json.loads(zf.read(member))
                if str(doc.get("metadata", {}).get("source_uri", "")).startswith(source_prefix):
                    out.extend(IndexedPassage.from_payload(ch).embedding_text() for ch in doc.get("chunks") or [])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", type=int, default=5000, help="Google Keep notes (0: none)")
    ap.add_argument("--per-format", type=int, default=150, help="items of every other format (0: none)")
    ap.add_argument("--formats", default="", help="only these formats (comma-separated)")
    charts.docs_option(ap)
    args = ap.parse_args()
    at_start = charts.machine()
    root = Path(tempfile.mkdtemp(prefix="sb-imports-"))
    root.chmod(0o755)
    n = args.per_format
    site = PageSite(n)
    writers: dict[str, Callable[[], Path]] = {}
    if args.keep:
        writers["keep"] = lambda: gen.write_many_keep_notes(root / "keep", args.keep)
    if n:
        writers.update({
            "evernote": lambda: many_evernote(root / "evernote", n), "notion": lambda: many_notion(root / "notion", n),
            "notes": lambda: many_notes(root / "notes", n), "bookmarks": lambda: many_bookmarks(root / "bm", n,
                                                                                                 site.base),
            "kindle": lambda: many_kindle(root / "kindle", n), "readwise": lambda: many_readwise(root / "rw", n),
            "whatsapp": lambda: many_whatsapp(root / "wa", n // 4), "telegram": lambda: many_telegram(root / "tg",
                                                                                                     n // 4),
            "mem0": lambda: many_mem0(root / "mem0", n), "khoj": lambda: many_khoj(root / "khoj", n)})
    wanted = [f for f in args.formats.split(",") if f] or list(writers)
    port = free_port()
    data = root / "data"
    rows = []
    keep_inputs: list[str] = []
    keep_cpu: dict[str, float] = {}
    headline: dict[str, str] = {}
    try:
        print("starting secondbrain up...", file=sys.stderr)
        proc, _ = start(data, port, extra_env={"SB_FETCH_ALLOW_PRIVATE": "true"})
        try:
            for fmt in wanted:
                path = writers[fmt]()
                print(f"secondbrain import {path.name} ({fmt})...", file=sys.stderr)
                before = cpu_by_part(proc.pid, data, None)
                summary, wall, cli_cpu = run_import(path, port, data)
                if fmt == "keep":  # where the CPU went while the Keep notes went in (Linux: /proc)
                    after = cpu_by_part(proc.pid, data, None)
                    keep_cpu = {k: v - before.get(k, 0.0) for k, v in after.items()} | {"cli": cli_cpu}
                again, wall_again, _cpu = run_import(path, port, data)
                rows.append((fmt, summary, wall, again, wall_again))
            if "keep" in wanted:
                with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600, headers=key_headers(data)) as c:
                    keep_inputs = exported_inputs(c, "import:keep:")
        finally:
            stop(proc)
    finally:
        site.close()
        shutil.rmtree(root, ignore_errors=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          "one embedded process, every stage in it")
    print(f"{'format':<10}{'items':>7}{'imported':>9}{'wall s':>8}{'items/s':>9}{'2nd run s':>10}{'added':>6}  "
          "skipped / failed")
    shown: list[list[str]] = []
    notes: list[str] = []
    for fmt, s, wall, again, wall_again in rows:
        reasons = [f"{r['reason']} ({r['label']})" for r in s["skipped"]] + [
            f"failed: {r['reason']} ({r['label']})" for r in s["failed"]]
        print(f"{fmt:<10}{s['items']:>7}{s['imported']:>9}{wall:>8.1f}{s['items'] / wall:>9.1f}{wall_again:>10.1f}"
              f"{again['imported']:>6}  {'; '.join(reasons[:3]) or '-'}")
        shown.append([fmt, str(s["items"]), str(s["imported"]), f"{wall:.1f}", f"{s['items'] / wall:.1f}",
                      f"{wall_again:.1f}, {again['imported']}", "; ".join(reasons[:3]) or "-"])
    if keep_inputs:
        cpu0 = time.process_time()
        alone = embedder_alone({"keep": keep_inputs})["keep"]
        alone_cpu = time.process_time() - cpu0  # the model's loading included
        keep_wall = next(wall for fmt, _s, wall, _a, _w in rows if fmt == "keep")
        headline[f"import of {args.keep:,} Google Keep notes, share of the embedder alone's speed"] = (
            f"{100 * alone / keep_wall:.0f} %")
        print(f"keep: {len(keep_inputs)} passages; import {len(keep_inputs) / keep_wall:.1f} passages/s, embedder "
              f"alone {len(keep_inputs) / alone:.1f} passages/s: "
              f"{100 * alone / keep_wall:.0f}% of the embedder's speed")
        keep_summary = next(s for fmt, s, _w, _a, _ww in rows if fmt == "keep")
        paused = keep_summary.get("paused") or {}
        print(f"keep: paused {paused.get('times', 0)} times ({paused.get('seconds', 0)} s) for a full backlog")
        used = sum(keep_cpu.values())
        parts = ", ".join(f"{k} {v:.0f}" for k, v in sorted(keep_cpu.items(), key=lambda kv: -kv[1]))
        print(f"keep: CPU s while importing {used:.0f} ({parts}); the embedder alone {alone_cpu:.0f}, so about "
              f"{used - alone_cpu:.0f} outside the model "
              f"({1000 * (used - alone_cpu) / len(keep_inputs):.1f} ms a note)")
        notes.append(f"Keep: {len(keep_inputs)} passages; the import ran at {100 * alone / keep_wall:.0f} % of the "
                     f"embedder alone's speed on the same passages ({len(keep_inputs) / alone:.1f} passages/s).")
        notes.append(f"CPU seconds while the Keep notes went in: {used:.0f} ({parts}); the embedder alone "
                     f"{alone_cpu:.0f}: about {used - alone_cpu:.0f} outside the model.")
    print(f"machine at start: {at_start}")
    print(f"machine at end:   {charts.machine()}")
    if args.publish:
        charts.publish("imports", "Imports per format", [charts.table(
            ["format", "items", "imported", "seconds", "items/s", "second run: s, added", "skipped / failed"],
            shown)], notes=[*notes, f"Machine at the start: {at_start}."],
            headline=headline)


if __name__ == "__main__":
    main()
