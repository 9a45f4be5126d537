"""Reminders of agenda lines: "remind me" on a line keeps what it is about and when to remind, and `up` sends each
one when it is due, by e-mail through the SMTP server the person configures (``SB_SMTP_*``) and by web push to the
browsers the person turned reminders on in (:mod:`services.agenda.push`).

A reminder is kept per user and agenda line (the line's stable id) by the metadata store's ``reminders`` role:
asking again for the same line moves it.  The time before the event defaults by the line's kind
(:data:`DEFAULT_MINUTES`).
"""

from __future__ import annotations

import contextlib
import logging
import smtplib
import ssl
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any
from zoneinfo import ZoneInfo

from secondbrain.ports import PushSubscriptions, Reminder, Reminders
from secondbrain.settings import Settings
from services.agenda.push import push_configured, reminder_push, send_push, vapid_key

log = logging.getLogger(__name__)

# Minutes before the start of the event a reminder goes, by the agenda line's kind.  A day-long line (a deadline, a
# payment, a birthday) starts at midnight: 900 minutes before is 09:00 the day before.
DEFAULT_MINUTES = {"appointment": 60, "event": 60, "plan": 60, "travel": 180, "habit": 15,
                   "deadline": 900, "payment": 900, "birthday": 900}
OTHER_KIND_MINUTES = 60


def default_minutes(kind: str) -> int:
    """How long before an event of ``kind`` its reminder goes unless asked otherwise."""
    return DEFAULT_MINUTES.get(kind, OTHER_KIND_MINUTES)


def reminder_json(r: Reminder) -> dict[str, Any]:
    """A reminder as the API gives it, its times in its zone."""
    z = ZoneInfo(r.timezone)
    return {"reminder_id": r.reminder_id, "event_id": r.event_id, "title": r.title, "kind": r.kind,
            "starts_at": r.starts_at.astimezone(z).isoformat(), "remind_at": r.remind_at.astimezone(z).isoformat(),
            "minutes_before": round((r.starts_at - r.remind_at).total_seconds() / 60),
            "sent_at": r.sent_at.astimezone(z).isoformat() if r.sent_at else None}


# ---------------------------------------------------------------------------------------------- sending by e-mail


def mail_configured(settings: Settings) -> bool:
    """Whether reminders can go by e-mail: a server and someone to write to."""
    return bool(settings.smtp_host and settings.smtp_to)


def reminder_mail(r: Reminder, settings: Settings) -> EmailMessage:
    """The e-mail of one reminder: what, when, in the reminder's zone."""
    z = ZoneInfo(r.timezone)
    at = r.starts_at.astimezone(z)
    day_long = r.kind in ("deadline", "payment", "birthday")
    when = f"{at:%a} {at.day} {at:%b}" + ("" if day_long else f" at {at:%H:%M}")
    msg = EmailMessage()
    msg["Subject"] = f"Reminder: {r.title}, {when}"
    msg["From"] = settings.smtp_from or settings.smtp_to
    msg["To"] = settings.smtp_to
    msg.set_content(f"{r.title}\n{when} ({r.timezone})\n\nYou asked secondbrain to remind you of this line of your "
                    "agenda.\n")
    return msg


def send_due(store: Reminders, settings: Settings, now: datetime | None = None,
             push: PushSubscriptions | None = None) -> int:
    """Send every reminder due by ``now`` and note each as sent; how many went.  Each goes by e-mail when SMTP is
    set up (one connection for all) and by web push to every browser its user turned reminders on in (``push``, when
    push is on); a subscription its push service says is gone is removed.  A reminder nothing reached (no mail, no
    browser yet) stays due, to go once one is there.  A reminder whose event is already over goes too (late, rather
    than never): `up` may have been stopped at its time."""
    mail = mail_configured(settings)
    pushing = push is not None and push_configured(settings)
    if not (mail or pushing):
        return 0
    due = store.due(now or datetime.now(UTC))
    if not due:
        return 0
    vapid = vapid_key(settings.data_dir) if pushing else None
    sent = 0
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(smtp_connection(settings)) if mail else None
        for r in due:
            reached = False
            if server is not None:
                server.send_message(reminder_mail(r, settings))
                reached = True
            if push is not None and vapid is not None:
                for sub in push.listed(r.user_id):
                    try:
                        if send_push(sub, reminder_push(r), vapid, settings):
                            reached = True
                        else:
                            push.delete(r.user_id, sub.subscription_id)
                            log.info("push subscription gone; removed", extra={"subscription": sub.subscription_id})
                    except Exception as exc:  # one browser's push service away: the others still get it
                        log.warning("a reminder's push failed", extra={"subscription": sub.subscription_id,
                                                                        "error": repr(exc)})
            if reached:
                store.mark_sent(r.reminder_id, datetime.now(UTC))
                sent += 1
    return sent


def smtp_connection(settings: Settings) -> smtplib.SMTP:
    """A connection to the configured SMTP server, secured and logged in as set up."""
    password = settings.smtp_password.get_secret_value() if settings.smtp_password is not None else ""
    if settings.smtp_security == "tls":
        server: smtplib.SMTP = smtplib.SMTP_SSL(settings.smtp_host, settings.smtp_port or 465, timeout=30,
                                                context=ssl.create_default_context())
    else:
        server = smtplib.SMTP(settings.smtp_host, settings.smtp_port or (587 if settings.smtp_security == "starttls"
                                                                         else 25), timeout=30)
    try:
        if settings.smtp_security == "starttls":
            server.starttls(context=ssl.create_default_context())
        if settings.smtp_user:
            server.login(settings.smtp_user, password)
    except BaseException:
        server.close()
        raise
    return server
