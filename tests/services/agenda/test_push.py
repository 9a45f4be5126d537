"""Reminders by web push, up to the push service: a loopback HTTP server stands in for the browser's push service
and receives pywebpush's real request.  What a browser would check: the push is signed by the server's VAPID key
(the one it subscribed with, kept in the data dir), and it decrypts with the browser's own private key to the
reminder's title and time.  A subscription the push service says is gone (410) is removed; a reminder nobody can
get yet stays due; an endpoint inside this server's network is never posted to (the fetcher's SSRF guard)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from secondbrain.settings import Settings
from secondbrain.stores.memory import MemoryMetadataStore
from services.agenda.push import public_key, vapid_key
from services.agenda.reminders import send_due
from tests.webpush import Browser, PushService, unb64url, vapid_claims

T0 = datetime(2026, 12, 10, 9, 40, tzinfo=UTC)  # the dentist, as in the agenda's tests


@pytest.fixture
def push_service() -> Iterator[PushService]:
    with PushService() as service:
        yield service


def test_the_vapid_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    first = public_key(vapid_key(tmp_path))
    assert (tmp_path / "vapid.pem").stat().st_mode & 0o777 == 0o600
    assert public_key(vapid_key(tmp_path)) == first  # browsers subscribed with it keep working after a restart
    assert len(unb64url(first)) == 65 and unb64url(first)[0] == 4  # an uncompressed P-256 point, as browsers take


def test_a_due_reminder_is_pushed_encrypted_to_each_browser_and_a_gone_one_removed(
        tmp_path: Path, push_service: PushService) -> None:
    # the push service is on loopback, so the guard against requests into this network is lifted here (below: kept)
    settings = Settings(data_dir=tmp_path, push_contact="mailto:alice@example.org",  # type: ignore[call-arg]
                        fetch_allow_private=True)
    with MemoryMetadataStore() as m:
        for user in ("alice", "bob"):
            m.users.ensure_user(user)
        phone, old_laptop, bobs = Browser(), Browser(), Browser()
        live = m.push_subscriptions.put("alice", f"{push_service.origin}/send/phone", phone.p256dh, phone.auth)
        m.push_subscriptions.put("alice", f"{push_service.origin}/gone/laptop", old_laptop.p256dh,
                                 old_laptop.auth)
        m.push_subscriptions.put("bob", f"{push_service.origin}/send/bob", bobs.p256dh, bobs.auth)
        reminder = m.reminders.put("alice", "line-1", "Dentist", "appointment", T0, T0 - timedelta(hours=1),
                                   "Europe/London")

        def send(at: datetime) -> int:
            return send_due(m.reminders, settings, now=at, push=m.push_subscriptions)

        assert send(reminder.remind_at - timedelta(minutes=1)) == 0 and push_service.received == []  # not yet
        assert send(reminder.remind_at) == 1
        assert sorted(path for path, _, _ in push_service.received) == ["/gone/laptop", "/send/phone"]  # not Bob's
        ((_, headers, body),) = [r for r in push_service.received if r[0] == "/send/phone"]
        assert headers["content-encoding"] == "aes128gcm" and int(headers["ttl"]) > 0
        claims = vapid_claims(headers["authorization"], public_key(vapid_key(tmp_path)))
        assert claims["aud"] == push_service.origin and claims["sub"] == "mailto:alice@example.org"
        assert claims["exp"] > time.time()
        assert b"Dentist" not in body  # the push service carries it without reading it
        # What the service worker shows on the phone: the line and its time in the zone it was asked in.
        assert phone.read(body) == {"title": "Reminder: Dentist", "body": "Thu 10 Dec at 09:40",
                                    "tag": f"reminder-{reminder.reminder_id}", "url": "/#agenda"}
        # The laptop's browser unsubscribed (410): forgotten; the reminder went once.
        assert m.push_subscriptions.listed("alice") == [live]
        assert m.reminders.listed("alice")[0].sent_at is not None
        assert send(reminder.remind_at + timedelta(minutes=5)) == 0 and len(push_service.received) == 2


def test_a_reminder_nobody_can_get_yet_stays_due_until_a_browser_subscribes(
        tmp_path: Path, push_service: PushService) -> None:
    settings = Settings(data_dir=tmp_path, fetch_allow_private=True)  # type: ignore[call-arg]
    with MemoryMetadataStore() as m:
        m.users.ensure_user("alice")
        reminder = m.reminders.put("alice", "line-1", "Dentist", "appointment", T0, T0 - timedelta(hours=1), "UTC")
        assert send_due(m.reminders, settings, now=T0, push=m.push_subscriptions) == 0
        assert m.reminders.due(T0) == [reminder]  # no mail set up, no browser yet: kept, not dropped
        phone = Browser()
        m.push_subscriptions.put("alice", f"{push_service.origin}/send/phone", phone.p256dh, phone.auth)
        assert send_due(m.reminders, settings, now=T0, push=m.push_subscriptions) == 1  # late rather than never
        ((_, _, body),) = push_service.received
        assert phone.read(body)["title"] == "Reminder: Dentist"
        # Push turned off on the server: nothing goes by push.
        m.reminders.put("alice", "line-1", "Dentist", "appointment", T0, T0 - timedelta(hours=1), "UTC")
        off = settings.model_copy(update={"push_reminders": False})
        assert send_due(m.reminders, off, now=T0, push=m.push_subscriptions) == 0 and len(push_service.received) == 1


def test_a_push_endpoint_inside_this_network_is_never_posted_to(tmp_path: Path, push_service: PushService) -> None:
    settings = Settings(data_dir=tmp_path)  # type: ignore[call-arg]
    with MemoryMetadataStore() as m:
        m.users.ensure_user("alice")
        phone = Browser()
        m.push_subscriptions.put("alice", f"{push_service.origin}/send/phone", phone.p256dh, phone.auth)
        m.reminders.put("alice", "line-1", "Dentist", "appointment", T0, T0 - timedelta(hours=1), "UTC")
        assert send_due(m.reminders, settings, now=T0, push=m.push_subscriptions) == 0
        assert push_service.received == [] and len(m.reminders.due(T0)) == 1  # refused, and still due
