"""Mail into a running ``secondbrain up`` from a real IMAP server (Dovecot on loopback, TLS with a certificate
made by the test) and from a Maildir, with the real CLI: each message searchable and dated by its Date header,
grouped by thread, its PDF read by the extractors; the same message twice is one source; a stopped server is
reported and the next run takes only what is new; a renumbered folder adds nothing; ``up`` takes mail itself
with SB_MAIL_*."""

from __future__ import annotations

import json
import mailbox
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fpdf import FPDF

from devtools.processes import cli_env
from tests.e2e.harness import REPO, Service, readable_tmp, run_cli, running_up
from tests.e2e.mailserver import USER, Dovecot

pytestmark = pytest.mark.e2e

# fixed date: each message's own Date header, in the past; read as written
LEASE_DATE = datetime(2024, 2, 12, 8, 30, tzinfo=UTC)
REPLY_DATE = datetime(2024, 2, 13, 17, 5, tzinfo=UTC)
HIKE_DATE = datetime(2023, 8, 3, 6, 15, tzinfo=UTC)
DUPLICATE_DATE = datetime(2024, 1, 9, 12, 0, tzinfo=UTC)
LATE_DATE = datetime(2024, 3, 1, 10, 0, tzinfo=UTC)
MAILDIR_DATE = datetime(2022, 11, 20, 19, 45, tzinfo=UTC)
BACKGROUND_DATE = datetime(2024, 4, 2, 7, 0, tzinfo=UTC)
UPLOAD_LIMIT = 1024 * 1024  # SB_MAX_UPLOAD_BYTES of the service under test: one file at most 1 MiB


def deposit_pdf() -> bytes:
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(0, 6, "Tenancy deposit certificate. The deposit of 2480 euros for the Harbour Street flat is "
                         "protected by the Coastal Deposit Scheme under reference CDS-77120.")
    return bytes(pdf.output())


def message(subject: str, when: datetime, mid: str, *, text: str | None = None, html: str | None = None,
            reply_to: str | None = None, attachments: tuple[tuple[str, bytes, str], ...] = ()) -> bytes:
    msg = EmailMessage()
    msg["From"] = "Maria Lopez <maria@example.org>"
    msg["To"] = "me@example.org"
    msg["Subject"] = subject
    msg["Date"] = format_datetime(when)
    msg["Message-ID"] = mid
    if reply_to:
        msg["In-Reply-To"] = reply_to
        msg["References"] = reply_to
    if text is not None:
        msg.set_content(text)
    if html is not None:
        if text is None:
            msg.set_content(html, subtype="html")
        else:
            msg.add_alternative(html, subtype="html")
    for name, data, ctype in attachments:
        main, sub = ctype.split("/")
        msg.add_attachment(data, maintype=main, subtype=sub, filename=name)
    return bytes(msg)


# fixed date: each message's own Date header, in the past; read as written
LEASE = message("Lease renewal for the Harbour Street flat", LEASE_DATE, "<lease-1@example.org>",
                text="The landlord agrees to renew the lease for another year at a monthly rent of 1240 euros.\n",
                attachments=(("deposit.pdf", deposit_pdf(), "application/pdf"),
                             ("photos.zip", b"PK\x05\x06" + b"\x00" * 18, "application/zip")))
REPLY = message("Re: Lease renewal for the Harbour Street flat", REPLY_DATE, "<lease-2@example.org>",
                text="Signed copy attached tomorrow; the key handover is at the notary office on Thursday.\n",
                reply_to="<lease-1@example.org>")
HIKE = message("Glacier walk", HIKE_DATE, "<hike@example.org>",
               html="<html><body><p>The <b>glacier hike</b> meets at the Solheimajokull car park at "
                    "07:45; bring crampons and a thermos.</p></body></html>")
DUPLICATE = message("Dentist appointment", DUPLICATE_DATE, "<dentist@example.org>",
                    text="The dentist moved the cleaning appointment to the morning of the fourteenth.\n")
LATE = message("Bicycle repair", LATE_DATE, "<bike@example.org>",
               text="The bicycle shop replaced the rear derailleur cable; the bill was 38 euros.\n")
MAILDIR_MSG = message("Choir rehearsal", MAILDIR_DATE, "<choir@example.org>",
                      text="Choir rehearsal of the Faure requiem moves to the crypt of Saint Anne.\n")
