"""What a passage says happens when: the agenda items of one passage (pure, no I/O).

A passage is read as a reader does (``secondbrain.reading``: statements, with the headings they sit under
and who said them).  A statement is an agenda item when it says something happens at a time: an
appointment, a trip, a deadline, a payment, a birthday, a meeting, a plan of the writer's ("I'll drop the
keys off on Friday"), an arrangement named by its date and time alone ("Carpet fitters on 2 December at 9",
"Table for 4 at Padella, Friday 11 December, 8pm"), or, in the past tense, something that happened ("we went
to Lisbon on 14 March").

Its time is read with the temporal parser against the passage's own time, with the one reading of a sentence's
time every reader shares (``secondbrain.temporal.tense``: the coming occurrence in a clause about what is to
come, the last one in a clause about what was), plus what the parser leaves to others: clock times, their ends
("09:00 until 11:20") and zones (``services.agenda.clock``), the date of a heading over an itinerary's lines,
and a time on the line after a date in a letter ("Tuesday 8 December 2026" / "at 10:30").

A plan proposed as a question ("Coffee on Tuesday?", "Drinks Thursday at 7?") is not on the agenda until the
other side agrees ("Great, see you then", "👍") or the person confirms it; a counter-proposal ("Can't do
Thursday, how about Friday?", "Tuesday's good. 10:30 at Monmouth?") keeps what it does not change, and a
choice between days ("Tues 1st or Weds 2nd?") is settled by the answer that picks one.  A declined or unanswered
proposal stays off.

An arrangement that comes back on a rhythm ("every other Friday", "the first Monday of each month",
``services.agenda.rhythm``) is an item that recurs.

Not agenda items: dates of birth, publication and document dates ("Published 3 March", "Invoice date", a
message's ``Date:`` line), questions, habits ("every Monday", "on Tuesdays"; read as ``Habit`` for a caller
that asks for them), open ranges ("until March"), forecasts and news ("the council announced", "analysts
expect"), other people's plans ("My brother is flying to Toronto on 3 December"), hypotheticals ("If I got
the job, I'd start on 4 January") and facts without an event ("temperatures will drop on Friday").

A statement that moves an event says so ("moved from 1 December to 4 December", "pushed to Monday", "now at
11:30", a message headed "Updated invitation:"): the item carries ``change`` and, when the statement names it,
the time it moved from; a cancelled one ``change="cancelled"`` (also under a heading "Canceled event:").  A move
that gives only a day keeps the time, one that gives only a time keeps the day: merging what several sources
say about one event is ``services.agenda.agenda``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Literal, cast
from zoneinfo import ZoneInfo

from secondbrain.reading import Statement, read
from secondbrain.sparse import Bm25Encoder
from secondbrain.temporal.calendar import Conventions, Ctx, Span
from secondbrain.temporal.grammar import scan
from secondbrain.temporal.mentions import MONTH_NAMES
from secondbrain.temporal.tense import Tense, occurrence
from secondbrain.temporal.tense import tense as tense_of
from services.agenda.clock import Clock, clocks, passage_zone
from services.agenda.names import heading_name, name
from services.agenda.rhythm import Rhythm, rhythm_from, said_rhythm, without_rhythm

Precision = Literal["time", "day", "days", "week", "month"]
MAX_SPAN = timedelta(days=62)  # longer than two months is a period, not an event ("in 2019", "Q3")
PROPOSAL_TURNS = 4  # a proposal waits this many statements for an answer

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?"

# What things are.  The first that matches names the item's kind.
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((k, re.compile(p, re.I)) for k, p in (
    ("birthday", r"\b(?:birthday|b-?day|anniversary)\b"),
    ("appointment", r"\b(?:appointments?|appt|dentist|doctor|GP|physio\w*|vet|haircut|hairdresser|barber|"
                    r"check-?up|consultation|consultant|specialist|outpatients?|clinic|hospital|surgery|scan|"
                    r"x-ray|blood\s+test|vaccin\w*|booster|jab|optician|therapist|therapy|nurse|midwife|stitches|"
                    r"dermatolog\w*|(?:safety|eye|health|annual)\s+check)\b"),
    ("travel", r"\b(?:flights?|fly|flying|flies|departs?|departure|departing|arriv\w*|lands?|landing|boarding|"
               r"trains?|ferry|coach|check(?:ing)?[\s-]?in|check(?:ing)?[\s-]?out|hotel|trips?|holidays?|"
               r"vacation|journey|cruise|road\s+trip|travel\w*|outbound|return\s+flight|dep|advance\s+single)\b"),
    ("deadline", r"\b(?:deadline|due|submit\w*|submission|hand\s+in|expir\w*|renew\w*|cut-?off|last\s+day|"
                 r"runs?\s+out|"
                 r"register|apply|rsvp|closes?|reply\s+by)\b|\bneeds?\b.*\bby\s+(?:the\s+)?(?:\d|[A-Z]|tomorrow|next|"
                 r"end)"),
    ("payment", r"\b(?:pay|paid|payment|rent|invoice|bills?|fees?|subscription|direct\s+debit|instal+ments?|"
                r"mortgage|salary|payday|refund|tax|premium|charge)\b"),
    ("event", r"\b(?:meeting|meets?|meet\s+up|call|interview|dinner|lunch|breakfast|brunch|drinks|party|wedding|"
              r"funeral|concert|gig|show|theatre|match|game|race|marathon|festival|fair|conference|workshop|"
              r"webinar|seminar|class|lesson|course|exam|test|recital|gala|ceremony|graduation|reunion|"
              r"visit\w*|viewing|deliver\w*|pick(?:ing)?\s+up|collect\w*|drop\w*\s+off|service|MOT|inspection|"
              r"launch\w*|release|opening|kick-?off|review|presentation|demo|standup|retro|talk|offsite|"
              r"parents'?\s+evening|book\s+club|tour|starts?|begins?|finish(?:es)?|ends|opens|school|term|job|"
              r"move|moving|celebrat\w*|club|training|practice|rehearsal|game\s+night|date\s+night|plumber|"
              r"electrician|builder|engineer|boiler|gym|movie|film|cinema|quiz|night\s+out|sleepover|playdate|"
              r"barbecue|bbq|picnic|strike|carol\s+service|nativity|pantomime|panto|coffee|tennis|squash|football|"
              r"five-a-side|shower|market|handover|fitters?|solicitor|lawyer|accountant|audit|planning|"
              r"booked|booking|reserved|reservation|scheduled|table\s+for|skip|cleaner|doors|christening|operation|"
              r"leaving\s+do|farewell|break\s+up|"
              r"(?:sports|open|inset|training|jumper|dress-down|non-uniform|fun|results|moving|match|race)\s+day)\b"),
))
# A first-person plan or an errand: "I'll drop the keys off on Friday", "remind me to call the bank".
_PLAN = re.compile(r"\b(?:I|we)(?:['\u2019]ll|\s+will|\s+(?:am|are|['\u2019]m|['\u2019]re)\s+(?:going\s+to|"
                   r"\w+ing\b)|\s+have\s+to|\s+need\s+to|\s+must|\s+plan\s+to|\s+should)\b|"
                   r"\b(?:remind\s+me|remember\s+to|don['\u2019]t\s+forget|let['\u2019]s|see\s+you)\b|"
                   r"^(?:pay|submit|book|call|renew|send|bring|pick\s+up|collect|return|buy|order|cancel|"
                   r"email|ring|post|drop)\b", re.I)
# A proposal's words: "can we", "shall we", "how about", "fancy".
_PROPOSES = re.compile(r"\b(?:can|could|shall|should)\s+(?:we|you|I)\b|\bcan\s+(?:come|do|make\s+it)\b|"
                       r"\bwhich\s+(?:is|works|suits)\s+(?:better|best)\b|\b(?:how|what)\s+about\b|\bfancy\b|"
                       r"\bare\s+you\s+(?:coming|joining|around|up\s+for)\b|"
                       r"\bwant\s+to\b|\bup\s+for\b|\bfree\s+(?:for|on)\b|\bI\s+can\s+do\b|\bstill\s+on\b", re.I)
# Something that happened, in the past tense, done by someone.
_DID = re.compile(r"(?<!\bof\s)(?<!\bthe\s)\b(?:I|we|he|she|they|you|[A-Z][a-z]+)\s+"
                  r"(?:went|had|did|got|came|saw|met|took|gave|ran|flew|"
                  r"left|arrived|visited|celebrated|finished|started|moved|attended|watched|played|won|lost|"
                  r"married|graduated|bought|sold|joined|quit|spent|stayed|drove|walked|hiked|swam|cooked|"
                  r"hosted|threw|organised|organized|signed|passed|failed|(?:\w+ed))\b")
# Dates that are not events: of birth, of publication, of a document.
_NOT_EVENT = re.compile(
    r"\b(?:born|birth|d\.?o\.?b\.?|published|publication|(?<!\bcards\s)(?<!\bget\s)(?<!\bit\s)posted|"
    r"updated(?!\s+(?:invitation|event|meeting))|"
    r"modified|copyright|reprinted|"
    r"released|issued|printed|accessed|statement\s+date|invoice\s+date|dated|written|created|edition|founded|"
    r"established|date\s+of\s+issue|issue\s+date|sunrise|sunset|"
    r"(?:post|article|blog\s+post|email|e-mail|message|letter|photo|picture|video|episode|issue)"
    r"\s+(?:from|of|on))\b|\u00a9", re.I)
# A message's own date in its header ("Date: Fri, 20 Nov 2026 16:02:00 +0000", "Sent: Monday, 23 November").
_HEADER_LINE = re.compile(r"^(?:from|to|cc|bcc|date|sent|subject|re|fwd?|on\s.{5,80}\bwrote)\s*:", re.I)
_QUOTE_HEADER = re.compile(r"^on\s.{5,80}\bwrote:?$", re.I)
_MESSAGE_DATE = re.compile(rf"^(?:date|sent|received)\s*:\s*{_WEEKDAY}\w*,|^on\s.{{5,80}}\bwrote:?$", re.I)
# A newsletter (its events are the sender's), unless it speaks of the person's own booking.
_NEWSLETTER = re.compile(r"\bunsubscribe\b|\bview\s+(?:this\s+email\s+)?in\s+(?:your\s+)?browser\b|"
                         r"\byou(?:['\u2019]re|\s+are)\s+receiving\s+this\b", re.I)
_YOURS = re.compile(r"\byour\s+(?:booking|order|appointment|tickets?|reservation|flight|stay|visit|delivery|"
                    r"renewal|policy|account)\b", re.I)
# News and forecasts: what others announce, expect or report, with nothing of the person's in it.
_NEWS = re.compile(
    r"\b(?:according\s+to|announced|announces|reportedly|analysts|economists|forecast\w*|likely|expected\s+to|"
    r"expect\s+\w+(?:\s+\w+)?\s+to|the\s+(?:prime\s+minister|chancellor|government|president|council|fed|"
    r"federal\s+reserve|bank\s+of\s+england|ecb|met\s+office|bbc)(?!\s+tax)|general\s+election|met\s+office)\b",
    re.I)
_PERSONAL = re.compile(r"\b(?:I|me|my|we|us|our|you|your)\b|['\u2019](?:ll|m|d|ve)\b", re.I)
# Hypotheticals, wishes and what might have been.
_HYPOTHETICAL = re.compile(
    r"\bif\b.*\b(?:would|['\u2019]d|might|could)\b|\b(?:would|['\u2019]d|might|could)\b.*\bif\b|"
    r"\b(?:would|['\u2019]d)\s+(?:have|love|rather)\b|\bhad\s+\w+\s+been\b|\bone\s+day\b|\bsomeday\b|\bmight\b|"
    r"\bnothing['\u2019]?s?\s+(?:is\s+)?decided\b|\bmaybe\b|\bperhaps\b|\bwe['\u2019]ll\s+see\b|\bsupposing\b", re.I)
# Someone else's trip, move or new job, with nothing of the person's in it.
_THIRD_PARTY = re.compile(
    r"^(?:\W*[\w ]{1,30}:\s*)?(?:(?:my|our|his|her|their)\s+(?:brother|sister|mum|mom|mother|dad|father|parents|son|"
    r"daughter|husband|wife|partner|boyfriend|girlfriend|friends?|neighbou?rs?|cousin|aunt|uncle|grandparents?|"
    r"boss|colleague)|mum\s+and\s+dad|[A-Z][a-z]+\s+and\s+[A-Z][a-z]+|he|she|they)(?:['\u2019]s)?\s+"
    r"(?:(?:is|are|['\u2019]s|['\u2019]re|will\s+be|will)\s+)?(?:flying|fly|flies|off\s+to|going\s+to|heading|"
    r"travelling|traveling|leaving|starting|moving|driving|visiting\s+(?:his|her|their)|staying\s+with)\b", re.I)
_TRIP_TO = re.compile(r"^(?:\W*[\w ]{1,30}:\s*)?(?:[A-Z][a-z]+\s+)?[A-Z][a-z]+(?:['\u2019]s|\s+is|\s+will\s+be)?\s+"
                      r"(?:(?:flying|off|heading|going|travelling|traveling|driving|moving)\s+(?:back\s+)?to\s+[A-Z]|"
                      r"visiting\s+(?:his|her|their)\b|staying\s+with\s+(?:his|her|their)\b)")
_FIRST_PERSON = re.compile(r"\b(?:I|me|we|us|you)\b|['\u2019](?:ll|m)\b", re.I)
_QUESTION = re.compile(r"^(?:\W*\w+\s?:\s*)?(?:are|is|am|do|does|did|can|could|would|will|shall|should|what|when|"
                       r"where|who|how|why|which|have|has|any|fancy|free)\b", re.I)
# A question that asks for something rather than proposing it ("What time does the market open on Saturday?").
_ASKS_FOR = re.compile(r"^(?:\W*\w+\s?:\s*)?(?:so\s+|and\s+)?(?:what|when|where|who|which|why|how)\b(?!\s+about\b)",
                       re.I)
_HABIT = re.compile(
    rf"\b(?:every|each)\s+(?:day|morning|evening|night|week|weekday|weekend|month|year|{_WEEKDAY}|"
    rf"\d+(?:st|nd|rd|th)?)\b|\bon\s+{_WEEKDAY}s\b|\b{_WEEKDAY}s\s+at\b|\b(?:daily|weekly|monthly|"
    r"usually|always|normally|generally|often|tends?\s+to|most\s+(?:days|mornings|evenings)|twice\s+a|"
    r"once\s+a|a\s+week\b|per\s+week|of\s+each\s+month|of\s+every\s+month|each\s+month|opening\s+hours|"
    rf"open\s+\d)\b|\b(?:open|closed)\b.*\b{_WEEKDAY}\s+to\s+{_WEEKDAY}\b", re.I)
_MOVE = re.compile(r"\b(?:moved|moves|moving|move|rescheduled|reschedule|postponed|pushed(?:\s+back)?|push|"
                   r"brought\s+forward|changed|switched|now|instead|make\s+it)\b", re.I)
_MOVED = re.compile(r"\b(?:moved|moving|moves|rescheduled|postponed|pushed|push|brought\s+forward|changed|switched|"
                    r"instead|make\s+it|same\s+time|now\s+(?:at|on))\b", re.I)
_CANCEL = re.compile(r"\b(?:cancel+ed|cancel+ing|called\s+off|no\s+longer\s+(?:on|happening)|"
                     r"(?:have|need|had|got)\s+to\s+cancel|(?:I|we)['\u2019]?(?:m|re)?\s+cancel\w*)\b", re.I)
# A message's subject that cancels or changes the event it is about.
_CANCEL_HEADING = re.compile(r"^(?:canceled|cancelled)(?:\s+(?:event|meeting|invitation))?\s*:", re.I)
_UPDATE_HEADING = re.compile(r"^(?:updated\s+invitation|updated(?:\s+event)?|rescheduled|new\s+time)\s*:", re.I)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}")
_MONTH = re.compile(rf"\b(?:{MONTH_NAMES})\b", re.I)
_BEFORE = re.compile(r"before\s+", re.I)
_HOLIDAY_BEFORE_TIME = re.compile(r"\b(Christmas\s+(?:Eve|Day)|Boxing\s+Day|New\s+Year['\u2019]s\s+(?:Eve|Day))"
                                  r"\s*,?\s*(?=(?:at\s+)?\d{1,2}(?:[:.]\d{2})?\s*(?:[ap]\.?m|\b))", re.I)
# A to-do written as a command: its first word is a verb, not a name, a number or an article.
_TODO = re.compile(r"^(?:\W*\w+\s?:\s*)?(?:sign|get|send|fill|finish|sort|check|confirm|register|apply|book|renew|"
                   r"pay|order|buy|return|post|cancel|change|update|tell|ask|email|ring|call|reply|write|print|pack|"
                   r"clean|fix|move|bring|take|drop|collect|pick)\b", re.I)
_BARE_NTH = re.compile(r"(?:\bthe\s+|^(?:\W*[\w ]{1,30}:\s*)?)(\d{1,2}(?:st|nd|rd|th))\b(?!\s+(?:of\b|century|time|"
                       r"floor|anniversary|birthday|edition|place|row|annual|year|day|week|month|street|avenue|"
                       r"[A-Z]))", re.I)
_FROM_TO = re.compile(r"^(?:from\s+)?(?P<old>.+?)\s+(?:to|until|till|-|\u2013)\s+(?P<new>.+)$", re.I)
_ANAPHORIC = re.compile(r"\b(?:that|the\s+same|the\s+following|the\s+next)\s*$", re.I)
# A holiday before an event's name ("Christmas dinner", "New Year's Eve party"): the parser needs a preposition.
_HOLIDAY_EVENT = re.compile(r"\b(Christmas(?:\s+Eve|\s+Day)?|Boxing\s+Day|New\s+Year['\u2019]s\s+(?:Eve|Day)|"
                            r"Easter(?:\s+Sunday|\s+Monday)?|Thanksgiving|Halloween|Bonfire\s+Night|"
                            r"Valentine['\u2019]s\s+Day)\s+(?:dinner|lunch|party|drinks|service|dance|fair|market|"
                            r"meal|do|concert|play|show)\b", re.I)
# An answer that agrees to what was proposed, or confirms it.
_AGREES = re.compile(
    r"^(?:\W*\w+\s?:\s*)?(?:no\s+problem|no\s+worries|wouldn['\u2019]t\s+miss\s+it|I['\u2019]ll\s+be\s+there|"
    r"(?:and\s+)?I['\u2019]m\s+(?:there|in)\b|"
    r"can['\u2019]t\s+wait|yes|yeah|yep|yup|sure|ok|okay|k|sounds\s+(?:good|great|perfect|lovely)|perfect|great|"
    r"lovely|brilliant|excellent|fab|deal|will\s+do|of\s+course|absolutely|definitely|done|agreed|booked|"
    r"confirmed|in|count\s+me\s+in|I['\u2019]m\s+in|I['\u2019]ll|I\s+can|we\s+can|(?:she|he|they|we|I)['\u2019]d\s+"
    r"love\s+to|love\s+to|works\s+for\s+me|see\s+you)\b|"
    r"\b(?:works|is\s+(?:fine|good|perfect|great)|['\u2019]s\s+(?:fine|good|perfect|great)|sounds\s+good|"
    r"I['\u2019]m\s+there|it\s+is$|"
    r"see\s+you\s+(?:then|there)|it['\u2019]s\s+a\s+date)\b|[\U0001f44d\U0001f44c\u2705\U0001f389\U0001f64c\u2714]",
    re.I)
_DECLINES = re.compile(r"\b(?:sorry|can['\u2019]?t(?!\s+wait)|cannot|can\s+not|no(?!\s+(?:problem|worries))|nope|"
                       r"not\s+free|busy|away|won['\u2019]t\s+make|"
                       r"don['\u2019]t\s+think|unfortunately|doesn['\u2019]t\s+work|no\s+can\s+do)\b", re.I)
_BY_DAY = re.compile(r"\bby\s+(?:the\s+)?(?:\d|mon|tue|wed|thu|fri|sat|sun|tomorrow|next|end)", re.I)
_TIME_FIRST = re.compile(r"^(?:at\s+)?\d{1,2}(?:[:.]\d{2})?\s*(?:[ap]\.?m\.?)?\b", re.I)  # "10am, usual pitch"
_COUNTER = re.compile(r"\b(?:make\s+it|say|let['\u2019]s\s+say|how\s+about|rather|better)\b", re.I)
_WHAT_TIME = re.compile(r"\bwhat\s+time\b|\bwhen\s+(?:shall|should|do)\s+(?:we|I)\b", re.I)
_WHEN_LINE = re.compile(r"^when\s*:", re.I)  # a calendar event's record: "When: All day, Tuesday 8 December 2026"
_DEP_ARR = re.compile(r"\b(?:dep|departs?|departure)\b.*\b(?:arr|arrives?|arrival)\b", re.I)
_OPTIONS = re.compile(r"\s+or\s+", re.I)
_TO_NEW = re.compile(r"\b(?:to|until|till|for|now|on|make)\s*$", re.I)
_FROM_OLD = re.compile(r"\bfrom\s*$", re.I)
_INSTEAD_OF = re.compile(r"\b(?:instead\s+of|rather\s+than|not)\s*$", re.I)
_ANCHOR = re.compile(r"\b(?:from|starting|beginning|next\s+(?:one|visit|session|lesson|meeting|collection)|"
                     r"first\s+(?:one|on))\b", re.I)
# Words that say nothing about which event it is ("the meeting moved to Monday at 10").
_GENERIC = frozenset(Bm25Encoder().tokenize(
    "moved move rescheduled postponed pushed changed now booked scheduled set planned new time date day appointment "
    "meeting call event thing remember don't forget please note also still will shall going get got pm am o'clock "
    "morning afternoon evening night tonight tomorrow today next last week weekend month year instead again "
    "when where invitation updated canceled cancelled accepted gmt bst utc same"))


@dataclass(frozen=True, slots=True)
class Happening:
    """One thing a passage says happens (or happened) at a time."""

    day: date  # the first day, as written (in the zone it was written in)
    last_day: date  # the day after the last one
    start: datetime | None  # a timed item's instant (None: all day)
    end: datetime | None
    precision: Precision
    kind: str  # appointment, travel, deadline, payment, birthday, event, plan, happened
    quote: str  # the statement(s) that say it, plain words
    markdown: str
    expression: str  # the time words as written
    statement_start: int  # where the quote is in the passage text
    statement_end: int
    headings: tuple[str, ...] = ()
    speaker: str | None = None
    tense: Tense = "present"
    subject: frozenset[str] = frozenset()
    change: Literal["moved", "cancelled"] | None = None
    moved_from: tuple[date, datetime | None] | None = None  # the day (and instant) the statement says it left
    zone_words: str = ""  # "Tokyo time": the zone a time was written in, when it says so
    yearly: bool = False  # a birthday or an anniversary comes back every year
    title: str = ""  # the event's name, as a calendar shows it ("Dentist, Dr. Osei")
    recurrence: Rhythm | None = None  # an arrangement that comes back ("every other Friday")
    time_only: bool = False  # the statement gives a new time of day only ("now at 11:30"): its day is another's
    proposed: bool = False  # put as a question and not answered in this passage: counts once a later one agrees
    agrees: bool = False  # no item: this passage's answer agrees to what was proposed before it

    @property
    def all_day(self) -> bool:
        return self.start is None


@dataclass(frozen=True, slots=True)
class Habit:
    """Something a passage says recurs ("yoga every Tuesday at 6.30pm"): shown only when asked for."""

    weekdays: tuple[int, ...]  # 0 = Monday; empty for a day of the month
    month_day: int | None
    at: time | None
    quote: str
    statement_start: int
    statement_end: int
    headings: tuple[str, ...] = ()
    speaker: str | None = None


@dataclass(slots=True)
class _Reading:
    said_at: datetime
    zone: tzinfo  # relative words and times without a zone are read here
    conventions: Conventions
    passage_zone: tzinfo | None
    heading_days: dict[str, Span | None] = field(default_factory=dict)

    @property
    def ctx(self) -> Ctx:
        return Ctx(self.said_at, cast(ZoneInfo, self.zone), 0, self.conventions)


@dataclass(slots=True)
class _Proposal:
    """A plan put as a question, waiting for an answer: its options (one, or the days offered), who put it."""

    options: list[Happening]
    speaker: str | None
    waited: int = 0


def read_passage(text: str, said_at: datetime, zone: tzinfo, *, headings: Sequence[str] = (),
                 speakers: frozenset[str] = frozenset(), conventions: Conventions | None = None) -> list[Happening]:
    """The agenda items ``text`` holds, read against ``said_at`` (its own time) in ``zone`` (where it was
    written: the person's zone unless the source says otherwise); see the module doc."""
    r = _Reading(said_at, zone, conventions or Conventions(), passage_zone(text))
    if _NEWSLETTER.search(text) and not _YOURS.search(text):
        return []  # a shop's or a venue's newsletter: their events, not the person's
    statements = _quoted_first(read(text, tuple(headings), speakers))
    out: list[Happening] = []
    pending: _Proposal | None = None
    agreed: tuple[int, str | None] | None = None  # where the item just agreed is in ``out``, and who agreed
    asked_time: int | None = None  # the item "what time?" asks about
    replied = False  # an answer that agrees, to a proposal made before this passage
    for i, st in enumerate(statements):
        context = " ".join(s.text for s in statements[max(0, i - 2):i])
        after = statements[i + 1].text if i + 1 < len(statements) else ""
        if _WHAT_TIME.search(st.text) and out and out[-1].start is None:
            asked_time = len(out) - 1
            continue
        if _proposes(st.text):
            pending, agreed = _counter(r, st, context, pending), None
            continue
        found = _statement(r, st, context, after=after)
        if asked_time is not None and not found and clocks(st.text, context) and len(st.text.split()) <= 8:
            out[asked_time] = _agreed(_at_clock(r, out[asked_time], clocks(st.text, context)[0]), st)  # "7:30"
            asked_time = None
            continue
        if pending is None and not out and not found and _AGREES.search(st.text) and not _DECLINES.search(st.text):
            replied = True
        if agreed is not None and agreed[1] == st.speaker and (found or clocks(st.text, context)):
            refined = _refine(r, out[agreed[0]], found, st, context)  # "Yes!" then "Saturday at 7.30 at Dishoom."
            agreed = None
            if refined is not None:
                out[-1] = refined
                continue
        agreed = None
        if pending is not None:
            offered = _offered(found, st)
            answered, pending = _answer(r, st, context, found, pending)
            if answered is not None:
                out.extend(answered)
                agreed = (len(out) - 1, st.speaker)
                continue
            if pending is None and (_DECLINES.search(st.text) or offered):
                found = []  # "Sorry, I'm away this weekend": a reason, not a plan
        if _offered(found, st):
            pending = _Proposal(_inside_week(found), st.speaker)  # "I can do Tues 1st or Weds 2nd"
            continue
        if found:
            out.extend(found)
            continue
        attached = _time_for_previous(r, st, statements, i, out, context)
        if attached is not None:
            out[-1] = attached
            continue
        out.extend(_under_dated_heading(r, st, context))
    if pending is not None:  # asked and not answered here: a later message may agree to it
        out.extend(replace(h, proposed=True) for h in pending.options)
    elif replied and not out:
        out.append(_answer_mark(r, statements))
    return out


def _answer_mark(r: _Reading, statements: list[Statement]) -> Happening:
    """A passage that only agrees ("See you there!") to what an earlier one proposed: no item, a mark that the
    agenda's merge pairs with that proposal in the same conversation."""
    st = next(s for s in statements if _AGREES.search(s.text))
    day = r.said_at.astimezone(r.zone).date()
    return Happening(day, day + timedelta(days=1), None, None, "day", "answer", st.text, st.markdown, "", st.start,
                     st.end, st.headings, st.speaker, agrees=True)


def _quoted_first(statements: list[Statement]) -> list[Statement]:
    """A mail reply written above the message it quotes ("Yes, that works" / "On Thu, Tom wrote: > Could the
    engineer come on Monday?"): read in the order it was said, the quoted message first."""
    at = next((i for i, st in enumerate(statements) if _QUOTE_HEADER.search(st.text)), None)
    if at is None or at + 1 >= len(statements) or at == 0:
        return statements
    return statements[at + 1:] + statements[:at + 1]


def _offered(found: list[Happening], st: Statement) -> bool:
    """Days offered to choose from ("I can do Tues 1st or Weds 2nd"): none is agreed yet."""
    return len(found) > 1 and bool(_OPTIONS.search(st.text)) and bool(_PROPOSES.search(st.text))


def _refine(r: _Reading, h: Happening, found: list[Happening], st: Statement, context: str) -> Happening | None:
    """What the one who agreed says next about the item agreed: its time, or its day and time again."""
    same = [f for f in found if f.day == h.day]
    if same:
        return _keep_parts(r, h, same[0])
    clock = clocks(st.text, context)
    if not found and clock and h.start is None:
        return _agreed(_at_clock(r, h, clock[0]), st)
    return None


def _inside_week(found: list[Happening]) -> list[Happening]:
    """Days named beside a week ("Dinner next week? Wed or Thu?"): those days of that week."""
    weeks = [h for h in found if h.precision == "week"]
    if not weeks:
        return found
    days = [_within_week(weeks[0], h) for h in found if h.precision in ("day", "time")]
    return days or found


def _proposes(text: str) -> bool:
    """A statement that puts a time forward as a question ("Coffee on Tuesday?", "Tuesday's good. 10:30 at
    Monmouth?"), not one that asks for something ("What time does the market open?")."""
    return any(part.rstrip(" \"')]").endswith("?") and not _ASKS_FOR.search(part)
               for part in re.split(r"(?<=[.!?,;])\s+", text) if _has_time(part))


def _has_time(text: str) -> bool:
    return bool(clocks(text)) or bool(re.search(
        rf"\d|\b{_WEEKDAY}\b|\b(?:{MONTH_NAMES}|today|tonight|tomorrow|week|weekend|month)\b", text, re.I))


def _counter(r: _Reading, st: Statement, context: str, pending: _Proposal | None) -> _Proposal | None:
    """A proposal, or a counter-proposal to the one pending: what it leaves unsaid (the day, the time, what it
    is) is the pending one's; the days it turns down ("Can't do Thursday, how about Friday?") are left out."""
    found = _inside_week(_declined_dropped(st.text, _statement(r, st, context, questions=True)))
    if any(h.tense == "past" for h in found):
        return pending  # "Did you watch the match last night?" proposes nothing
    bases = pending.options if pending is not None else []
    if found and bases:
        found = [_fit(r, bases, h) for h in found]
    elif not found and bases:
        clock = clocks(st.text, context)
        if len(bases) == 1 and clock:  # "10:30 at Monmouth?": a time for the day proposed
            found = [_agreed(_at_clock(r, bases[0], clock[0]), st)]
        else:
            assert pending is not None
            return None if _DECLINES.search(st.text) else _Proposal(bases, pending.speaker, pending.waited + 1)
    return _Proposal(found, st.speaker) if found else None


def _declined_dropped(text: str, found: list[Happening]) -> list[Happening]:
    """Without the days a clause turns down ("Can't do Thursday")."""
    if len(found) < 2 or not _DECLINES.search(text):
        return found
    declined = [m.span() for m in re.finditer(r"[^,;.!?]+", text) if _DECLINES.search(m.group(0))]
    kept = [h for h in found if not any(h.expression and h.expression.split()[0] in text[a:b]
                                        for a, b in declined)]
    return kept or found


def _fit(r: _Reading, bases: list[Happening], h: Happening) -> Happening:
    """``h`` said in answer to the options ``bases``: on the option it names (its "Thu" is the Thursday offered),
    keeping what it does not say."""
    named = [b for b in bases if b.precision in ("day", "time") and (b.day == h.day or (
        b.day.weekday() == h.day.weekday() and h.precision in ("day", "time")))]
    if len(bases) > 1 and not named:
        return h
    base = named[0] if named else bases[0]
    if named and h.day != base.day:
        h = _on_day(h, base.day)
    return _keep_parts(r, base, _within_week(base, h))


def _answer(r: _Reading, st: Statement, context: str, found: list[Happening],
            pending: _Proposal) -> tuple[list[Happening] | None, _Proposal | None]:
    """What an answer does with the proposal pending: agrees (the items, with what the answer adds), picks one
    of the days offered, declines, or says something else (the proposal waits a few statements)."""
    found = [h for h in found if not h.time_only]  # "Make it 6.30": a new time for what is proposed
    agrees = bool(_AGREES.search(st.text)) and not re.match(r"^(?:\W*\w+\s?:\s*)?no\b(?!\s+(?:problem|worries))",
                                                             st.text, re.I)
    options = pending.options
    if len(options) > 1:
        picked = [_fit(r, options, h) for h in found if _fit(r, options, h) is not h] or \
            _pick_by_word(options, st.text)
        if picked and agrees:
            return [_agreed(h, st) for h in picked], None
        if picked:
            return None, _Proposal(picked, pending.speaker)
    elif agrees and options[0].precision in ("day", "time", "days"):
        base = options[0]
        if found:  # "Yes! Saturday at 7.30 at Dishoom.": the answer says when itself
            return [_fit(r, options, h) for h in found], None
        clock = clocks(st.text, context)
        if clock and (base.start is None or not _same_clock(base, clock[0])):
            # "Yes, I'll get her at 3:15" / "Make it 6.30 and I'm there": the time is the answer's
            return [_agreed(_at_clock(r, base, clock[0]), st)], None
        return [_agreed(base, st)], None
    clock = clocks(st.text, context)
    said = " ".join(_words_said(st.text))
    if len(options) == 1 and clock and not found and not _DECLINES.search(st.text) and len(said.split()) <= 8 and (
            _TIME_FIRST.match(said) or _MOVED.search(said) or _COUNTER.search(said)):
        return None, _Proposal([_agreed(_at_clock(r, options[0], clock[0]), st)], st.speaker)  # "Make it 6.30"
    if _DECLINES.search(st.text) or found:
        return None, None
    if _HEADER_LINE.match(st.text):
        return None, pending  # a forwarded or quoted message's header says nothing to the proposal
    pending.waited += 1
    return None, (pending if pending.waited < PROPOSAL_TURNS else None)


def _same_clock(h: Happening, clock: Clock) -> bool:
    assert h.start is not None
    local = h.start.astimezone(h.start.tzinfo)
    return (local.hour, local.minute) == (clock.hour, clock.minute)


def _agreed(h: Happening, st: Statement) -> Happening:
    return replace(h, quote=f"{h.quote} {st.text}", markdown=f"{h.markdown} {st.markdown}", statement_end=st.end,
                   subject=h.subject | _subject(st.text, "", None))


def _pick_by_word(options: list[Happening], text: str) -> list[Happening]:
    named = {i for i, wd in enumerate(_WEEKDAYS) if re.search(rf"\b{wd[:3]}\w*\b", text, re.I)}
    return [o for o in options if o.day.weekday() in named]


def _within_week(base: Happening, h: Happening) -> Happening:
    """A weekday answered to a proposal for a stretch of days ("Dinner next week? Wed or Thu?" / "Thu!"): that
    weekday inside the stretch."""
    if base.precision not in ("week", "days") or h.precision not in ("day", "time"):
        return h
    d = base.day
    while d < base.last_day:
        if d.weekday() == h.day.weekday() and d != h.day:
            return _on_day(h, d)
        d += timedelta(days=1)
    return h


def _keep_parts(r: _Reading, base: Happening, h: Happening) -> Happening:
    """A counter-proposal or an answer keeps what it does not change: the time of day when it gives only a day,
    what the plan is about."""
    if h.start is None and base.start is not None and h.precision == "day":
        local = base.start.astimezone(base.start.tzinfo)
        clock = Clock(local.hour, local.minute, (0, 0), _end_clock(base))
        h = _at_clock(r, h, clock, zone=base.start.tzinfo)
    kind = h.kind if h.kind not in ("plan", "event") or base.kind in ("plan", "event") else base.kind
    return replace(h, kind=kind, quote=f"{base.quote} {h.quote}" if base.quote not in h.quote else h.quote,
                   markdown=f"{base.markdown} {h.markdown}" if base.markdown not in h.markdown else h.markdown,
                   statement_start=min(base.statement_start, h.statement_start), subject=base.subject | h.subject,
                   title=base.title or h.title)


def _end_clock(h: Happening) -> tuple[int, int] | None:
    if h.start is None or h.end is None:
        return None
    end = h.end.astimezone(h.start.tzinfo)
    return end.hour, end.minute


def _at_clock(r: _Reading, h: Happening, clock: Clock, zone: tzinfo | None = None) -> Happening:
    """``h`` on its day at ``clock``."""
    start = _instant(r, h.day, clock) if zone is None else datetime.combine(
        h.day, time(clock.hour, clock.minute)).replace(tzinfo=zone)
    end = datetime.combine(h.day, time(*clock.end)).replace(tzinfo=start.tzinfo) if clock.end else None
    return replace(h, start=start, end=end, precision="time", last_day=h.day + timedelta(days=1))


def _on_day(h: Happening, day: date) -> Happening:
    """``h`` moved to ``day``, at the same time of day."""
    shift = day - h.day
    start = None if h.start is None else datetime.combine(day, h.start.timetz())
    end = None if h.end is None else datetime.combine(day, h.end.timetz())
    return replace(h, day=day, last_day=h.last_day + shift, start=start, end=end)


def habits(text: str, *, headings: Sequence[str] = (), speakers: frozenset[str] = frozenset()) -> list[Habit]:
    """The habits ``text`` speaks of: a weekday or a day of the month that recurs, with its time if said (an
    arrangement with a longer rhythm, "every other Friday", is an item that recurs instead)."""
    out: list[Habit] = []
    for st in read(text, tuple(headings), speakers):
        if not _HABIT.search(st.text) or said_rhythm(st.text) or (_QUESTION.search(st.text)
                                                                   and st.text.rstrip().endswith("?")):
            continue
        if not (_kind(st.text) or _PLAN.search(st.text) or re.search(r"\b(?:I|we)\b", st.text)):
            continue
        days = tuple(sorted({i for i, name in enumerate(_WEEKDAYS)
                             if re.search(rf"\b{name[:3]}\w*s?\b", st.text, re.I)}))
        if re.search(r"\bevery\s+(?:day|morning|evening|night)\b|\bdaily\b", st.text, re.I):
            days = tuple(range(7))
        elif re.search(r"\bevery\s+weekday\b|\bweekdays\b", st.text, re.I):
            days = tuple(range(5))
        month_day = None
        m = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)\s+of\s+(?:each|every|the)\s+month\b", st.text, re.I)
        if m:
            month_day, days = int(m.group(1)), ()
        if not days and month_day is None:
            continue
        found = clocks(st.text)
        at = time(found[0].hour, found[0].minute) if found else None
        out.append(Habit(days, month_day, at, st.text, st.start, st.end, st.headings, st.speaker))
    return out


