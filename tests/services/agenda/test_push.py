"""Reminders by web push, up to the push service: a loopback HTTP server stands in for the browser's push service
and receives pywebpush's real request.  What a browser would check: the push is signed by the server's VAPID key
(the one it subscribed with, kept in the data dir), and it decrypts with the browser's own private key to the
reminder's title and time.  A subscription the push service says is gone (410) is removed; a reminder nobody can
get yet stays due."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import http_ece
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from secondbrain.settings import Settings
from secondbrain.stores.memory import MemoryMetadataStore
from services.agenda.push import public_key, vapid_key
from services.agenda.reminders import send_due

T0 = datetime(2026, 12, 10, 9, 40, tzinfo=UTC)  # the dentist, as in the agenda's tests


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Browser:
    """A browser's side of a subscription: its key pair and auth secret (what the page's pushManager makes)."""

    def __init__(self) -> None:
        self.private = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        self.p256dh = b64url(self.private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))

    def read(self, body: bytes) -> dict[str, Any]:
        plain: bytes = http_ece.decrypt(body, private_key=self.private, auth_secret=self.auth, version="aes128gcm")
        decoded: dict[str, Any] = json.loads(plain)
        return decoded


class PushService:
    """A push service on loopback: keeps every request; answers 201, or 410 under /gone/ (an unsubscribed browser)."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                outer.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(410 if self.path.startswith("/gone/") else 201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> PushService:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def push_service() -> Iterator[PushService]:
    with PushService() as service:
        yield service


def vapid_claims(authorization: str, server_key: str) -> dict[str, Any]:
    """The claims of a VAPID ``Authorization`` header, once its signature is checked against ``server_key``."""
    scheme, _, params = authorization.partition(" ")
    assert scheme == "vapid"
    fields = dict(p.strip().split("=", 1) for p in params.split(","))
    assert fields["k"] == server_key  # signed by the key the browser subscribed with
    head, payload, signature = fields["t"].split(".")
    raw = unb64url(signature)
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(server_key))
    key.verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
               f"{head}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))  # raises if forged
    assert json.loads(unb64url(head))["alg"] == "ES256"
    claims: dict[str, Any] = json.loads(unb64url(payload))
    return claims


def test_the_vapid_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    first = public_key(vapid_key(tmp_path))
    assert (tmp_path / "vapid.pem").stat().st_mode & 0o777 == 0o600
    assert public_key(vapid_key(tmp_path)) == first  # browsers subscribed with it keep working after a restart
    assert len(unb64url(first)) == 65 and unb64url(first)[0] == 4  # an uncompressed P-256 point, as browsers take


def test_a_due_reminder_is_pushed_encrypted_to_each_browser_and_a_gone_one_removed(
        tmp_path: Path, push_service: PushService) -> None:
    settings = Settings(data_dir=tmp_path, push_contact="mailto:alice@example.org")  # type: ignore[call-arg]
    with MemoryMetadataStore() as m:
        for user in ("alice", "bob"):
            m.users.ensure_user(user)
        phone, old_laptop, bobs = Browser(), Browser(), Browser()
        live = m.push_subscriptions.put("alice", f"{push_service.origin}/send/phone", phone.p256dh, b64url(phone.auth))
        m.push_subscriptions.put("alice", f"{push_service.origin}/gone/laptop", old_laptop.p256dh,
                                 b64url(old_laptop.auth))
        m.push_subscriptions.put("bob", f"{push_service.origin}/send/bob", bobs.p256dh, b64url(bobs.auth))
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
    settings = Settings(data_dir=tmp_path)  # type: ignore[call-arg]
    with MemoryMetadataStore() as m:
        m.users.ensure_user("alice")
        reminder = m.reminders.put("alice", "line-1", "Dentist", "appointment", T0, T0 - timedelta(hours=1), "UTC")
        assert send_due(m.reminders, settings, now=T0, push=m.push_subscriptions) == 0
        assert m.reminders.due(T0) == [reminder]  # no mail set up, no browser yet: kept, not dropped
        phone = Browser()
        m.push_subscriptions.put("alice", f"{push_service.origin}/send/phone", phone.p256dh, b64url(phone.auth))
        assert send_due(m.reminders, settings, now=T0, push=m.push_subscriptions) == 1  # late rather than never
        ((_, _, body),) = push_service.received
        assert phone.read(body)["title"] == "Reminder: Dentist"
        # Push turned off on the server: nothing goes by push.
        m.reminders.put("alice", "line-1", "Dentist", "appointment", T0, T0 - timedelta(hours=1), "UTC")
        off = settings.model_copy(update={"push_reminders": False})
        assert send_due(m.reminders, off, now=T0, push=m.push_subscriptions) == 0 and len(push_service.received) == 1
