"""Captures into the gateway: each one checked, then submitted through the gateway's own submission with an
idempotency key made of the item and its content, so an item imported again writes nothing.

Blocking (object store and Postgres): call it from a worker thread.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from secondbrain import ids, lifecycle
from secondbrain.addresses import parse_networks
from secondbrain.http_security import short
from secondbrain.pipeline.relay import OutboxRelay
from secondbrain.ports import ForeignConversation, JobView, Turn
from secondbrain.runtime import Runtime
from secondbrain.submissions import FileCapture, Submissions, Submitted, private_target
from secondbrain.validation import text_problem
from services.importers.model import KINDS, Capture, Conversation, ConversationTurn

Status = Literal["imported", "unchanged", "refused"]
MAX_ATTRIBUTES = 24
MAX_ATTRIBUTE_CHARS = 1000
MAX_TURNS = 10_000
_SHA256 = re.compile(r"[0-9a-f]{64}")
MAX_RETURNS = 20  # an item back to an earlier content this many times over is not followed further


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one capture: ``imported`` (a new job), ``unchanged`` (imported before with the same
    content: nothing written) or ``refused`` (``reason`` says why; nothing written)."""

    label: str
    source_uri: str
    status: Status
    job_id: str | None = None
    reason: str | None = None
    replaced: int = 0  # records an earlier version made per occurrence of this series, deleted now
    job: JobView | None = field(default=None, compare=False)  # an unchanged item's job, as it stood when filed

    def json(self) -> dict[str, Any]:
        return {"label": self.label, "source_uri": self.source_uri, "status": self.status, "job_id": self.job_id,
                "reason": self.reason, "replaced": self.replaced}


@dataclass(frozen=True, slots=True)
class _Known:
    """What a batch's unchanged items' look-up found: their jobs, and those whose document is no longer current."""

    jobs: Mapping[str, JobView]
    gone: set[str]