MOVING = message("Moving boxes", datetime(2024, 5, 6, 9, 0, tzinfo=UTC), "<boxes@example.org>",
                 text="The removal company delivers forty flat-packed moving boxes on Saturday morning.\n")
SCANNER = message("Scanner drivers", datetime(2024, 5, 7, 9, 0, tzinfo=UTC), "<scanner@example.org>",
                  text="The scanner drivers are in the attached archive.\n",
                  attachments=(("drivers.zip", b"PK\x05\x06" + b"\x00" * 18, "application/zip"),))
RECEIPT = message("Plumber receipt", datetime(2024, 5, 8, 9, 0, tzinfo=UTC), "<plumber@example.org>",
                  text="The plumber fixed the leaking kitchen siphon for 95 euros.\n")
BACKGROUND = message("Boiler service", BACKGROUND_DATE, "<boiler@example.org>",
                     text="The boiler service engineer comes between eight and noon; the pressure valve is due.\n")


@pytest.fixture(scope="module")
def dovecot() -> Iterator[Dovecot]:
    with readable_tmp("sb-mail-") as root:
        server = Dovecot(root).start()
        yield server
        server.stop()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, dovecot: Dovecot) -> Iterator[Service]:
    # `up` takes mail from its own folder of the same account in the background (SB_MAIL_*).
    env = {"SB_MAIL_HOST": "127.0.0.1", "SB_MAIL_PORT": str(dovecot.imaps_port), "SB_MAIL_USER": USER,
           "SB_MAIL_PASSWORD": dovecot.password, "SB_MAIL_CA_FILE": str(dovecot.ca_file),
           "SB_MAIL_FOLDERS": "background", "SB_MAIL_INTERVAL_S": "5", "SB_MAX_UPLOAD_BYTES": str(UPLOAD_LIMIT)}
    with running_up(tmp_path_factory, "sb-mail-up-", env, "--no-llm") as svc:
        yield svc


@pytest.fixture(scope="module")
def client(service: Service) -> Iterator[httpx.Client]:
    with service.client(timeout=120) as c:
        yield c


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mailstate") / "mail.json"


def run_mail(service: Service, dovecot: Dovecot | None, state: Path, *args: str,
             folder: str = "secondbrain") -> tuple[int, dict[str, Any], str]:
    server = [] if dovecot is None else [
        "--host", "127.0.0.1", "--port", str(dovecot.imaps_port), "--user", USER,
        "--password-file", str(dovecot.password_file), "--ca-file", str(dovecot.ca_file), "--folder", folder]
    done = run_cli(["mail", *server, "--state", str(state), "--json", *args], {"SB_URL": service.url}, timeout=300)
    lines = [ln for ln in done.stdout.splitlines() if ln.strip()]
    return done.returncode, (json.loads(lines[-1]) if lines else {}), done.stderr


def hits(client: httpx.Client, query: str) -> list[dict[str, Any]]:
    r = client.get("/v1/search", params={"q": query, "k": 5})
    assert r.status_code == 200, r.text
    return list(r.json()["hits"])


def top(client: httpx.Client, query: str) -> dict[str, Any]:
    found = hits(client, query)
    assert found, query
    return found[0]


