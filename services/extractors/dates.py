"""Every date an extractor reads is parsed here, one function per kind of input.

The rule for all of them: never guess.  A value that is vague (a bare year), ambiguous
(``03/04/2021``), a placeholder (``0000:00:00``) or unparseable gives ``None``, never "now",
because a wrong date misplaces a document on the user's timeline while a missing one only
leaves it undated.  A stated time without a zone is read as UTC.

* :func:`iso_datetime`: ISO 8601 in file properties, front matter, media tags and web markup;
* :func:`rfc2822_datetime`: e-mail ``Date:`` headers (and old web pages);
* :func:`web_datetime`: what a web page states: ISO, ``YYYY/MM/DD`` or RFC 2822, in UTC;
* :func:`pdf_datetime`: PDF ``D:YYYYMMDDHHmmSS+HH'mm'`` dates;
* :func:`exif_datetime`: EXIF ``YYYY:MM:DD HH:MM:SS`` with its separate offset tag;
* :func:`org_timestamp`: Org-mode ``<2023-03-14 Tue 10:00>`` as ISO text;
* :func:`page_date`: the publication (or modification) date a web page's markup states,
  chosen by htmldate among stated values only.
"""

from __future__ import annotations

import email.utils
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

_FULL_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_TIME_OF_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
_FRACTION = re.compile(r"(\.\d{6})\d+")
_SLASH_DATE = re.compile(r"^(\d{4})/(\d{1,2})/(\d{1,2})$")
_PDF_DATE = re.compile(
    r"^\s*(?:D\s*:)?\s*(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?"
    r"\s*(?:(Z|[+\-])\s*(?:(\d{2})'?\s*(?:(\d{2})'?)?)?)?")
_EXIF_TIME = re.compile(r"^\s*(\d{4})[:\-](\d{2})[:\-](\d{2})[ T](\d{2}):(\d{2}):(\d{2})")
_EXIF_OFFSET = re.compile(r"^\s*([+\-])(\d{2}):?(\d{2})\s*$")
_ORG_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:\s+\w+)?(?:\s+(\d{1,2}:\d{2}))?")
# htmldate's output: the time and zone are kept so a stated offset is not lost.
_HTMLDATE_FORMAT = "%Y-%m-%dT%H:%M:%S%z"
# htmldate refuses dates before 1995 by default; digitised older pages state real dates.
_EARLIEST_PAGE_DATE = datetime(1900, 1, 1)


def _utc_if_naive(dt: datetime) -> datetime:
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def iso_datetime(value: str | None) -> datetime | None:
    """An ISO 8601 date or date-time (``2023-04-05``, ``2023-04-05T06:07:08.123456789Z``...).

    Only full calendar dates count: a bare year or month would invent a precise point in time.
    The stated offset is kept; none means UTC.  ODF's nanoseconds are cut to microseconds.
    """
    if not value:
        return None
    v = value.strip().replace("Z", "+00:00")
    if not _FULL_DATE.match(v):
        return None
    try:
        return _utc_if_naive(datetime.fromisoformat(_FRACTION.sub(r"\1", v)))
    except ValueError:
        return None


def has_time_of_day(value: str) -> bool:
    """Whether an ISO value states a time of day (a bare date does not place second 0 on the clock)."""
    return bool(_TIME_OF_DAY.match(value.strip()))


def rfc2822_datetime(value: str | None) -> datetime | None:
    """An RFC 2822 date (``Thu, 03 Jun 2021 09:15:00 +0200``); no zone means UTC."""
    if not value:
        return None
    try:
        return _utc_if_naive(email.utils.parsedate_to_datetime(value.strip()))
    except (TypeError, ValueError, IndexError):
        return None


def web_datetime(value: str | None) -> datetime | None:
    """A date a web page states: ISO 8601, ``YYYY/MM/DD`` or RFC 2822, as an aware UTC datetime.

    Natural-language dates ("June 3, 2021"), numeric dates in another order and bare years
    give None: better no date than a guessed one.
    """
    if not value:
        return None
    value = value.strip()
    m = _SLASH_DATE.match(value)
    if m:
        try:
            return datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=UTC)
        except ValueError:
            return None
    dt = iso_datetime(value) or rfc2822_datetime(value)
    return dt.astimezone(UTC) if dt else None