class CaptureSubmitter:
    """Submits captures for one runtime (and this process's relay, which publishes them at once)."""

    def __init__(self, rt: Runtime, relay: OutboxRelay | None) -> None:
        self.rt = rt
        self.settings = rt.settings
        self.submissions = Submissions(rt, relay)
        self.networks = parse_networks(rt.settings.fetch_allow_networks)

    def submit(self, user: str, capture: Capture, data: bytes | None = None) -> Outcome:
        """Submit one capture (``data``: its bytes, when already read)."""
        checked = self._checked(capture, data)
        if isinstance(checked, Outcome):
            return checked
        body, key = checked
        return self._settled(user, capture, body, key, self._file(user, capture, body, key))

    def submit_many(self, user: str, items: Sequence[tuple[Capture, bytes | None]]) -> list[Outcome]:
        """Submit several captures (each with its bytes, when already read): each checked on its own, then the
        files and notes among them filed with one write and one hand-over to the relay
        (:meth:`~secondbrain.submissions.Submissions.files`); web pages one by one."""
        out: list[Outcome | None] = []
        files: list[tuple[int, Capture, bytes, str]] = []
        for i, (capture, data) in enumerate(items):
            checked = self._checked(capture, data)
            if isinstance(checked, Outcome):
                out.append(checked)
                continue
            body, key = checked
            if capture.kind == "url":
                out.append(self._settled(user, capture, body, key, self._file(user, capture, body, key)))
                continue
            out.append(None)
            files.append((i, capture, body, key))
        filed = self.submissions.files(user, [FileCapture(
            data=body, sha256=hashlib.sha256(body).hexdigest(),
            content_type=capture.content_type or "application/octet-stream", filename=capture.filename,
            title=capture.title, captured_at=capture.captured_at, source_uri=capture.source_uri, idempotency_key=key,
            attributes=dict(capture.attributes), capture="note" if capture.kind == "note" else "import")
            for _i, capture, body, key in files])
        submitted: list[Submitted] = []
        for done in filed:
            if isinstance(done, Exception):
                raise done
            submitted.append(done)
        known = self._known(user, submitted)
        twice = {uri for uri, n in Counter(capture.source_uri for _i, capture, _b, _k in files).items() if n > 1}
        for (i, capture, body, key), done in zip(files, submitted, strict=True):
            # A source named twice in the batch is looked up afresh: settling its first item may file again
            out[i] = self._settled(user, capture, body, key, done, None if capture.source_uri in twice else known)
        return [o for o in out if o is not None]

    def _known(self, user: str, filed: Sequence[Submitted]) -> _Known:
        """The jobs of the items filed before (unchanged), and which of their documents are no longer current:
        two statements for a batch, where a whole export sent again took three look-ups an item."""
        md = self.rt.metadata
        before = [done.job_id for done in filed if not done.created]
        jobs = md.jobs.get_jobs(user, before) if before else {}
        documents = {job.job_id: ids.document_id(job.artifact_id) for job in jobs.values()
                     if job.status == "succeeded" and job.artifact_id is not None}
        gone = md.catalog.superseded(user, list(documents.values())) if documents else set()
        return _Known(jobs, {job_id for job_id, document in documents.items() if document in gone})

    def _checked(self, capture: Capture, data: bytes | None) -> Outcome | tuple[bytes, str]:
        """The capture's bytes and submission key, or the outcome refusing it."""
        problem = self.problem(capture)
        if problem:
            return Outcome(capture.label, capture.source_uri, "refused", reason=problem)
        if capture.kind == "url":
            assert capture.url is not None
            refusal = None if self.settings.fetch_allow_private else private_target(capture.url, self.networks)
            if refusal:
                return Outcome(capture.label, capture.source_uri, "refused", reason=refusal)
            body = b""
        else:
            body = capture.data() if data is None else data
            if not body:
                return Outcome(capture.label, capture.source_uri, "refused", reason="it is empty")
            if len(body) > self.settings.max_upload_bytes:
                return Outcome(capture.label, capture.source_uri, "refused",
                               reason=f"it is {len(body)} bytes, over the {self.settings.max_upload_bytes}-byte "
                                      "limit for one file (SB_MAX_UPLOAD_BYTES)")
            too_long = self.text_problem(capture, body)
            if too_long:
                return Outcome(capture.label, capture.source_uri, "refused", reason=too_long)
        return body, capture.submission_key(body) if capture.kind != "url" else capture.submission_key()

    def _settled(self, user: str, capture: Capture, body: bytes, key: str, done: Submitted,
                 known: _Known | None = None) -> Outcome:
        """What became of a capture filed as ``done``: an item back to an earlier content is filed again as its
        turn, and a calendar series replaces its occurrences.  ``known``: its batch's jobs, looked up together."""
        for _ in range(MAX_RETURNS):
            # The same content was imported before.  If a later version of the source replaced it since (an
            # occurrence cancelled, then restored), it is that content's turn again: a new version, once (named
            # by the submission that replaced it, so importing it again finds that one).
            after = None if done.created or not capture.current else self._replaced_by(user, capture.source_uri,
                                                                                        done.job_id, known)
            if after is None:
                break
            key = f"{key}:after:{after}"
            done = self._file(user, capture, body, key)
        replaced = self._replace_occurrences(user, capture) if done.created else 0
        return Outcome(capture.label, capture.source_uri, "imported" if done.created else "unchanged", done.job_id,
                       replaced=replaced, job=None if done.created or known is None else known.jobs.get(done.job_id))

    def _replace_occurrences(self, user: str, capture: Capture) -> int:
        """A calendar's series is one record now; earlier versions made one per occurrence
        (``import:ics:<uid>/<occurrence>``).  Those give way to the series when it comes in: deleted like any
        source (where this process has the vector store; elsewhere they stay until a refresh deletes them)."""
        vectors = self.rt.vectors
        if capture.attributes.get("import.series") != "yes" or vectors is None:
            return 0
        gone = 0
        for source_id in self.rt.metadata.catalog.sources_under(user, capture.source_uri + "/"):
            try:
                lifecycle.delete_source(self.rt.metadata, self.rt.objects, vectors, user, source_id)
                gone += 1
            except lifecycle.SourceNotFound:
                continue  # deleted meanwhile
        return gone

    def _replaced_by(self, user: str, source_uri: str, job_id: str, known: _Known | None = None) -> str | None:
        """The submission of the source that came after ``job_id`` when that job's content is no longer the
        source's current version; None when it still is (or is still on its way)."""
        md = self.rt.metadata
        ahead = known if known is not None and job_id in known.jobs else None  # looked up with its batch
        job = ahead.jobs[job_id] if ahead is not None else md.jobs.get_job(user, job_id)
        if job is None or job.status in ("queued", "running", "failed", "duplicate"):
            return None
        if job.status == "superseded":
            return job.superseded_by
        if job.artifact_id is None:
            return None
        gone = job_id in ahead.gone if ahead is not None else md.catalog.is_superseded(
            user, ids.document_id(job.artifact_id))
        if not gone:
            return None
        history = [r.job_id for r in reversed(md.catalog.list_sources(user, 200, source_id=ids.source_id(
            user, source_uri)))]
        later = history[history.index(job_id) + 1:] if job_id in history else []
        return later[0] if later else None

    def _file(self, user: str, capture: Capture, body: bytes, key: str) -> Submitted:
        if capture.kind == "url":
            assert capture.url is not None
            return self.submissions.url(user, capture.url, capture.title, capture.captured_at, key,
                                        dict(capture.attributes))
        return self.submissions.file(
            user, data=body, size=len(body), sha256=hashlib.sha256(body).hexdigest(),
            content_type=capture.content_type or "application/octet-stream", filename=capture.filename,
            title=capture.title, captured_at=capture.captured_at, source_uri=capture.source_uri,
            idempotency_key=key, attributes=dict(capture.attributes),
            capture="note" if capture.kind == "note" else "import")

    def text_problem(self, capture: Capture, body: bytes) -> str | None:
        """A note or a chat longer than ``POST /v1/notes`` and ``/v1/pages`` take (``SB_MAX_NOTE_CHARS``): the
        same limit whichever route brings it."""
        limit = self.settings.max_note_chars
        if capture.kind not in ("note", "chat") or len(body) <= limit:  # never more characters than bytes
            return None
        chars = len(body.decode("utf-8", "replace"))
        if chars <= limit:
            return None
        return (f"it has {chars} characters; the limit for a {capture.kind} is {limit} (SB_MAX_NOTE_CHARS). "
                "Upload it as a file instead, or ask the operator to raise the limit.")

    def keep_conversation(self, user: str, conversation: Conversation) -> Outcome:
        """Keep an imported conversation as it was (its times, title and turns); ``unchanged`` when the person
        imported it before."""
        if len(conversation.turns) > MAX_TURNS or not all(t.role in ("user", "assistant") for t in conversation.turns):
            return Outcome(conversation.label, conversation.key, "refused",
                           reason=f"a conversation holds at most {MAX_TURNS} turns, each a question or an answer")
        conversation_id = ids.event_id("imported conversation", user, conversation.key)
        here = _CitedHere(user, conversation, conversation_id)
        turns = [Turn(t.role, t.content, t.created_at, here.meta(dict(t.meta))) for t in conversation.turns]
        try:
            made = self.rt.metadata.conversations.import_conversation(user, conversation_id, conversation.title,
                                                                      conversation.created_at, turns)
        except ForeignConversation:
            return Outcome(conversation.label, conversation.key, "refused", reason="it is another person's")
        return Outcome(conversation.label, conversation.key, "imported" if made else "unchanged")

    def job(self, user: str, job_id: str) -> JobView | None:
        return self.rt.metadata.jobs.get_job(user, job_id)

    @staticmethod
    def problem(capture: Capture) -> str | None:
        """What makes a capture unacceptable (it may come from any client), as a sentence, or None."""
        if capture.kind not in KINDS:
            return f"unknown kind {short(capture.kind)!r} (note, chat, file or url)"
        if capture.kind == "url":
            url = capture.url or ""
            if not url.lower().startswith(("http://", "https://")) or len(url) > 8192 or not url.split("://", 1)[1]:
                return "only http and https pages of at most 8192 characters can be fetched"
            if capture.source_uri != url:
                return "a web page's source is its address"
        elif len(capture.source_uri) > 2000 or not (capture.source_uri.startswith("import:") or (
                capture.kind == "file" and capture.source_uri.startswith("file:"))):
            # file:...: a file named as ``POST /v1/artifacts`` names it, by its path for good (``secondbrain
            # watch``, file:///...) or by its name (``secondbrain ingest`` of many files, file:<name>).
            return ("an imported item's source must be an import: URI (a file's may be a file: URI) of at most "
                    "2000 characters")
        for name, value in (("title", capture.title), ("file name", capture.filename), ("source", capture.source_uri),
                            ("address", capture.url), ("label", capture.label)):
            if value is not None and text_problem(value):
                return f"its {name} {text_problem(value)}"
        if capture.title is not None and len(capture.title) > 500:
            return "its title is over 500 characters"
        if capture.filename is not None and ("/" in capture.filename or "\\" in capture.filename
                                             or len(capture.filename) > 255):
            return "its file name must be a plain name of at most 255 characters"
        return _attributes_problem(capture.attributes)


