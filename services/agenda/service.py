"""The agenda of one person from their stores: which passages to read, read once, merged into events.

Which passages: those the chunker found speaking of a time in the window (``mentioned_at``, widened by
``MOVE_MARGIN`` so an appointment booked before the window and moved into it, or out of it, is seen), those
written in the ``LOOKBACK`` before it (a note of November about "14-18 January" may have been filed under
last January: the chunker reads a bare date as the nearest one, the agenda by the sentence's tense), and
those filed a year earlier for the same reason.  Each passage is read once per zone and calendar
(``services.agenda.happenings``; the result is kept by chunk id, which changes with the text), with the
zone its source states (a photo's EXIF offset, a note's front-matter date) for the words it says.

Only the asking user's collection and documents are read.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from typing import Any

from secondbrain.ports import MetadataStore, TimeRange, VectorFilter, VectorStore
from secondbrain.search_hits import SearchHit, hit_from_payload, said_at
from secondbrain.temporal.calendar import Conventions
from secondbrain.temporal.mentions import MONTH_NAMES
from secondbrain.titles import display_title
from services.agenda.agenda import Event, Said, habit_events, in_window, merge, series_events
from services.agenda.happenings import Habit, Happening, habits, read_passage

CALENDAR_SOURCE = "import:ics:"  # a calendar event's record (an import, an invitation): read under its title
LOOKBACK = timedelta(days=120)
MOVE_MARGIN = timedelta(days=45)
READ_CACHE = 50_000  # passages read, kept by chunk id
MAX_PASSAGES = 5_000  # read for one window at most
MAX_SERIES = 2_000  # recurring events expanded for one window at most
_DATEISH = re.compile(rf"\d|\b(?:{MONTH_NAMES}|mon|tue|wed|thu|fri|sat|sun|today|tonight|tomorrow|yesterday|next|"
                      r"last|week|weekend|christmas|easter|new\s+year|thanksgiving|halloween|every|birthday)", re.I)
_OFFSET = re.compile(r"([+-])(\d{2}):?(\d{2})$")


@dataclass(frozen=True, slots=True)
class Window:
    """What the agenda is asked for: ``[start, end)``, read in ``tz`` with the person's ``conventions``."""

    start: datetime
    end: datetime
    tz: tzinfo
    conventions: Conventions
    habits: bool = False
    lookback: timedelta = LOOKBACK  # how long before the window a passage may have been written


