"""``secondbrain import PATH``: bring another tool's export (see ``services/importers``).

The export is read here, on the person's machine (a folder, a zip or a file of any size), and its captures
go to the server in batches (``POST /v1/imports/batch``): one request per batch against the per-minute
limit, waiting, like any capture, while the person has ``SB_MAX_PENDING_JOBS`` captures in the pipeline.
Each item is submitted with an idempotency key of the item and its content, so running the import again,
or again after Ctrl-C, sends what is missing and adds nothing twice.  Progress shows each item sent, how many
are searchable, the rate and the time left; the end sums up what was imported, what was already there, the
duplicates and what was skipped or failed, with the reasons.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.cli.client import http_client, http_error, unreachable
from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, say
from connectors.sender import BATCH_ITEMS, FINAL, Item, Progress, Sender, Tally, clock, counted, print_reasons


def _options(args: argparse.Namespace) -> Any:
    from zoneinfo import ZoneInfo

    from app.cli.asking import _local_locale, _local_tz
    from secondbrain.temporal.calendar import Conventions
    from services.importers.model import Options

    zone = args.tz or _local_tz() or "UTC"
    try:
        tz = ZoneInfo(zone)
    except (KeyError, ValueError):
        raise ValueError(f"--tz {zone!r} is not a time zone name, e.g. Europe/Paris") from None
    order = args.date_order or Conventions.for_locale(_local_locale()).date_order
    return Options(tz=tz, date_order=order)


def _results(fmt: Any, export: Any, options: Any) -> Iterator[Any]:
    """The format's results; a failure of the export as a whole, past the first items, ends it as a skip."""
    from services.importers.model import Skipped, failure

    try:
        yield from fmt.read(export, options)
    except Exception as exc:  # whatever a damaged export raises past its items, what was read stays read
        yield Skipped("the rest of the export", failure(exc), export.name)


