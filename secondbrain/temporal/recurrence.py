"""A recurring event kept as one (:class:`~secondbrain.events.models.Recurrence`): how it is made from what a
calendar says (:func:`series`), read back (:func:`from_json`), described (:func:`describe`), and its occurrences
in a window (:func:`between`), worked out when asked with python-dateutil's ``rrule``.

Cost is bounded by the window, never by the rule.  An endless ``FREQ=SECONDLY`` rule started years ago is not
walked from its start: before a window is expanded, the rule's start is moved on by whole periods to just before
the window (the parts iCalendar leaves to the start, the weekday of a weekly rule, the day of a monthly one,
the time of day, are written out first, so moving the start changes nothing else).  A window gives at most
``limit`` occurrences of one series (``more`` says when it had others).

What dateutil cannot bound is a rule that never gives a date (``BYMONTH=2;BYMONTHDAY=30``): it would look
until the year 9999, 10-25 s of work.  Such a rule is refused when the series is made: its days are tried on one
400-year cycle of the calendar (which repeats exactly after that), placed just before 9999 so the search ends
there.  A ``COUNT`` is turned into the date of its last occurrence once, when the series is made, counting at
most :data:`MAX_COUNT` of them (a longer series is kept up to there, ``capped``, and says so).
"""

from __future__ import annotations

import heapq
import time as clock
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil.rrule import rrulestr

from secondbrain.events.models import Moved, Recurrence

MAX_COUNT = 10_000  # occurrences counted for a COUNT rule; a longer series is kept up to there (capped)
MAX_PER_WINDOW = 500  # occurrences of one series one window gives
MAX_LISTED = 5_000  # extra dates, exceptions and moved occurrences kept for one series
MAX_RULES = 8
_COUNT_BUDGET_S = 0.5  # counting a COUNT rule stops here (a rule that repeats rarely): kept so far, capped
_FREQS = ("YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY", "SECONDLY")
_PARTS = frozenset({"FREQ", "INTERVAL", "COUNT", "UNTIL", "BYSECOND", "BYMINUTE", "BYHOUR", "BYDAY", "BYMONTHDAY",
                    "BYYEARDAY", "BYWEEKNO", "BYMONTH", "BYSETPOS", "WKST"})
