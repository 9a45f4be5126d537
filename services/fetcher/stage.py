"""Fetcher stage: ``urls.requested`` -> raw snapshot in object storage -> ``artifacts.submitted``.

Fetching happens in the pipeline, not in the HTTP request: a slow or unreachable site
delays only its owner's lane, is retried with backoff, and ends as a failed job with a
readable reason.  The page's bytes are stored exactly as served (the snapshot), then handed
to the extractor like any uploaded file, with the URL as the source so that a later fetch
of the same URL becomes a new version of it.  No broker import: the runner does Kafka.

Ports: the object store (snapshots), users (admission), intake (jobs for other apps' requests, the
artifact a job fetched), the job ledger (admission), the lifecycle (deleted sources) and the job fence (a
snapshot is stored only while the job is live).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import UTC
from typing import ClassVar, NoReturn

from secondbrain import ids, keys
from secondbrain.errors import PermanentError, SourceGone
from secondbrain.events.models import ArtifactSubmitted, UrlRequested
from secondbrain.pipeline import admission, topology
from secondbrain.pipeline.stage import JobRef, require_known_user
from secondbrain.ports import (
    ApiKeys,
    ArtifactRecord,
    Catalog,
    Intake,
    JobFence,
    JobGone,
    JobLedger,
    Lifecycle,
    ObjectStore,
    Users,
)
from services.fetcher.fetch import Fetched, FetchPolicy, fetch

log = logging.getLogger(__name__)

Fetcher = Callable[[str, FetchPolicy], Fetched]


class FetcherStage:
    """Downloads a requested web page and submits the snapshot for extraction."""

    step: ClassVar[topology.Step] = topology.FETCH

    def __init__(self, objects: ObjectStore, *, users: Users, api_keys: ApiKeys, intake: Intake, jobs: JobLedger,
                 fence: JobFence, catalog: Catalog, lifecycle: Lifecycle, policy: FetchPolicy,
                 fetcher: Fetcher = fetch) -> None:
        self.objects = objects
        self.fence = fence
        self.users = users
        self.api_keys = api_keys
        self.intake = intake
        self.jobs = jobs
        self.catalog = catalog
        self.lifecycle = lifecycle
        self.policy = policy
        self.fetcher = fetcher

    def job_of(self, event: UrlRequested) -> JobRef:
        """Job, user and source (the page's URL) of the event."""
        return JobRef(event.job_id, event.user_id, ids.source_id(event.user_id, ids.normalise_url(event.url)))

    def _left_over(self, ev: UrlRequested) -> bool:
        """Whether the request is work still in flight for a source deleted since (it is dropped)."""
        source_id = ids.source_id(ev.user_id, ids.normalise_url(ev.url))
        return self.lifecycle.source_deleted(ev.user_id, source_id, ev.job_id, ev.requested_at)

    def admit(self, event: UrlRequested, value: bytes, headers: Mapping[str, str]) -> None:
        """Let in URL requests signed by one of the user's keys (creating their job), or queued by
        the gateway for this URL (see :mod:`secondbrain.pipeline.admission`); drop work left over
        from a source deleted since, before anything is fetched."""
        if self._left_over(event):
            raise SourceGone(event.url)
        wanted = {event.url, ids.normalise_url(event.url)}
        signed = admission.admit(self.users, self.api_keys, self.jobs, user_id=event.user_id, job_id=event.job_id,
                                 value=value, headers=headers, produced_here=lambda job: job.source_uri in wanted)
        if signed is not None and self.jobs.get_job(event.user_id, event.job_id) is None:
            # Another app asked for this page: give it a job like the gateway would.
            self.intake.request_url(event.user_id, event.job_id, event.url, event.title, [])

    def discard(self, event: UrlRequested, outputs: list[ArtifactSubmitted]) -> None:
        """The source was deleted while the page was fetched: keep nothing of it."""
        for out in outputs:
            if out.artifact_id and out.object_key and self.catalog.get_artifact(out.user_id, out.artifact_id) is None:
                self.objects.delete(out.object_key)

    def _refuse_missing_job(self, ev: UrlRequested) -> NoReturn:
        """The event's job is not (or no longer) the user's: left over from a deleted source (dropped), or
        an event naming another user's job (refused)."""
        if self._left_over(ev):
            raise SourceGone(ids.normalise_url(ev.url))
        raise PermanentError("the event's job_id is unknown or belongs to another user", kind="unauthorized")

    def process(self, event: UrlRequested, admitted: None = None) -> list[ArtifactSubmitted]:
        """Fetch one page, store it and emit the artifact submission (admission hands it nothing)."""
        ev = event
        require_known_user(self.users, ev.user_id)
        page = self.fetcher(ev.url, self.policy)
        sha = ids.sha256_hex(page.body)
        artifact_id = ids.artifact_id(ev.user_id, sha)
        object_key = keys.artifact_key(ev.user_id, artifact_id)
        content_type = page.content_type + (f"; charset={page.charset}" if page.charset else "")
        try:
            with self.fence.hold(ev.user_id, ev.job_id):  # not for a job deleted, erased or replaced meanwhile
                stored = self.objects.stat(object_key) is None
                if stored:
                    self.objects.put(object_key, page.body, size=len(page.body), content_type=content_type)
        except JobGone as exc:
            if exc.state == "gone":
                self._refuse_missing_job(ev)
            raise
        source_uri = ids.normalise_url(ev.url)
        attributes = {**ev.attributes, "fetched_at": page.fetched_at.astimezone(UTC).isoformat(),
                      "final_url": page.url, "http_status": str(page.status)}
        if page.redirects:
            attributes["redirects"] = " ".join(page.redirects)
        attributes.update({f"http_{k.replace('-', '_')}": v for k, v in page.headers.items()})
        filename = _filename(page.url, page.content_type)
        record = ArtifactRecord(
            artifact_id=artifact_id, user_id=ev.user_id, source_id=ids.source_id(ev.user_id, source_uri),
            source_uri=source_uri, object_key=object_key, content_type=content_type, size_bytes=len(page.body),
            sha256=sha, filename=filename, title=ev.title, captured_at=ev.captured_at,
            submitted_at=page.fetched_at, producer=ev.producer, attributes=attributes,
        )
        if not self.intake.attach_artifact(record, ev.job_id):
            if stored and self.catalog.get_artifact(ev.user_id, artifact_id) is None:
                self.objects.delete(object_key)  # deleted while the page was being fetched: keep nothing of it
            self._refuse_missing_job(ev)
        out = ArtifactSubmitted(
            event_id=ids.event_id(ev.job_id, self.step.name), job_id=ev.job_id, user_id=ev.user_id,
            source_uri=source_uri, source_id=record.source_id, artifact_id=artifact_id, content_type=content_type,
            filename=filename, title=ev.title, object_key=object_key, content=None, size_bytes=len(page.body),
            sha256=sha, captured_at=ev.captured_at, submitted_at=page.fetched_at, producer=ev.producer,
            attributes=attributes, capture="page",
        )
        log.info("page fetched", extra={"job_id": ev.job_id, "status": page.status, "bytes": len(page.body),
                                         "content_type": page.content_type, "redirects": len(page.redirects)})
        return [out]


def _filename(url: str, content_type: str) -> str | None:
    """A file name for the snapshot (its extension helps the extractor confirm the type)."""
    ext = {"text/html": ".html", "application/xhtml+xml": ".html", "application/pdf": ".pdf",
           "text/plain": ".txt", "text/markdown": ".md"}.get(content_type)
    last = url.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    if "." in last and len(last) <= 120 and ext and last.lower().endswith(ext):
        return last
    stem = last if last and "." not in last and len(last) <= 100 else "page"
    return f"{stem}{ext}" if ext else None

