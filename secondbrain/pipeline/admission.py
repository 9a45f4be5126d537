"""Who may put events into the pipeline.

The ingress topics (``artifacts.submitted``, ``urls.requested``) are open to other apps, so
their stages admit an event only when

* it is signed with a live API key of the user it names (see :mod:`secondbrain.events.signing`), or
* secondbrain produced it itself: the job it names was recorded for that user, for exactly
  this content, in the same Postgres transaction that queued the event (the gateway's
  outbox) or by the fetcher.

Anything else is refused as ``unauthorized`` before any job state is touched, so a forged
event cannot start, fail or read another user's job.  In production the broker enforces the
first line of defence (SASL principals and ACLs, see ``schemas/README.md``); this check is
the second, and the only one in embedded mode.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from secondbrain import keys
from secondbrain.errors import PermanentError, SourceGone, Unauthorized
from secondbrain.events import signing
from secondbrain.pipeline.stage import require_known_user
from secondbrain.ports import ApiKeys, JobLedger, JobView, Users


def admit(users: Users, api_keys: ApiKeys, jobs: JobLedger, *, user_id: str, job_id: str | None, value: bytes,
          headers: Mapping[str, str], produced_here: Callable[[JobView], bool],
          gone: Callable[[], bool] | None = None) -> str | None:
    """Raise :class:`Unauthorized` unless the event may enter; return the signing key id, if signed.

    ``produced_here`` says whether an existing job of the user matches the event closely
    enough to have been queued by secondbrain itself (same artifact, same URL).  ``gone`` is
    asked only when an unsigned event's job is missing: whether its source was deleted since
    (then :class:`SourceGone`: left-over work, dropped rather than refused).
    """
    key_id = signing.signed_key_id(headers)
    if key_id is None:
        try:
            keys.check_user_id(user_id)  # malformed ids are refused before any lookup
        except ValueError as exc:
            raise PermanentError(str(exc), kind="malformed") from exc
        # The job names its user: found, the user exists too (one lookup for the common case).
        job = jobs.get_job(user_id, job_id) if job_id else None
        if job is None:
            if gone is not None and gone():
                raise SourceGone(user_id)
            require_known_user(users, user_id)  # an unknown user is told so
        if job is None or not produced_here(job):
            raise Unauthorized("the event is not signed: events from other apps need the headers "
                               f"{signing.KEY_ID_HEADER} and {signing.SIGNATURE_HEADER} made with one of the "
                               "user's API keys (see schemas/README.md)")
        return None
    try:
        keys.check_user_id(user_id)
    except ValueError as exc:
        raise PermanentError(str(exc), kind="malformed") from exc
    key = api_keys.signing_key(key_id)
    # The same sentence for an unknown key and another user's key: the refusal must not
    # tell a prober which key ids exist or whom they belong to.
    if key is None or key.user_id != user_id:
        raise Unauthorized(f"the event is signed with key {key_id[:40]!r}, which is not a live key of "
                           f"user {user_id!r}; sign it with one of that user's API keys")
    if not signing.verify(value, headers, key.secret_hash):
        raise Unauthorized("the event's signature does not match its content: sign the exact bytes "
                           "you publish (HMAC-SHA256 keyed with the SHA-256 of the API key)")
    return key_id
