"""One submission of a capture: the raw bytes stored once, then the artifact (or URL), its job and the
outgoing message written in one Postgres transaction, and the message handed to this process's relay.

The HTTP routes (``POST /v1/notes``, ``/v1/artifacts``, ``/v1/urls``, a retry) and the importers
(``services/importers``) all submit through here, so a capture is deduplicated, versioned and traced the
same way whoever sends it.  Blocking: call it from a worker thread.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO
from urllib.parse import urlsplit

from secondbrain import ids, keys, telemetry, topic_names
from secondbrain.addresses import Networks, address_problem, literal_address
from secondbrain.events.models import ArtifactSubmitted, CaptureKind, UrlRequested
from secondbrain.http_security import short
from secondbrain.pipeline.relay import OutboxRelay
from secondbrain.ports import ArtifactRecord, OutboxMessage
from secondbrain.runtime import Runtime


@dataclass(frozen=True, slots=True)
class Submitted:
    """What a submission became: its job, its artifact (none for a URL until it is fetched), and whether the
    job is new (``False``: the same idempotency key was submitted before, and nothing was written)."""

    job_id: str
    artifact_id: str | None
    created: bool
    original_job: str | None = None  # the same bytes' earlier job, past extraction (a re-sent copy)


@dataclass(frozen=True, slots=True)
class FileCapture:
    """One capture of an import's batch, its bytes read (see :meth:`Submissions.files`)."""

    data: bytes
    sha256: str
    content_type: str
    filename: str | None
    title: str | None
    captured_at: datetime | None
    source_uri: str
    idempotency_key: str | None
    attributes: dict[str, str]
    capture: CaptureKind


def fingerprint(*parts: object) -> str:
    """What a submission asked for, as a hash: an Idempotency-Key may only be repeated with the same."""
    return hashlib.sha256(json.dumps([str(p) if p is not None else None for p in parts]).encode()).hexdigest()


