"""What a query request says: a question to answer (:class:`AskIn`) and the help its time words' parameters
show; shared by the HTTP routes and the in-process :mod:`services.query.answerer` (the zone and calendar
conventions are read as every HTTP service reads them, :mod:`services.http_helpers`)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from secondbrain.validation import Text
from services.query.revisions import Revision

TimeFieldParam = Literal["captured_at", "ingested_at"]
HemisphereParam = Literal["north", "south"]
DateOrderParam = Literal["mdy", "dmy", "ymd"]
LOCALE_HELP = ("The user's locale, e.g. en_GB or de-DE: how '3/12' is read, the holidays and seasons "
               "(default: server's).")
COUNTRY_HELP = "ISO 3166 country whose holidays 'Thanksgiving', 'Mother's Day'... are (default: the locale's)."
HEMISPHERE_HELP = "For 'last summer', 'this winter' (default: from the country)."
DATE_ORDER_HELP = "Numeric dates such as '3/12': month first (mdy), day first (dmy) or ymd (default: the locale's)."


class AskIn(BaseModel):
    """A question about the user's data."""

    question: Text = Field(min_length=1, max_length=2000)
    conversation_id: Text | None = Field(None, max_length=100, description="Continue a conversation (follow-ups).")
    k: int = Field(6, ge=1, le=20, description="How many passages to ground the answer in.")
    modalities: list[Text] | None = Field(None, description="Only these kinds: pdf, web, audio, image, note...")
    source_ids: list[Text] | None = None
    tags: list[Text] | None = Field(None, max_length=20, description="Only sources with every one of these tags "
                                                                     "(tag:garden in the question does the same).")
    start: datetime | None = Field(None, alias="from", description="Only what happened from then (ISO 8601).")
    end: datetime | None = Field(None, alias="to", description="...until then (exclusive).")
    time_field: TimeFieldParam | None = None
    tz: Text | None = Field(None, description="IANA time zone for 'yesterday', 'last week'... (default: server's).")
    now: datetime | None = Field(None, description="Read 'yesterday', 'last year'... as of this time instead of "
                                                   "the current one (ISO 8601).")
    locale: Text | None = Field(None, max_length=40, description=LOCALE_HELP)
    country: Text | None = Field(None, max_length=2, description=COUNTRY_HELP)
    hemisphere: HemisphereParam | None = Field(None, description=HEMISPHERE_HELP)
    date_order: DateOrderParam | None = Field(None, description=DATE_ORDER_HELP)
    fresh: bool = Field(False, description="Ask it as a new question: take nothing (subject, time) from the "
                                           "conversation's earlier turns, though it is kept in the conversation.")
    keep: bool = Field(True, description="Keep the question and its answer as a conversation (listed, and "
                                         "continued by follow-ups); false: a one-shot answer, kept nowhere.")
    revises: Revision | None = Field(None, description="Regenerate an earlier question's answer, or send it "
                                                       "edited: read with the turns before it, marked as such.")

    model_config = {"populate_by_name": True}
