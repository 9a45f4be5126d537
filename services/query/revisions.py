"""Asking again: a regenerated answer, or an edited question sent again ("edit and resend"); and an answer
whose sources were edited since it was given.

The conversation keeps both turns: the earlier one as it was, and the new one marked with what it
revises (``meta.revises`` of the new turn: ``{"question", "how"}``).  The new question is read as it
would have been at that point of the conversation: only the turns before the revised question are
its context, so a follow-up does not take its subject from the very answer it replaces.

A source edited after an answer quoted it (``PATCH /v1/sources/{id}``, or a new upload of the same file) is
marked in that answer's sources with ``edited_since``: the version the answer quoted, the version it is at
now, and links to the version quoted (its original file) and to the source's history.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from secondbrain.ports import Catalog, Conversations, Turn
from secondbrain.validation import Text

HISTORY_TURNS = 12  # as many earlier turns as a plain follow-up gets
SEARCHED_TURNS = 500  # how far back the revised question is looked for


class Revision(BaseModel):
    """What a question revises: an earlier question of the same conversation, asked again as it was
    (``regenerate``) or edited (``edit``)."""

    question: Text = Field(min_length=1, max_length=2000, description="The earlier question, as it was asked.")
    how: Literal["regenerate", "edit"] = Field(description="regenerate: the same question asked again; edit: "
                                                          "the question changed and sent again.")


def turns_before(conversations: Conversations, user_id: str, conversation_id: str, question: str) -> list[Turn]:
    """The turns before the latest asking of ``question`` (at most :data:`HISTORY_TURNS`), oldest first;
    the latest turns when it is not found (a revision of a question this conversation never kept)."""
    turns = conversations.get_turns(user_id, conversation_id, SEARCHED_TURNS)
    for i in range(len(turns) - 1, -1, -1):
        if turns[i].role == "user" and turns[i].content == question:
            return turns[max(0, i - HISTORY_TURNS):i]
    return turns[-HISTORY_TURNS:]


def mark_edited_sources(catalog: Catalog, user_id: str, exchanges: list[dict[str, Any]]) -> None:
    """Mark, in place, each source of these answers whose quoted version is no longer its current one."""
    documents = {s.get("document_id") for e in exchanges for s in e.get("sources") or () if s.get("document_id")}
    edited: dict[str, dict[str, Any]] = {}
    for document_id in sorted(d for d in documents if isinstance(d, str)):
        quoted = catalog.get_document(user_id, document_id)
        if quoted is None or quoted.superseded_at is None:
            continue  # still the current version (or gone with its source, whose answers are redacted)
        current = next((r.version for r in catalog.list_sources(user_id, 50, 0, source_id=quoted.source_id)
                        if r.version is not None and not r.superseded), None)
        edited[document_id] = {
            "quoted_version": quoted.version, "current_version": current,
            "quoted_url": f"/v1/artifacts/{quoted.artifact_id}/raw", "history_url": f"/v1/sources/{quoted.source_id}"}
    for e in exchanges:
        for s in e.get("sources") or ():
            if s.get("document_id") in edited:
                s["edited_since"] = edited[s["document_id"]]