def pdf_datetime(value: str | None) -> datetime | None:
    """A PDF date (``D:20240301120000+01'00'``) as an aware datetime.

    Accepts partial dates (``D:2024``, ``D:202403``), ``Z``, offsets with or without
    apostrophes, and no zone at all (taken as UTC).  Returns ``None`` for anything else and
    for the year-0 placeholders some producers write.
    """
    if not value:
        return None
    m = _PDF_DATE.match(value)
    if not m:
        return None
    year, month, day, hour, minute, second, sign, tz_h, tz_m = m.groups()
    try:
        tz: timezone = UTC
        if sign in ("+", "-") and tz_h is not None:
            offset = timedelta(hours=int(tz_h), minutes=int(tz_m or 0))
            tz = timezone(-offset if sign == "-" else offset)
        dt = datetime(int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0),
                      int(second or 0), tzinfo=tz)
    except ValueError:  # month 13, offset of 25 hours...
        return None
    return dt if dt.year >= 1900 else None


def exif_datetime(value: object, offset: object = None) -> tuple[datetime | None, str]:
    """An EXIF time (``2023:07:14 09:30:00``) and its offset tag (``+02:00``).

    Returns the aware time and the offset as written, or ``"unknown"`` when the offset is
    missing (the time is then taken as UTC).  Placeholders (``0000:00:00 00:00:00``) give ``None``.
    """
    m = _EXIF_TIME.match(str(value or "").strip("\x00"))
    if not m:
        return None, "unknown"
    tz: timezone = UTC
    tz_text = "unknown"
    om = _EXIF_OFFSET.match(str(offset or "").strip("\x00"))
    if om:
        delta = timedelta(hours=int(om.group(2)), minutes=int(om.group(3)))
        if delta < timedelta(hours=15):
            tz = timezone(-delta if om.group(1) == "-" else delta)
            tz_text = f"{om.group(1)}{om.group(2)}:{om.group(3)}"
    try:
        year, month, day, hour, minute, second = (int(g) for g in m.groups())
        dt = datetime(year, month, day, hour, minute, second, tzinfo=tz)
    except ValueError:
        return None, "unknown"
    return (dt, tz_text) if dt.year >= 1900 else (None, "unknown")


def org_timestamp(value: str) -> str:
    """An Org timestamp (``<2023-03-14 Tue 10:00>``, ``[2023-03-14 Tue]``) as ISO text; other text as is."""
    m = _ORG_DATE.search(value)
    if not m:
        return value.strip()
    return f"{m[1]}T{m[2].zfill(5)}:00" if m[2] else m[1]


def page_date(evidence: Any, stated: Iterable[str], *, original: bool = True) -> datetime | None:
    """The publication (``original``) or last-modified date of a web page, in UTC.

    ``evidence`` is an lxml tree holding only the page's date-stating markup (its date meta
    tags, its own JSON-LD, its ``<time datetime>`` elements) and ``stated`` the raw values in
    it.  htmldate decides which stated value is the page's date, without URL dates
    (``url=""``) or its free-text search (``extensive_search=False``) and never falling back
    to today.  Its result counts only when one of the raw values strictly parses to that
    same day: htmldate also reads ``03/04/2021`` or ``June 3, 2021``, which are guesses,
    and drops a stated time of day, which :func:`web_datetime` keeps.
    """
    from htmldate import find_date

    found = find_date(evidence, extensive_search=False, original_date=original, url="",
                      outputformat=_HTMLDATE_FORMAT, min_date=_EARLIEST_PAGE_DATE,
                      max_date=datetime.now(UTC).replace(tzinfo=None) + timedelta(days=1))
    if not found:
        return None
    day = found[:10]
    for value in stated:
        if _written_day(value) == day:
            return web_datetime(value)
    return None


def _written_day(value: str) -> str | None:
    """The calendar day a stated value names, in its own zone (the day htmldate reads); None if vague."""
    dt = iso_datetime(value) or rfc2822_datetime(value) or web_datetime(value)
    return dt.date().isoformat() if dt else None