class Agenda:
    """Reads a person's agenda from their vector collection and catalog (see the module doc)."""

    def __init__(self, vectors: VectorStore, metadata: MetadataStore) -> None:
        self.vectors = vectors
        self.metadata = metadata
        self._read: OrderedDict[tuple[Any, ...], tuple[list[Happening], list[Habit]]] = OrderedDict()
        self._zones: OrderedDict[tuple[str, str], tzinfo | None] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ events

    def events(self, user: str, w: Window) -> list[Event]:
        """The events in the window, merged across sources, earliest first."""
        said, habit_list = self._said(user, self._candidates(user, w.start, w.end, w.lookback), w)
        events = in_window(merge(said), w.start, w.end, w.tz)
        if w.habits:
            events += habit_events(habit_list, w.start, w.end, w.tz)
        events += self._series(user, w)
        events.sort(key=lambda e: _sort_key(e, w.tz))
        return events

    def _series(self, user: str, w: Window) -> list[Event]:
        """The occurrences in the window of recurring events kept as one, worked out now (each series read once,
        from its opening passage; at most :data:`MAX_SERIES` series)."""
        flt = VectorFilter(recurring_range=TimeRange(w.start, w.end), chunk_index_range=(0, 0))
        index = self._index(user)
        found: dict[str, SearchHit] = {}
        offset: str | None = None
        while len(found) < MAX_SERIES:
            page, offset = self.vectors.scroll(user, flt=flt, limit=256, offset=offset, index=index)
            for p in page:
                hit = hit_from_payload(p.id, 0.0, p.payload)
                if hit.recurrence is not None:
                    found.setdefault(hit.document_id, hit)
            if offset is None:
                break
        out: list[Event] = []
        for hit in found.values():
            assert hit.recurrence is not None
            out += series_events(hit, hit.recurrence, w.start, w.end, w.tz)
        return out

    def saved_between(self, user: str, start: datetime, end: datetime, *, field: str = "captured_at",
                      limit: int = 200) -> list[dict[str, Any]]:
        """What was captured (or saved) in ``[start, end)``, newest first, as the web page lists sources."""
        docs = self.metadata.catalog.documents_between(user, start, end, field=field, limit=limit)  # type: ignore[arg-type]
        return [{"document_id": d.document_id, "source_id": d.source_id, "artifact_id": d.artifact_id,
                 "title": display_title(d.title, d.metadata.get("source_uri")), "modality": d.modality,
                 "captured_at": d.captured_at.isoformat(), "ingested_at": d.ingested_at.isoformat(),
                 "source_uri": d.metadata.get("source_uri"), "link": f"/v1/artifacts/{d.artifact_id}/raw"}
                for d in docs]

    # ------------------------------------------------------------------ reading

    def _candidates(self, user: str, start: datetime, end: datetime, lookback: timedelta) -> list[SearchHit]:
        year = timedelta(days=365)
        windows = [(start - lookback, end, start - MOVE_MARGIN, end + MOVE_MARGIN),
                   (start - year - MOVE_MARGIN, end - year + MOVE_MARGIN, start - year - MOVE_MARGIN,
                    end - year + MOVE_MARGIN)]
        index = self._index(user)
        found: dict[str, SearchHit] = {}
        for own_lo, own_hi, said_lo, said_hi in windows:
            flt = VectorFilter(time_range=TimeRange(own_lo, own_hi), time_field="captured_at",
                               mentioned_range=TimeRange(said_lo, said_hi))
            offset: str | None = None
            while len(found) < MAX_PASSAGES:
                page, offset = self.vectors.scroll(user, flt=flt, limit=256, offset=offset, index=index)
                for p in page:
                    hit = hit_from_payload(p.id, 0.0, p.payload)
                    found.setdefault(hit.chunk_id, hit)
                if offset is None:
                    break
        return list(found.values())

    def _index(self, user: str) -> str | None:
        active = self.metadata.indexes.vector_indexes(user, status="active")
        return active[0].name if active else None

    def _said(self, user: str, hits: Iterable[SearchHit], w: Window) -> tuple[list[Said], list[tuple[Habit,
                                                                                                      SearchHit,
                                                                                                      datetime]]]:
        said: list[Said] = []
        found_habits: list[tuple[Habit, SearchHit, datetime]] = []
        for hit in hits:
            if hit.recurrence is not None or not _DATEISH.search(hit.text):
                continue  # a recurring event's occurrences come from its series, not from its words
            at = said_at(hit)
            if at is None:
                continue
            zone = self._writer_zone(user, hit) or w.tz
            items, recurring = self._read_hit(hit, at, zone, w.conventions)
            said.extend(Said(h, hit, at) for h in items)
            found_habits.extend((h, hit, at) for h in recurring)
        return said, found_habits

    def _read_hit(self, hit: SearchHit, at: datetime, zone: tzinfo,
                  conventions: Conventions) -> tuple[list[Happening], list[Habit]]:
        key = (hit.chunk_id, hash(hit.text), tuple(hit.heading_path), at, str(zone), conventions)
        with self._lock:
            if key in self._read:
                self._read.move_to_end(key)
                return self._read[key]
        speakers = frozenset(hit.speakers)
        headings = hit.heading_path or ([hit.title] if hit.source_uri.startswith(CALENDAR_SOURCE) and hit.title
                                        else [])
        items = read_passage(hit.text, at, zone, headings=headings, speakers=speakers, conventions=conventions)
        recurring = habits(hit.text, headings=hit.heading_path, speakers=speakers)
        with self._lock:
            self._read[key] = (items, recurring)
            while len(self._read) > READ_CACHE:
                self._read.popitem(last=False)
        return items, recurring

    def _writer_zone(self, user: str, hit: SearchHit) -> tzinfo | None:
        """The zone a source says it was written in: a photo's EXIF offset, a note's front-matter date with
        an offset.  ``None`` when it says none (the person's zone is taken)."""
        key = (user, hit.document_id)
        with self._lock:
            if key in self._zones:
                return self._zones[key]
        doc = self.metadata.catalog.get_document(user, hit.document_id)
        zone: tzinfo | None = None
        if doc is not None:
            meta = doc.metadata
            stated = meta.get("exif_timezone") or ""
            if not _OFFSET.search(stated):
                raw = meta.get("front_matter.date") or ""
                stated = raw if re.search(r"T\d{2}:\d{2}", raw) else ""
            m = _OFFSET.search(stated.strip())
            if m:
                delta = timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
                zone = timezone(-delta if m.group(1) == "-" else delta)
        with self._lock:
            self._zones[key] = zone
            while len(self._zones) > READ_CACHE:
                self._zones.popitem(last=False)
        return zone


def _sort_key(event: Event, tz: tzinfo) -> tuple[datetime, str]:
    from services.agenda.agenda import bounds_of

    return bounds_of(event, tz)[0], event.happening.quote


def day_bounds(day: date, tz: tzinfo, days: int = 1) -> tuple[datetime, datetime]:
    """Local midnight of ``day`` and of ``days`` later, in ``tz``."""
    return (datetime.combine(day, time(0)).replace(tzinfo=tz),
            datetime.combine(day + timedelta(days=days), time(0)).replace(tzinfo=tz))