class Submissions:
    """Submits captures for a runtime; ``relay`` (this process's outbox relay, if any) publishes them at once."""

    def __init__(self, rt: Runtime, relay: OutboxRelay | None) -> None:
        self.rt = rt
        self.relay = relay
        # No relay here: the rows wait for one (another process's) to claim them.
        self.lease_s = relay.LEASE_S if relay is not None else None

    def file(self, user: str, *, data: bytes | IO[bytes], size: int, sha256: str, content_type: str,
             filename: str | None, title: str | None, captured_at: datetime | None, source_uri: str,
             idempotency_key: str | None, attributes: dict[str, str], capture: CaptureKind) -> Submitted:
        """Store the bytes (once per content) and register them with a new job."""
        rt = self.rt
        artifact_id = ids.artifact_id(user, sha256)
        object_key = keys.artifact_key(user, artifact_id)
        stored_now = rt.objects.stat(object_key) is None  # same bytes already stored: keep one copy
        if stored_now:
            rt.objects.put(object_key, data, size=size, content_type=content_type)
        try:
            return self.register(user, artifact_id, object_key, size=size, sha256=sha256, content_type=content_type,
                                 filename=filename, title=title, captured_at=captured_at, source_uri=source_uri,
                                 idempotency_key=idempotency_key, attributes=attributes, capture=capture)
        except BaseException:
            # Nothing refused or failed may leave bytes behind without their row (unless another
            # submission of the same bytes registered them meanwhile).
            if stored_now and rt.metadata.catalog.get_artifact(user, artifact_id) is None:
                rt.objects.delete(object_key)
            raise

    def files(self, user: str, files: Sequence[FileCapture]) -> list[Submitted | Exception]:
        """:meth:`file` of several captures of a user (an import's batch): each one's bytes stored once, then all
        of them registered with one write and handed to the relay together.  Each one's result, or the error
        that refused it (nothing of it is left behind)."""
        rt = self.rt
        prepared, stored = [], []
        with telemetry.tracer().start_as_current_span("ingest submit", attributes={"sb.captures": len(files)}) as span:
            telemetry.set_user(user, span)
            storing: dict[str, tuple[str, bytes, str]] = {}
            for f in files:
                artifact_id = ids.artifact_id(user, f.sha256)
                object_key = keys.artifact_key(user, artifact_id)
                # The same bytes stored already (before, or earlier in this batch): one copy.
                stored_now = object_key not in storing and rt.objects.stat(object_key) is None
                if stored_now:
                    storing[object_key] = (object_key, f.data, f.content_type)
                stored.append((artifact_id, object_key, stored_now))
                prepared.append(self._registration(
                    user, artifact_id, object_key, size=len(f.data), sha256=f.sha256, content_type=f.content_type,
                    filename=f.filename, title=f.title, captured_at=f.captured_at, source_uri=f.source_uri,
                    idempotency_key=f.idempotency_key, attributes=f.attributes, capture=f.capture))
            try:
                rt.objects.put_many(list(storing.values()))  # all durable before any row names them
                results = rt.metadata.intake.submit_many(
                    [(record, job_id, [message], request_hash) for job_id, record, message, request_hash in prepared],
                    lease_s=self.lease_s)
            except BaseException:
                for artifact_id, object_key, stored_now in stored:
                    if stored_now and rt.metadata.catalog.get_artifact(user, artifact_id) is None:
                        rt.objects.delete(object_key)
                raise
            leased: list[int] = []
            messages: list[OutboxMessage] = []
            out: list[Submitted | Exception] = []
            for (_job_id, _record, message, _hash), (artifact_id, object_key, stored_now), result in zip(
                    prepared, stored, results, strict=True):
                if isinstance(result, Exception):
                    if stored_now and rt.metadata.catalog.get_artifact(user, artifact_id) is None:
                        rt.objects.delete(object_key)
                    out.append(result)
                    continue
                if result.leased:
                    leased.extend(result.leased)
                    messages.append(message)
                out.append(Submitted(result.job_id, artifact_id, result.created, result.original_job))
            if self.relay is not None:
                self.relay.hand_over(tuple(leased), messages)
        return out

    def register(self, user: str, artifact_id: str, object_key: str, *, size: int, sha256: str, content_type: str,
                 filename: str | None, title: str | None, captured_at: datetime | None, source_uri: str,
                 idempotency_key: str | None, attributes: dict[str, str], capture: CaptureKind) -> Submitted:
        """Register bytes already stored under ``object_key`` with a new job (a retry reuses them)."""
        rt = self.rt
        job_id = ids.job_id(user, idempotency_key or str(uuid.uuid4()))
        with telemetry.tracer().start_as_current_span("ingest submit", attributes={
                "sb.job.id": job_id, "sb.content_type": content_type, "sb.size_bytes": size}) as span:
            telemetry.set_user(user, span)
            job_id, record, message, request_hash = self._registration(
                user, artifact_id, object_key, size=size, sha256=sha256, content_type=content_type,
                filename=filename, title=title, captured_at=captured_at, source_uri=source_uri,
                idempotency_key=idempotency_key, attributes=attributes, capture=capture, job_id=job_id)
            # Queued leased to this process's relay, which publishes it without claiming it first.
            result = rt.metadata.intake.submit(record, job_id, [message], request_hash=request_hash,
                                               lease_s=self.lease_s)
            if self.relay is not None:
                self.relay.hand_over(result.leased, [message])
        return Submitted(result.job_id, artifact_id, result.created, result.original_job)

    def _registration(self, user: str, artifact_id: str, object_key: str, *, size: int, sha256: str,
                      content_type: str, filename: str | None, title: str | None, captured_at: datetime | None,
                      source_uri: str, idempotency_key: str | None, attributes: dict[str, str],
                      capture: CaptureKind, job_id: str | None = None
                      ) -> tuple[str, ArtifactRecord, OutboxMessage, str | None]:
        """The job id, artifact row, outgoing message and request hash of a submission of stored bytes."""
        rt = self.rt
        job_id = job_id or ids.job_id(user, idempotency_key or str(uuid.uuid4()))
        request_hash = fingerprint(sha256, content_type, filename, title, captured_at, attributes.get("kind")) \
            if idempotency_key else None
        now = datetime.now(UTC)
        event = ArtifactSubmitted(
            event_id=ids.event_id(job_id, "submitted"), job_id=job_id, user_id=user, source_uri=source_uri,
            source_id=ids.source_id(user, source_uri), artifact_id=artifact_id, content_type=content_type,
            filename=filename, title=title, object_key=object_key, content=None, size_bytes=size,
            sha256=sha256, captured_at=captured_at, submitted_at=now, producer="gateway", attributes=attributes,
            capture=capture,
        )
        record = ArtifactRecord(
            artifact_id=artifact_id, user_id=user, source_id=event.source_id or "", source_uri=source_uri,
            object_key=object_key, content_type=content_type, size_bytes=size, sha256=sha256,
            filename=filename, title=title, captured_at=captured_at, submitted_at=now, producer="gateway",
            attributes=attributes,
        )
        # The trace goes with the message: the relay publishes it later, the stages continue it.
        message = OutboxMessage(topic=rt.names(topic_names.ARTIFACTS_SUBMITTED), key=user.encode(),
                                value=rt.codec.encode(event),
                                headers=telemetry.with_trace_headers(rt.codec.headers(event)))
        return job_id, record, message, request_hash

    def url(self, user: str, url: str, title: str | None, captured_at: datetime | None,
            idempotency_key: str | None, attributes: dict[str, str] | None = None) -> Submitted:
        """Queue a web page for the fetcher (which applies robots.txt, timeouts and size limits)."""
        rt = self.rt
        job_id = ids.job_id(user, idempotency_key or str(uuid.uuid4()))
        event = UrlRequested(event_id=ids.event_id(job_id, "requested"), job_id=job_id, user_id=user, url=url,
                             title=title, captured_at=captured_at, requested_at=datetime.now(UTC),
                             producer="gateway", attributes=dict(attributes or {}))
        message = OutboxMessage(topic=rt.names(topic_names.URLS_REQUESTED), key=user.encode(),
                                value=rt.codec.encode(event),
                                headers=telemetry.with_trace_headers(rt.codec.headers(event)))  # the request's trace
        result = rt.metadata.intake.request_url(
            user, job_id, url, title, [message],
            request_hash=fingerprint(url, title, captured_at) if idempotency_key else None, lease_s=self.lease_s)
        if self.relay is not None:
            self.relay.hand_over(result.leased, [message])
        return Submitted(result.job_id, None, result.created)


def private_target(url: str, networks: Networks) -> str | None:
    """Why a URL written with an address this server must not fetch from is refused at once (names are
    resolved and checked by the fetcher, which is the guard; this only answers the obvious early)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return "that is not a valid URL"
    address = literal_address(host)
    if host.lower().rstrip(".") == "localhost" or host.lower().endswith(".localhost"):
        address = ipaddress.ip_address("127.0.0.1")
    if address is None:
        return None
    problem = address_problem(address, networks)
    if problem is None:
        return None
    return (f"fetching {short(host)} is not allowed: it is {problem} ({address}), and this server only fetches "
            "public web pages")
