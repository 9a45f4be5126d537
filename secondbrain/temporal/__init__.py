"""Temporal understanding of questions: which time window a question is about.

``understand("what did I save about the budget last week?", now, tz)`` finds the time
words ("last week"), turns them into a half-open ``[start, end)`` window of aware
datetimes in the user's zone, says which payload field the window applies to
(``ingested_at`` for "saved/uploaded/added/imported", ``captured_at`` otherwise) and
what is left to search for semantically ("budget").

Everything here is pure and deterministic: no I/O, no clock reads (``now`` is an
argument); country holiday calendars come from the ``holidays`` package.  Calendar
boundaries are built from local wall-clock dates and then localised, so a "day" on a DST
change is 23 or 25 hours long.

The person's ``Conventions`` (``understand(..., conventions=...)``; default US, north,
month first; ``Conventions.for_locale("en_GB")`` derives them from a locale) say which
country's holidays count, which hemisphere the seasons are in and in which order a
numeric date gives its day and month.

The package has four parts: ``calendar`` (date arithmetic, periods and their
recurrences), ``grammar`` (the vocabulary, the anchor rules and the parser that yields
a ``TimeWindow``), ``intent`` (which time field a window applies to, what is left to
search for, ``understand()`` and ``describe()``) and ``mentions`` (the times a passage
speaks of, read against the passage's own time, with a future-leaning side: the chunker
stores them and a dated question matches them).  It is shared by the chunker and the
query service, so it lives in the core.

Supported (English, case-insensitive, whole words only):

* days: today, tonight, this morning/afternoon/evening, last night, yesterday, the day
  before yesterday, tomorrow, the day after tomorrow; any single-day expression followed
  by morning/afternoon/evening/night ("yesterday evening", "Tuesday morning").
  Parts of day: morning 05-12, afternoon 12-18, evening 18-24, night 18-05 (next day).
* weekdays: "on Tuesday"/"Tuesday"/"last Tuesday"/"past Tuesday" = the most recent Tuesday
  strictly before today (never today); "this Tuesday" = Tuesday of the current week;
  "next/coming Tuesday" = the first Tuesday strictly after today; "Tuesday last/this/next
  week", "the Saturday before last", "the Monday after next".  A weekday with its date:
  "Friday, 1 March 2024", "Thursday the 12th", "Friday 13th" (the most recent 13th that was a
  Friday).  Abbreviations (Tue, Sat...) only after on/last/this/next; a bare capitalised
  weekday before another capitalised word is a title ("the Sunday Times"), and "Black
  Friday"/"Good Friday" are not days.
* recurring events and sets are subjects, not days: a weekday (perhaps with a part of the
  day) before an event's name or, after a determiner, before any other noun ("the Monday
  standup", "Friday drinks", "my Saturday morning run", "our Tuesday review"), or after
  "every"/"each" ("every other Friday") is left in the semantic query; a possessive or a
  qualifier dates it ("at last Monday's standup", "Friday's retro", "the standup last
  Monday").  "The Monday I left", "the Friday before" name a day said elsewhere: no window.
* weeks (first day is the ``week_start`` parameter, Monday by default): this/last/next/
  previous/the coming week, the week before last, the week after next, "the week of
  3 March", "the first/second/third/fourth/last week of March" (days 1-7 ... / last 7; of a
  quarter or a year too), "the Friday of last week".
* weekends (Sat 00:00 - Mon 00:00): this weekend (the current one on Sat/Sun, else the
  coming one), last/this past weekend (the most recent one that has ended), next
  weekend, over/on/at/during the weekend (the most recent one that has started),
  the weekend before last (= two weekends ago), the weekend after next.
* fortnights: "a fortnight ago" (the week two weeks back, as "two weeks ago"), "last fortnight"
  (the two calendar weeks before this one), "the past/next fortnight" (14 days rolling).
* months: this/last/next month, the month before last, "in November"/"since Nov"
  (the most recent November that has started), "November 2024", "Nov 2024",
  "last/this/next November", "November of last year", ISO "2024-11".
* dates: "3 March", "3rd of March", "March 3rd", "March 3, 2024", ISO "2024-03-03" and
  "2024/03/03", "on the 3rd" (the most recent 3rd of a month); without a year, the most
  recent such date that is not in the future.  Day ranges "3-5 March", "March 3 to 5",
  "between 3 and 5 March".
* relative to a date: "the Monday before 24 July", "the Saturday after 28 October", "the
  weekend before/after 4 October" (the last one over by that day / the first one after it),
  "the week before/after 3 March" (the calendar week), "the day before/after 5 May", and
  "last Friday on 23 January" / "last week, as mentioned on 6 November" (as said that day).
  "The first/last N days/weeks of August 2023" (of a month, quarter or year); "the first/
  second/last weekend of October" (counted by its Saturday).  Counted from a day: "three days
  before Christmas", "two weeks after 3 March" (that calendar week), "two weekends before
  Halloween", "two months before Christmas" (that calendar month); "the morning of 3 March".
* counted in a period: "the second Tuesday of March", "the last Friday of last month", "the
  second-to-last Friday in October", "the first day of last month", "the first Monday of the
  year", "the first Sunday of summer" ("the week/month/quarter/year" is the current one); a
  day of a month: "the 5th of last month", "the 20th of this month", "the first of the month",
  "the 3rd last month", "the fifth of March".  In a recurring period (a month or season without
  a year) the most recent such day that has begun, as a date without a year is.
* side by side: two expressions with only a comma, "of", "on", "in" or "at" between them are
  one time when one recurs inside the other once ("Tuesday two weeks ago", "two weeks ago on
  Friday", "Monday, 2 March") or one holds the other ("last month, on 5 October").
* quarters and halves: "Q3 2024", "2024 Q3", "Q3 of last year", "the third quarter of
  2024", this/last/next quarter, "the quarter before last", "two quarters ago", "the past
  quarter", "the last two quarters" (whole calendar quarters), "the last quarter of last year",
  "last year's Q3", "early/late Q3", "the end of the quarter" (its last month); H1/H2 2024,
  "the first/second/last half of 2024/last year/the year", "last year's second half".
  A bare "Q3"/"H2"/"the third quarter" counts only after a preposition ("in Q3",
  "during Q3", "since Q2"): "Q3 roadmap" is a topic, not a time.  Without a year it is
  the most recent one that has started (the current one included).
* years and decades: this/last/next year, the year before last, "in 2023", "the year
  2023", "the 1990s", "the 90s", "the '90s", "the 1980's", "the nineties", "the late 90s" (years
  7-9; early 0-3, mid 4-6), "the 80s and 90s", "last/this decade" (the 2010s/2020s; "the past
  decade" rolls).  "The 1900s" and "the 1800s" are centuries; a decade before a style word is a
  topic ("the 80s playlist", "1990s fashion").  A bare year needs a preposition ("in",
  "since", "from"...) and is not a year before a unit ("in 2000 words").
* N ago: "N hours/days/weeks/fortnights/months/quarters/years ago" (N in digits or words up to
  twenty, "a", "a couple of") = that clock hour / calendar day / week / month / quarter / year;
  "N weekends ago" = the weekend N-1 before the last one over ("two weekends ago").
* rolling windows: "in the last/past N minutes/hours/days/weeks/months/years", "the past
  week", "the last week", "last 3 days" = [now - N, now); "the next 3 days" = [now,
  now + N).  Days and longer move the wall clock (same time of day); hours and minutes
  are real elapsed time.  "last week" without "the"/a number is the calendar week.
* parts of periods: earlier today ([start of today, now)), earlier this week/month/year
  ([start of period, start of today); on the period's first day, up to now), later
  today, later this week/month/year, so far this week/month/year, early/mid/late March /
  2024 / last month, "(at) the beginning/start/middle/end of last month / the year"
  (month: days 1-10 / 11-20 / 21-end; year: Jan-Apr / May-Aug / Sep-Dec).
* ranges: since X ([X.start, now)), before/prior to X ([open, X.start)), after X
  ([X.end, open)), until/till/through/up to/as of X ([open, X.end)), between X and Y, from X
  to/until/through Y, "X to Y", "X-Y" ([X.start, Y.end)).  A recurring end (a month
  or weekday without year) is moved to the first occurrence ending after X, and a
  recurring start takes the latest occurrence that starts before Y ("between March and
  May 2024" is March-May 2024); when both recur and the end would be in the future the
  pair moves back one cycle ("from November to February" in November 2026 is Nov 2025 -
  Feb 2026).
* holidays: New Year's Day/Eve, Valentine's Day, St Patrick's Day, Halloween, Bonfire Night,
  Christmas Eve/Day, Boxing Day, the Fourth of July, Juneteenth, Veterans/Remembrance Day,
  Canada/Australia/Bastille Day (fixed dates); Ash Wednesday, Palm Sunday, Maundy Thursday,
  Good Friday, Easter (Sunday), Easter Monday, Ascension Day, Pentecost, Whit Monday (from
  Easter by the Gregorian computus, or the Julian one in Orthodox countries, or the dates
  the ``holidays`` package lists for the country); Thanksgiving (the country's: Canada 2nd
  Monday of October, else the US 4th Thursday of November), Black Friday, Cyber Monday,
  Mother's Day (UK/Ireland: Mothering Sunday; France: last Sunday of May; else the
  country's listing or the 2nd Sunday of May), Father's Day (Australia/NZ: 1st Sunday of
  September; Germany: Ascension Day; else the 3rd Sunday of June), MLK Day, Presidents'
  Day, Memorial Day, Labor/Labour Day, Independence Day, Columbus Day (the country's
  listing, else the US rule); Hanukkah, Passover, Rosh Hashanah, Yom Kippur, Diwali,
  Chinese/Lunar New Year, Eid (al-Fitr), Eid al-Adha (only where the package has dates:
  the country's own, else Israel's, India's, China's or the UAE's).  Without a word, the
  most recent occurrence that has started (today's included, as "in November" is the
  current November); "last Christmas" = the most recent one that is over; "next
  Christmas" = the first one that starts after today; "this Christmas" = the one under
  way, else this calendar year's (for a period across the new year, the nearer of the
  last and the next); "Christmas 2024", "last year's Christmas", "Easter last
  year".  Periods: "the holidays"/"the holiday season"/"the Christmas holidays" and "over/
  during/around Christmas" = 24 Dec - 1 Jan (named by the December); "over Easter"/"the
  Easter weekend" = Good Friday - Easter Monday; "over Thanksgiving" = Thursday - Sunday
  (Canada: Saturday - Monday); "over New Year" = 31 Dec - 1 Jan; "Memorial/Labor Day
  weekend" = Saturday - Monday; "at/on Christmas" is the day.  A bare name needs a
  preposition ("on Christmas Eve", "since Easter") and is a topic before words such as
  presents, cards, party, eggs, costume, recipes ("notes on Christmas presents");
  "in the new year" (some time ahead) is not a time.  Relative forms work with them:
  "the day after Thanksgiving", "the weekend before Christmas", "Christmas morning",
  "between Christmas and New Year".
* seasons, meteorological, in the person's hemisphere (north: spring Mar-May, summer
  Jun-Aug, autumn/fall Sep-Nov, winter Dec-Feb; south: six months on): "in (the)
  summer", "over the summer", "since spring" (the most recent one that has started, the
  current one included); "last/this past summer" (the most recent one that is over, as
  "last November" is); "next spring" (the first one that starts after today); "this
  summer" (the one under way, else this calendar year's; for the season across the new
  year, the nearer of the last and the next); "spring 2024", "the summer of 2023",
  "summer last year"; the season across the new year is named by its January ("winter
  2024" in the north is Dec 2023 - Feb 2024) or by both years ("winter 2023-24");
  "early/mid/late summer" and "the end of summer" are its first/middle/last month.  A bare
  season needs in/during/since/over/before/after/from/of...: "the price may fall", "on
  fall" are not seasons; a capitalised season before a capitalised word is a name or a
  title ("Summer Smith", "Spring Boot"), and "the fall of Rome", "summer school",
  "spring cleaning" are not times.
* numeric dates: d/m/y and m/d/y with "/", "." or "-", 2- or 4-digit years ("3/12/25",
  "12.03.2025", "12-03-2025"; 2-digit years are this century unless more than ten years
  ahead), y.m.d with two-digit month and day ("2025.03.12"), and a day and month without
  a year after on/since/before/after/until/between/from/to/of/by ("on 3/12", the most
  recent such day that is not in the future; "/" only).  The order is the person's
  (``Conventions.date_order``; year-first locales read "3/12" month first); when only one
  reading is a date ("13/03/2025", "3/13") it is taken whatever the order; in a range the
  other end can settle it ("3/12-3/14" is March).  When both readings are dates and the
  range does not settle it, the window is the locale's reading and ``TimeWindow.reading``
  keeps both days (``DateReading``).  Fractions, scores, versions, decimals, clock times
  and addresses are not dates: "3/4 of the budget", "in 3/4 of the cases", "1/2 cup",
  "won 3-1", "1.2.3", "in 3.11.12", "12.5", "at 12.30", "10.0.0.12", "24/7".
* vague (``vague=True``, a soft recency boost rather than a filter): recently, lately,
  recent, not long ago (the last 30 days); a while ago/back, some time ago
  (1-6 months ago); the other day, a few days ago (2-7 days ago); the other week (1-3
  weeks ago); a few/several weeks/months/years ago (2-7 units ago); the past/next
  few (3) or several (5) days/weeks/....

Read in part (``TimeWindow.partial``, a preference for the part read, never a filter): time
words the grammar does not cover next to ones it reads.  "<time word> of X" with no rule for
the whole ("the last working day of September": September; "the first half of last quarter";
"the end of last week"; "the 31st of last month" when it had 30 days: the month), "<time words>
before X" ("the days before Christmas"), a hedge ("about three weeks ago", "around 3 March",
"the 15th or so of last month"), a weekday that is not the date's ("Monday, 3 March" when 3
March is a Tuesday: the date), one of several ("on a Friday", "a Tuesday in March": March), two
expressions side by side that do not combine ("three weeks ago last Tuesday": the one that
says more, else the first), "the early 1900s" (the century).  A passage's partly read times are
not stored as times it speaks of.

When a question holds several time expressions the earliest precise one is the window (one
read in part only when none is precise, a vague one only when nothing else is there); all of
them are removed from the semantic query.

The time field is ``ingested_at`` when the verb closest to the time words is about
putting things into the engine (save, upload, add, import, ingest, store, bookmark, clip,
put in, drop into, capture into/in/to; "store", "save", "add"... only as verbs, not in "her clothing
store") and ``captured_at`` otherwise, including when a
verb about the content itself is at least as close ("the photo I took last week", "the
meeting I had last week").

``query_class`` is "temporal" when nothing but question scaffolding is left once the
time words are removed ("what did I save yesterday?", "show me everything from last
week"), "temporal+semantic" when topic words remain (``semantic_query`` holds them,
stop words removed: "what did I save about the budget last week?" -> "budget"), and
"semantic" without a time expression.  Generic words for stored things (files,
documents, items, stuff) count as scaffolding; notes, photos, emails are topics.

Unsupported on purpose (left out of the gold suite): clock times ("at 3pm", "from 10am
to 2pm"); recurring sets ("on Mondays", "every week": no window); "in 3 days" / "in two weeks" as
future points; "N minutes ago"; "of late" (too often "a list of late payments"); bare
years or quarters without a preposition ("the 2024 budget", "Q3 roadmap"); the beginning,
middle or end of a week (read in part: the week, as a preference); "latest" as a recency cue; a day and
month without a year and without a preposition ("3/12 notes": a fraction as often), or
with dots ("12.03.": a decimal or a clock time as often); bare holiday or season names
without a preposition ("Christmas cards"); astronomical seasons and school holidays
(which differ by region); Orthodox Christmas; "Easter holidays" longer than Good Friday to
Easter Monday; languages other than English.
"""

from secondbrain.temporal.calendar import Conventions
from secondbrain.temporal.grammar import DateReading, TimeField, TimeWindow, parse_time
from secondbrain.temporal.intent import QueryClass, Understanding, describe, understand

__all__ = ["Conventions", "DateReading", "QueryClass", "TimeField", "TimeWindow", "Understanding", "describe",
           "parse_time", "understand"]