def at(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def mail_sources(client: httpx.Client) -> list[dict[str, Any]]:
    rows = client.get("/v1/sources", params={"limit": 500}).json()["sources"]
    return [r for r in rows if str(r.get("source_uri", "")).startswith("import:mail:")]


@pytest.fixture(scope="module")
def first_run(service: Service, dovecot: Dovecot, state: Path) -> dict[str, Any]:
    for raw in (LEASE, REPLY, HIKE, DUPLICATE, DUPLICATE):  # the dentist's message arrives twice
        dovecot.append("secondbrain", raw)
    rc, summary, err = run_mail(service, dovecot, state)
    assert rc == 0, (summary, err)
    return summary


def test_each_message_is_searchable_dated_by_its_date_header_with_its_thread(client: httpx.Client,
                                                                            first_run: dict[str, Any]) -> None:
    assert first_run["messages"] == 5 and first_run["pending"] == 0, first_run
    lease = top(client, "monthly rent of 1240 euros lease renewal")
    assert lease["title"] == "Lease renewal for the Harbour Street flat"
    assert at(lease["captured_at"]) == LEASE_DATE
    assert "maria@example.org" in lease["text"] or "1240 euros" in lease["text"]
    reply = top(client, "key handover at the notary office")
    # The reply is filed under its thread: the thread's name, then its own subject.
    assert reply["title"] == "Lease renewal for the Harbour Street flat"
    assert reply["heading_path"][:2] == ["Lease renewal for the Harbour Street flat",
                                         "Re: Lease renewal for the Harbour Street flat"]
    assert at(reply["captured_at"]) == REPLY_DATE


def test_the_pdf_attachment_goes_through_the_extractors(client: httpx.Client, first_run: dict[str, Any]) -> None:
    deposit = top(client, "Coastal Deposit Scheme reference CDS-77120")
    assert deposit["modality"] == "pdf", deposit
    assert deposit["title"] == "Lease renewal for the Harbour Street flat (deposit.pdf)"
    assert at(deposit["captured_at"]) == LEASE_DATE
    # An attachment no extractor reads is left out with the reason.
    assert [s["label"] for s in first_run["skipped"]] == [
        "Lease renewal for the Harbour Street flat (Maria Lopez <maria@example.org>): photos.zip"]
    assert "cannot read this attachment" in first_run["skipped"][0]["reason"]


def test_an_html_only_message_is_read_as_text(client: httpx.Client, first_run: dict[str, Any]) -> None:
    hike = top(client, "where does the glacier hike meet")
    assert hike["title"] == "Glacier walk" and "crampons" in hike["text"] and "<b>" not in hike["text"]
    assert at(hike["captured_at"]) == HIKE_DATE


def test_the_same_message_twice_is_one_source(client: httpx.Client, first_run: dict[str, Any]) -> None:
    dentist = [s for s in mail_sources(client) if s["source_uri"] == "import:mail:<dentist@example.org>"]
    assert len({s["source_uri"] for s in dentist}) == 1 and len(dentist) == 1, dentist
    assert first_run["already_imported"] + first_run["duplicates"] >= 1, first_run
    found = [h for h in hits(client, "dentist moved the cleaning appointment") if h["title"] == "Dentist appointment"]
    assert len(found) == 1


def test_a_stopped_server_is_reported_and_the_next_run_takes_only_what_is_new(
        service: Service, client: httpx.Client, dovecot: Dovecot, state: Path, first_run: dict[str, Any]) -> None:
    before = len(mail_sources(client))
    dovecot.stop()
    rc, summary, err = run_mail(service, dovecot, state)
    assert rc == 2, (summary, err)
    assert f"the mail server 127.0.0.1:{dovecot.imaps_port} is not reachable" in err, err
    assert "the next run goes on from where the last one stopped" in err
    dovecot.start()
    dovecot.append("secondbrain", LATE)
    rc, summary, err = run_mail(service, dovecot, state)
    assert rc == 0, (summary, err)
    assert (summary["messages"], summary["imported"], summary["already_imported"]) == (1, 1, 0), summary
    assert len(mail_sources(client)) == before + 1
    bike = top(client, "rear derailleur cable bill")
    assert bike["title"] == "Bicycle repair" and at(bike["captured_at"]) == LATE_DATE
    rc, summary, _err = run_mail(service, dovecot, state)
    assert (rc, summary["messages"]) == (0, 0), summary


def test_a_renumbered_folder_is_read_again_without_adding_anything(
        service: Service, client: httpx.Client, dovecot: Dovecot, state: Path, first_run: dict[str, Any]) -> None:
    before = len(mail_sources(client))
    record = json.loads(state.read_text())
    for mark in record["folders"].values():  # as after the server rebuilt its index: other UIDVALIDITY
        mark["uidvalidity"] = int(mark["uidvalidity"]) + 1
    state.write_text(json.dumps(record))
    rc, summary, err = run_mail(service, dovecot, state)
    assert rc == 0, (summary, err)
    assert summary["messages"] >= 5 and summary["imported"] == 0, summary
    assert any("renumbered" in n for n in summary["notes"]), summary
    assert len(mail_sources(client)) == before


def test_refusals_say_what_to_do(service: Service, dovecot: Dovecot, tmp_path: Path) -> None:
    wrong = tmp_path / "wrong"
    wrong.write_text("not the password\n")
    done = run_cli(["mail", "--host", "127.0.0.1", "--port", str(dovecot.imaps_port), "--user", USER,
                    "--password-file", str(wrong), "--ca-file", str(dovecot.ca_file), "--state",
                    str(tmp_path / "s.json")], {"SB_URL": service.url})
    assert done.returncode == 2 and f"refused the login of {USER!r}" in done.stderr, done.stderr
    done = run_cli(["mail", "--host", "127.0.0.1", "--port", str(dovecot.imaps_port), "--user", USER,
                    "--password-file", str(dovecot.password_file), "--state", str(tmp_path / "s.json")],
                   {"SB_URL": service.url})
    assert done.returncode == 2 and "not trusted" in done.stderr and "--ca-file" in done.stderr, done.stderr
    done = run_cli(["mail", "--host", "127.0.0.1", "--port", str(dovecot.imaps_port), "--user", USER,
                    "--password-file", str(dovecot.password_file), "--ca-file", str(dovecot.ca_file),
                    "--folder", "no-such-folder", "--state", str(tmp_path / "s.json")], {"SB_URL": service.url})
    assert done.returncode == 2 and "there is no folder 'no-such-folder'" in done.stderr, done.stderr


def test_starttls_reads_the_same_folder(service: Service, dovecot: Dovecot, tmp_path: Path,
                                        first_run: dict[str, Any]) -> None:
    done = run_cli(["mail", "--host", "127.0.0.1", "--port", str(dovecot.imap_port), "--security", "starttls",
                    "--user", USER, "--password-file", str(dovecot.password_file), "--ca-file", str(dovecot.ca_file),
                    "--folder", "secondbrain", "--state", str(tmp_path / "s.json"), "--json"],
                   {"SB_URL": service.url}, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["messages"] >= 5 and summary["imported"] == 0, summary  # all there already: nothing added


def folder_ids(dovecot: Dovecot, folder: str) -> list[str]:
    """The Message-IDs in a folder, as a mail program sees it."""
    conn = dovecot.connect()
    try:
        typ, _data = conn.select(f'"{folder}"', readonly=True)
        if typ != "OK":
            return []
        _typ, data = conn.search(None, "ALL")
        ids = []
        for num in (data[0] or b"").split():
            _typ, got = conn.fetch(num.decode(), "(BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
            ids.append(got[0][1].decode().split(":", 1)[1].strip())  # type: ignore[index,union-attr]
        return ids
    finally:
        conn.logout()


def test_taken_messages_are_moved_or_deleted_and_the_rest_stays(service: Service, client: httpx.Client,
                                                                dovecot: Dovecot, tmp_path: Path) -> None:
    dovecot.append("forward", MOVING)
    dovecot.append("forward", SCANNER)
    rc, summary, err = run_mail(service, dovecot, tmp_path / "s.json", "--move-to", "archive",
                                folder="forward")
    assert rc == 0, (summary, err)
    assert summary["messages"] == 2 and summary["imported"] == 2, summary  # the scanner text; its zip is skipped
    assert "1 message stayed in the folder: some of it was skipped or refused (see below)" in summary["notes"]
    assert folder_ids(dovecot, "forward") == ["<scanner@example.org>"]
    assert folder_ids(dovecot, "archive") == ["<boxes@example.org>"]
    assert top(client, "flat-packed moving boxes")["title"] == "Moving boxes"
    dovecot.append("forget", RECEIPT)
    rc, summary, err = run_mail(service, dovecot, tmp_path / "s.json", "--delete-after", folder="forget")
    assert rc == 0 and summary["imported"] == 1, (summary, err)
    assert folder_ids(dovecot, "forget") == []
    assert top(client, "leaking kitchen siphon")["title"] == "Plumber receipt"


def test_a_maildir_is_read_once(service: Service, client: httpx.Client, tmp_path: Path) -> None:
    box = mailbox.Maildir(tmp_path / "Maildir", create=True)
    box.add(MAILDIR_MSG)
    box.close()
    state = tmp_path / "maildir-state.json"
    rc, summary, err = run_mail(service, None, state, "--maildir", str(tmp_path / "Maildir"))
    assert rc == 0 and (summary["messages"], summary["imported"]) == (1, 1), (summary, err)
    choir = top(client, "rehearsal of the Faure requiem")
    assert choir["title"] == "Choir rehearsal" and at(choir["captured_at"]) == MAILDIR_DATE
    rc, summary, _err = run_mail(service, None, state, "--maildir", str(tmp_path / "Maildir"))
    assert (rc, summary["messages"]) == (0, 0), summary


def test_an_attachment_over_the_upload_limit_is_refused_and_the_message_text_is_kept(
        service: Service, client: httpx.Client, tmp_path: Path) -> None:
    # fixed date: each message's own Date header, in the past; read as written
    box = mailbox.Maildir(tmp_path / "Maildir", create=True)
    box.add(message("Roof survey", datetime(2024, 6, 3, 8, 0, tzinfo=UTC), "<survey@example.org>",
                    text="The roof survey found two cracked slates above the north gable.\n",
                    attachments=(("survey-scan.tif", b"II*\x00" + b"\x00" * (UPLOAD_LIMIT + 1), "image/tiff"),)))
    box.close()
    state = tmp_path / "big-state.json"
    rc, summary, err = run_mail(service, None, state, "--maildir", str(tmp_path / "Maildir"))
    assert rc == 1, (summary, err)  # something was refused: the exit status says so
    assert (summary["messages"], summary["imported"]) == (1, 1), summary
    [refused] = summary["failed"]
    assert refused["label"] == "Roof survey (Maria Lopez <maria@example.org>): survey-scan.tif", refused
    assert f"{UPLOAD_LIMIT}-byte" in refused["reason"] and "SB_MAX_UPLOAD_BYTES" in refused["reason"], refused
    survey = top(client, "cracked slates above the north gable")
    assert survey["title"] == "Roof survey" and "Attachments: survey-scan.tif" in survey["text"]
    assert any("--retry-refused" in n for n in summary["notes"]), summary
    # Remembered apart: sent again when asked, the text adds nothing, the attachment is refused again.
    rc, again, err = run_mail(service, None, state, "--maildir", str(tmp_path / "Maildir"), "--retry-refused")
    assert rc == 1 and (again["messages"], again["imported"], again["already_imported"]) == (1, 0, 1), (again, err)
    assert [f["label"] for f in again["failed"]] == [refused["label"]], again


def test_mail_every_takes_new_mail_as_it_comes_until_stopped(service: Service, client: httpx.Client,
                                                             tmp_path: Path) -> None:
    """``--every``: a pass at once and one every interval, each saying what it took; Ctrl-C ends it."""
    # fixed date: each message's own Date header, in the past; read as written
    box = mailbox.Maildir(tmp_path / "Maildir", create=True)
    box.add(message("Bike repair", datetime(2024, 6, 3, 18, 0, tzinfo=UTC), "<wheel@example.org>",
                    text="The bike shop trued the rear wheel and replaced both brake cables.\n"))
    cmd = [sys.executable, "-m", "app.cli", "mail", "--maildir", str(tmp_path / "Maildir"), "--state",
           str(tmp_path / "state.json"), "--every", "1"]
    proc = subprocess.Popen(cmd, env=cli_env({"SB_URL": service.url}), cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        # fixed date: each message's own Date header, in the past; read as written
        first = searchable(client, "trued the rear wheel", "Bike repair")
        box.add(message("Window cleaner", datetime(2024, 6, 4, 8, 0, tzinfo=UTC), "<windows@example.org>",
                        text="The window cleaner polished the conservatory glass and the skylights.\n"))
        second = first and searchable(client, "window cleaner conservatory skylights", "Window cleaner")
    finally:
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    assert first and second, err
    assert proc.returncode == 130, err
    assert err.count("took 1 message") == 2, err  # one pass each, and nothing said by the passes between
    assert "stopped; the next run goes on from there" in err


def searchable(client: httpx.Client, query: str, title: str, timeout_s: float = 120) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(h["title"] == title for h in hits(client, query)):
            return True
        time.sleep(1)
    return False


def test_up_takes_mail_in_the_background(client: httpx.Client, dovecot: Dovecot) -> None:
    dovecot.append("background", BACKGROUND)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = [h for h in hits(client, "boiler service engineer pressure valve") if h["title"] == "Boiler service"]
        if found:
            assert at(found[0]["captured_at"]) == BACKGROUND_DATE
            return
        time.sleep(1)
    raise AssertionError("the message in the background folder did not become searchable within 120 s")


def invitation_ics(uid: str, summary: str, start: datetime, end: datetime, *, method: str = "REQUEST") -> bytes:
    status = "CANCELLED" if method == "CANCEL" else "CONFIRMED"
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//Calendar//EN\r\n"
            f"METHOD:{method}\r\nBEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:{start:%Y%m%dT%H%M%SZ}\r\n"
            f"DTSTART:{start:%Y%m%dT%H%M%SZ}\r\nDTEND:{end:%Y%m%dT%H%M%SZ}\r\nSTATUS:{status}\r\n"
            f"SUMMARY:{summary}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n").encode()


def agenda_lines(client: httpx.Client, start: datetime, end: datetime) -> list[dict[str, Any]]:
    r = client.get("/v1/agenda", params={"tz": "UTC", "from": start.isoformat(), "to": end.isoformat()})
    assert r.status_code == 200, r.text
    return [e for d in r.json()["days"] for e in d["events"]]


def test_an_invitation_lands_on_the_agenda_at_its_time_and_its_cancellation_takes_it_off(
        service: Service, client: httpx.Client, tmp_path: Path) -> None:
    """A meeting invitation's .ics in a message, and one forwarded as an attached message, are on the agenda at
    their times, once each; the organiser's cancellation takes the first off.  Counted from today."""
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    audit = (now + timedelta(days=9)).replace(hour=14, minute=0)
    dinner = (now + timedelta(days=10)).replace(hour=19, minute=0)
    invite = message("Invitation: Supplier audit", now - timedelta(hours=3), "<audit-invite@example.org>",
                     text="Please join the supplier audit in the main office.\n",
                     attachments=(("invite.ics", invitation_ics("audit-9@example.org", "Supplier audit", audit,
                                                                audit + timedelta(hours=2)), "text/calendar"),))
    inner = EmailMessage()
    inner["From"], inner["To"], inner["Subject"] = "Office of the Chair <chair@example.org>", "me@example.org", \
        "Board dinner"
    inner.set_content("You are invited to the board dinner.")
    inner.add_attachment(invitation_ics("dinner-4@example.org", "Board dinner", dinner, dinner + timedelta(hours=3)),
                         maintype="text", subtype="calendar", filename="invite.ics")
    outer = EmailMessage()
    outer["From"], outer["To"], outer["Subject"] = "me@example.org", "me@example.org", "Fwd: Board dinner"
    outer["Date"], outer["Message-ID"] = format_datetime(now - timedelta(hours=2)), "<dinner-fwd@example.org>"
    outer.set_content("FYI")
    outer.add_attachment(inner)
    box = mailbox.Maildir(tmp_path / "Maildir", create=True)
    box.add(invite)
    box.add(bytes(outer))
    box.close()
    state = tmp_path / "invite-state.json"
    rc, summary, err = run_mail(service, None, state, "--maildir", str(tmp_path / "Maildir"))
    assert rc == 0, (summary, err)
    window = (now, now + timedelta(days=14))
    lines = agenda_lines(client, *window)
    (line,) = [e for e in lines if e["title"] == "Supplier audit"]
    assert (at(line["start"]), at(line["end"])) == (audit, audit + timedelta(hours=2)) and line["status"] == "confirmed"
    (board,) = [e for e in lines if e["title"] == "Board dinner"]
    assert at(board["start"]) == dinner
    box = mailbox.Maildir(tmp_path / "Maildir", create=False)
    box.add(message("Canceled event: Supplier audit", now - timedelta(hours=1), "<audit-cancel@example.org>",
                    text="This event has been cancelled.\n",
                    attachments=(("invite.ics", invitation_ics("audit-9@example.org", "Supplier audit", audit,
                                                               audit + timedelta(hours=2), method="CANCEL"),
                                  "text/calendar"),)))
    box.close()
    rc, summary, err = run_mail(service, None, state, "--maildir", str(tmp_path / "Maildir"))
    assert rc == 0, (summary, err)
    still = [e for e in agenda_lines(client, *window) if "Supplier audit" in e["title"]]
    assert all(e["status"] == "cancelled" for e in still), still
