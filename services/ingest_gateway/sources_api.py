"""Changing what is kept: editing a source in place, and tags.

``PATCH /v1/sources/{id}`` changes a note's or a text file's words, its title and its tags.  New words
are a new version of the source, submitted the way uploading the same source again is (the same source
address, :class:`~secondbrain.submissions.Submissions`): it is extracted and indexed again, the earlier
version is superseded and stays in the source's history (``GET /v1/sources/{id}``).  A title alone is
changed on the current version; tags belong to the source, whatever its version.

``GET /v1/tags`` lists the caller's tags with how many sources have each; ``POST`` and ``DELETE
/v1/tags/{tag}/sources`` add a tag to several sources at once or take it off.  Every route acts for the
caller only: another user's source is 404, like one that never existed.
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from secondbrain import ids
from secondbrain.events.models import unsaid_capture
from secondbrain.ports import MetadataStore, SourceView
from secondbrain.tags import MAX_TAGS_PER_SOURCE, normalise_tag, normalise_tags
from secondbrain.validation import Text
from services.http_helpers import PendingCaptures
from services.ingest_gateway.api import _accepted_body, check_backlog
from services.ingest_gateway.deps import CurrentUser, MetadataDep, RelayDep, SettingsDep, SubmissionsDep
from services.ingest_gateway.lifecycle_api import MAX_VERSIONS, detail

router = APIRouter(tags=["your data"])

# The kinds of file whose words are the file itself: what an edit writes is what the source is.
EDITABLE_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown"})
MAX_IDS = 500


class SourceEdit(BaseModel):
    """What to change of a source; any of the three (a field left out stays as it is)."""

    text: Text | None = Field(None, min_length=1, description="The new words (Markdown for a note): a new version.")
    title: Text | None = Field(None, min_length=1, max_length=500, description="The new title.")
    tags: list[Text] | None = Field(None, max_length=MAX_TAGS_PER_SOURCE,
                                    description="The source's tags from now on (all of them; [] removes every one).")


class TaggedIn(BaseModel):
    """The sources a tag is added to or taken off."""

    source_ids: list[Text] = Field(min_length=1, max_length=MAX_IDS)


def _main_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _not_editable(row: SourceView) -> str:
    """Why this source's words cannot be edited, as a sentence."""
    kind = _main_type(row.content_type) or "a page still being fetched"
    if row.modality == "audio" or kind.startswith(("audio/", "video/")):
        what = "a recording: its words are its transcript"
    elif row.modality == "image" or kind.startswith("image/"):
        what = "a picture: its words were read from it"
    elif row.source_uri.startswith(("http://", "https://")) and kind == "text/html":
        what = "a web page: its words are the page's"
    else:
        what = f"a file of type {kind}: its words come from the file"
    return (f"the text of this source cannot be edited here, as it is {what}. Its title and tags can be "
            "changed; for other words, add the changed file again under the same name (a new version).")


def _version_asked(if_match: str | None) -> int | None:
    """The version an ``If-Match`` header names (``3``, ``"3"`` or ``W/"3"``); None without one."""
    if if_match is None or not if_match.strip() or if_match.strip() == "*":
        return None
    value = if_match.strip().removeprefix("W/").strip('"')
    if not value.isdigit():
        raise HTTPException(400, f"If-Match {if_match[:40]!r} does not name a version; send the version you "
                                 "edited, e.g. If-Match: \"3\" (the source's current_version)")
    return int(value)


def _current(rows: list[SourceView]) -> SourceView | None:
    """The source's current version: its newest indexed document that is not superseded."""
    return next((r for r in rows if r.version is not None and not r.superseded and r.status == "succeeded"), None)


@router.patch("/v1/sources/{source_id}", summary="Edit a source: its words (a new version), title or tags",
              responses={202: {"description": "new words: a new version is being indexed (see status_url)"},
                         409: {"description": "this source's words cannot be edited, or it is not ready"},
                         412: {"description": "If-Match names a version that is no longer the current one"}})