# --------------------------------------------------------------------------- one statement


def _statement(r: _Reading, st: Statement, context: str, *, questions: bool = False,
               after: str = "") -> list[Happening]:
    t = st.text
    if (_asks(t) and not questions) or _excluded(t):
        return []
    said = said_rhythm(t)
    if said is not None:
        return _recurring(r, st, said, context)
    if _HABIT.search(t):
        return []
    dated = _dated(r, t)
    if not dated:
        return _time_only(r, st, context)
    kind = _kind_of(st, context, questions=questions)
    times = [c for c in clocks(t, context) if not any(a <= c.span[0] < b for a, b, _ in dated)]
    bare = _only_time(t, dated)
    if bare and _past_stamp(r, dated) and times:
        return []  # "03/12/2026 08:14" on a receipt: when it was printed
    if kind is None and bare:  # a ticket's "SAT 12/12/2026" over "DOORS 19:00": the line after says what it is
        kind = _kind(after) or _kind(context) or ("event" if any(c.end for c in times) or (
            times and not _could_be_past(r, t)) else None)  # "TUE 22 DEC 2026 7.30PM" on a theatre ticket
    elif kind is None and (times or _WHEN_LINE.match(t)):
        kind = "event"  # "Carpet fitters on 2 December at 9": a day and a time make an arrangement
    if kind is None:
        return []
    if _NOT_EVENT.search(t) and not re.search(r"\b(?:due|deadline|pay|payment|appointment)\b", t, re.I):
        return []
    new, old = _moved(t, dated)
    change = _change(st, t, dated, old)
    chosen = [new] if new is not None else dated
    out: list[Happening] = []
    for a, b, span in chosen:
        clock = _nearest_clock(times, a, b, len(chosen) == 1)
        moved_from = None
        if old is not None and new is not None:
            moved_from = _from(r, old[2], _nearest_clock(times, old[0], old[1], False))
        h = _make(r, st, t[a:b], span, clock, kind, tense_of(t, (a, b)), change, moved_from, context)
        if h is not None:
            out.append(h)
    return out