def _attributes_problem(attributes: Mapping[str, str]) -> str | None:
    if len(attributes) > MAX_ATTRIBUTES:
        return f"it has more than {MAX_ATTRIBUTES} attributes"
    for key, value in attributes.items():
        if not isinstance(key, str) or not isinstance(value, str):
            return "its attributes must be text"
        if key != "kind" and not key.startswith("import."):
            return f"attribute {short(key)!r} is not an import's (import.*)"
        if key == "kind" and value != "note":
            return "the only kind an attribute may name is note"
        if len(key) > 100 or len(value) > MAX_ATTRIBUTE_CHARS or text_problem(key) or text_problem(value):
            return f"attribute {short(key)!r} is too long or not text"
    return None


def capture_from_json(item: Mapping[str, Any], content: bytes) -> Capture:
    """A capture sent in a batch (its bytes came in their own part); raises ValueError with a sentence."""
    def text(name: str, *, required: bool = False) -> str | None:
        value = item.get(name)
        if value is None or value == "":
            if required:
                raise ValueError(f"{name} is missing")
            return None
        if not isinstance(value, str):
            raise ValueError(f"{name} must be text")
        return value

    captured = text("captured_at")
    when = None
    if captured is not None:
        try:
            when = datetime.fromisoformat(captured.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"captured_at {short(captured)!r} is not an ISO 8601 time") from None
        if when.tzinfo is None:
            raise ValueError("captured_at must say its zone (an offset or Z)")
    attributes = item.get("attributes") or {}
    if not isinstance(attributes, dict):
        raise ValueError("attributes must be an object")
    kind = text("kind", required=True) or ""
    current = item.get("current", True)
    if not isinstance(current, bool):
        raise ValueError("current must be true or false")
    return Capture(source_uri=text("source_uri", required=True) or "", kind=kind,  # type: ignore[arg-type]
                   label=(text("label") or text("title") or text("source_uri") or "")[:300], title=text("title"),
                   captured_at=when, content=content, content_type=(text("content_type") or "")[:200].lower(),
                   filename=text("filename"), url=text("url"), attributes=attributes, current=current)


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class _CitedHere:
    """An imported answer's records pointed at the imported copies: the ids where the conversation came from
    (its own, the cited sources', files', documents' and passages', also inside links) become the ones the
    importing person's copies have here (ids are derived from the user and the content, see
    :mod:`secondbrain.ids`); the cited source's address becomes the imported one.  Ids of things not imported
    stay as they were."""

    def __init__(self, user: str, conversation: Conversation, conversation_id: str) -> None:
        self.addresses = dict(conversation.sources)
        self.ids: dict[str, str] = {conversation.key: conversation_id}
        self.ids.update({old: ids.source_id(user, uri) for old, uri in conversation.sources.items()})
        self.documents: dict[str, str] = {}
        for old, sha256 in conversation.artifacts.items():
            new = ids.artifact_id(user, sha256)
            self.ids[old] = new
            self.documents[ids.document_id(old)] = ids.document_id(new)
        self.ids.update(self.documents)

    def meta(self, meta: dict[str, Any]) -> dict[str, Any]:
        self._passages(meta)
        moved: dict[str, Any] = self._moved(meta)
        return moved

    def _passages(self, value: Any) -> None:
        """A cited passage's id, from its document's id here and its place in it."""
        if isinstance(value, dict):
            doc, index = self.documents.get(str(value.get("document_id"))), value.get("chunk_index")
            if doc is not None and isinstance(value.get("chunk_id"), str) and isinstance(index, int):
                self.ids[value["chunk_id"]] = ids.chunk_id(doc, index)
            for v in value.values():
                self._passages(v)
        elif isinstance(value, list):
            for v in value:
                self._passages(v)

    def _moved(self, value: Any) -> Any:
        if isinstance(value, dict):
            out = {k: self._moved(v) for k, v in value.items()}
            if isinstance(value.get("source_uri"), str) and value.get("source_id") in self.addresses:
                out["source_uri"] = self.addresses[value["source_id"]]
            return out
        if isinstance(value, list):
            return [self._moved(v) for v in value]
        if isinstance(value, str):
            return _UUID.sub(lambda m: self.ids.get(m.group(0), m.group(0)), value)
        return value


