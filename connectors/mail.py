"""Mail into secondbrain: the messages of IMAP folders (over TLS) or of a local Maildir, each sent once.

Each message becomes captures (:mod:`services.importers.mail`) sent through the import batch route, like
``secondbrain import``: keys, limits and provenance are the gateway's, and every capture carries a key of
the message and its content, so a message sent again adds nothing.  What was taken is kept in a small state
file: per IMAP folder its UIDVALIDITY and the last UID sent (a changed UIDVALIDITY means the server
renumbered the folder: it is read again and the keys keep it from being added twice), per Maildir the names
of the messages sent.  The state moves on only once the gateway has answered for a message, so a run stopped
by a lost server, a lost connection or Ctrl-C goes on from there the next time.  A message the gateway refused
a part of (an attachment over the upload limit, a server that failed) is remembered apart and sent again by
later runs, 15 minutes after the refusal and then four times as long after each new one (at most a day), or at
once with ``--retry-refused``: raising the limit then loses nothing, and the parts already kept add nothing.
"""

from __future__ import annotations

import contextlib
import imaplib
import mailbox
import re
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from connectors.periodic import Background
from connectors.sender import Progress, Sender, Tally, api_client, counted, say
from connectors.state import read_state, state_path, write_state
from services.importers import mail as mail_format
from services.importers.model import Skipped

MESSAGES_PER_BATCH = 20  # the state is saved after each batch the gateway answered
RETRY_FIRST_S = 15 * 60  # a refused message is sent again this long after the refusal, then 4x longer each time
RETRY_MAX_S = 24 * 3600
MAX_THREADS_KEPT = 20_000
TIMEOUT_S = 30.0


class MailError(Exception):
    """The mail could not be read (server unreachable, login refused, no such folder): a sentence."""


@dataclass(frozen=True)
class Account:
    """An IMAP account reached over TLS: ``imaps`` (TLS from the first byte) or ``starttls``."""

    host: str
    user: str
    password: str
    port: int | None = None
    security: str = "imaps"
    ca_file: str | None = None  # trust this CA (or self-signed certificate) instead of the system's
    folders: tuple[str, ...] = ("secondbrain",)
    move_to: str | None = None  # once taken, a message is moved to this folder...
    delete_after: bool = False  # ...or deleted (forward and forget)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port or (993 if self.security == 'imaps' else 143)}"

    def folder_key(self, folder: str) -> str:
        return f"{self.security}://{self.user}@{self.address}/{folder}"


@dataclass
class Report:
    """What one run took."""

    messages: int = 0  # read from the folders this run
    skipped: list[tuple[str, str]] = field(default_factory=list)
    kept: int = 0  # not moved or deleted: some of it was skipped or refused
    refused: int = 0  # messages a part of which the gateway refused this run: sent again by a later run
    notes: list[str] = field(default_factory=list)  # what the person should know (a renumbered folder)