def _excluded(t: str) -> bool:
    """Statements that are no one's arrangement: a message's date line, news, hypotheticals, other people's
    trips."""
    if _MESSAGE_DATE.search(t) or _HYPOTHETICAL.search(t):
        return True
    if _NEWS.search(t) and not (_PERSONAL.search(t) or _PLAN.search(t)):
        return True
    said = t.split(":", 1)[-1] if ":" in t[:30] else t
    return bool(_THIRD_PARTY.search(t) or _TRIP_TO.search(t)) and not _FIRST_PERSON.search(said)


def _dated(r: _Reading, t: str) -> list[tuple[int, int, Span]]:
    """The statement's times that are days of an event, each the occurrence its clause means."""
    ctx = r.ctx
    dated: list[tuple[int, int, Span]] = []
    for a, b, raw in _scan(t, ctx):
        span = _settle(ctx, t[a:b], raw, tense_of(t, (a, b)), t)
        if span is None or _NOT_EVENT.search(t[max(0, a - 40):a]) or _NOT_EVENT.search(t[b:b + 12]):
            continue
        if _ANAPHORIC.search(t[max(0, a - 12):a]):
            continue  # "that Saturday": a day reckoned from another the reader knows, not said here
        dated.append((a, b, span))
    return dated


def _kind_of(st: Statement, context: str, *, questions: bool = False) -> str | None:
    """What the statement's item is: its own words, its heading's, the turn before's for a short answer, a plan
    of the writer's, or something that happened."""
    t = st.text
    kind = _kind(t) or _kind(" ".join(heading_name(h) for h in st.headings))
    if kind is None and len(t.split()) <= 10:
        kind = _kind(context)  # "Yes! Saturday at 7.30 at Dishoom." answers "dinner on Saturday?"
    if kind is not None:
        return kind
    said = tense_of(t)
    if _PLAN.search(t) or (said == "future" and re.search(r"\b(?:I|we|you)\b", t)) or (
            questions and (_PROPOSES.search(t) or clocks(t) or len(_words_said(t)) <= 6)):
        return "plan"  # ("Footy Sunday?", "2pm at the park gate?": a short question about a time proposes it)
    if said != "past" and _BY_DAY.search(t):
        return "deadline"  # "Get the cards posted by the 18th!"
    if said == "past" and _DID.search(t):
        return "happened"
    return None