def cmd_import(args: argparse.Namespace) -> int:
    """Import an export: read it here, send it in batches, wait until it is searchable, sum up."""
    from services.importers import registry
    from services.importers.archive import Export
    from services.importers.model import Conversation, Distinct, ExportError, Skipped

    path = Path(args.path).expanduser()
    try:
        options = _options(args)
        export = Export.open(path)
    except (ExportError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    with export:
        try:
            detected = registry.detect(export, args.format)
            total = detected.format.count(export, options)
        except ExportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        fmt = detected.format
        if not args.json:
            say(f"{fmt.label}: {detected.found} in {path.name}")
            for other, found in detected.also:
                say(f"  also in it: {other.label} ({found}); import that with --from {other.name}")
        tally = Tally(total)
        if args.dry_run:
            return _dry_run(fmt, export, options, tally, args)
        import httpx

        progress = Progress(tally, quiet=args.json)
        try:
            with http_client(args) as client:
                me = client.get("/v1/me")
                if me.status_code != 200:
                    return http_error(me)
                sender = Sender(client, tally, progress, fmt.name, batch_items=args.batch)
                distinct = Distinct()
                for result in distinct(_results(fmt, export, options)):
                    if isinstance(result, Skipped):
                        (tally.repeats if result.duplicate else tally.skipped).append((result.label, result.reason))
                        progress.show(result.label)
                        continue
                    if isinstance(result, Conversation):
                        sender.add_conversation(result)
                        continue
                    sender.next_wave(result.wave, args.timeout)
                    sender.add(result)
                sender.flush()
                if args.retry_failed:
                    sender.retry_failed()
                finished = True if args.no_wait else sender.wait(args.timeout)
                progress.show(force=True)
        except httpx.TransportError as exc:
            progress.done()
            return unreachable(args, exc)
        except KeyboardInterrupt:
            progress.done()
            sent = sum(1 for i in tally.items if i.job_id)
            say(f"stopped. {sent} items were sent and go on being processed; run the same command again to "
                "go on: nothing sent is sent twice.")
            return 130
        progress.done()
    return _summary(fmt, tally, args, finished=finished)


def _dry_run(fmt: Any, export: Any, options: Any, tally: Tally, args: argparse.Namespace) -> int:
    from services.importers.model import Conversation, Distinct, Skipped

    rows = []
    for result in Distinct()(_results(fmt, export, options)):
        if isinstance(result, Skipped):
            (tally.repeats if result.duplicate else tally.skipped).append((result.label, result.reason))
            rows.append({"skipped": result.label, "reason": result.reason})
            continue
        if isinstance(result, Conversation):
            rows.append({"kind": "conversation", "title": result.label, "turns": str(len(result.turns))})
            tally.items.append(Item(result.label, "conversation", status="would import"))
            if not args.json:
                print(f"{'conv':<5} {result.created_at.isoformat(timespec='minutes'):<22} {result.label[:70]}")
            continue
        when = result.captured_at.isoformat(timespec="minutes") if result.captured_at else "-"
        rows.append({"kind": result.kind, "title": result.title or result.label, "captured_at": when,
                     "source_uri": result.source_uri})
        tally.items.append(Item(result.label, result.kind, status="would import"))
        if not args.json:
            print(f"{result.kind:<5} {when:<22} {(result.title or result.label)[:70]}")
    if args.json:
        print(json.dumps({"format": fmt.name, "items": rows}))
        return EXIT_OK
    print(f"\nWould import {len(tally.items)} items; {len(tally.repeats)} repeated in the export; "
          f"{len(tally.skipped)} skipped.")
    print_reasons("Skipped", tally.skipped)
    return EXIT_OK


def _summary(fmt: Any, tally: Tally, args: argparse.Namespace, *, finished: bool) -> int:
    elapsed = time.monotonic() - tally.started
    new_ok = tally.count("succeeded", earlier=False)
    before = tally.count("succeeded", "duplicate", earlier=True)
    dups = tally.count("duplicate", earlier=False)
    superseded = tally.count("superseded")
    failed = [(i.label, i.reason or "no reason given") for i in tally.items if i.status in ("failed", "refused")]
    pending = [i for i in tally.items if i.status not in (*FINAL, "refused")]
    rate = len(tally.items) / elapsed if elapsed > 0 else 0.0
    if args.json:
        print(json.dumps({
            "format": fmt.name, "items": tally.seen, "imported": new_ok, "already_imported": before,
            "duplicates": dups + len(tally.repeats), "superseded": superseded, "pending": len(pending),
            "skipped": [{"label": lb, "reason": r} for lb, r in tally.skipped],
            "repeated_in_export": [{"label": lb, "reason": r} for lb, r in tally.repeats],
            "failed": [{"label": lb, "reason": r} for lb, r in failed],
            "paused": {"times": tally.pauses, "seconds": round(tally.paused_s, 1)},
            "seconds": round(elapsed, 1), "items_per_s": round(rate, 2)}))
    else:
        print(f"{fmt.label}: {counted(tally.seen, 'item')} in {clock(elapsed)} ({rate:.1f} items/s)")
        print(f"  {new_ok} imported and searchable")
        if before:
            print(f"  {before} already imported by an earlier run (nothing added)")
        if dups or tally.repeats:
            print(f"  {counted(dups + len(tally.repeats), 'duplicate')} (nothing added): {dups} already in your "
                  f"memory, {len(tally.repeats)} repeated in the export")
        if superseded:
            print(f"  {superseded} replaced by a newer version of the same item")
        if tally.pauses:
            print(f"  paused {counted(tally.pauses, 'time')} ({clock(tally.paused_s)} in all) while your captures "
                  "in the pipeline were at the limit (SB_MAX_PENDING_JOBS), so that other work was not held up")
        if pending:
            state = "still being processed" if args.no_wait or not finished else "not finished"
            print(f"  {len(pending)} {state} (they go on; `secondbrain sources` shows them)")
        print_reasons(f"{len(tally.repeats)} found equal (imported once)", tally.repeats)
        print_reasons(f"{len(tally.skipped)} skipped", tally.skipped)
        print_reasons(f"{len(failed)} failed", failed)
        if any(i.earlier and i.status == "failed" for i in tally.items) and not args.retry_failed:
            print("  (items that failed in an earlier run are tried again with --retry-failed)")
    return EXIT_FAILED if failed else EXIT_OK


def add_parser(sub: Any, client_opts: Any) -> None:
    """The ``import`` command's arguments."""
    from services.importers.registry import formats

    names = [f.name for f in formats()]
    im = sub.add_parser("import", help="bring notes, chats, highlights and bookmarks from other tools' exports",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        description="Import another tool's export; its format is found from its content.\n\n"
                                    "What to export, per --from FORMAT:\n"
                                    + "\n".join(f"  {f.name:<10} {f.label}: {f.what}" for f in formats()))
    im.add_argument("path", metavar="PATH", help="the export: a file, a folder or a zip")
    im.add_argument("--from", dest="format", choices=names, metavar="FORMAT",
                    help=f"the export's format, when it should not be found from its content ({', '.join(names)})")
    im.add_argument("--tz", help="the time zone of times the export writes without one (WhatsApp, Kindle, Notion, "
                                 "Khoj); default: this machine's")
    im.add_argument("--date-order", choices=("dmy", "mdy", "ymd"),
                    help="WhatsApp's numeric dates, when the chat does not settle it (default: this machine's locale)")
    im.add_argument("--dry-run", action="store_true", help="read the export and list what would be imported")
    im.add_argument("--no-wait", action="store_true", help="return once everything is sent")
    im.add_argument("--retry-failed", action="store_true", help="try again what failed in an earlier run")
    im.add_argument("--timeout", type=float, default=None, help="stop waiting after this many seconds")
    im.add_argument("--batch", type=int, default=BATCH_ITEMS, help=f"items per request (default {BATCH_ITEMS})")
    client_opts(im)
    im.set_defaults(func=cmd_import)

