"""Reminders by web push: the server's VAPID key pair (made once, kept in the data dir), the browsers'
subscriptions (``/v1/push/*``) and sending one reminder to one browser through its push service.

The browser subscribes with the server's public key (``GET /v1/push/key``); its push service then accepts only
pushes signed with the private one (VAPID).  Each push is encrypted to the browser's own keys (RFC 8291,
``aes128gcm``) by pywebpush, so the push service carries it without reading it.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from cryptography.hazmat.primitives import serialization
from py_vapid import Vapid
from pywebpush import WebPushException, webpush

from secondbrain.addresses import check_host_allowed, parse_networks
from secondbrain.ports import PushSubscription, Reminder
from secondbrain.settings import Settings

log = logging.getLogger(__name__)

VAPID_FILE = "vapid.pem"
PUSH_TTL_S = 12 * 3600  # a push the browser cannot take now waits this long at its push service, then is dropped
GONE = (404, 410)  # the push service's answer for a subscription the browser dropped (unsubscribed, uninstalled)


def vapid_key(data_dir: Path) -> Vapid:
    """The server's VAPID key pair, made on first use and kept as ``vapid.pem`` (mode 0600) in ``data_dir``: every
    browser's subscription is bound to its public key, so it must outlive restarts."""
    path = data_dir / VAPID_FILE
    if not path.exists():
        fresh = Vapid()
        fresh.generate_keys()
        pem = fresh.private_pem()
        path.parent.mkdir(parents=True, exist_ok=True)
        # O_EXCL: two processes starting at once keep one key (the second reads the first's).
        with contextlib.suppress(FileExistsError):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(pem)
    return Vapid.from_pem(path.read_bytes())


def public_key(vapid: Vapid) -> str:
    """The public key as a browser's ``applicationServerKey``: the uncompressed P-256 point, base64url."""
    raw = vapid.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def push_configured(settings: Settings) -> bool:
    """Whether reminders go by web push (to the browsers that turned them on)."""
    return settings.push_reminders


def contact(settings: Settings) -> str:
    """The VAPID ``sub`` claim: who a push service may write to about this server."""
    if settings.push_contact:
        return settings.push_contact
    if settings.smtp_to:
        return f"mailto:{settings.smtp_to}"
    return settings.public_url or "mailto:secondbrain@localhost"


def reminder_push(r: Reminder) -> dict[str, Any]:
    """What the service worker shows: the title, when, and the agenda to open on a tap."""
    at = r.starts_at.astimezone(ZoneInfo(r.timezone))
    day_long = r.kind in ("deadline", "payment", "birthday")
    when = f"{at:%a} {at.day} {at:%b}" + ("" if day_long else f" at {at:%H:%M}")
    return {"title": f"Reminder: {r.title}", "body": when, "tag": f"reminder-{r.reminder_id}", "url": "/#agenda"}


def subscription_info(s: PushSubscription) -> dict[str, Any]:
    """A kept subscription as the browser gave it (``PushSubscription.toJSON()``)."""
    return {"endpoint": s.endpoint, "keys": {"p256dh": s.p256dh, "auth": s.auth}}


def send_push(s: PushSubscription, payload: dict[str, Any], vapid: Vapid, settings: Settings) -> bool:
    """Push ``payload`` to one browser; ``False`` when its push service says the subscription is gone (404/410), so
    that it can be removed.  Any other failure (the push service away, a refusal) raises, as does an endpoint on
    this server's own networks (the SSRF guard the fetcher uses: ``SB_FETCH_ALLOW_PRIVATE``,
    ``SB_FETCH_ALLOW_NETWORKS``); a real push service is on the internet."""
    if not settings.fetch_allow_private:
        check_host_allowed(urlsplit(s.endpoint).hostname or "", parse_networks(settings.fetch_allow_networks))
    try:
        webpush(subscription_info(s), json.dumps(payload), vapid_private_key=vapid,
                vapid_claims={"sub": contact(settings)}, ttl=PUSH_TTL_S, timeout=30)
    except WebPushException as exc:
        status = getattr(exc.response, "status_code", None)
        if status in GONE:
            return False
        raise
    return True