def _words_said(t: str) -> list[str]:
    """The words of a statement without its speaker's name."""
    return (t.split(":", 1)[1] if ":" in t[:30] else t).split()


def _only_time(t: str, dated: list[tuple[int, int, Span]]) -> bool:
    """Whether a line holds nothing but its date and times ("SAT 12/12/2026", "12/11/2026 14:32")."""
    rest = t
    for a, b, _span in sorted(dated, reverse=True):
        rest = rest[:a] + rest[b:]
    for c in sorted(clocks(rest), key=lambda c: -c.span[0]):
        rest = rest[:c.span[0]] + rest[c.span[1]:]
    return not re.search(r"[A-Za-z]{2,}", re.sub(r"\b(?:date|on|at|the)\b", " ", rest, flags=re.I))


def _could_be_past(r: _Reading, t: str) -> bool:
    """Whether a numeric date on the line reads as a day already gone one way or the other ("12/11/2026" on a
    receipt of 24 November: 12 November, day first): then it may be when the slip was printed."""
    for m in re.finditer(r"\b(\d{1,2})[/.](\d{1,2})[/.](\d{2,4})\b", t):
        a, b, y = int(m.group(1)), int(m.group(2)), int(m.group(3))
        year = y if y > 99 else 2000 + y
        for month, day in ((a, b), (b, a)):
            try:
                if date(year, month, day) <= r.said_at.astimezone(r.zone).date():
                    return True
            except ValueError:
                continue
    return False


