"""The command line as a client of a running ``secondbrain up``: it finds the server from what ``up``
recorded on this machine (no ``--url``), a one-shot ``ask`` keeps no conversation unless asked to, and
``watch`` started while the server is down waits for it, as it does while it runs; a search for what is not
there says so (exit status 1) with the closest below; and ``up`` mails a reminder when it is due, to a real SMTP
server on loopback, and pushes it to a browser that turned reminders on (a push service on loopback, over HTTPS
with its own certificate, stands in for the browser's)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from email import message_from_bytes
from pathlib import Path
from typing import Any

import pytest

from devtools.processes import STATE_HOME, cli_env, run_cli
from secondbrain.infra.ports import free_port
from tests.e2e.harness import REPO, Service, readable_tmp, wait_jobs
from tests.webpush import Browser, PushService, vapid_claims

pytestmark = pytest.mark.e2e

LOCK = "The combination of the blue bike lock is 4-7-1-9."


class Inbox:
    """What a real SMTP server on loopback (aiosmtpd) received."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.mail: list[tuple[list[str], bytes]] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.mail.append((list(envelope.rcpt_tos), bytes(envelope.content)))
        return "250 OK"


@pytest.fixture(scope="module")
def inbox() -> Iterator[Inbox]:
    from aiosmtpd.controller import Controller

    box = Inbox(free_port())
    smtp = Controller(box, hostname="127.0.0.1", port=box.port)
    smtp.start()
    yield box
    smtp.stop()


@pytest.fixture(scope="module")
def push_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PushService]:
    with PushService(tls_folder=tmp_path_factory.mktemp("push-tls")) as service:
        yield service


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, inbox: Inbox, push_service: PushService) -> Iterator[Service]:
    with readable_tmp("sb-cli-") as root:
        # reminders go by e-mail to the SMTP server on loopback, looked for every second, and by push to the push
        # service on loopback (its certificate trusted by `up`'s HTTP client)
        smtp = {"SB_SMTP_HOST": "127.0.0.1", "SB_SMTP_PORT": str(inbox.port), "SB_SMTP_SECURITY": "none",
                "SB_SMTP_TO": "me@example.org", "SB_REMINDER_INTERVAL_S": "1",
                "SB_PUSH_CONTACT": "mailto:me@example.org", "REQUESTS_CA_BUNDLE": str(push_service.cert_file),
                "SB_FETCH_ALLOW_NETWORKS": "127.0.0.1/32"}
        svc = Service("up", ["up", "--data-dir", str(root / "data"), "--no-llm"], smtp,
                      tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)
        with svc.client() as c:
            wait_jobs(c, [c.post("/v1/notes", json={"title": "Bike lock", "text": LOCK}).json()["job_id"]])
        try:
            yield svc
        finally:
            svc.stop()


def conversations(svc: Service) -> list[str]:
    with svc.client() as c:
        return [x["conversation_id"] for x in c.get("/v1/conversations").json()["conversations"]]


def test_the_cli_finds_the_running_server_from_what_up_recorded(server: Service, tmp_path: Path) -> None:
    # No --url, no SB_URL: `up` recorded its address beside its data directory; --data-dir names it.
    found = run_cli(["search", "bike lock combination", "--data-dir", str(server.data_dir)], {})
    assert found.returncode == 0, found.stderr
    assert "Bike lock" in found.stdout and "4-7-1-9" in found.stdout
    # From anywhere else on the machine, with no data directory of its own: the one server running.
    state = tmp_path / "state"
    (state / "secondbrain").mkdir(parents=True)
    shutil.copy(STATE_HOME / "secondbrain" / f"server-{server.port}", state / "secondbrain")
    found = run_cli(["search", "bike lock combination"], {"XDG_STATE_HOME": str(state)})
    assert found.returncode == 0 and "4-7-1-9" in found.stdout, found.stderr
    # A record left by a server that is gone is not taken for a running one.
    gone = free_port()
    (state / "secondbrain" / f"server-{server.port}").unlink()
    (state / "secondbrain" / f"server-{gone}").write_text(f"{server.data_dir}\nhttp://127.0.0.1:{gone}\n")
    missed = run_cli(["search", "bike lock combination"], {"XDG_STATE_HOME": str(state)})
    assert missed.returncode == 2 and "cannot reach secondbrain at http://127.0.0.1:8000" in missed.stderr
    # A data directory named on the command line is that server's or none (never another one's).
    other = run_cli(["search", "bike lock", "--data-dir", str(tmp_path / "elsewhere")], {})
    assert other.returncode == 2 and "127.0.0.1:8000" in other.stderr


def test_a_search_for_what_is_not_there_says_so_and_shows_the_closest(server: Service) -> None:
    missed = run_cli(["search", "quantum chromodynamics lecture", "--url", server.url], {})
    assert missed.returncode == 1, missed.stderr
    assert "Nothing matches “quantum chromodynamics lecture”. The closest:" in missed.stderr
    assert "Bike lock" in missed.stdout  # the closest, below the sentence
    again = run_cli(["ingest", "--note", LOCK, "--title", "Bike lock", "--url", server.url], {})
    assert again.returncode == 0, again.stderr
    assert "Already in your memory as Bike lock, " in again.stderr  # said at once, kept once


