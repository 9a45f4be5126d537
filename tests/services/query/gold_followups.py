"""Gold conversations for follow-ups: each turn says whether it must carry anything over, the words its
standalone form must hold and must not hold, and the time expression it must be searched with (None: none).

"carry" is what a person would expect: a pronoun, an ellipsis or "else" takes from the turn before;
a question that names its own subject or time starts fresh; a time never carries silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Turn:
    question: str
    carry: bool = False
    has: tuple[str, ...] = ()
    lacks: tuple[str, ...] = ()
    time: str | None = None


@dataclass(frozen=True, slots=True)
class Conversation:
    name: str
    turns: tuple[Turn, ...] = field(default_factory=tuple)


def c(name: str, *turns: Turn) -> Conversation:
    return Conversation(name, turns)


T = Turn
CONVERSATIONS = [
    # --- the reproductions from issue 23
    c("a new subject after a dated listing starts fresh", T("what did I save today?", time="today"),
      T("what is on the whiteboard?", lacks=("save", "today"))),
    c("a pronoun takes the subject, not the verbs", T("summarize everything about the garden"),
      T("and when is it bought?", True, ("garden",), ("summarize", "everything"))),
    # --- pronouns carry the subject
    c("it -> the appointment", T("when is my dentist appointment?"),
      T("who is it with?", True, ("dentist appointment",))),
    c("he -> the person", T("what did Zbigniew say about the Krakow office lease?"),
      T("what did he say about the budget?", True, ("Zbigniew", "budget"), ("Krakow",))),
    c("she -> the person", T("when did Dr. Patel see my knee?"),
      T("what did she recommend?", True, ("Patel",))),
    c("they -> the thing", T("where did I put the spare keys?"),
      T("who else has them?", True, ("spare keys",))),
    c("its -> possessive", T("what is the wifi router model?"),
      T("what is its serial number?", True, ("router",))),
    c("that -> the thing", T("how much was the sofa?"), T("when was that delivered?", True, ("sofa",))),
    c("there -> the place", T("what did we decide at the offsite in Porto?"),
      T("who else was there?", True, ("Porto",))),
    c("it, three turns, the subject stays", T("when does the Krakow office lease end?"),
      T("who signed it?", True, ("Krakow office lease",)), T("and how much is it?", True, ("lease",))),
    c("pronoun does not bring the earlier time", T("what did I write about the garden last week?", time="last week"),
      T("when is it watered?", True, ("garden",), ("last week",), None)),
    c("pronoun with its own time keeps only its own", T("what is the marketing budget?"),
      T("what was it last year?", True, ("marketing budget",), (), "last year")),
    # --- ellipses take the question before
    c("and + new subject", T("when is my dentist appointment?"),
      T("and the cello lesson?", True, ("cello lesson", "when"), ("dentist",))),
    c("what about + new time", T("what did I save today?", time="today"),
      T("what about last week?", True, ("save",), ("today",), "last week")),
    c("what about + new subject keeps the time", T("what did I note last week about the budget?", time="last week"),
      T("and the dentist?", True, ("dentist",), ("budget",), "last week")),
    c("how about + new subject", T("who owns the launch?"), T("how about the QA sign-off?", True, ("QA sign-off",),
                                                                     ("launch",))),
    c("bare time fragment", T("what did I save yesterday?", time="yesterday"),
      T("and the day before yesterday?", True, ("save",), (), "the day before yesterday")),
    c("why? keeps the subject", T("when was the boiler serviced?"), T("why?", True, ("boiler",))),
    c("three turns of ellipses", T("when is the school trip?"), T("and the parents' evening?", True, ("parents",)),
      T("and the concert?", True, ("concert",), ("parents", "school trip"))),
    # --- else / more / that day
    c("what else keeps subject and time", T("what did I save today about the garden?", time="today"),
      T("what else?", True, ("garden",), (), "today")),
    c("anything else keeps the time", T("what did I save yesterday?", time="yesterday"),
      T("anything else?", True, (), (), "yesterday")),
    c("what else did I save keeps the time", T("what did I save yesterday?", time="yesterday"),
      T("what else did I save?", True, ("save",), (), "yesterday")),
    c("that day takes the time", T("what did I save yesterday?", time="yesterday"),
      T("what did I photograph that day?", True, ("photograph",), ("that day",), "yesterday")),
    c("back then takes the time", T("what did I write about the move last summer?", time="last summer"),
      T("who helped me back then?", True, (), ("back then",), "last summer")),
    c("the same week", T("what meetings did I have last week?", time="last week"),
      T("which invoices came in the same week?", True, ("invoices",), (), "last week")),
    # --- fresh questions: their own subject, their own time
    c("own subject, no pointer", T("when is my dentist appointment?"),
      T("what is the wifi password at the cabin?", lacks=("dentist",))),
    c("own time, no pointer", T("what did I save today?", time="today"),
      T("what did I save last month?", lacks=("today",), time="last month")),
    c("own subject after a dated question", T("what did I add yesterday?", time="yesterday"),
      T("how much is the rent?", lacks=("yesterday", "add"))),
    c("existential there is no pointer", T("what did I save today?", time="today"),
      T("is there anything about the whiteboard?", lacks=("today",))),
    c("fragment with its own subject", T("what did I save today?", time="today"),
      T("anything about the garden?", lacks=("today", "save"))),
    c("a pronoun resolved inside the question", T("what did Mei say about the grant?"),
      T("when does the lease end and who signed it?", lacks=("grant", "Mei"))),
    c("which + noun is a question, not a pointer", T("what did I save today?", time="today"),
      T("which doctor did I see in March?", lacks=("today",), time="in March")),
    c("a new topic after a pronoun turn", T("when is the launch?"), T("who owns it?", True, ("launch",)),
      T("what is the parking fine?", lacks=("launch",))),
    c("I and my are not pointers", T("what is the plumber's number?"),
      T("when is my passport expiring?", lacks=("plumber",))),
    c("a full question after a dated one", T("what photos did I take last weekend?", time="last weekend"),
      T("what does the medicine box say about dosage?", lacks=("weekend", "photos"))),
    c("a greeting-free restart", T("who is the new hire?"), T("what is the tracking number of my parcel?",
                                                               lacks=("hire",))),
    c("own subject and own time", T("what did I note about the budget yesterday?", time="yesterday"),
      T("what did I write about the garden last week?", lacks=("budget", "yesterday"), time="last week")),
    c("and + whole question with its own subject", T("what is the rent?"),
      T("and when is the car service booked?", lacks=("rent",))),
    c("three turns: fresh, pronoun, fresh", T("what did I save today?", time="today"),
      T("what is on the whiteboard?", lacks=("today",)), T("who wrote it?", True, ("whiteboard",), ("today",))),
    c("three turns: dated, else, new", T("what did I save yesterday?", time="yesterday"),
      T("what else?", True, (), (), "yesterday"), T("what is the wifi password?", lacks=("yesterday",))),
    c("these -> the things", T("what did the vet say about the dog's vaccines?"),
      T("when are these due again?", True, ("vaccines",))),
    c("them -> the people", T("when are the grandparents visiting?"),
      T("what should I cook for them?", True, ("grandparents",))),
]