def _past_stamp(r: _Reading, dated: list[tuple[int, int, Span]]) -> bool:
    """Dates already gone: on a line of its own, a receipt's or a ticket's printing time."""
    return all(span.end is not None and span.end <= r.said_at for _a, _b, span in dated)


def _change(st: Statement, t: str, dated: list[tuple[int, int, Span]],
            old: tuple[int, int, Span] | None) -> Literal["moved", "cancelled"] | None:
    heading = st.headings[0] if st.headings else ""
    if _CANCEL.search(t) or _CANCEL_HEADING.search(heading):
        return "cancelled"
    if old is not None or _UPDATE_HEADING.search(heading) or (len(dated) == 1 and _MOVED.search(t)):
        return "moved"
    return None


def _time_only(r: _Reading, st: Statement, context: str) -> list[Happening]:
    """A move that gives only a new time of day ("haircut now at 11:30 instead, same day"): the day is the
    event's it moves, found when the sources are merged."""
    t = st.text
    times = clocks(t, context)
    if len(times) != 1 or not _MOVED.search(t) or _asks(t):
        return []
    kind = _kind_of(st, context) or "event"
    day = r.said_at.astimezone(r.zone).date()
    h = _make(r, st, "", r.ctx.day(day), times[0], kind, "future", "moved", None, context)
    return [replace(h, time_only=True)] if h is not None and h.subject else []


