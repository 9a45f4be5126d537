"""``secondbrain mail``: take the mail of IMAP folders (over TLS) or of a Maildir (see :mod:`connectors.mail`)."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
import threading
from pathlib import Path
from typing import Any

from app.cli.client import http_client, http_error, unreachable
from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, say, settings_for
from app.cli.periodic import state_file
from connectors.mail import MailError, default_state_path, take_mail
from connectors.periodic import repeat, stop_on_signals
from connectors.sender import FINAL, Progress, Sender, Tally, counted, print_reasons


def account_from(args: argparse.Namespace, settings: Any) -> Any:
    """The IMAP account the options and SB_MAIL_* name, or None for Maildir only; ValueError says what is
    missing."""
    from connectors.mail import Account

    host = args.mail_host or settings.mail_host
    if not host:
        return None
    user = args.user or settings.mail_user
    if not user:
        raise ValueError("name the mail account's user with --user (SB_MAIL_USER)")
    password = None
    if args.password_file:
        try:
            password = Path(args.password_file).expanduser().read_text().strip()
        except OSError as exc:
            raise ValueError(f"the password file cannot be read: {exc}") from None
    elif settings.mail_password is not None:
        password = settings.mail_password.get_secret_value()
    elif sys.stdin.isatty():
        password = getpass.getpass(f"password of {user} at {host}: ")
    if not password:
        raise ValueError("give the mail password in SB_MAIL_PASSWORD or a file with --password-file (never on the "
                         "command line, where other users see it)")
    folders = tuple(args.folder) if args.folder else tuple(
        f.strip() for f in settings.mail_folders.split(",") if f.strip())
    if args.move_to and args.delete_after:
        raise ValueError("choose --move-to or --delete-after, not both")
    return Account(host=host, user=user, password=password, port=args.mail_port or settings.mail_port,
                   security=args.security or settings.mail_security, ca_file=args.ca_file or settings.mail_ca_file
                   or None, folders=folders or ("secondbrain",), move_to=args.move_to or None,
                   delete_after=bool(args.delete_after))


def cmd_mail(args: argparse.Namespace) -> int:
    """Take the new mail once (or every ``--every`` seconds), wait until it is searchable, sum up."""
    import httpx

    settings = settings_for(args)
    try:
        account = account_from(args, settings)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    maildir_arg = args.maildir or settings.mail_maildir
    maildir = Path(maildir_arg).expanduser() if maildir_arg else None
    if account is None and maildir is None:
        print("error: name an IMAP server with --host (SB_MAIL_HOST) or a Maildir with --maildir (SB_MAIL_MAILDIR)",
              file=sys.stderr)
        return EXIT_USAGE
    tally = Tally(0)
    progress = Progress(tally, quiet=args.json)
    notes: list[str] = []
    skipped: list[tuple[str, str]] = []
    messages = 0
    sender: Sender | None = None
    try:
        with http_client(args) as client:
            me = client.get("/v1/me")
            if me.status_code != 200:
                return http_error(me)
            state = state_file(args, default_state_path)
            stop_on_signals()
            retry_now = bool(args.retry_refused)  # the first pass only; later ones follow each message's turn

            def run_pass() -> None:
                nonlocal notes, skipped, messages, sender, retry_now
                notes, skipped, messages, sender = take_mail(client, state, account, maildir, tally=tally,
                                                             progress=progress, retry_refused=retry_now)
                retry_now = False
                if args.every:
                    for note in notes:
                        say(note)
                    if messages:
                        say(f"took {counted(messages, 'message')}")

            def failed(exc: Exception) -> None:
                nonlocal notes, skipped, messages, sender
                progress.done()
                if args.json:
                    print(json.dumps({"error": str(exc), **_counts(tally)}))
                print(f"error: {exc}", file=sys.stderr)
                notes, skipped, messages, sender = [], [], 0, None

            if args.every:  # until Ctrl-C or SIGTERM; a pass that fails is said and the next one goes on
                repeat(run_pass, args.every, threading.Event(), on_error=failed, errors=(MailError,))
            else:
                try:
                    run_pass()
                except MailError as exc:
                    failed(exc)
                    return EXIT_USAGE
            finished = True if args.no_wait or sender is None else sender.wait(args.timeout)
            progress.show(force=True)
    except httpx.TransportError as exc:
        progress.done()
        return unreachable(args, exc)
    except KeyboardInterrupt:
        progress.done()
        say("stopped; the next run goes on from there (nothing taken is sent twice)")
        return 130
    progress.done()
    return _summary(tally, notes, skipped, messages, args, finished=finished)


def _counts(tally: Tally) -> dict[str, Any]:
    return {"imported": tally.count("succeeded", "queued", "running", earlier=False),
            "already_imported": tally.count(*FINAL, "queued", "running", earlier=True),
            "duplicates": tally.count("duplicate", earlier=False),
            "failed": [{"label": i.label, "reason": i.reason or "no reason given"} for i in tally.items
                       if i.status in ("failed", "refused")]}


def _summary(tally: Tally, notes: list[str], skipped: list[tuple[str, str]], messages: int,
             args: argparse.Namespace, *, finished: bool) -> int:
    counts = _counts(tally)
    pending = [i for i in tally.items if i.status not in (*FINAL, "refused")]
    if args.json:
        print(json.dumps({"messages": messages, **counts, "pending": len(pending), "notes": notes,
                          "skipped": [{"label": lb, "reason": r} for lb, r in skipped]}))
    else:
        for note in notes:
            print(note)
        print(f"{counted(messages, 'message')} read: {counted(counts['imported'], 'capture')} added (messages' "
              "texts and attachments)")
        if counts["already_imported"] or counts["duplicates"]:
            print(f"  {counts['already_imported'] + counts['duplicates']} already in your memory (nothing added)")
        if pending:
            state = "still being processed" if args.no_wait or not finished else "not finished"
            print(f"  {len(pending)} {state} (they go on; `secondbrain sources` shows them)")
        print_reasons(f"{len(skipped)} skipped", skipped)
        print_reasons(f"{len(counts['failed'])} failed",
                       [(f["label"], f["reason"]) for f in counts["failed"]])
    return EXIT_FAILED if counts["failed"] else EXIT_OK


def add_parser(sub: Any, client_opts: Any) -> None:
    """The ``mail`` command's arguments (each defaults to its SB_MAIL_* setting)."""
    ma = sub.add_parser("mail", help="take mail from IMAP folders (over TLS) or a Maildir: each message once",
                        description="Take the new messages of IMAP folders or of a local Maildir: the text, the "
                                    "attachments (through the extractors), dated by their Date header, grouped by "
                                    "thread.  What was taken is remembered; run it again (or let `secondbrain up` "
                                    "do it with SB_MAIL_HOST) to take what came since.")
    # mail_host, mail_port: not the server's host and port, which settings_for reads from the options
    ma.add_argument("--host", dest="mail_host", metavar="HOST", help="the IMAP server (SB_MAIL_HOST)")
    ma.add_argument("--port", dest="mail_port", metavar="PORT", type=int,
                    help="its port (SB_MAIL_PORT; default 993, or 143 with starttls)")
    ma.add_argument("--security", choices=("imaps", "starttls"), help="TLS from the start (imaps, default) or "
                                                                      "upgraded with STARTTLS (SB_MAIL_SECURITY)")
    ma.add_argument("--ca-file", help="trust this CA or self-signed certificate (PEM) for the server "
                                      "(SB_MAIL_CA_FILE; default: the system's CAs)")
    ma.add_argument("--user", help="the account's user (SB_MAIL_USER)")
    ma.add_argument("--password-file", help="a file holding the password (else SB_MAIL_PASSWORD, else asked)")
    ma.add_argument("--folder", action="append", help="an IMAP folder to take mail from (repeat for several; "
                                                      "SB_MAIL_FOLDERS; default: secondbrain)")
    ma.add_argument("--move-to", metavar="FOLDER", help="once a message is taken, move it to this IMAP folder "
                                                        "(made when missing)")
    ma.add_argument("--delete-after", action="store_true", help="once a message is taken, delete it from the "
                                                                "server (forward and forget)")
    ma.add_argument("--maildir", help="a local Maildir to take mail from (SB_MAIL_MAILDIR)")
    ma.add_argument("--state", metavar="FILE", help="where to keep what was taken (default: under "
                                                    "~/.local/state/secondbrain)")
    ma.add_argument("--retry-refused", action="store_true",
                    help="send the messages a part of which was refused before again now (later runs do it "
                         "anyway, 15 minutes after a refusal and then less often)")
    ma.add_argument("--every", type=float, default=None, metavar="SECONDS",
                    help="keep going: look for new mail every SECONDS until Ctrl-C")
    ma.add_argument("--no-wait", action="store_true", help="return once everything is sent")
    ma.add_argument("--timeout", type=float, default=None, help="stop waiting after this many seconds")
    client_opts(ma)
    ma.set_defaults(func=cmd_mail)


