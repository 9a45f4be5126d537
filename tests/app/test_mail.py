"""Taking mail from a real IMAP server (Dovecot on loopback): a server that goes away in the middle of a run is
reported, what was sent before stays recorded, and the next run sends only the rest."""

from __future__ import annotations

from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest

from app.mail import Account, MailError, MailSync, State
from tests.e2e.harness import readable_tmp
from tests.e2e.mailserver import USER, Dovecot


def note(n: int) -> bytes:
    msg = EmailMessage()
    msg["From"] = "ann@example.org"
    msg["Subject"] = f"Note {n}"
    msg["Date"] = "Tue, 05 Mar 2024 09:30:00 +0000"
    msg["Message-ID"] = f"<note-{n}@example.org>"
    msg.set_content(f"Number {n}.")
    return bytes(msg)


@pytest.fixture
def dovecot() -> Iterator[Dovecot]:
    with readable_tmp("sb-mail-unit-") as root:
        server = Dovecot(root).start()
        yield server
        server.stop()


def test_a_server_lost_mid_run_is_reported_and_the_next_run_sends_only_the_rest(dovecot: Dovecot,
                                                                                tmp_path: Path) -> None:
    for n in range(1, 26):  # two batches of 20 and 5
        dovecot.append("secondbrain", note(n))
    account = Account(host="127.0.0.1", port=dovecot.imaps_port, user=USER, password=dovecot.password,
                      ca_file=str(dovecot.ca_file))
    sent: list[str] = []

    def send_then_lose_the_server(captures: list[Any]) -> list[str]:
        sent.extend(c.title for c in captures)
        dovecot.stop()  # the server goes away once the first batch is in
        return ["queued"] * len(captures)

    state_path = tmp_path / "mail.json"
    with pytest.raises(MailError) as lost:
        MailSync(State(state_path), send_then_lose_the_server, say=print).imap(account)
    assert f"the connection to the mail server 127.0.0.1:{dovecot.imaps_port} was lost" in str(lost.value)
    assert sent == [f"Note {n}" for n in range(1, 21)]
    dovecot.start()

    def send(captures: list[Any]) -> list[str]:
        sent.extend(c.title for c in captures)
        return ["queued"] * len(captures)

    report = MailSync(State(state_path), send, say=print).imap(account)
    assert report.messages == 5 and sent[20:] == [f"Note {n}" for n in range(21, 26)]
    assert MailSync(State(state_path), send, say=print).imap(account).messages == 0