def _recurring(r: _Reading, st: Statement, said: tuple[str, int | None, int | None, int],
               context: str) -> list[Happening]:
    """An arrangement that comes back ("Five-a-side every other Friday at 6pm, starting this Friday"): an item
    on its first day, with its rhythm."""
    t = st.text
    rest = without_rhythm(t)
    anchors = [d for d in _dated(r, rest) if d[2].grain in ("day", "part")]
    anchor = _first_day(r, anchors[0][2]) if anchors else None
    today = r.said_at.astimezone(r.zone).date()
    rhythm = rhythm_from(said, anchor, today)
    if rhythm is None:
        return []
    kind = _kind_of(st, context) or "event"
    times = [c for c in clocks(t, context) if not any(a <= c.span[0] < b for a, b, _ in anchors)]
    h = _make(r, st, t[anchors[0][0]:anchors[0][1]] if anchors else "", r.ctx.day(rhythm.first),
              times[0] if times else None, kind, "future", None, None, context)
    return [replace(h, recurrence=rhythm)] if h is not None else []


def _scan(text: str, ctx: Ctx) -> list[tuple[int, int, Span]]:
    """The time expressions of a statement; a range that a move names ("moved from 1 December to 4
    December") is its two ends, the old time and the new."""
    out: list[tuple[int, int, Span]] = []
    found = scan(text, ctx)
    for nth in _BARE_NTH.finditer(text):  # "Shall we say the 19th for the market?", "20th it is"
        if not any(a <= nth.start() < b for a, b, _ in found):
            day = [sp for x, y, sp in scan(f"on the {nth.group(1)}", ctx) if y - x == len(nth.group(1)) + 7]
            if day:
                found.append((nth.start(1), nth.end(1), day[0]))
    for holiday in [*_HOLIDAY_EVENT.finditer(text), *_HOLIDAY_BEFORE_TIME.finditer(text)]:
        if not found:  # "Christmas dinner at Gran's": the holiday is its day; "Christmas concert on 16/12" is not
            day = [sp for _a, _b, sp in scan(f"on {holiday.group(1)}", ctx)]
            if day:
                found.append((holiday.start(1), holiday.end(1), day[0]))
    for a, b, span in sorted(found, key=lambda f: f[0]):
        before = _BEFORE.match(text, a, b)
        if before and span.start is None and (_PLAN.search(text) or _TODO.match(text)):
            # "Renew car tax before 31/12", "Sign up for the course before the 20th": do it by that day
            words = f"on {text[before.end():b]}"
            inner = [s for x, y, s in scan(words, ctx) if y - x == len(words)]
            if inner:
                out.append((before.end(), b, inner[0]))
                continue
        m = _FROM_TO.match(text[a:b])
        if m and _MOVE.search(text):
            ends = [(a + m.start(g), a + m.end(g)) for g in ("old", "new")]
            parts = [[s for x, y, s in scan(text[lo:hi], ctx) if y - x == hi - lo] for lo, hi in ends]
            if all(parts):
                out += [(lo, hi, found[0]) for (lo, hi), found in zip(ends, parts, strict=True)]
                continue
        out.append((a, b, span))
    return out