class State:
    """The state file: per folder what was taken, and the threads' names for later replies."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = {"version": 1, "folders": {}, "maildirs": {}, "threads": {}}
        try:
            loaded = read_state(path)
        except (OSError, ValueError) as exc:
            raise MailError(f"the mail state file {path} cannot be read ({exc}); move it away to start "
                            "again (messages already taken are not added twice)") from None
        if isinstance(loaded, dict):
            for key in ("folders", "maildirs", "threads"):
                if isinstance(loaded.get(key), dict):
                    self.data[key] = loaded[key]

    @property
    def folders(self) -> dict[str, Any]:
        return self.data["folders"]

    @property
    def maildirs(self) -> dict[str, Any]:
        return self.data["maildirs"]

    @property
    def threads(self) -> dict[str, str]:
        return self.data["threads"]

    def remember_thread(self, message_id: str, name: str) -> None:
        threads = self.threads
        threads.pop(message_id, None)
        threads[message_id] = name
        while len(threads) > MAX_THREADS_KEPT:
            threads.pop(next(iter(threads)))

    def save(self) -> None:
        write_state(self.path, self.data)


def default_state_path(url: str, user_hint: str) -> Path:
    """Where ``secondbrain mail`` keeps its record: one file per server and key."""
    return state_path("mail", url, user_hint)


# Sends a batch of captures and returns once the gateway answered for each (the import's Sender): the status of
# each, in order ("refused" when the gateway refused it).
Send = Callable[[list[Any]], list[str]]
Message = tuple[str, bytes, datetime | None]  # where it is (a UID, a Maildir name), its bytes, when it came


_MAILDIR_NAME = re.compile(r"(\d+)\.(?:.*?M(\d+))?(?:.*?Q(\d+))?")


def delivered(name: str) -> tuple[int, int, int, str]:
    """A Maildir file name's place in delivery order: ``<seconds>.M<microseconds>P<pid>Q<count>.<host>`` (what
    Python, Dovecot and most delivery agents write) by its numbers, since the microseconds are not zero-padded
    (``M98765`` comes after ``M123456`` as text); a name in another form by its leading seconds, then as text."""
    m = _MAILDIR_NAME.match(name)
    if m is None:
        return (0, 0, 0, name)
    return (int(m[1]), int(m[2] or 0), int(m[3] or 0), name)


class MailSync:
    """Takes the mail not taken yet and sends it with ``send``."""

    def __init__(self, state: State, send: Send, *, say: Callable[[str], None], retry_refused: bool = False,
                 clock: Callable[[], float] = time.time) -> None:
        self.state = state
        self.send = send
        self.say = say
        self.retry_refused = retry_refused  # send every refused message again now, whatever its next turn
        self.clock = clock

    # --- IMAP
    def imap(self, account: Account) -> Report:
        report = Report()
        conn = connect(account)
        try:
            for folder in account.folders:
                self._folder(conn, account, folder, report)
        except (imaplib.IMAP4.abort, OSError) as exc:
            raise MailError(f"the connection to the mail server {account.address} was lost ({_why(exc)}); what "
                            "was taken so far is kept, and the next run goes on from there") from None
        except imaplib.IMAP4.error as exc:  # a command the server refused (after an abort, which is one too)
            raise MailError(f"the mail server {account.address} refused a command ({_why(exc)}); what was taken so "
                            "far is kept, and the next run goes on from there") from None
        finally:
            with contextlib.suppress(Exception):
                conn.logout()
        return report

    def _folder(self, conn: imaplib.IMAP4, account: Account, folder: str, report: Report) -> None:
        tidy = bool(account.move_to or account.delete_after)
        typ, data = conn.select(_quote(folder), readonly=not tidy)
        if typ != "OK":
            raise MailError(f"there is no folder {folder!r} on {account.address} ({_text(data)}); create it (and a "
                            "rule that files or forwards mail there), or name another with --folder")
        validity = _number(conn.response("UIDVALIDITY")[1])
        key = account.folder_key(folder)
        mark = self.state.folders.get(key) or {}
        last = int(mark.get("last_uid") or 0)
        again: dict[str, Any] = dict(mark.get("again") or {})  # UID -> its refusals and next turn
        if mark and validity is not None and mark.get("uidvalidity") != validity:
            report.notes.append(f"{folder}: the server renumbered this folder (its UIDVALIDITY changed); it is read "
                                "again, and messages already taken are not added twice")
            last, again = 0, {}
        typ, data = conn.uid("SEARCH", f"UID {last + 1}:*")
        if typ != "OK":
            raise MailError(f"the server did not list the messages of {folder!r}: {_text(data)}")
        # "n:*" names the last message even when its UID is below n: keep only the new ones.
        uids = sorted(u for u in (int(x) for x in b" ".join(d for d in data if d).split()) if u > last)
        uids = sorted(int(uid) for uid in self._due(again)) + uids  # refused before, due again: first
        for start in range(0, len(uids), MESSAGES_PER_BATCH):
            chunk = uids[start:start + MESSAGES_PER_BATCH]
            messages: list[Message] = []
            for uid in chunk:
                raw, received = _fetch(conn, uid)
                if raw is not None:
                    messages.append((str(uid), raw, received))
            taken, refused = self._send(messages, origin=f"{key} ", report=report)
            if tidy and taken:
                _tidy(conn, account, taken)
            self._remember([str(uid) for uid in chunk], refused, again)
            last = max(last, *chunk)
            self.state.folders[key] = {"uidvalidity": validity, "last_uid": last, "again": again}
            self.state.save()
        if not uids and validity is not None:
            self.state.folders[key] = {"uidvalidity": validity, "last_uid": last, "again": again}
            self.state.save()

    # --- Maildir
    def maildir(self, path: Path) -> Report:
        report = Report()
        if not (path / "cur").is_dir() or not (path / "new").is_dir():
            raise MailError(f"{path} is not a Maildir (it has no cur and new folders)")
        box = mailbox.Maildir(path, factory=None, create=False)
        key = str(path.absolute())
        mark = self.state.maildirs.get(key) or {}
        seen = set(mark.get("seen") or [])
        again: dict[str, Any] = dict(mark.get("again") or {})  # name -> its refusals and next turn
        names = self._due(again) + sorted((k for k in box.iterkeys() if k not in seen and k not in again),
                                          key=delivered)
        for start in range(0, len(names), MESSAGES_PER_BATCH):
            chunk = names[start:start + MESSAGES_PER_BATCH]
            messages: list[Message] = []
            for name in chunk:
                try:
                    raw = box.get_bytes(name)
                    received = datetime.fromtimestamp(box.get_message(name).get_date(), UTC)
                except (KeyError, OSError):  # taken away meanwhile (another mail program)
                    continue
                messages.append((name, raw, received))
            _taken, refused = self._send(messages, origin=f"maildir:{key} ", report=report)
            self._remember(chunk, refused, again)
            seen.update(name for name in chunk if name not in again)
            self.state.maildirs[key] = {"seen": sorted(seen), "again": again}
            self.state.save()
        return report

    # --- refused messages, sent again later
    def _due(self, again: dict[str, Any]) -> list[str]:
        """The refused messages whose next turn has come (all of them with ``retry_refused``)."""
        now = self.clock()
        return sorted(place for place, turn in again.items()
                      if self.retry_refused or float(turn.get("next") or 0) <= now)

    def _remember(self, places: list[str], refused: list[str], again: dict[str, Any]) -> None:
        """After a batch: a refused message gets its next turn, later each time; any other (taken, or gone from
        the folder) is forgotten."""
        for place in places:
            if place in refused:
                tries = int((again.get(place) or {}).get("tries") or 0) + 1
                wait = min(RETRY_MAX_S, RETRY_FIRST_S * 4 ** (tries - 1))
                again[place] = {"tries": tries, "next": self.clock() + wait}
            else:
                again.pop(place, None)

    # --- both
    def _send(self, messages: list[Message], *, origin: str,
              report: Report) -> tuple[list[str], list[str]]:
        """Send the messages' captures; the places of the messages taken whole (nothing skipped or refused) and
        of those a part of which the gateway refused."""
        captures: list[Any] = []
        owner: list[int] = []  # the message each capture comes from
        whole = [True] * len(messages)
        refused = [False] * len(messages)
        for n, (place, raw, received) in enumerate(messages):
            parsed = mail_format.parse(raw, origin=(origin + place).strip(), threads=self.state.threads,
                                       received=received)
            self.state.remember_thread(parsed.message_id, _thread_of(parsed))
            report.messages += 1
            for result in parsed.results:
                if isinstance(result, Skipped):
                    report.skipped.append((result.label, result.reason))
                    whole[n] = False
                else:
                    captures.append(result)
                    owner.append(n)
        statuses = self.send(captures) if captures else []
        for n, status in zip(owner, statuses, strict=False):
            if status == "refused":
                whole[n], refused[n] = False, True
        report.kept += whole.count(False)
        report.refused += refused.count(True)
        places = [place for place, _raw, _when in messages]
        return ([p for p, ok in zip(places, whole, strict=True) if ok],
                [p for p, no in zip(places, refused, strict=True) if no])


def take_mail(client: Any, state_path: Path, account: Any, maildir: Path | None, *, tally: Tally,
              progress: Progress, say_line: Any = say,
              retry_refused: bool = False) -> tuple[list[str], list[tuple[str, str]], int, Sender]:
    """One pass over the account's folders and the Maildir; (notes, skipped, messages read, the sender).
    ``retry_refused`` sends the messages refused before again now, not at their next turn.
    Raises MailError with a sentence; what was sent before stays sent and recorded."""
    sender = Sender(client, tally, progress, "mail", batch_items=100)
    # The state moves on only once the gateway answered for what was sent.
    syncer = MailSync(State(state_path), sender.send_all, say=say_line, retry_refused=retry_refused)
    notes: list[str] = []
    skipped: list[tuple[str, str]] = []
    messages = 0
    for run in ((lambda: syncer.imap(account)) if account else None,
                (lambda: syncer.maildir(maildir)) if maildir else None):
        if run is None:
            continue
        report = run()
        notes += report.notes
        if report.kept and account is not None and (account.move_to or account.delete_after):
            notes.append(f"{counted(report.kept, 'message')} stayed in the folder: some of it was skipped or refused "
                         "(see below)")
        if report.refused:
            notes.append(f"{counted(report.refused, 'message')} had a part refused (see below): later runs send "
                         f"{'it' if report.refused == 1 else 'them'} again, in 15 minutes and then less often; "
                         "`secondbrain mail --retry-refused` sends them at once (after raising a limit, say)")
        skipped += report.skipped
        messages += report.messages
    return notes, skipped, messages, sender


def background_pass(url: str, key_file: Path, settings: Any, state: Path) -> tuple[int, list[str]]:
    """One pass for ``up`` (SB_MAIL_*): (messages taken, notes).  Raises MailError or OSError."""
    account = None
    if settings.mail_host:
        account = Account(host=settings.mail_host, user=settings.mail_user,
                          password=settings.mail_password.get_secret_value() if settings.mail_password else "",
                          port=settings.mail_port, security=settings.mail_security,
                          ca_file=settings.mail_ca_file or None,
                          folders=tuple(f.strip() for f in settings.mail_folders.split(",") if f.strip()))
    maildir = Path(settings.mail_maildir).expanduser() if settings.mail_maildir else None
    with api_client(url, key_file) as client:
        tally = Tally(0)
        notes, _skipped, messages, _sender = take_mail(client, state, account, maildir, tally=tally,
                                                       progress=Progress(tally, quiet=True))
    return messages, notes


def _thread_of(parsed: mail_format.Parsed) -> str:
    for result in parsed.results:
        thread = getattr(result, "attributes", {}).get("import.thread")
        if thread:
            return str(thread)
    return mail_format.thread_subject(parsed.subject)


def _tidy(conn: imaplib.IMAP4, account: Account, uids: list[str]) -> None:
    """Move (or delete) the messages taken whole: the folder holds only what is still to take."""
    uid_set = ",".join(uids)
    caps = {c.upper() for c in (conn.capabilities or ())}
    if account.move_to:
        conn.create(_quote(account.move_to))  # NO when it exists already
        if "MOVE" in caps:
            typ, data = conn.uid("MOVE", uid_set, _quote(account.move_to))
            if typ != "OK":
                raise MailError(f"the server did not move the messages to {account.move_to!r}: {_text(data)}")
            return
        typ, data = conn.uid("COPY", uid_set, _quote(account.move_to))
        if typ != "OK":
            raise MailError(f"the server did not copy the messages to {account.move_to!r}: {_text(data)}")
    conn.uid("STORE", uid_set, "+FLAGS.SILENT", r"(\Deleted)")
    # UID EXPUNGE removes only these; a plain EXPUNGE would also remove what the person marked deleted.
    if "UIDPLUS" in caps:
        conn.uid("EXPUNGE", uid_set)
    else:
        conn.expunge()


def connect(account: Account) -> imaplib.IMAP4:
    """Log in over TLS, the certificate checked (against ``ca_file`` when given); MailError says why not."""
    try:
        context = ssl.create_default_context(cafile=account.ca_file or None)
    except (OSError, ssl.SSLError) as exc:
        raise MailError(f"the CA file {account.ca_file} cannot be read ({_why(exc)})") from None
    host, port = account.host, account.port
    conn: imaplib.IMAP4
    try:
        if account.security == "imaps":
            conn = imaplib.IMAP4_SSL(host, port or 993, ssl_context=context, timeout=TIMEOUT_S)
        else:
            conn = imaplib.IMAP4(host, port or 143, timeout=TIMEOUT_S)
            try:
                conn.starttls(ssl_context=context)
            except imaplib.IMAP4.error as exc:
                conn.shutdown()
                raise MailError(f"the mail server {account.address} does not offer STARTTLS ({_why(exc)}); mail is "
                                "only read over TLS: try --security imaps (port 993)") from None
    except ssl.SSLCertVerificationError as exc:
        raise MailError(f"the mail server {account.address} showed a certificate that is not trusted "
                        f"({exc.verify_message}); if it is your own server with its own CA or a self-signed "
                        "certificate, give that certificate with --ca-file (SB_MAIL_CA_FILE)") from None
    except ssl.SSLError as exc:
        raise MailError(f"no TLS connection with the mail server {account.address} ({_why(exc)}); check the port "
                        "and --security (imaps: 993, starttls: 143)") from None
    except (OSError, imaplib.IMAP4.error) as exc:
        raise MailError(f"the mail server {account.address} is not reachable ({_why(exc)}); nothing was "
                        "taken, and the next run goes on from where the last one stopped") from None
    try:
        conn.login(account.user, account.password)
    except imaplib.IMAP4.error as exc:
        with contextlib.suppress(Exception):
            conn.shutdown()
        raise MailError(f"the mail server {account.address} refused the login of {account.user!r} ({_why(exc)}); "
                        "check the user and password (SB_MAIL_USER, SB_MAIL_PASSWORD)") from None
    except (imaplib.IMAP4.abort, OSError) as exc:
        raise MailError(f"the mail server {account.address} closed the connection at login ({_why(exc)})") from None
    return conn


def _fetch(conn: imaplib.IMAP4, uid: int) -> tuple[bytes | None, datetime | None]:
    """A message's bytes (``BODY.PEEK[]``: read without marking it read) and when the server received it."""
    typ, data = conn.uid("FETCH", str(uid), "(INTERNALDATE BODY.PEEK[])")
    if typ != "OK":
        raise MailError(f"the server did not give message {uid}: {_text(data)}")
    for item in data:
        if isinstance(item, tuple) and len(item) == 2:
            head, raw = item
            received = None
            stamp = imaplib.Internaldate2tuple(head)
            if stamp is not None:
                received = datetime.fromtimestamp(time.mktime(stamp), UTC)
            return bytes(raw), received
    return None, None  # expunged meanwhile