_DAY_PARTS = ("BYMONTH", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYDAY")
_WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_PROBE_START = datetime(9599, 1, 1)  # the 400-year cycle before 9999: a search there ends at 9999
_FAR = datetime(9999, 12, 31, tzinfo=UTC)  # "never ends", where a time is needed
_SHIFT = timedelta(hours=3)


class RuleError(ValueError):
    """A repeat rule this does not keep (a sentence): the event is kept as a one-off at its first date."""


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One occurrence: when it starts and ends (aware, in the series' zone), and the time it was moved from."""

    start: datetime
    end: datetime
    moved_from: datetime | None = None


@dataclass(frozen=True, slots=True)
class Expansion:
    """The occurrences of a series in a window, earliest first; ``more``: the window has others past the limit."""

    occurrences: list[Occurrence]
    more: bool = False


# --------------------------------------------------------------------------- making a series


def series(start: datetime, *, zone: str, duration: timedelta = timedelta(0), all_day: bool = False,
           rules: Sequence[str] = (), dates: Iterable[datetime] = (), exceptions: Iterable[datetime] = (),
           moved: Iterable[Moved] = ()) -> Recurrence:
    """A series from what a calendar says (``start`` aware; an all-day series' at midnight in ``zone``);
    :class:`RuleError` for a rule this does not keep."""
    tz = _zone(zone)
    if start.tzinfo is None:
        raise RuleError("the start of a series must say its zone")
    if len(rules) > MAX_RULES:
        raise RuleError(f"the event has {len(rules)} repeat rules; secondbrain keeps at most {MAX_RULES}")
    wall = _wall(start, tz)
    kept: list[str] = []
    count: int | None = None
    capped = False
    for rule in rules:
        parts = _parse(rule)
        if "UNTIL" in parts:
            parts["UNTIL"] = until_wall(parts["UNTIL"], tz)
        parts = _explicit(parts, wall)
        _check_days(parts)
        if "COUNT" in parts:
            count = int(parts["COUNT"])
            parts, capped_here = _counted(parts, wall)
            capped = capped or capped_here
        kept.append(_written(parts))
    extra = _listed("extra dates", dates)
    left_out = _listed("exceptions", exceptions)
    moves = sorted(moved, key=lambda m: m.original)
    if len(moves) > MAX_LISTED:
        raise RuleError(f"the event has more than {MAX_LISTED} moved occurrences")
    rec = Recurrence(start=start.astimezone(UTC), zone=zone, all_day=all_day,
                     duration_s=max(0, int(duration.total_seconds())), rules=kept, dates=extra,
                     exceptions=left_out, moved=moves, count=count, capped=capped)
    return _with_until(rec, tz)


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise RuleError(f"{name[:60]!r} is not a time zone this knows") from None


def _wall(moment: datetime, tz: ZoneInfo) -> datetime:
    """The wall-clock time in ``tz`` (naive): what the rules repeat."""
    return moment.astimezone(tz).replace(tzinfo=None)


def _aware(wall: datetime, tz: ZoneInfo) -> datetime:
    return wall.replace(tzinfo=tz)


def _listed(what: str, values: Iterable[datetime]) -> list[datetime]:
    out = sorted({v.astimezone(UTC) for v in values})
    if len(out) > MAX_LISTED:
        raise RuleError(f"the event has more than {MAX_LISTED} {what}")
    return out


def _parse(rule: str) -> dict[str, str]:
    """``FREQ=WEEKLY;BYDAY=TU`` as its parts (upper case); RuleError for what RFC 5545's RRULE does not have."""
    text = rule.strip().removeprefix("RRULE:").strip()
    parts: dict[str, str] = {}
    for piece in text.split(";"):
        if not piece.strip():
            continue
        name, sep, value = piece.partition("=")
        name, value = name.strip().upper(), value.strip().upper()
        if not sep or name not in _PARTS or not value or name in parts:
            raise RuleError(f"its repeat rule {text[:80]!r} has a part this does not read ({piece[:30]!r})")
        parts[name] = value
    if parts.get("FREQ") not in _FREQS:
        raise RuleError(f"its repeat rule {text[:80]!r} says no frequency this reads")
    if "COUNT" in parts and "UNTIL" in parts:
        raise RuleError("its repeat rule has both COUNT and UNTIL")
    for name in ("INTERVAL", "COUNT"):
        if name in parts and not (parts[name].isdigit() and 0 < int(parts[name]) < 10**9 + 1):
            raise RuleError(f"its repeat rule's {name} is not a whole number from 1")
    return parts


def _explicit(parts: dict[str, str], start: datetime) -> dict[str, str]:
    """The parts dateutil would take from the start, written out (so a moved start changes nothing else);
    an UNTIL as a wall-clock time in the series' zone."""
    out = dict(parts)
    freq = _FREQS.index(parts["FREQ"])
    if not any(p in parts for p in ("BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY")):
        if parts["FREQ"] == "YEARLY":
            out.setdefault("BYMONTH", str(start.month))
            out["BYMONTHDAY"] = str(start.day)
        elif parts["FREQ"] == "MONTHLY":
            out["BYMONTHDAY"] = str(start.day)
        elif parts["FREQ"] == "WEEKLY":
            out["BYDAY"] = _WEEKDAYS[start.weekday()]
    for name, rank, value in (("BYHOUR", 4, start.hour), ("BYMINUTE", 5, start.minute), ("BYSECOND", 6, start.second)):
        if freq < rank:
            out.setdefault(name, str(value))
    return out


def _written(parts: Mapping[str, str]) -> str:
    return ";".join(f"{k}={v}" for k, v in parts.items())


def _rule(parts: Mapping[str, str], start: datetime, until: datetime | None = None) -> Any:
    """dateutil's rule for ``parts`` from ``start`` (naive wall time), ending at ``until`` when given."""
    kept = {k: v for k, v in parts.items() if k != "UNTIL"}
    try:
        rule = rrulestr("RRULE:" + _written(kept), dtstart=start)
    except (ValueError, TypeError, OverflowError) as exc:
        raise RuleError(f"its repeat rule cannot be read ({str(exc)[:120]})") from None
    end = _until_of(parts)
    if until is not None:
        end = until if end is None else min(end, until)
    return rule.replace(until=end) if end is not None else rule


def _until_of(parts: Mapping[str, str]) -> datetime | None:
    """A rule's UNTIL as a naive wall time (what :func:`_explicit` wrote; a bare date: the end of that day)."""
    value = parts.get("UNTIL")
    if not value:
        return None
    try:
        if len(value) == 8:
            return datetime.combine(datetime.strptime(value, "%Y%m%d").date(), time(23, 59, 59))
        return datetime.strptime(value.rstrip("Z"), "%Y%m%dT%H%M%S")
    except ValueError:
        raise RuleError(f"its repeat rule's UNTIL {value[:20]!r} is not a date") from None


def until_wall(value: str, tz: ZoneInfo) -> str:
    """An RRULE's UNTIL as written (``...Z`` in UTC, a date, or a floating time) as this module keeps it: a
    wall-clock time in the series' zone, no ``Z``."""
    value = value.strip().upper()
    if value.endswith("Z"):
        try:
            moment = datetime.strptime(value, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        except ValueError:
            raise RuleError(f"its repeat rule's UNTIL {value[:20]!r} is not a time") from None
        return _wall(moment, tz).strftime("%Y%m%dT%H%M%S")
    return value


def _check_days(parts: Mapping[str, str]) -> None:
    """RuleError when the rule's days never come (``BYMONTH=2;BYMONTHDAY=30``): tried on one 400-year cycle
    of the calendar placed before 9999, where dateutil's search stops."""
    days = {k: v for k, v in parts.items() if k in _DAY_PARTS}
    if not days:
        return
    ordinal = any(d.strip()[:-2] not in ("", "+") for d in days.get("BYDAY", "").split(","))
    if ordinal and parts["FREQ"] not in ("MONTHLY", "YEARLY"):
        raise RuleError("its repeat rule numbers weekdays (1MO, -1FR) in a rule that is not monthly or yearly")
    if ordinal and parts["FREQ"] == "MONTHLY" and "BYMONTH" not in days:
        days["BYMONTH"] = ",".join(str(m) for m in range(1, 13))  # "the second Tuesday" of each month
    probe = {"FREQ": "YEARLY", **days, "BYHOUR": "0", "BYMINUTE": "0", "BYSECOND": "0"}
    try:
        first = next(iter(_rule(probe, _PROBE_START)), None)
    except ValueError as exc:
        raise RuleError(f"its repeat rule cannot be read ({str(exc)[:120]})") from None
    if first is None:
        raise RuleError("its repeat rule never gives a date (no day has what it asks for)")


def _counted(parts: dict[str, str], start: datetime) -> tuple[dict[str, str], bool]:
    """A COUNT rule as an UNTIL rule ending at its last occurrence, counting at most :data:`MAX_COUNT` (and for
    at most :data:`_COUNT_BUDGET_S`); whether it was cut there (capped)."""
    wanted = int(parts["COUNT"])
    rule = _rule({k: v for k, v in parts.items() if k != "COUNT"}, start)
    last, n = None, 0
    began = clock.monotonic()
    try:
        for last in rule:  # noqa: B007 - the last one is what is kept
            n += 1
            if n >= min(wanted, MAX_COUNT) or clock.monotonic() - began > _COUNT_BUDGET_S:
                break
    except ValueError as exc:
        raise RuleError(f"its repeat rule cannot be read ({str(exc)[:120]})") from None
    out = {k: v for k, v in parts.items() if k != "COUNT"}
    out["UNTIL"] = (last or start).strftime("%Y%m%dT%H%M%S")
    return out, n < wanted


def _with_until(rec: Recurrence, tz: ZoneInfo) -> Recurrence:
    """The series with ``until``: the last moment an occurrence can start (None: it never ends)."""
    ends: list[datetime] = [rec.start, *rec.dates, *(m.start for m in rec.moved)]
    for rule in rec.rules:
        end = _until_of(_parse_kept(rule))
        if end is None:
            return replace(rec, until=None)
        ends.append(_aware(end, tz).astimezone(UTC))
    return replace(rec, until=max(ends))


def _parse_kept(rule: str) -> dict[str, str]:
    return dict(p.split("=", 1) for p in rule.split(";") if "=" in p)


# --------------------------------------------------------------------------- reading one back


def from_json(data: Mapping[str, Any]) -> Recurrence:
    """A series from its JSON form (:func:`to_json`: a note's front matter, a passage's payload), checked as
    when it was made (a note may come from anywhere); RuleError when it is not one."""
    try:
        start = _instant(data["start"])
        moved = [Moved(original=_instant(m["original"]), start=_instant(m["start"]),
                       end=_instant(m["end"]) if m.get("end") else None) for m in data.get("moved") or []]
        rules = [str(r) for r in data.get("rules") or []]
        zone = str(data.get("zone") or "UTC")
        return series(start, zone=zone, duration=timedelta(seconds=int(data.get("duration_s") or 0)),
                      all_day=bool(data.get("all_day")), rules=rules,
                      dates=[_instant(d) for d in data.get("dates") or []],
                      exceptions=[_instant(d) for d in data.get("exceptions") or []], moved=moved)
    except (KeyError, TypeError, AttributeError, OverflowError) as exc:
        raise RuleError(f"the recurrence is not one this reads ({type(exc).__name__})") from None


def _instant(value: Any) -> datetime:
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise RuleError("a time of the recurrence does not say its zone")
    return moment.astimezone(UTC)


def to_json(rec: Recurrence) -> dict[str, Any]:
    """The series as JSON (times as ISO 8601 in UTC): what a note's front matter and a payload hold."""
    def iso(d: datetime | None) -> str | None:
        return d.astimezone(UTC).isoformat() if d is not None else None

    return {"start": iso(rec.start), "zone": rec.zone, "all_day": rec.all_day, "duration_s": rec.duration_s,
            "rules": list(rec.rules), "dates": [iso(d) for d in rec.dates],
            "exceptions": [iso(d) for d in rec.exceptions],
            "moved": [{"original": iso(m.original), "start": iso(m.start), "end": iso(m.end)} for m in rec.moved],
            "until": iso(rec.until), "count": rec.count, "capped": rec.capped}


def loaded(data: Mapping[str, Any]) -> Recurrence:
    """A series as this process stored it (a payload): read without checking again."""
    return Recurrence(start=_instant(data["start"]), zone=str(data["zone"]), all_day=bool(data.get("all_day")),
                      duration_s=int(data.get("duration_s") or 0), rules=[str(r) for r in data.get("rules") or []],
                      dates=[_instant(d) for d in data.get("dates") or []],
                      exceptions=[_instant(d) for d in data.get("exceptions") or []],
                      moved=[Moved(original=_instant(m["original"]), start=_instant(m["start"]),
                                   end=_instant(m["end"]) if m.get("end") else None)
                             for m in data.get("moved") or []],
                      until=_instant(data["until"]) if data.get("until") else None,
                      count=int(data["count"]) if data.get("count") is not None else None,
                      capped=bool(data.get("capped")))


def span(rec: Recurrence) -> tuple[datetime, datetime]:
    """From the first occurrence's start to the last one's end (the end of time for an endless series): what a
    window must overlap to hold an occurrence."""
    first = min([rec.start, *(m.start for m in rec.moved)])
    if rec.until is None:
        return first, _FAR
    ends = [rec.until + timedelta(seconds=rec.duration_s, days=1), *(m.end or m.start for m in rec.moved)]
    return first, max(ends)


# --------------------------------------------------------------------------- occurrences in a window


def between(rec: Recurrence, lo: datetime, hi: datetime, limit: int = MAX_PER_WINDOW) -> Expansion:
    """The occurrences that overlap ``[lo, hi)``, earliest first, at most ``limit`` (see the module doc)."""
    tz = ZoneInfo(rec.zone)
    length = timedelta(seconds=rec.duration_s)
    start = _wall(rec.start, tz)
    # Either side on the wall clock, as much as the zone's clock changes there (0 in most windows): an occurrence
    # on the wall clock just outside may be an instant inside.
    lo_wall = _wall(lo, tz) - length - _shift(tz, lo)
    hi_wall = _wall(hi, tz) + _shift(tz, hi)
    skipped = {d.astimezone(UTC) for d in rec.exceptions} | {m.original.astimezone(UTC) for m in rec.moved}
    walls = [_rule_walls(_parse_kept(r), start, lo_wall, hi_wall) for r in rec.rules]
    walls.append(iter([start]))  # DTSTART is always an occurrence (RFC 5545)
    walls.append(iter(sorted(_wall(d, tz) for d in rec.dates if lo_wall <= _wall(d, tz) < hi_wall)))
    out: list[Occurrence] = []
    seen: set[datetime] = set()
    more = False
    for wall in heapq.merge(*walls):
        if wall >= hi_wall:
            break
        at = _aware(wall, tz)
        key = at.astimezone(UTC)
        if key in seen or key in skipped:
            continue
        seen.add(key)
        end = _end(at, wall, length, rec.all_day, tz)
        if not _overlaps(at, end, lo, hi):
            continue
        if len(out) >= limit:
            more = True
            break
        out.append(Occurrence(at, end))
    for m in rec.moved:
        at = m.start.astimezone(tz)
        end = m.end.astimezone(tz) if m.end is not None else at + length
        if _overlaps(at, end, lo, hi):
            out.append(Occurrence(at, end, m.original.astimezone(tz)))
    out.sort(key=lambda o: o.start)
    if len(out) > limit:
        out, more = out[:limit], True
    return Expansion(out, more)


def _shift(tz: ZoneInfo, at: datetime) -> timedelta:
    """How far the zone's clock moves within a few hours of ``at`` (a summer-time change: an hour)."""
    offsets = [(at + d).astimezone(tz).utcoffset() or timedelta(0) for d in (-_SHIFT, timedelta(0), _SHIFT)]
    return max(offsets) - min(offsets)


def occurs(rec: Recurrence, lo: datetime, hi: datetime) -> Occurrence | None:
    """The first occurrence overlapping ``[lo, hi)``, or None."""
    found = between(rec, lo, hi, limit=1).occurrences
    return found[0] if found else None


def _end(at: datetime, wall: datetime, length: timedelta, all_day: bool, tz: ZoneInfo) -> datetime:
    if all_day:  # whole days on the wall clock, whatever the zone does in between
        days = max(1, round(length.total_seconds() / 86400))
        return _aware(datetime.combine(wall.date() + timedelta(days=days), time(0)), tz)
    return at + length


def _overlaps(start: datetime, end: datetime, lo: datetime, hi: datetime) -> bool:
    """Whether an occurrence is in ``[lo, hi)``: one that lasts, by overlapping it; a moment, by being in it."""
    return start < hi and (end > lo if end > start else start >= lo)


def _rule_walls(parts: dict[str, str], start: datetime, lo: datetime, hi: datetime) -> Iterator[datetime]:
    """A rule's starts (naive wall times) from ``lo`` until ``hi``, its start moved on to just before ``lo``."""
    until = _until_of(parts)
    if until is not None and until < lo:
        return
    moved_start = _rebased(parts, start, lo)
    try:
        for wall in _rule(parts, moved_start, hi):
            if wall >= start and wall >= lo:
                yield wall
    except (ValueError, RuleError):  # a rule dateutil finds empty only now: no occurrences
        return


def _rebased(parts: Mapping[str, str], start: datetime, lo: datetime) -> datetime:
    """``start`` moved on by whole periods of the rule (``INTERVAL`` of its ``FREQ``) to the last period that
    begins at or before ``lo``: the occurrences from there on are the same."""
    if lo <= start:
        return start
    freq, step = parts["FREQ"], int(parts.get("INTERVAL", "1"))
    if freq == "YEARLY":
        k = (lo.year - start.year) // step
        return start if k <= 0 else datetime(start.year + k * step, 1, 1)
    if freq == "MONTHLY":
        k = ((lo.year - start.year) * 12 + lo.month - start.month) // step
        if k <= 0:
            return start
        month = start.month - 1 + k * step
        return datetime(start.year + month // 12, month % 12 + 1, 1)
    if freq == "WEEKLY":
        first = _WEEKDAYS.index(parts.get("WKST", "MO")) if parts.get("WKST", "MO") in _WEEKDAYS else 0
        week = start.date() - timedelta(days=(start.weekday() - first) % 7)
        k = (lo.date() - week).days // 7 // step
        return start if k <= 0 else datetime.combine(week + timedelta(weeks=k * step), time(0))
    if freq == "DAILY":
        k = (lo.date() - start.date()).days // step
        return start if k <= 0 else datetime.combine(start.date() + timedelta(days=k * step), time(0))
    unit = {"HOURLY": 3600, "MINUTELY": 60, "SECONDLY": 1}[freq]
    base = {"HOURLY": start.replace(minute=0, second=0), "MINUTELY": start.replace(second=0),
            "SECONDLY": start}[freq]
    k = int((lo - base).total_seconds()) // (unit * step)
    return start if k <= 0 else base + timedelta(seconds=k * unit * step)


# --------------------------------------------------------------------------- in words


def describe(rec: Recurrence) -> str:
    """How a person says it: "every week on Tuesday at 17:00 (Europe/London), from Tuesday 3 March 2026"."""
    tz = ZoneInfo(rec.zone)
    first = rec.start.astimezone(tz)
    said = [_rule_words(_parse_kept(r), rec.all_day) for r in rec.rules] or ["on the dates listed"]
    text = " and ".join(said)
    if not rec.all_day and rec.rules and not any(_parse_kept(r).get("FREQ") in ("HOURLY", "MINUTELY", "SECONDLY")
                                                  for r in rec.rules):
        text += f" at {first:%H:%M}"
    text += f" ({rec.zone}), from {_day(first.date())}"
    if rec.capped and rec.until is not None:
        text += (f", {rec.count:,} times; secondbrain keeps it until {_day(rec.until.astimezone(tz).date())}, as far "
                 f"as it counts (at most {MAX_COUNT:,} occurrences)")
    elif rec.count:
        text += f", {rec.count:,} times"
    elif rec.until is not None:
        text += f", until {_day(rec.until.astimezone(tz).date())}"
    else:
        text += ", without end"
    return text


def _day(d: date) -> str:
    return f"{d:%A} {d.day} {d:%B %Y}"


def _rule_words(parts: Mapping[str, str], all_day: bool) -> str:
    freq, step = parts["FREQ"], int(parts.get("INTERVAL", "1"))
    unit = {"YEARLY": "year", "MONTHLY": "month", "WEEKLY": "week", "DAILY": "day", "HOURLY": "hour",
            "MINUTELY": "minute", "SECONDLY": "second"}[freq]
    text = f"every {unit}" if step == 1 else f"every {step} {unit}s"
    days = [d for d in parts.get("BYDAY", "").split(",") if d]
    if days:
        text += " on " + _joined([_weekday_words(d) for d in days])
        positions = [int(n) for n in parts.get("BYSETPOS", "").split(",") if n.lstrip("-").isdigit()]
        if positions:
            text += " (the " + _joined([_ordinal(n) for n in positions]) + " of them)"
    elif "BYMONTHDAY" in parts and freq in ("MONTHLY", "YEARLY"):
        numbers = [_ordinal(int(n)) for n in parts["BYMONTHDAY"].split(",") if n.lstrip("-").isdigit()]
        months = [int(m) for m in parts.get("BYMONTH", "").split(",") if m.isdigit()] if freq == "YEARLY" else []
        text += " on the " + _joined(numbers) + (" of " + _joined([date(2000, m, 1).strftime("%B") for m in months])
                                                 if months else "")
    return text


def _weekday_words(token: str) -> str:
    name = _WEEKDAY_NAMES[_WEEKDAYS.index(token[-2:])] if token[-2:] in _WEEKDAYS else token
    number = token[:-2].lstrip("+")
    if not number:
        return name
    n = int(number) if number.lstrip("-").isdigit() else 0
    return f"the {'last' if n == -1 else _ordinal(n)} {name}"


def _ordinal(n: int) -> str:
    if n < 0:
        return "last" if n == -1 else f"{_ordinal(-n)} from last"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _joined(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