def _asks(text: str) -> bool:
    """A question states nothing ("Are you free on Friday?"); a proposal without a question word does
    ("Dinner Saturday at 7?" is read as the plan it puts forward)."""
    return text.rstrip(" \"')]").endswith("?") and bool(_QUESTION.search(text))


def _kind(text: str) -> str | None:
    for kind, pattern in _KINDS:
        if pattern.search(text):
            return kind
    return None


def _settle(ctx: Ctx, expression: str, span: Span, said: Tense, _sentence: str) -> Span | None:
    """The occurrence a statement means (the reading every reader shares: ``secondbrain.temporal.tense``), or
    ``None`` when the time is no event's: vague, open, too long."""
    return occurrence(ctx, expression, span, said, max_span=MAX_SPAN)


def _moved(text: str, dated: list[tuple[int, int, Span]]) -> tuple[tuple[int, int, Span] | None,
                                                                  tuple[int, int, Span] | None]:
    """With two times and words of a move: which is the new one and which the old ("moved from 1 December to
    4 December", "pushed from Friday to Monday", "now on Tuesday 8 December, not Monday")."""
    if len(dated) < 2 or not _MOVE.search(text):
        return None, None
    first, second = dated[0], dated[1]
    if _INSTEAD_OF.search(text[:second[0]]):
        return first, second  # "Monday instead of Sunday"
    if _FROM_OLD.search(text[:first[0]]) or _TO_NEW.search(text[:second[0]]):
        return second, first
    if _TO_NEW.search(text[:first[0]]):
        return first, second
    return second, first


