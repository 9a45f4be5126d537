"""Asking again: a regenerated answer, or an edited question sent again ("edit and resend").

The conversation keeps both turns: the earlier one as it was, and the new one marked with what it
revises (``meta.revises`` of the new turn: ``{"question", "how"}``).  The new question is read as it
would have been at that point of the conversation: only the turns before the revised question are
its context, so a follow-up does not take its subject from the very answer it replaces.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from secondbrain.ports import Conversations, Turn
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