def _quote(folder: str) -> str:
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _number(data: list[Any] | None) -> int | None:
    for item in data or []:
        if isinstance(item, bytes) and item.strip().isdigit():
            return int(item)
    return None


def _text(data: Any) -> str:
    parts = [d.decode("utf-8", "replace") if isinstance(d, bytes) else str(d) for d in (data or []) if d]
    return " ".join(parts)[:200] or "no reason given"


def _why(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, socket.timeout | TimeoutError):
        text = "no answer in time"
    return re.sub(r"\s+", " ", text)[:200]


class Mailer(Background):
    """SB_MAIL_*: new mail taken every SB_MAIL_INTERVAL_S, on a thread of its own, as a client of this server."""

    def __init__(self) -> None:
        super().__init__("mail")

    def start(self, url: str, key_file: Path, settings: Any, state: Path) -> None:
        told = ""  # a lasting problem (the server down) is said once, and when it is over

        def run_pass() -> None:
            nonlocal told
            messages, notes = background_pass(url, key_file, settings, state)
            if told:
                say("mail: reading mail again")
            told = ""
            for note in notes:
                say(f"mail: {note}")
            if messages:
                say(f"mail: took {messages} message{'s' if messages != 1 else ''}")

        def failed(exc: Exception) -> None:  # the person sees why no mail comes
            nonlocal told
            if isinstance(exc, MailError):
                if str(exc) != told:
                    say(f"mail: {exc}; trying again every {settings.mail_interval_s:g} s")
                told = str(exc)
            else:
                if repr(exc) != told:
                    say(f"mail: {type(exc).__name__}: {exc}")
                told = repr(exc)

        where = ", ".join(x for x in (
            f"{settings.mail_user}@{settings.mail_host} ({settings.mail_folders})" if settings.mail_host else "",
            settings.mail_maildir) if x)
        say(f"  taking mail from {where} every {settings.mail_interval_s:g} s (SB_MAIL_*)")
        self.run_every(settings.mail_interval_s, run_pass, failed)