def _nearest_clock(times: list[Clock], a: int, b: int, only: bool) -> Clock | None:
    """The time of day that goes with a date at ``[a, b)``: the nearest one written (any, when it is the only
    date of the statement)."""
    if not times:
        return None
    best = min(times, key=lambda c: min(abs(c.span[0] - b), abs(a - c.span[1])))
    near = min(abs(best.span[0] - b), abs(a - best.span[1]))
    return best if only or near <= 24 else None


def _from(r: _Reading, span: Span, clock: Clock | None) -> tuple[date, datetime | None]:
    day = _first_day(r, span)
    return day, _instant(r, day, clock) if clock is not None else None


def _first_day(r: _Reading, span: Span) -> date:
    if span.first_day is not None:
        return span.first_day
    assert span.start is not None
    return span.start.astimezone(r.zone).date()


def _instant(r: _Reading, day: date, clock: Clock) -> datetime:
    """The day as written, at the clock time in the zone it names (else the passage's, else the writer's)."""
    zone = clock.zone or r.passage_zone or r.zone
    return datetime.combine(day, time(clock.hour, clock.minute)).replace(tzinfo=zone)


def _make(r: _Reading, st: Statement, expression: str, span: Span, clock: Clock | None, kind: str, tense: Tense,
          change: Literal["moved", "cancelled"] | None, moved_from: tuple[date, datetime | None] | None,
          context: str, *, quote: str | None = None, end_offset: int | None = None) -> Happening | None:
    assert span.start is not None and span.end is not None
    first = _first_day(r, span)
    last = span.last_day if span.last_day is not None else (span.end - timedelta(microseconds=1)).astimezone(
        r.zone).date() + timedelta(days=1)
    days = (last - first).days
    precision: Precision = "day" if days <= 1 else "week" if span.grain in ("week", "weekend") or (
        days == 7 and first.weekday() == 0) else "month" if span.grain == "month" else "days"
    start = end = None
    if clock is not None and days <= 1:
        start = _instant(r, first, clock)
        end = (datetime.combine(first, time(*clock.end)).replace(tzinfo=start.tzinfo) if clock.end
               else None)
        precision = "time"
    words = f"{expression} {_clock_words(st.text, clock)}".strip()
    title = name(quote or st.text, [expression, _clock_words(st.text, clock), *_time_words(r, st.text)],
                 st.headings)
    subject = _subject(quote or st.text, expression, clock) | _subject(title, "", None)
    markdown = st.markdown if quote is None else quote
    if quote is None and title and st.headings and title == heading_name(st.headings[-1]) \
            and title.lower() not in st.text.lower():
        # "When: Tuesday 15 December, 14:00" says it of its heading: the line names it
        quote, markdown = f"{title}. {st.text}", f"{title}. {st.markdown}"
    yearly = kind == "birthday" and not _YEAR.search(expression)
    return Happening(first, max(last, first + timedelta(days=1)), start, end, precision, kind, quote or st.text,
                     markdown, words, st.start,
                     end_offset if end_offset is not None else st.end, st.headings, st.speaker, tense, subject,
                     change, moved_from, clock.zone_words if clock is not None else "", yearly, title)


def _clock_words(text: str, clock: Clock | None) -> str:
    return text[clock.span[0]:clock.span[1]].strip() if clock is not None else ""


def _time_words(r: _Reading, text: str) -> list[str]:
    """Every time expression and clock time written in ``text``, as written."""
    return [text[a:b] for a, b, _s in scan(text, r.ctx)] + [text[c.span[0]:c.span[1]] for c in clocks(text)]


def _subject(text: str, expression: str, clock: Clock | None) -> frozenset[str]:
    """What the item is about, as search terms: its words without the time words and words of scheduling."""
    words = text.replace(expression, " ") if expression else text
    if clock is not None:
        words = words.replace(text[clock.span[0]:clock.span[1]], " ")
    words = _MONTH.sub(" ", words)
    words = re.sub(rf"\b{_WEEKDAY}\b|\d+(?:st|nd|rd|th)?", " ", words, flags=re.I)
    return frozenset(t for t in Bm25Encoder().tokenize(words) if t not in _GENERIC and len(t) > 1)


# --------------------------------------------------------------------------- statements that need another


def _time_for_previous(r: _Reading, st: Statement, statements: list[Statement], i: int, out: list[Happening],
                       context: str) -> Happening | None:
    """A line that only gives a time ("at 10:30", "Time: 10:30", "12 noon - 5pm") after the line with the
    date, as letters, tickets and posters put them: the time of the item just read."""
    if not out or out[-1].start is not None or out[-1].precision != "day" or i == 0:
        return None
    before = out[-1]
    if statements[i - 1].start > before.statement_end or st.start - before.statement_end > 80:
        return None
    times = clocks(st.text, context)
    if len(times) == 2 and times[0].end is None and _DEP_ARR.search(st.text):
        later = times[1]  # "DEP 07:30 ARR 11:52": a journey from one to the other
        times = [replace(times[0], end=(later.hour, later.minute)) if later.minutes > times[0].minutes else times[0]]
    if len(times) != 1 or len(st.text.split()) > 8:
        return None
    clock = times[0]
    start = _instant(r, before.day, clock)
    end = datetime.combine(before.day, time(*clock.end)).replace(tzinfo=start.tzinfo) if clock.end else None
    return replace(before, start=start, end=end, precision="time",
                   quote=f"{before.quote} {st.text}", markdown=f"{before.markdown} {st.markdown}",
                   expression=f"{before.expression} {_clock_words(st.text, clock)}", statement_end=st.end,
                   zone_words=clock.zone_words)


def _under_dated_heading(r: _Reading, st: Statement, context: str) -> list[Happening]:
    """An itinerary's line ("07:25 flight TP1351 from Gatwick") under a heading that gives the day
    ("Thursday 14 January")."""
    times = clocks(st.text, context)
    if not times or not st.headings or _asks(st.text) or _HABIT.search(st.text) or _excluded(st.text):
        return []
    span = None
    for heading in reversed(st.headings):
        if heading not in r.heading_days:
            ctx = r.ctx
            found = [_settle(ctx, heading[a:b], s, "future", heading) for a, b, s in scan(heading, ctx)]
            r.heading_days[heading] = next((s for s in found if s is not None and s.grain == "day"), None)
        span = r.heading_days[heading]
        if span is not None:
            break
    if span is None:
        return []
    kind = _kind(st.text) or _kind(" ".join(st.headings)) or "event"
    change: Literal["cancelled"] | None = "cancelled" if any(_CANCEL_HEADING.search(h) for h in st.headings[:1]) \
        else None
    h = _make(r, st, "", span, times[0], kind, "future", change, None, context)
    return [h] if h is not None else []