def test_up_mails_a_reminder_of_an_agenda_line_when_it_is_due(server: Service, inbox: Inbox) -> None:
    with server.client() as c:
        wait_jobs(c, [c.post("/v1/notes", json={"title": "Dentist",
                                                "text": "Dentist appointment tomorrow at 10:00."}).json()["job_id"]])
        (line,) = [e for d in c.get("/v1/agenda").json()["days"] for e in d["events"] if "Dentist" in e["quote"]]
        # three days before tomorrow's appointment: due at once
        made = c.post("/v1/reminders", json={"event_id": line["id"], "minutes_before": 3 * 24 * 60})
        assert made.status_code == 201, made.text
        assert made.json()["sends"] == "e-mail"
        deadline = time.monotonic() + 60
        while not inbox.mail:
            assert time.monotonic() < deadline, "up sent no reminder"
            time.sleep(0.25)
        ((to, raw),) = inbox.mail
        assert to == ["me@example.org"]
        assert message_from_bytes(raw)["Subject"].startswith(f"Reminder: {line['title']}, ")
        (kept,) = c.get("/v1/reminders").json()["reminders"]
        assert kept["sent_at"] is not None
        time.sleep(2)
        assert len(inbox.mail) == 1  # once


def test_up_pushes_a_reminder_to_a_browser_that_turned_reminders_on(
        server: Service, inbox: Inbox, push_service: PushService) -> None:
    phone = Browser()
    with server.client() as c:
        key = c.get("/v1/push/key").json()
        assert key["enabled"]
        made = c.post("/v1/push/subscriptions", json=phone.subscription(f"{push_service.origin}/send/phone"))
        assert made.status_code == 201, made.text
        wait_jobs(c, [c.post("/v1/notes", json={"title": "Haircut",
                                                "text": "Haircut tomorrow at 15:00."}).json()["job_id"]])
        (line,) = [e for d in c.get("/v1/agenda").json()["days"] for e in d["events"] if "Haircut" in e["quote"]]
        mailed = len(inbox.mail)
        reminder = c.post("/v1/reminders", json={"event_id": line["id"], "minutes_before": 3 * 24 * 60})
        assert reminder.status_code == 201 and reminder.json()["sends"] == "e-mail and push", reminder.text
        deadline = time.monotonic() + 60
        while not push_service.received:
            assert time.monotonic() < deadline, "up pushed no reminder"
            time.sleep(0.25)
        ((path, headers, body),) = push_service.received
        assert path == "/send/phone" and headers["content-encoding"] == "aes128gcm"
        claims = vapid_claims(headers["authorization"], key["public_key"])  # signed with the key it subscribed with
        assert claims["aud"] == push_service.origin and claims["sub"] == "mailto:me@example.org"
        shown = phone.read(body)  # what the service worker shows
        assert shown["title"] == f"Reminder: {line['title']}" and shown["url"] == "/#agenda"
        assert len(inbox.mail) == mailed + 1  # and by e-mail, as that is set up too
        (kept,) = [r for r in c.get("/v1/reminders").json()["reminders"] if r["event_id"] == line["id"]]
        assert kept["sent_at"] is not None
        time.sleep(2)
        assert len(push_service.received) == 1  # once


def test_a_one_shot_question_keeps_no_conversation_unless_asked_to(server: Service) -> None:
    before = conversations(server)
    once = run_cli(["ask", "What is the combination of the bike lock?", "--url", server.url], {})
    assert once.returncode == 0, once.stderr
    assert "4-7-1-9" in once.stdout and "follow up with" not in once.stderr
    as_json = run_cli(["ask", "What is the combination of the bike lock?", "--url", server.url, "--json"], {})
    assert as_json.returncode == 0 and "conversation_id" not in as_json.stdout
    assert conversations(server) == before  # nothing kept
    kept = run_cli(["ask", "What is the combination of the bike lock?", "--url", server.url, "--keep"], {})
    assert kept.returncode == 0, kept.stderr
    conversation = kept.stderr.split("secondbrain ask -c ", 1)[1].split()[0]
    assert conversations(server) == [conversation, *before]
    follow = run_cli(["ask", "And what colour is it?", "-c", conversation, "--url", server.url], {})
    assert follow.returncode in (0, 1), follow.stderr  # answered or honestly not found; kept either way
    with server.client() as c:
        turns = c.get(f"/v1/conversations/{conversation}").json()["turns"]
    assert [t["question"] for t in turns] == ["What is the combination of the bike lock?", "And what colour is it?"]


def test_watch_started_while_the_server_is_down_waits_for_it(tmp_path_factory: pytest.TempPathFactory) -> None:
    with readable_tmp("sb-watch-") as root:
        svc = Service("up", ["up", "--data-dir", str(root / "data"), "--no-llm"], {}, tmp_path_factory.mktemp("logs"))
        svc.start().wait_ready(timeout=180)  # its data directory and key exist, as after any earlier run
        assert svc.stop() == 0
        notes = root / "notes"
        notes.mkdir()
        (notes / "plumber.md").write_text("# Plumber\n\nThe plumber comes on Thursday at 8.\n")
        watch = subprocess.Popen([sys.executable, "-m", "app.cli", "watch", str(notes), "--once", "--url", svc.url,
                                  "--data-dir", str(svc.data_dir), "--state", str(root / "watch.json")],
                                 env=cli_env({}), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(5)
            assert watch.poll() is None, watch.communicate()  # still waiting, not given up (it exited with 2)
            svc.start().wait_ready(timeout=180)
            _, err = watch.communicate(timeout=180)
            assert watch.returncode == 0, err
            assert "not reachable" in err and "waiting for it" in err and "in sync: 1 new" in err
            # --once returns when the note is sent; it is searchable once the pipeline has embedded it.
            deadline = time.monotonic() + 90
            while True:
                found = run_cli(["search", "when does the plumber come", "--url", svc.url,
                                 "--data-dir", str(svc.data_dir)], {})
                if "Thursday" in found.stdout or time.monotonic() > deadline:
                    break
                time.sleep(1)
            assert "Thursday" in found.stdout, found
        finally:
            if watch.poll() is None:
                watch.kill()
            svc.stop()