async def edit_source(source_id: str, edit: SourceEdit, user: CurrentUser, pending: PendingCaptures,
                      settings: SettingsDep, metadata: MetadataDep, submissions: SubmissionsDep, relay: RelayDep,
                      if_match: Annotated[str | None, Header()] = None,
                      idempotency_key: Annotated[str | None, Header()] = None) -> JSONResponse:
    """Change a note's or a text file's words (``text``), its ``title`` or its ``tags``.  New words are a
    new version of the source, indexed again like a re-upload (202 with the job to follow); the earlier
    versions stay readable in ``GET /v1/sources/{id}``.  A title or tags alone change at once (200 with the
    source).  ``If-Match: "<version>"`` refuses (412) an edit of a version that is no longer the current one.
    The words of a PDF, a picture, a recording or a fetched web page cannot be edited (409)."""
    if edit.text is None and edit.title is None and edit.tags is None:
        raise HTTPException(422, "nothing to change: send text, title or tags")
    rows = await asyncio.to_thread(metadata.catalog.list_sources, user, MAX_VERSIONS, 0, source_id=source_id)
    if not rows:
        raise HTTPException(404, "no such source")
    current = _current(rows)
    asked = _version_asked(if_match)
    in_flight = any(r.status in ("queued", "running") for r in rows)  # an edit or upload not indexed yet
    if asked is not None and in_flight:
        raise HTTPException(412, "this source has a newer version still being taken in (an edit or an upload); "
                                 "open it again once it is done and make your edit on what it says then.")
    if asked is not None and (current is None or current.version != asked):
        now = f"version {current.version}" if current else "no finished version"
        raise HTTPException(412, f"this source changed since version {asked}: it is now at {now}. Open it again "
                                 "and make your edit on what it says now.")
    tags = None
    if edit.tags is not None:
        tags = normalise_tags(edit.tags)
        if len(edit.tags) != len([t for t in edit.tags if normalise_tag(t)]):
            raise HTTPException(422, "a tag needs at least one letter or digit, e.g. garden or work/plans")
    text = edit.text
    if text is not None:
        if current is None:
            raise HTTPException(409, "this source has no finished version yet (it is still being taken in, or "
                                     "it failed); edit it once it is listed as done")
        if _main_type(current.content_type) not in EDITABLE_TYPES or current.modality in ("audio", "image"):
            raise HTTPException(409, _not_editable(current))
        if len(text) > settings.max_note_chars:
            raise HTTPException(413, f"the text has {len(text)} characters; the limit is "
                                     f"{settings.max_note_chars} (SB_MAX_NOTE_CHARS)")
        if not text.strip():
            raise HTTPException(422, "the text is empty; to remove the source, delete it instead")
    if text is not None and current is not None:
        record = await asyncio.to_thread(metadata.catalog.get_artifact, user, current.artifact_id or "")
        if record is None:
            raise HTTPException(409, "this version's file is gone; the source cannot be edited")
        raw = text.encode("utf-8")
        sha = hashlib.sha256(raw).hexdigest()
        if sha != record.sha256:
            uri = next((u for u in (record.source_uri, current.source_uri) if ids.source_id(user, u) == source_id),
                       None)
            if uri is None:
                raise HTTPException(409, "this source is a copy filed under another source's file; edit that one")
            check_backlog(pending, settings)
            content_type = _main_type(record.content_type) + "; charset=utf-8"
            done = await asyncio.to_thread(
                submissions.file, user, data=raw, size=len(raw), sha256=sha, content_type=content_type,
                filename=record.filename, title=edit.title or record.title, captured_at=record.captured_at,
                source_uri=uri, idempotency_key=idempotency_key, attributes=dict(record.attributes),
                capture=unsaid_capture(record.source_uri, record.attributes))
            if tags is not None:
                await asyncio.to_thread(metadata.catalog.set_source_tags, user, source_id, tags)
            if relay is not None:
                relay.wake()
            body = _accepted_body(done).model_dump()
            body.update(source_id=source_id, edited_version=current.version)
            return JSONResponse(body, status_code=202, headers={"Location": body["status_url"]})
    if edit.title is not None and \
            not await asyncio.to_thread(metadata.catalog.retitle_source, user, source_id, edit.title.strip()):
        raise HTTPException(409, "this source has no finished version yet; give it a title once it is done")
    if tags is not None:
        await asyncio.to_thread(metadata.catalog.set_source_tags, user, source_id, tags)
    return JSONResponse(await asyncio.to_thread(detail, metadata, user, source_id))


@router.get("/v1/tags", summary="Your tags, with how many sources have each")
async def get_tags(user: CurrentUser, metadata: MetadataDep) -> dict[str, Any]:
    """Every tag of yours, most used first: ``{"tags": [{"tag": "garden", "sources": 3}, ...]}``."""
    counts = await asyncio.to_thread(metadata.catalog.tag_counts, user)
    return {"tags": [{"tag": tag, "sources": n} for tag, n in counts]}


async def _tag_many(tag: str, body: TaggedIn, user: str, metadata: MetadataStore, *, add: bool) -> dict[str, Any]:
    name = normalise_tag(tag)
    if not name:
        raise HTTPException(422, "a tag needs at least one letter or digit, e.g. garden or work/plans")
    wanted = list(dict.fromkeys(body.source_ids))
    known = await asyncio.to_thread(metadata.catalog.known_sources, user, wanted)
    missing = [s for s in wanted if s not in set(known)]
    if missing:
        raise HTTPException(404, f"no such source: {missing[0][:80]}" + (
            f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    if add:
        have = await asyncio.to_thread(metadata.catalog.source_tags, user, known)
        full = [s for s in known if name not in have.get(s, []) and len(have.get(s, [])) >= MAX_TAGS_PER_SOURCE]
        if full:
            raise HTTPException(422, f"source {full[0]} already has {MAX_TAGS_PER_SOURCE} tags, the most one may have")
    changed = await asyncio.to_thread(metadata.catalog.tag_sources, user, name, known, add=add)
    return {"tag": name, "source_ids": known, "changed": changed}


@router.post("/v1/tags/{tag}/sources", summary="Tag one source or several")
async def add_tag(tag: str, body: TaggedIn, user: CurrentUser, metadata: MetadataDep) -> dict[str, Any]:
    """Add ``tag`` to each source of ``source_ids`` (those that have it already keep it once); 404 when
    one of them is not yours, and then nothing changes."""
    return await _tag_many(tag, body, user, metadata, add=True)


@router.delete("/v1/tags/{tag}/sources", summary="Take a tag off one source or several")
async def remove_tag(tag: str, body: TaggedIn, user: CurrentUser, metadata: MetadataDep) -> dict[str, Any]:
    """Take ``tag`` off each source of ``source_ids``; 404 when one of them is not yours (nothing changes)."""
    return await _tag_many(tag, body, user, metadata, add=False)