def conversation_from_json(item: Mapping[str, Any]) -> Conversation:
    """A conversation sent in a batch's manifest; raises ValueError with a sentence."""
    def when(value: Any) -> datetime:
        if not isinstance(value, str):
            raise ValueError("a conversation's times must be ISO 8601 text")
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            raise ValueError("a conversation's times must say their zone")
        return parsed

    turns = item.get("turns")
    if not isinstance(turns, list) or not turns:
        raise ValueError("a conversation needs its turns")
    if not all(isinstance(t, dict) and t.get("role") in ("user", "assistant") for t in turns):
        raise ValueError("each turn of a conversation is a question (user) or an answer (assistant)")
    made = tuple(ConversationTurn(role=t["role"], content=str(t.get("content") or ""),
                                  created_at=when(t.get("created_at")),
                                  meta=dict(t["meta"]) if isinstance(t.get("meta"), dict) else {})
                 for t in turns)
    key, title = item.get("key"), item.get("title")
    if not isinstance(key, str) or not key or len(key) > 200 or (title is not None and not isinstance(title, str)):
        raise ValueError("a conversation needs its key (at most 200 characters) and a text title")
    sources = item.get("sources") or {}
    if not isinstance(sources, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.startswith("import:")
                                                for k, v in sources.items()):
        raise ValueError("a conversation's sources map ids to import: addresses")
    files = item.get("artifacts") or {}
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) and _SHA256.fullmatch(v)
                                              for k, v in files.items()):
        raise ValueError("a conversation's artifacts map ids to the SHA-256 (hex) of the files imported for them")
    return Conversation(key=key, label=str(item.get("label") or title or key)[:300], title=title,
                        created_at=when(item.get("created_at")), turns=made, sources=sources, artifacts=files)
