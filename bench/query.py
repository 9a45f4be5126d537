"""Query latency at scale: hybrid search, time-filtered search, time-only listings and /v1/ask.

    .venv/bin/python bench/query.py [--sizes 10000,100000] [--queries 50] [--pool N]
                                    [--llm-url URL --llm-model NAME] [--no-index] [--seed 7]
                                    [--quantization int8]
    .venv/bin/python bench/query.py --synthetic --sizes 100000,1000000 [--quantization int8]

For each size N it fills ONE user's collection with N chunks of a synthetic corpus, then
measures (p50, p95, mean over ``--queries`` questions, after a short warm-up):

* ``QueryEngine.search`` end to end (understanding, query embedding, BM25, fused search in
  the vector store, diversity), the same with a one-month time filter, a dated question ("<subject>
  in March 2025": its own window, matched on the passages' own time or a time they speak of, every
  fifth chunk speaking of a few days weeks earlier), and the time-only
  listing ("what did I save in March 2025?": Postgres rows, then the opening chunks);
* ``POST /v1/ask`` over real HTTP (uvicorn on a loopback port): time to the ``meta``, the
  ``sources``, the first ``token`` and the ``done`` event, in extractive mode, or with the
  model given by ``--llm-url``/``--llm-model``.

The corpus: documents of 5-40 chunks of about 150-300 words, written from sentence templates
over topic word lists (finance, software, travel, health...), with names, invoice and ticket
numbers and other rare identifiers sprinkled in so BM25 has real work; event times spread over
the last three years; mixed modalities; payloads built by the embedder stage's own
``indexed_passage``, and artifact + document rows in Postgres for the same user.

Trade-off: embedding every chunk with MiniLM would take hours on a small machine, so only a
pool of distinct passages (``--pool``, default 2000, smaller for small test runs) is embedded
for real; each chunk is a variation of one pool passage and gets that passage's vector plus
small gaussian noise (re-normalised, cosine ~0.92 to it).  Dense search therefore runs over
realistic-looking but clustered vectors; BM25 vectors are the real encoder on each chunk's own
text.  Timings depend on the corpus size and shape more than on the exact vectors, but the
dense ranking quality is not what this measures.

After the corpus is written the benchmark waits for the store's own background HNSW build (as
the service runs it: a child process on a copy, swapped in when done) and reports how long it
took; ``--no-index`` turns that off, so dense search scans the collection.

``--synthetic`` measures the vector store alone at sizes too large to embed or to fill Postgres
for (1,000,000 chunks): synthetic 384-d vectors around random cluster centres and Zipf-distributed
sparse terms, written through ``EdgeVectorStore.upsert``, indexed by the store in the background
(dense searches are timed while the build runs), then dense, sparse and hybrid searches through
``EdgeVectorStore.search`` and the dense recall@10 against exact float search (numpy), which is
what ``--quantization int8`` costs, also inside a time window of 5 % of the points; then the same
searches again while another thread keeps writing (``SB_VECTOR_SEGMENT_KB=0`` gives the engine's
own single-graph build, to compare).  The vectors are not embeddings of text: the output says so.

Everything lives in a temporary directory deleted at the end (Postgres too, unless
``SB_POSTGRES_DSN`` names a server; then the benchmark user's rows are deleted at the end).
The numbers belong to the machine they ran on; the script prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import secrets
import shutil
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import numpy as np
from httpx_sse import connect_sse

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import charts  # noqa: E402
from bench.backbone import free_port, pct  # noqa: E402
from secondbrain import ids, keys  # noqa: E402
from secondbrain.events.models import Chunk, ChunksCreated, TimeMention  # noqa: E402
from secondbrain.ports import Embedder, VectorPoint  # noqa: E402
from secondbrain.runtime import Runtime  # noqa: E402
from services.embedder.stage import embedding_input, indexed_passage  # noqa: E402
from services.query.engine import Filters, Plan, QueryEngine  # noqa: E402

UTC_ZONE = ZoneInfo("UTC")
NOISE_SIGMA = 0.02  # per dimension on a unit 384-d vector: cosine ~0.92 to the pool passage
UPSERT_BATCH = 1000
WARMUP = 3

# --------------------------------------------------------------------------- vocabulary

FIRST = ("Dana", "Omar", "Priya", "Lukas", "Mei", "Tomasz", "Aisha", "Jonas", "Camille", "Diego", "Hannah",
         "Kenji", "Fatima", "Erik", "Sofia", "Malik", "Ingrid", "Rafael", "Yuki", "Nadia", "Pieter", "Chloe",
         "Arjun", "Greta", "Mateo", "Leila", "Oskar", "Ines", "Samuel", "Zara", "Henrik", "Amara", "Felix",
         "Rosa", "Viktor", "Elena", "Kofi", "Astrid", "Bruno", "Noor", "Stefan", "Lucia", "Idris", "Maren",
         "Hugo", "Anya", "Tariq", "Clara", "Emil", "Sana", "Marco", "Freya", "Yusuf", "Paula", "Anton",
         "Mira", "Joaquin", "Tessa", "Ravi", "Linnea")
LAST = ("Whitfield", "Okafor", "Nakamura", "Brennan", "Castellanos", "Lindqvist", "Haddad", "Kowalski",
        "Fontaine", "Abernathy", "Sorensen", "Mbeki", "Varga", "Delacroix", "Iyer", "Moreau", "Halvorsen",
        "Petrov", "Quintero", "Rasmussen", "Takahashi", "Oduya", "Bergstrom", "Marchetti", "Novak", "Ashworth",
        "Eriksen", "Gallagher", "Hoffmann", "Jablonski", "Keane", "Laurent", "Mendoza", "Nieminen", "Osei",
        "Pellegrini", "Ruiz", "Schneider", "Thornbury", "Ueda", "Vasquez", "Wojcik", "Yilmaz", "Zielinski",
        "Achterberg", "Blackwood", "Cardoso", "Dimitriou", "Esposito", "Falkner", "Grimaldi", "Holloway",
        "Ibarra", "Jovanovic", "Kristensen", "Lombardi", "Mansour", "Nordin", "Ortega", "Pirelli",
        "Quigley", "Rahman", "Sato", "Tanaka", "Ulrich", "Vidal", "Winslow", "Xavier", "Yamada", "Zapata")
CITIES = ("Lisbon", "Rotterdam", "Krakow", "Lyon", "Porto", "Ghent", "Bergen", "Valencia", "Tallinn",
          "Bologna", "Edinburgh", "Seville", "Dresden", "Gothenburg", "Ljubljana", "Bruges", "Antwerp",
          "Trieste", "Aarhus", "Bilbao", "Cork", "Graz", "Malmo", "Nantes", "Utrecht", "Zagreb", "Basel",
          "Leeds", "Turin", "Vilnius", "Montreal", "Osaka", "Melbourne", "Denver", "Austin", "Nairobi")
ORGS = ("Northwind Analytics", "Bluebell Insurance", "Harbor & Vale", "Quayside Dental", "Brightpath Energy",
        "Copperleaf Builders", "Meridian Bank", "Lumen Travel", "Pinecrest Clinic", "Atlas Freight",
        "Greenway Motors", "Foxglove Legal", "Orchard Lane School", "Kestrel Software", "Silverline Telecom",
        "Riverbend Properties", "Tidewater Accounting", "Summit Fitness", "Juniper Labs", "Cobalt Cloud",
        "Maple & Finch", "Sterling Notaries", "Wildflower Nursery", "Beacon Publishing", "Redwood Health")
ADJECTIVES = ("urgent", "delayed", "expensive", "surprising", "unresolved", "straightforward", "tricky",
              "overdue", "promising", "confusing", "reasonable", "incomplete", "recurring", "temporary",
              "unexpected", "careful", "rough", "solid", "fragile", "noisy", "quiet", "complicated", "cheap",
              "slow", "quick", "risky", "minor", "major", "annoying", "pleasant", "critical", "optional")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ANIMALS = ("finch", "otter", "heron", "lynx", "marten", "osprey", "wren", "badger", "kestrel", "puffin")


@dataclass(frozen=True)
class Topic:
    """Words and phrasings of one subject of a person's life."""

    nouns: tuple[str, ...]
    verbs: tuple[tuple[str, str], ...]  # (past, base)
    sentences: tuple[str, ...]  # topic-specific templates
    paraphrases: tuple[str, ...]  # questions about the topic in other words than its nouns
    ident: Callable[[random.Random], str]  # a rare identifier of a document about the topic
    titles: tuple[str, ...]


def _digits(r: random.Random, n: int) -> str:
    return "".join(r.choice("0123456789") for _ in range(n))


def _letters(r: random.Random, n: int) -> str:
    return "".join(r.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(n))


TOPICS: dict[str, Topic] = {
    "finance": Topic(
        ("invoice", "receipt", "payment", "budget", "tax return", "refund", "subscription", "bank transfer",
         "expense report", "mortgage", "interest rate", "savings account", "pension contribution",
         "credit card statement", "quarterly estimate", "accountant", "deduction", "dividend", "brokerage fee",
         "late fee", "VAT number", "payroll", "reimbursement", "insurance premium", "utility bill"),
        (("paid", "pay"), ("filed", "file"), ("transferred", "transfer"), ("disputed", "dispute"),
         ("budgeted", "budget")),
        ("The {n} was paid by bank transfer and the {n2} should show up on next month's statement.",
         "My accountant asked for the {n} and a copy of the {n2} before the filing deadline.",
         "After the {n} the remaining balance is {amt}, which covers the {n2} for now."),
        ("how much money did I spend on bills", "what do I owe and when is it due",
         "did anyone pay me back for that purchase"),
        lambda r: f"INV-{_digits(r, 5)}",
        ("{O} invoice {I}", "Statement and {n} {Y}", "{N} for {O}", "Tax documents: {n}")),
    "software": Topic(
        ("kubernetes cluster", "database migration", "deploy pipeline", "rollback", "latency spike",
         "cache invalidation", "memory leak", "code review", "pull request", "integration test", "API gateway",
         "message queue", "load balancer", "index rebuild", "schema change", "feature flag", "on-call rotation",
         "incident postmortem", "TLS certificate", "container image", "dependency upgrade", "query planner",
         "replication lag", "log retention", "connection pool"),
        (("deployed", "deploy"), ("rolled back", "roll back"), ("debugged", "debug"), ("profiled", "profile"),
         ("migrated", "migrate")),
        ("The {n} broke in staging because the {n2} was still on the old version.",
         "We added a dashboard for the {n}; the {n2} alert now fires after five minutes.",
         "During the incident the {n} hid the real problem, which was the {n2}."),
        ("why did the servers keep going down", "how do we ship new code to production safely",
         "what made the website so slow last time"),
        lambda r: f"{r.choice(('OPS', 'PLAT', 'DATA', 'WEB', 'SEC'))}-{_digits(r, 4)}",
        ("Postmortem {I}: {n}", "{N} design notes", "Runbook: {n}", "RFC: {n} and {n2}")),
    "travel": Topic(
        ("flight", "boarding pass", "hotel booking", "train ticket", "itinerary", "passport renewal",
         "visa appointment", "layover", "car rental", "museum visit", "hiking trail", "travel insurance",
         "airport lounge", "seat upgrade", "ferry crossing", "luggage", "online check-in", "guesthouse",
         "walking tour", "currency exchange", "night train", "city pass"),
        (("booked", "book"), ("cancelled", "cancel"), ("rebooked", "rebook"), ("visited", "visit"),
         ("packed", "pack")),
        ("The {n} to {c} leaves early, so the {n2} has to be sorted the night before.",
         "We kept the {n} flexible in case the {n2} in {c} fell through.",
         "The {n} was cheaper than expected, but the {n2} made up for it."),
        ("where am I staying on the next trip", "how do I get from the airport to the city",
         "what did we do on holiday last summer"),
        lambda r: f"booking {_letters(r, 3)}{_digits(r, 3)}",
        ("Trip to {C}: {n}", "{N} confirmation {I}", "Itinerary {C} {Y}", "Travel notes: {n}")),
    "health": Topic(
        ("blood test", "cholesterol level", "prescription", "physiotherapy", "dentist appointment",
         "vaccination", "allergy", "sleep schedule", "resting heart rate", "blood pressure", "vitamin D",
         "knee injury", "MRI scan", "dermatologist", "follow-up visit", "dosage", "symptom diary",
         "recovery plan", "eye exam", "hearing test"),
        (("measured", "measure"), ("prescribed", "prescribe"), ("booked", "book"), ("tracked", "track"),
         ("treated", "treat")),
        ("Dr. {P} said the {n} looks fine but wants to repeat the {n2} in three months.",
         "The {n} went down after I changed the {n2}.",
         "I need to bring the {n} results to the {n2}."),
        ("what did the doctor say about my results", "when is my next check-up",
         "which medicine was I told to take"),
        lambda r: f"patient ref {_letters(r, 2)}-{_digits(r, 6)}",
        ("Lab results: {n}", "{O} visit summary", "{N} notes {Y}", "Health: {n} and {n2}")),
    "home": Topic(
        ("kitchen renovation", "roof leak", "plumber", "electrician", "boiler service", "paint colours",
         "floor tiles", "insulation", "window frames", "contractor quote", "building permit",
         "bathroom fittings", "heat pump", "solar panels", "gutter cleaning", "garden fence", "damp patch",
         "smoke alarm", "extractor fan", "skirting boards"),
        (("repaired", "repair"), ("replaced", "replace"), ("painted", "paint"), ("installed", "install"),
         ("measured", "measure")),
        ("The {n} has to wait until the {n2} is finished, according to the contractor.",
         "{P} quoted {amt} for the {n}, including the {n2}.",
         "We chose the {n} after looking at the {n2} in daylight."),
        ("how much will fixing up the house cost", "who is coming to repair things next week",
         "what did we decide for the new kitchen"),
        lambda r: f"quote Q-{_digits(r, 4)}",
        ("{O} quote {I}", "House: {n}", "{N} plan", "Renovation notes: {n} and {n2}")),
    "cooking": Topic(
        ("sourdough starter", "risotto", "braised short ribs", "pickled onions", "fermentation", "spice blend",
         "pastry dough", "roasting time", "oven temperature", "chicken stock", "vinaigrette", "knife skills",
         "cast iron pan", "dinner party menu", "lentil soup", "miso glaze", "flatbread", "lemon tart"),
        (("baked", "bake"), ("roasted", "roast"), ("simmered", "simmer"), ("marinated", "marinate"),
         ("tasted", "taste")),
        ("The {n} needs at least two hours, so start the {n2} while it rests.",
         "Next time use less salt in the {n} and more acid in the {n2}.",
         "{P} brought the {n}; everyone asked for the {n2} recipe."),
        ("what should I cook for guests", "how long does the bread need to rise",
         "which recipe did everyone like at the party"),
        lambda r: f"recipe card {_digits(r, 3)}",
        ("Recipe: {n}", "{N} experiments", "Dinner with {P}: {n}", "Kitchen notes: {n}")),
    "gardening": Topic(
        ("tomato seedlings", "compost heap", "pruning", "raised beds", "aphids", "mulch", "rainwater barrel",
         "perennial border", "soil acidity", "fruit trees", "watering schedule", "greenhouse", "spring bulbs",
         "hedge trimming", "seed catalogue"),
        (("planted", "plant"), ("pruned", "prune"), ("watered", "water"), ("harvested", "harvest"),
         ("sowed", "sow")),
        ("The {n} did better in the corner where the {n2} gets morning sun.",
         "Order more {n} before the frost and move the {n2} into the greenhouse.",
         "The {n} were ruined by slugs, so the {n2} goes in earlier next year."),
        ("what grew well in the garden this year", "when should I plant things outside",
         "how do I get rid of bugs on my plants"),
        lambda r: f"bed {r.choice('ABCDEFG')}{_digits(r, 2)}",
        ("Garden log: {n}", "{N} plan {Y}", "Allotment notes: {n} and {n2}")),
    "family": Topic(
        ("parent-teacher meeting", "school trip", "homework", "piano lessons", "birthday party", "summer camp",
         "report card", "swimming class", "carpool schedule", "science fair", "babysitter", "packed lunch",
         "football practice", "dentist for the kids", "permission slip"),
        (("signed", "sign"), ("organised", "organise"), ("picked up", "pick up"), ("scheduled", "schedule"),
         ("paid", "pay")),
        ("The {n} clashes with the {n2}, so {P} will do the pick-up on {wd}.",
         "The teacher mentioned the {n} and asked us to practise the {n2} at home.",
         "Remember to pay for the {n} and sign the {n2} by {wd}."),
        ("when do the kids need to be picked up", "what did the teacher tell us",
         "what do I need to pay for at school"),
        lambda r: f"class {_digits(r, 1)}{r.choice('ABCD')} form {_digits(r, 4)}",
        ("School: {n}", "{N} with {P}", "Family calendar: {n} and {n2}")),
    "legal": Topic(
        ("lease agreement", "rental deposit", "notice period", "contract clause", "warranty claim",
         "power of attorney", "last will", "notary appointment", "neighbour dispute", "liability cap",
         "terms of service", "non-disclosure agreement", "trademark filing", "small claims form",
         "data protection request"),
        (("signed", "sign"), ("reviewed", "review"), ("contested", "contest"), ("notarised", "notarise"),
         ("terminated", "terminate")),
        ("Under the {n}, the {n2} must be given in writing at least a month ahead.",
         "{P} at {O} thinks the {n} does not cover the {n2}.",
         "Keep a copy of the {n} with the {n2} in the blue folder."),
        ("can my landlord keep the money", "what did the lawyer advise",
         "how much notice do I need to give"),
        lambda r: f"contract C-{r.randint(2019, 2026)}-{_digits(r, 3)}",
        ("Contract {I}", "{N} with {O}", "Legal: {n}", "{N} review")),
    "research": Topic(
        ("transformer model", "attention heads", "learning rate", "ablation study", "benchmark dataset",
         "embedding space", "fine-tuning", "evaluation metric", "retrieval augmentation", "tokenizer",
         "overfitting", "gradient clipping", "contrastive loss", "reviewer comments", "camera-ready deadline",
         "baseline results", "hyperparameter sweep", "error analysis"),
        (("trained", "train"), ("evaluated", "evaluate"), ("ablated", "ablate"), ("submitted", "submit"),
         ("replicated", "replicate")),
        ("The {n} improved once we lowered the {n2}, but only on the small split.",
         "Reviewer two questioned the {n} and asked for a comparison with the {n2}.",
         "{P} suggested plotting the {n} against the {n2} for every run."),
        ("why did the experiments stop getting better", "what did the reviewers complain about",
         "which setup worked best in the paper"),
        lambda r: f"run-{_digits(r, 4)}",
        ("Paper notes: {n}", "{N} experiments", "Reading group: {n} and {n2}", "Lab meeting {Y}: {n}")),
    "work": Topic(
        ("quarterly roadmap", "hiring plan", "stakeholder review", "product launch", "customer feedback",
         "sprint retrospective", "OKRs", "vendor contract", "marketing campaign", "pricing page",
         "onboarding flow", "churn analysis", "board presentation", "team offsite", "performance review",
         "budget request"),
        (("presented", "present"), ("agreed", "agree"), ("postponed", "postpone"), ("hired", "hire"),
         ("launched", "launch")),
        ("In the meeting {P} pushed back on the {n} until the {n2} is clearer.",
         "The {n} moved to {mon}; the {n2} stays as planned.",
         "Action items from the {n}: update the {n2} and send it to {O}."),
        ("what did we decide in the planning meeting", "who are we hiring and when",
         "why are customers leaving"),
        lambda r: f"Project {r.choice(ADJECTIVES).capitalize()}{r.choice(ANIMALS)}",
        ("Meeting notes: {n}", "{N} with {P}", "{O} sync: {n}", "1:1 {P}: {n} and {n2}")),
    "car": Topic(
        ("oil change", "tyre rotation", "brake pads", "MOT inspection", "timing belt", "battery replacement",
         "dashboard warning light", "mileage", "service history", "windscreen chip", "fuel consumption",
         "roadside assistance", "parking permit", "winter tyres"),
        (("serviced", "service"), ("replaced", "replace"), ("checked", "check"), ("drove", "drive"),
         ("inspected", "inspect")),
        ("The garage said the {n} can wait, but the {n2} should be done before winter.",
         "After the {n} the {n2} dropped noticeably.",
         "{O} charged {amt} for the {n} and the {n2}."),
        ("what is wrong with the car", "when does the car need to go to the garage",
         "how much did car repairs cost"),
        lambda r: f"plate {_letters(r, 2)}{_digits(r, 2)} {_letters(r, 3)}",
        ("Car: {n}", "{O} service {I}", "{N} receipt", "Garage visit: {n} and {n2}")),
    "fitness": Topic(
        ("marathon training", "interval run", "tempo pace", "strength session", "squat", "deadlift",
         "rest day", "heart rate zones", "cycling route", "swim drills", "stretching routine",
         "race registration", "running shoes", "recovery run", "hill repeats"),
        (("ran", "run"), ("lifted", "lift"), ("cycled", "cycle"), ("stretched", "stretch"),
         ("trained", "train")),
        ("The {n} felt easier this week; keep the {n2} at the same effort.",
         "{P} recommended more {n} and less {n2} before the race in {c}.",
         "Skipped the {n} because the {n2} left my legs sore."),
        ("how is my training going before the race", "what exercise plan was I following",
         "how fast was my last long run"),
        lambda r: f"bib {_digits(r, 4)}",
        ("Training log: {n}", "{N} plan", "Race in {C}: {n}", "Workout notes: {n} and {n2}")),
    "reading": Topic(
        ("novel", "book club", "author interview", "telescope", "meteor shower", "star chart", "eclipse",
         "library loan", "audiobook", "essay collection", "poetry reading", "short story", "first chapter",
         "book review", "observing night"),
        (("read", "read"), ("finished", "finish"), ("borrowed", "borrow"), ("observed", "observe"),
         ("recommended", "recommend")),
        ("The {n} reminded me of the {n2} we discussed in the spring.",
         "{P} lent me the {n}; return it after the {n2}.",
         "Clear skies on {wd}, good for the {n} if the {n2} holds."),
        ("which book should I read next", "what did we talk about at the reading group",
         "when can I see the stars best"),
        lambda r: f"ISBN 978-{_digits(r, 1)}-{_digits(r, 4)}-{_digits(r, 4)}-{_digits(r, 1)}",
        ("Book notes: {n}", "{N} with {P}", "Reading list {Y}", "Sky log: {n} and {n2}")),
}
TOPIC_NAMES = tuple(TOPICS)

GENERIC = (
    "We talked about the {n} with {p} and agreed to look at the {n2} again next week.",
    "{p} thinks the {a} {n} is the main reason the {n2} slipped.",
    "The {n} came to {amt}, a bit more than we expected for the {n2}.",
    "I {v} the {n} on {wd} morning before heading over to {c}.",
    "Open question: does the {n} depend on the {n2}, or can we handle them separately?",
    "According to {o}, the {n} should be sorted out by the end of {mon}.",
    "Note to self: check the {n} before the {n2}, otherwise the {n3} gets messy.",
    "{p} sent a long message about the {n}; the short version is that the {n2} needs more attention.",
    "The {a} part was the {n}, which took almost {num} hours.",
    "Compared with last year, the {n} is {a} and the {n2} is roughly the same.",
    "In {c} the {n} works differently, so {p} suggested asking {o} directly.",
    "Things to remember: the {n}, the {n2} and the {n3}.",
    "I wrote down three ideas for the {n}: keep it simple, watch the {n2}, and ask {p} for feedback.",
    "The {n} was {a}, but the {n2} went fine.",
    "Next steps are to {vb} the {n} and to confirm the {n2} with {o}.",
    "It turned out the {n} had nothing to do with the {n2} after all.",
    "{p} from {o} recommended a different approach to the {n}.",
    "We postponed the {n} until {mon} because of the {n2}.",
    "Summary of the {n}: {a}, {a2}, and still waiting on the {n2}.",
    "I should have asked about the {n} earlier; the {n2} depended on it.",
    "A quick comparison of options for the {n} shows that the {n2} matters more than the price.",
    "Most of the discussion was about the {n} and how it affects the {n3}.",
    "Reminder for {wd}: {vb} the {n} and call {p} about the {n2}.",
    "The {n} is {a} at the moment, and nobody has looked at the {n2} since {mon}.",
)
IDENT_SENTENCES = (
    "{P} confirmed the details in {I}.",
    "Reference: {I} ({O}).",
    "See {I} for the {n}; {P} has the original.",
    "{P} asked whether {I} covers the {n2} as well.",
    "Filed under {I}, next to the notes from {P}.",
)
MODALITIES = (  # name, content type, weight
    ("pdf", "application/pdf", 25), ("web", "text/html", 22), ("note", "text/plain", 18),
    ("audio", "audio/mpeg", 10),
    ("office", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", 12),
    ("image", "image/jpeg", 5), ("markdown", "text/markdown", 8),
)
SITES = ("medium.com", "en.wikipedia.org", "news.ycombinator.com", "theguardian.com", "blog.example.org",
         "arxiv.org", "bbc.co.uk", "nytimes.com", "github.com", "stackoverflow.com")


# --------------------------------------------------------------------------- corpus


@dataclass
class Passage:
    """One pool passage: its topic and sentences (its vector is computed once)."""

    topic: str
    sentences: list[str]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


@dataclass
class Doc:
    """A synthetic document of the corpus (what Postgres and the payloads say about it)."""

    index: int
    topic: str
    modality: str
    content_type: str
    title: str
    source_uri: str
    captured_at: datetime
    ingested_at: datetime
    captured_at_source: str
    n_chunks: int
    ident: str
    person: str
    artifact_id: str = ""
    source_id: str = ""
    document_id: str = ""
    char_count: int = 0


@dataclass
class Corpus:
    """Facts about a built collection."""

    docs: list[Doc] = field(default_factory=list)
    chunks: int = 0
    start: datetime = field(default_factory=lambda: datetime.now(UTC))
    end: datetime = field(default_factory=lambda: datetime.now(UTC))


class Writer:
    """Fills sentence templates from the vocabulary of one topic."""

    def __init__(self, r: random.Random) -> None:
        self.r = r

    def person(self) -> str:
        return f"{self.r.choice(FIRST)} {self.r.choice(LAST)}"

    def slots(self, topic: str, **extra: str) -> dict[str, str]:
        r, t = self.r, TOPICS[topic]
        n, n2, n3 = r.sample(t.nouns, 3)
        past, base = r.choice(t.verbs)
        return {"n": n, "n2": n2, "n3": n3, "N": n.capitalize(), "a": r.choice(ADJECTIVES),
                "a2": r.choice(ADJECTIVES), "p": r.choice(FIRST), "P": self.person(), "c": r.choice(CITIES),
                "C": r.choice(CITIES), "o": r.choice(ORGS), "O": r.choice(ORGS), "v": past, "vb": base,
                "wd": r.choice(WEEKDAYS), "mon": r.choice(MONTHS), "num": str(r.randint(2, 40)),
                "amt": f"{r.choice(('EUR', 'USD', 'GBP'))} {r.randint(12, 9800):,}", **extra}

    def sentence(self, topic: str, **extra: str) -> str:
        t = TOPICS[topic]
        template = self.r.choice(t.sentences) if self.r.random() < 0.3 else self.r.choice(GENERIC)
        s = template.format(**self.slots(topic, **extra))
        return s[0].upper() + s[1:]

    def passage(self, topic: str) -> Passage:
        words, count = self.r.randint(150, 290), 0
        sentences: list[str] = []
        while count < words:
            sentences.append(self.sentence(topic))
            count += len(sentences[-1].split())
        return Passage(topic, sentences)


def make_pool(size: int, seed: int) -> list[Passage]:
    """``size`` distinct passages, topics in turn."""
    w = Writer(random.Random(seed))
    return [w.passage(TOPIC_NAMES[i % len(TOPIC_NAMES)]) for i in range(size)]


def embed_pool(embedder: Embedder, pool: list[Passage]) -> np.ndarray:
    """The real MiniLM vectors of the pool passages (one row each, unit length)."""
    out: list[list[float]] = []
    progress = Progress("embedding the passage pool", len(pool), "passages")
    for start in range(0, len(pool), 32):
        out.extend(embedder.embed_documents([p.text for p in pool[start:start + 32]]))
        progress.update(len(out))
    progress.done()
    return np.asarray(out, dtype=np.float32)


class CorpusBuilder:
    """Writes the documents of a size-N corpus into the user's vector collection and Postgres."""

    def __init__(self, rt: Runtime, user: str, pool: list[Passage], pool_vectors: np.ndarray, seed: int) -> None:
        assert rt.vectors is not None and rt.sparse is not None and rt.embedder is not None
        self.rt, self.user = rt, user
        self.vectors, self.sparse, self.model_id = rt.vectors, rt.sparse, rt.embedder.model_id
        self.dimension = rt.embedder.dimension
        self.pool, self.pool_vectors = pool, pool_vectors
        self.by_topic: dict[str, list[int]] = {t: [] for t in TOPIC_NAMES}
        for i, p in enumerate(pool):
            self.by_topic[p.topic].append(i)
        self.r = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.w = Writer(self.r)

    def plan_docs(self, n_chunks: int, now: datetime) -> Corpus:
        """Documents adding up to exactly ``n_chunks`` chunks, event times over the last 3 years."""
        r = self.r
        corpus = Corpus(start=now - timedelta(days=3 * 365), end=now)
        span = (corpus.end - corpus.start).total_seconds()
        names = [m[0] for m in MODALITIES]
        weights = [m[2] for m in MODALITIES]
        types = {m[0]: m[1] for m in MODALITIES}
        left = n_chunks
        while left > 0:
            count = min(left, r.randint(5, 40))
            left -= count
            i = len(corpus.docs)
            topic = r.choice(TOPIC_NAMES)
            modality = r.choices(names, weights)[0]
            ident = TOPICS[topic].ident(r)
            person = self.w.person()
            title = r.choice(TOPICS[topic].titles).format(
                **self.w.slots(topic, I=ident, Y=str(r.randint(2023, 2026))))
            if modality == "audio":
                title = f"Recording: {title}"
            captured = corpus.start + timedelta(seconds=r.uniform(0, span))
            if modality in ("audio", "note", "image", "markdown"):
                ingested = captured + timedelta(seconds=r.uniform(5, 7200))
                source = "user" if modality != "image" else "file_metadata"
            else:
                ingested = captured + timedelta(days=r.uniform(0, 60))
                source = "published" if modality == "web" else "file_metadata"
            ingested = min(ingested, now)
            slug = "-".join(title.lower().split())[:60]
            uri = {"web": f"https://{r.choice(SITES)}/{slug}", "note": f"note:{i}"}.get(
                modality, f"upload:{slug}.{modality}")
            doc = Doc(i, topic, modality, types[modality], title, uri, captured, ingested, source, count, ident,
                      person)
            doc.source_id = ids.source_id(self.user, uri)
            doc.artifact_id = ids.artifact_id(self.user, ids.sha256_hex(f"{uri}#{i}".encode()))
            doc.document_id = ids.document_id(doc.artifact_id)
            corpus.docs.append(doc)
        corpus.chunks = n_chunks
        return corpus

    def chunk_texts(self, doc: Doc) -> tuple[list[str], list[int]]:
        """A document's chunk texts (variations of pool passages of its topic) and their pool passages."""
        r = self.r
        texts, sources = [], []
        for _ in range(doc.n_chunks):
            k = r.choice(self.by_topic[doc.topic])
            sentences = [s for s in self.pool[k].sentences if r.random() > 0.15] or self.pool[k].sentences[:1]
            for _ in range(r.randint(1, 2)):  # the document's own identifiers, somewhere in the chunk
                extra = r.choice(IDENT_SENTENCES).format(**self.w.slots(doc.topic, I=doc.ident, P=doc.person))
                sentences.insert(r.randint(0, len(sentences)), extra)
            texts.append(" ".join(sentences))
            sources.append(k)
        return texts, sources

    def build(self, corpus: Corpus) -> None:
        """Upsert every chunk (batches of UPSERT_BATCH), then insert artifact and document rows."""
        self.vectors.ensure_collection(self.user, self.dimension)
        progress = Progress("indexing chunks", corpus.chunks, "chunks")
        batch: list[tuple[Chunk, Doc, ChunksCreated, int]] = []
        written = 0
        for doc in corpus.docs:
            texts, sources = self.chunk_texts(doc)
            chunks, pos, t = [], 0, 0.0
            audio = doc.modality == "audio"
            for idx, text in enumerate(texts):
                tokens = int(len(text.split()) * 1.3)
                span = tokens / 2.6  # about 150 spoken words a minute
                chunks.append(Chunk(
                    chunk_id=ids.chunk_id(doc.document_id, idx), index=idx, text=text, char_start=pos,
                    char_end=pos + len(text), token_count=tokens,
                    heading_path=[] if doc.modality in ("audio", "note", "image") else
                    [doc.title, f"Section {idx // 4 + 1}"],
                    kind="speech" if audio else "text",
                    page=idx // 2 + 1 if doc.modality == "pdf" else None,
                    t_start=round(t, 2) if audio else None, t_end=round(t + span, 2) if audio else None,
                    mentions=mentions_of(doc, idx)))
                pos += len(text) + 2
                t += span
            doc.char_count = pos
            event = ChunksCreated(
                event_id=ids.event_id("bench", doc.document_id), job_id=ids.job_id(self.user, doc.document_id),
                user_id=self.user, artifact_id=doc.artifact_id, source_id=doc.source_id,
                document_id=doc.document_id, title=doc.title, modality=doc.modality,
                content_type=doc.content_type, captured_at=doc.captured_at, ingested_at=doc.ingested_at,
                chunk_count=len(chunks), chunks=chunks, source_uri=doc.source_uri,
                captured_at_source=doc.captured_at_source, recording_start=doc.captured_at if audio else None)
            batch.extend((c, doc, event, k) for c, k in zip(chunks, sources, strict=True))
            while len(batch) >= UPSERT_BATCH:
                self._upsert(batch[:UPSERT_BATCH])
                written += UPSERT_BATCH
                del batch[:UPSERT_BATCH]
                progress.update(written)
        if batch:
            self._upsert(batch)
            written += len(batch)
        progress.update(written)
        progress.done()
        self._insert_rows(corpus)

    def _upsert(self, batch: Sequence[tuple[Chunk, Doc, ChunksCreated, int]]) -> None:
        inputs = [embedding_input(d.title, c) for c, d, _e, _s in batch]
        sparse = self.sparse.encode_documents(inputs)
        idx = np.fromiter((s for _c, _d, _e, s in batch), dtype=np.int64, count=len(batch))
        dense = self.pool_vectors[idx] + self.np_rng.normal(0.0, NOISE_SIGMA, (len(batch), self.dimension))
        dense /= np.linalg.norm(dense, axis=1, keepdims=True)
        points = [VectorPoint(id=c.chunk_id, dense=v, sparse=s,
                              payload=indexed_passage(e, c, self.model_id).to_payload())
                  for (c, _d, e, _s), v, s in zip(batch, dense.astype(np.float32).tolist(), sparse, strict=True)]
        self.vectors.upsert(self.user, points)

    def _insert_rows(self, corpus: Corpus) -> None:
        """Artifact and document rows of the user, by COPY (the metadata store's row shapes)."""
        import psycopg

        self.rt.metadata.users.ensure_user(self.user)
        with psycopg.connect(self.rt.settings.dsn()) as conn, conn.cursor() as cur:
            with cur.copy("COPY artifacts (artifact_id, user_id, source_id, source_uri, object_key, content_type, "
                          "size_bytes, sha256, filename, title, captured_at, submitted_at, producer, attributes) "
                          "FROM STDIN") as cp:
                for d in corpus.docs:
                    cp.write_row((d.artifact_id, self.user, d.source_id, d.source_uri,
                                  keys.artifact_key(self.user, d.artifact_id), d.content_type, d.char_count,
                                  ids.sha256_hex(d.artifact_id.encode()), None, d.title, d.captured_at,
                                  d.ingested_at, "bench", "{}"))
            with cur.copy("COPY documents (document_id, user_id, artifact_id, source_id, title, modality, "
                          "content_type, captured_at, captured_at_source, ingested_at, char_count, chunk_count, "
                          "metadata, version) FROM STDIN") as cp:
                for d in corpus.docs:
                    cp.write_row((d.document_id, self.user, d.artifact_id, d.source_id, d.title, d.modality,
                                  d.content_type, d.captured_at, d.captured_at_source, d.ingested_at, d.char_count,
                                  d.n_chunks, json.dumps({"source_uri": d.source_uri}), 1))
            conn.commit()


# --------------------------------------------------------------------------- questions


@dataclass(frozen=True)
class Question:
    """A question and, for identifier questions, the document that holds the answer."""

    text: str
    kind: str
    document_id: str | None = None


def mentions_of(doc: Doc, idx: int) -> list[TimeMention]:
    """Every fifth chunk speaks of a few days some weeks before its document (as "three weeks ago we..."
    does), so dated questions pay for the times spoken of as the product stores them."""
    if idx % 5:
        return []
    start = (doc.captured_at - timedelta(days=7 + (idx * 13 + len(doc.title)) % 60)).replace(
        hour=0, minute=0, second=0, microsecond=0)
    return [TimeMention(start=start, end=start + timedelta(days=1 + idx % 7), expression="weeks ago")]


def questions(corpus: Corpus, n: int, seed: int) -> list[Question]:
    """``n`` semantic questions: identifiers, topic phrases and paraphrases, in turn."""
    r = random.Random(seed)
    w = Writer(r)
    out: list[Question] = []
    while len(out) < n:
        doc = r.choice(corpus.docs)
        t = TOPICS[doc.topic]
        kind = ("identifier", "topic", "paraphrase")[len(out) % 3]
        if kind == "identifier":
            s = w.slots(doc.topic)
            text = r.choice((f"what was {doc.ident} about?", f"who handled {doc.ident}?",
                             f"what did {doc.person} say about {doc.ident}?",
                             f"find the {s['n']} with {doc.ident}", f"{doc.person} {s['n']}"))
            out.append(Question(text, kind, doc.document_id))
        elif kind == "topic":
            s = w.slots(doc.topic)
            text = r.choice((f"notes about the {s['n']} and the {s['n2']}", f"{s['a']} {s['n']}",
                             f"what did I write about the {s['n']}?", f"how did the {s['n']} go?",
                             f"{s['n']} {s['vb']} {s['c']}"))
            out.append(Question(text, kind))
        else:
            out.append(Question(r.choice(t.paraphrases) + "?", kind))
    return out


def month_windows(corpus: Corpus, n: int, seed: int) -> list[tuple[datetime, datetime]]:
    """``n`` calendar months inside the corpus span (UTC)."""
    r = random.Random(seed)
    first = (corpus.start.year, corpus.start.month + 1)
    months = []
    y, m = first if first[1] <= 12 else (first[0] + 1, 1)
    while (y, m) < (corpus.end.year, corpus.end.month):
        months.append(datetime(y, m, 1, tzinfo=UTC))
        y, m = (y, m + 1) if m < 12 else (y + 1, 1)
    out = []
    for _ in range(n):
        start = r.choice(months)
        end = datetime(start.year + start.month // 12, start.month % 12 + 1, 1, tzinfo=UTC)
        out.append((start, end))
    return out


def listing_questions(engine: QueryEngine, corpus: Corpus, n: int, seed: int) -> list[str]:
    """``n`` time-only questions ("what did I save in March 2025?") the engine plans as temporal."""
    r = random.Random(seed)
    out: list[str] = []
    for start, _end in month_windows(corpus, n * 4, seed):
        day = start + timedelta(days=r.randint(0, 27))
        text = r.choice((f"what did I save in {MONTHS[start.month - 1]} {start.year}?",
                         f"Anything from {MONTHS[start.month - 1]} {start.year}?",
                         f"what do I have from {day.day} {MONTHS[day.month - 1]} {day.year}?",
                         f"show me everything from the week of {day.day} {MONTHS[day.month - 1]} {day.year}",
                         f"what did I add in {MONTHS[start.month - 1]} {start.year}?"))
        if engine.plan(text, tz=UTC_ZONE).query_class == "temporal":
            out.append(text)
        if len(out) == n:
            break
    return out


# --------------------------------------------------------------------------- measuring


class Progress:
    """A progress line on stderr for long steps (at most every 2 s)."""

    def __init__(self, label: str, total: int, unit: str) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.t0 = self.last = time.perf_counter()

    def update(self, done: int) -> None:
        now = time.perf_counter()
        if now - self.last < 2.0 or done >= self.total:
            return
        self.last = now
        rate = done / (now - self.t0)
        eta = (self.total - done) / rate if rate else 0.0
        print(f"  {self.label}: {done}/{self.total} {self.unit} ({rate:.0f}/s, ~{eta:.0f}s left)", file=sys.stderr)

    def done(self) -> float:
        took = time.perf_counter() - self.t0
        print(f"  {self.label}: {self.total} {self.unit} in {took:.1f}s", file=sys.stderr)
        return took


@dataclass
class Row:
    """One measure of the table."""

    name: str
    values: list[float]  # seconds
    note: str = ""


def round_robin(n: int, measures: list[tuple[str, Callable[[int], Any]]]) -> dict[str, tuple[list[float], list[Any]]]:
    """Run every measure on item 0, then every measure on item 1... (``WARMUP`` items untimed first);
    per measure, the durations in seconds and the results."""
    for i in range(min(WARMUP, n)):
        for _name, fn in measures:
            fn(i)
    out: dict[str, tuple[list[float], list[Any]]] = {name: ([], []) for name, _fn in measures}
    for i in range(n):
        for name, fn in measures:
            t0 = time.perf_counter()
            result = fn(i)
            out[name][0].append(time.perf_counter() - t0)
            out[name][1].append(result)
    return out


class Server:
    """The query app served by uvicorn on a loopback port, in a thread of this process."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, name="bench-uvicorn", daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise SystemExit("uvicorn did not start")
            time.sleep(0.02)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(15)


@dataclass
class AskTiming:
    """Seconds from sending the request to each first event of a kind; the done event's data."""

    at: dict[str, float]
    done: dict[str, Any]
    error: str | None = None


def ask(client: httpx.Client, question: str) -> AskTiming:
    """POST /v1/ask and time the server-sent events as they arrive."""
    at: dict[str, float] = {}
    done: dict[str, Any] = {}
    error = None
    t0 = time.perf_counter()
    with connect_sse(client, "POST", "/v1/ask", json={"question": question, "tz": "UTC"}) as stream:
        resp = stream.response
        if resp.status_code != 200:
            return AskTiming(at, done, f"HTTP {resp.status_code}: {resp.read()[:200]!r}")
        for sse in stream.iter_sse():
            at.setdefault(sse.event, time.perf_counter() - t0)
            if sse.event == "done":
                done = sse.json()
                break
            if sse.event == "error":
                error = sse.data
                break
    return AskTiming(at, done, error)


# --------------------------------------------------------------------------- one size


@dataclass
class Result:
    """What one size produced: corpus facts and the table rows."""

    size: int
    facts: list[tuple[str, str]]
    rows: list[Row]


def run_size(size: int, args: argparse.Namespace, root: Path, dsn: str, pool: list[Passage],
             pool_vectors: np.ndarray, pool_seconds: float) -> Result:
    """Build a collection of ``size`` chunks and measure search, listing and ask on it."""
    from pydantic import SecretStr

    from app.assembly import build_runtime
    from app.http import create_app
    from secondbrain.settings import Settings

    user = f"bench-{secrets.token_hex(4)}"
    data_dir = root / f"data-{size}"
    no_index: dict[str, Any] = {"vector_index_after": 0} if args.no_index else {}
    # Tuning knobs (SB_SEARCH_CANDIDATES, SB_RERANKER_MODEL_DIR...) still come from the environment.
    settings = Settings(
        data_dir=data_dir, postgres_dsn=SecretStr(dsn), default_user=user, vector_store="edge",
        object_store="files", timezone="UTC", llm_base_url=args.llm_url, llm_model=args.llm_model or "local",
        vector_quantization=args.quantization, **no_index)
    print(f"size {size}: building the runtime in {data_dir}", file=sys.stderr)
    rt = build_runtime(settings, vectors=True, models=True, llm=bool(args.llm_url))
    try:
        return _measure(size, args, rt, user, pool, pool_vectors, pool_seconds, create_app)
    finally:
        rt.close()
        _forget_user(dsn, user)


def _measure(size: int, args: argparse.Namespace, rt: Runtime, user: str, pool: list[Passage],
             pool_vectors: np.ndarray, pool_seconds: float, create_app: Callable[..., Any]) -> Result:
    assert rt.vectors is not None and rt.embedder is not None and rt.sparse is not None
    s = rt.settings
    builder = CorpusBuilder(rt, user, pool, pool_vectors, args.seed + size)
    corpus = builder.plan_docs(size, datetime.now(UTC).replace(microsecond=0))
    t0 = time.perf_counter()
    builder.build(corpus)
    build_s = time.perf_counter() - t0
    index = wait_for_index(rt.vectors, user) if rt.vectors.index_after else None  # type: ignore[attr-defined]
    stored = rt.vectors.count(user)
    shard = shard_facts(rt.vectors, user)

    reranker = None
    if s.reranker_model_dir is not None:
        from services.query.rerank import OnnxCrossEncoder

        reranker = OnnxCrossEncoder(s.reranker_model_dir)
    engine = QueryEngine(rt.vectors, rt.metadata, rt.embedder, rt.sparse, candidates=s.search_candidates,
                         budget_tokens=s.ask_context_tokens, per_document=s.ask_max_chunks_per_document,
                         reranker=reranker)
    n = args.queries
    qs = questions(corpus, n, args.seed)
    texts = [q.text for q in qs]
    months = month_windows(corpus, n, args.seed)
    listings = listing_questions(engine, corpus, n, args.seed)
    if not listings:
        raise SystemExit("no generated time-only question was understood as one; the temporal parser changed?")
    print(f"size {size}: measuring {n} questions", file=sys.stderr)
    semantic = [p.semantic_query or p.question for p in (engine.plan(q, tz=UTC_ZONE) for q in texts)]
    dense = [rt.embedder.embed_query(q) for q in semantic]
    sparse = [rt.sparse.encode_query(q) for q in semantic]
    vec, embedder = rt.vectors, rt.embedder

    # "<subject> in <Month YYYY>": a window understood from the question, matched on the passages'
    # own time or a time they speak of, with later reports fused in (the soft window).
    asked_at = max(d.captured_at for d in corpus.docs) + timedelta(days=1)
    dated = [f"{semantic[i]} in {months[i][0]:%B %Y}" for i in range(n)]

    def month_plan(i: int) -> Plan:
        start, end = months[i]
        return engine.plan(texts[i], tz=UTC_ZONE, filters=Filters(start=start, end=end))

    # Round robin: every question goes through every measure in turn, so a busy moment on a shared
    # machine spreads over all the measures instead of distorting one.
    measured = round_robin(n, [
        ("plan: understand the question", lambda i: engine.plan(texts[i], tz=UTC_ZONE)),
        ("embed the semantic query (MiniLM)", lambda i: embedder.embed_query(semantic[i])),
        ("vector store: hybrid query (vectors given)", lambda i: vec.search(
            user, dense=dense[i], sparse=sparse[i] if sparse[i].indices else None, limit=s.search_candidates,
            candidates=s.search_candidates, mode="hybrid")),
        ("(a) search: plan+embed+BM25+fused query",
         lambda i: engine.search(user, engine.plan(texts[i], tz=UTC_ZONE), k=10)),
        ("(b) search with a one-month time filter", lambda i: engine.search(user, month_plan(i), k=10)),
        ("(d) a dated question: own time or a time spoken of",
         lambda i: engine.search(user, engine.plan(dated[i], tz=UTC_ZONE, now=asked_at), k=10)),
        ("sources: search + neighbours + budget",
         lambda i: engine.sources(user, engine.plan(texts[i], tz=UTC_ZONE), k=6)),
        ("(c) time-only listing (Postgres + scroll)",
         lambda i: engine.sources(user, engine.plan(listings[i % len(listings)], tz=UTC_ZONE), k=6)),
    ])
    rows = [Row(name, times) for name, (times, _results) in measured.items()]
    found = [q.document_id in {h.document_id for h in hits}
             for q, hits in zip(qs, measured["(a) search: plan+embed+BM25+fused query"][1], strict=True)
             if q.document_id]
    filtered_hits = [len(hits) for hits in measured["(b) search with a one-month time filter"][1]]
    listed = [len(out) for out in measured["(c) time-only listing (Postgres + scroll)"][1]]

    app = create_app(rt, gateway=False, query=True)
    # Every request carries a key, loopback included, so the key lookup is part of what is timed.
    _, key = rt.metadata.api_keys.create_api_key(user, "bench", "user")
    errors: list[str] = []
    with Server(app) as base, httpx.Client(base_url=base, timeout=httpx.Timeout(120.0),
                                           headers={"Authorization": f"Bearer {key}"}) as client:
        http = round_robin(n, [("ask", lambda i: ask(client, texts[i])),
                               ("ask listing", lambda i: ask(client, listings[i % len(listings)]))])
    asks, list_asks = http["ask"][1], http["ask listing"][1]
    for label, timings in (("ask", asks), ("ask listing", list_asks)):
        errors += [t.error for t in timings if t.error]
        ok = [t for t in timings if not t.error]
        events = ("meta", "sources", "token", "done") if label == "ask" else ("sources", "done")
        for ev in events:
            values = [t.at[ev] for t in ok if ev in t.at]
            name = f"{label}: first {ev}" if ev == "token" else f"{label}: {ev} event"
            if values:
                rows.append(Row(f"HTTP {name}", values))
        if label == "ask" and args.llm_url:
            model = [t.done["timings_ms"]["first_token"] / 1000 for t in ok
                     if "first_token" in t.done.get("timings_ms", {})]
            if model:
                rows.append(Row("HTTP ask: model's first token (server clock)", model))
    modes = sorted({t.done.get("answer_mode", "?") for t in asks if not t.error})
    facts = [
        ("documents", f"{len(corpus.docs)} (5-40 chunks each, {len(TOPICS)} topics, "
                      f"{len(MODALITIES)} modalities, 3 years)"),
        ("chunks", f"{corpus.chunks} ({stored} points in the collection; {shard})"),
        ("build", f"{build_s:.1f}s (BM25 + pool vectors + upsert + Postgres rows), "
                  f"{corpus.chunks / build_s:.0f} chunks/s"),
        ("edge shard", "never indexed (--no-index): dense search scans it" if index is None else
         f"HNSW built by the store in the background (started {index[0]:.0f}s after the last write, "
         f"took {index[1]:.1f}s)"),
        ("dense vectors", f"pool of {len(pool)} real MiniLM passages (embedded in {pool_seconds:.1f}s) + "
                          f"noise sigma {NOISE_SIGMA}"),
        ("settings", f"candidates {s.search_candidates}, context {s.ask_context_tokens} tokens, "
                     f"reranker {'on' if reranker else 'off'}, answers {', '.join(modes)}"),
        ("identifier questions with their document in the top 10", f"{sum(found)}/{len(found)}"),
        ("one-month filter: hits per query (mean)", f"{statistics.fmean(filtered_hits or [0]):.1f}"),
        ("time-only listing: sources per answer (mean)", f"{statistics.fmean(listed or [0]):.1f}"),
    ]
    if errors:
        facts.append(("ask errors", f"{len(errors)}; first: {errors[0][:200]}"))
    return Result(size, facts, rows)


def shard_facts(store: Any, user: str) -> str:
    """Segments of the user's edge shard."""
    st = store.index_status(user)
    return "no collection" if st is None else (f"{st.segments} segment(s), indexed_vectors_count "
                                               f"{st.indexed_vectors}")


def _forget_user(dsn: str, user: str) -> None:
    """Delete the benchmark user's rows (cascades to artifacts, documents, conversations)."""
    import psycopg

    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DELETE FROM users WHERE user_id = %s", (user,))
    except psycopg.Error as exc:
        print(f"warning: could not delete the benchmark user {user}: {exc}", file=sys.stderr)


# --------------------------------------------------------------------------- synthetic scale run


SYNTH_DIM = 384
SYNTH_VOCAB = 50_000
SYNTH_CLUSTERS = 2000
SYNTH_QUERIES = 200
SYNTH_LIVE_BATCH = 100  # points per write while searches go on (a few documents' chunks)
SYNTH_LIVE_MIN = 20_000  # searches go on until this many points were written (or SYNTH_LIVE_S passed)
SYNTH_LIVE_S = 120.0


def wait_for_index(store: Any, user: str, probe: Callable[[], Any] | None = None,
                   during: list[float] | None = None) -> tuple[float, float, str]:
    """Wait for the store's own background HNSW build; (seconds until it started, seconds it
    took, shard facts).  Reads the store's public ``index_status``.  With ``probe``, runs it
    about once a second while the build is under way and appends its durations to ``during``
    (a search of an unindexed million points scans them all: probing more often would take the
    cores the build needs)."""
    t0 = time.perf_counter()
    started = None
    probed = 0.0
    while True:
        if probe is not None and during is not None and started is not None and time.perf_counter() - probed >= 1.0:
            probed = q0 = time.perf_counter()
            probe()
            during.append(time.perf_counter() - q0)
        st = store.index_status(user)
        if st is None:
            raise SystemExit("the benchmark collection is missing")
        if st.building and started is None:
            started = time.perf_counter()
            print(f"  the store started its background index build after {started - t0:.1f}s", file=sys.stderr)
        if st.failures:
            raise SystemExit(f"the store's index build failed ({st.failures} time(s)); see its log")
        if st.builds and not st.building and st.pending < store.index_after:
            done = time.perf_counter()
            facts = (f"{st.segments} segment(s), {st.points} points, engine's indexed_vectors_count "
                     f"{st.indexed_vectors} (dense in HNSW + sparse)")
            return (started or done) - t0, done - (started or done), facts
        time.sleep(0.25)  # probing more often would slow the build it measures


def synthetic_vectors(rng: np.random.Generator, n: int, centers: np.ndarray) -> np.ndarray:
    """Unit vectors around random cluster centres (like embeddings of related texts)."""
    out = centers[rng.integers(0, len(centers), n)] + rng.normal(0, 0.035, (n, centers.shape[1])).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def synthetic_sparse(rng: np.random.Generator, terms: int) -> Any:
    """A BM25-like sparse vector: Zipf-distributed term ids, term-frequency weights."""
    from secondbrain.ports import SparseVector

    ids = np.unique(np.minimum(rng.zipf(1.15, terms), SYNTH_VOCAB - 1))
    vals = rng.uniform(0.5, 2.0, len(ids))
    return SparseVector([int(i) for i in ids], [float(v) for v in vals])


def run_synthetic(size: int, args: argparse.Namespace, root: Path) -> Result:
    """Fill one user's EdgeVectorStore with ``size`` synthetic points, let the store index it, and
    time its search (dense, sparse, hybrid) and, for dense, recall@10 against exact float search."""
    from secondbrain.ports import VectorPoint
    from secondbrain.settings import Settings
    from secondbrain.stores.vectors_edge import BUILD_DIR, EdgeVectorStore

    s = Settings(vector_quantization=args.quantization)  # type: ignore[call-arg]
    store = EdgeVectorStore(root / f"vectors-{size}", quantization=s.vector_quantization,
                            index_after=s.vector_index_after, index_quiet_s=s.vector_index_quiet_s,
                            indexing_threshold_kb=s.vector_indexing_threshold_kb, segment_kb=s.vector_segment_kb)
    user = "bench"
    rng = np.random.default_rng(args.seed + size)
    centers = rng.standard_normal((SYNTH_CLUSTERS, SYNTH_DIM)).astype(np.float32)
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    vectors = np.empty((size, SYNTH_DIM), dtype=np.float32)
    base = datetime(2023, 1, 1, tzinfo=UTC)
    store.ensure_collection(user, SYNTH_DIM)
    print(f"size {size}: writing synthetic points", file=sys.stderr)
    progress = Progress("writing", size, "points")
    t0 = time.perf_counter()

    def make_points(start: int, batch: np.ndarray) -> list[VectorPoint]:
        return [VectorPoint(
            str(uuid.UUID(int=start + i + 1)), batch[i].tolist(),
            synthetic_sparse(rng, 40),
            {"document_id": f"doc-{(start + i) // 20}", "chunk_index": (start + i) % 20,
             "modality": "text", "captured_at": base + timedelta(minutes=start + i)})
            for i in range(len(batch))]

    try:
        for start in range(0, size, UPSERT_BATCH):
            n = min(UPSERT_BATCH, size - start)
            batch = synthetic_vectors(rng, n, centers)
            vectors[start:start + n] = batch
            store.upsert(user, make_points(start, batch))
            progress.update(start + n)
        write_s = time.perf_counter() - t0
        print(f"  wrote {size} points in {write_s:.0f}s; waiting for the store's own index build", file=sys.stderr)
        during: list[float] = []
        probe_q = synthetic_vectors(np.random.default_rng(args.seed + 1), 1, centers)[0].tolist()
        if store.index_after:
            wait_s, build_s, facts = wait_for_index(store, user, lambda: store.search(
                user, dense=probe_q, sparse=None, limit=s.search_candidates, mode="dense"), during)
        else:
            wait_s, build_s, facts = 0.0, 0.0, "never indexed (--no-index): dense search scans"
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # The collection as built, before the writes below (which start the next build's copy).
        disk_mb = sum(f.stat().st_size for f in (root / f"vectors-{size}").rglob("*")
                      if f.is_file() and BUILD_DIR not in f.parts) / 2**20
        child_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024

        qrng = np.random.default_rng(args.seed)
        nq = max(args.queries, SYNTH_QUERIES)
        dense_q = synthetic_vectors(qrng, nq, centers)
        sparse_q = [synthetic_sparse(qrng, 4) for _ in range(nq)]
        k = 10
        exact = [set(np.argpartition(-(vectors @ q), k)[:k].tolist()) for q in dense_q]
        cand = s.search_candidates
        # A time window of 5 % of the points (captured_at is one minute apart per point): recall
        # against exact search over the points inside it.
        from secondbrain.ports import TimeRange, VectorFilter

        width = max(k, size // 20)
        starts = qrng.integers(0, size - width + 1, nq)
        windows = [VectorFilter(time_range=TimeRange(base + timedelta(minutes=int(lo)),
                                                     base + timedelta(minutes=int(lo) + width))) for lo in starts]
        exact_in = [set((int(lo) + np.argpartition(-(vectors[lo:lo + width] @ q), k)[:k]).tolist())
                    for lo, q in zip(starts, dense_q, strict=True)]
        measured = round_robin(nq, [
            ("vector store: dense query", lambda i: store.search(
                user, dense=dense_q[i].tolist(), sparse=None, limit=cand, mode="dense")),
            ("vector store: sparse (BM25) query", lambda i: store.search(
                user, dense=None, sparse=sparse_q[i], limit=cand, mode="sparse")),
            ("vector store: hybrid query (RRF)", lambda i: store.search(
                user, dense=dense_q[i].tolist(), sparse=sparse_q[i], limit=cand, candidates=cand, mode="hybrid")),
            ("vector store: dense top 10", lambda i: store.search(
                user, dense=dense_q[i].tolist(), sparse=None, limit=k, mode="dense")),
            ("vector store: dense top 10, time window of 5 % of the points", lambda i: store.search(
                user, dense=dense_q[i].tolist(), sparse=None, limit=k, mode="dense", flt=windows[i])),
        ])
        top10 = measured["vector store: dense top 10"][1]
        recall = statistics.fmean(len({uuid.UUID(h.id).int - 1 for h in hits} & exact[i]) / k
                                  for i, hits in enumerate(top10))
        windowed = measured["vector store: dense top 10, time window of 5 % of the points"][1]
        recall_in = statistics.fmean(len({uuid.UUID(h.id).int - 1 for h in hits} & exact_in[i]) / k
                                     for i, hits in enumerate(windowed))
        rows = [Row(name, times) for name, (times, _r) in measured.items()]

        # Searches while writes continue after the index exists: new points land in a segment of
        # their own (scanned until the next build indexes it), and each write holds the
        # collection's lock while the engine applies it.
        writing = threading.Event()
        written = [0]

        def writer() -> None:
            while writing.is_set() and written[0] < SYNTH_LIVE_MIN:
                start = size + written[0]
                store.upsert(user, make_points(start, synthetic_vectors(rng, SYNTH_LIVE_BATCH, centers)))
                written[0] += SYNTH_LIVE_BATCH

        writing.set()
        live_thread = threading.Thread(target=writer, name="bench-writer", daemon=True)
        w0 = time.perf_counter()
        live_thread.start()
        live: dict[str, tuple[list[float], list[Any]]] = {}
        try:
            while not live or (live_thread.is_alive() and time.perf_counter() - w0 < SYNTH_LIVE_S):
                for name, (times, _r) in round_robin(nq, [
                    ("while writes continue: dense query", lambda i: store.search(
                        user, dense=dense_q[i].tolist(), sparse=None, limit=cand, mode="dense")),
                    ("while writes continue: sparse query", lambda i: store.search(
                        user, dense=None, sparse=sparse_q[i], limit=cand, mode="sparse")),
                    ("while writes continue: hybrid query", lambda i: store.search(
                        user, dense=dense_q[i].tolist(), sparse=sparse_q[i], limit=cand, candidates=cand,
                        mode="hybrid")),
                ]).items():
                    live.setdefault(name, ([], []))[0].extend(times)
        finally:
            writing.clear()
            live_thread.join()
        live_s = time.perf_counter() - w0
        rows += [Row(name, times) for name, (times, _r) in live.items()]
        if during:  # the build runs in another process: searches go on (the swap at its end waits)
            rows.append(Row(f"dense query while the index builds (max {max(during) * 1000:.0f} ms)", during))
        facts_list = [
            ("points", f"{size} synthetic (NOT embeddings: {SYNTH_DIM}-d unit vectors around {SYNTH_CLUSTERS} "
                       f"random centres, sparse vectors of ~40 Zipf-distributed terms)"),
            ("search path", "EdgeVectorStore.search, the product's own (payload returned)"),
            ("writes", f"{write_s:.0f}s ({size / write_s:.0f} points/s, batches of {UPSERT_BATCH})"),
            ("index", f"built by the store in the background: started {wait_s:.0f}s after the last write, "
                      f"took {build_s:.0f}s; {facts}"),
            ("writes during the searches after the build",
             f"{written[0]} points in {live_s:.0f}s ({written[0] / live_s:.0f} points/s, batches of "
             f"{SYNTH_LIVE_BATCH})"),
            ("segments", f"at most {s.vector_segment_kb} KB of dense vectors each (SB_VECTOR_SEGMENT_KB; 0: "
                         "no limit)"),
            ("quantization", s.vector_quantization),
            ("dense recall@10 vs exact float search", f"{recall:.3f} ({nq} queries)"),
            ("the same inside a time window of 5 % of the points", f"{recall_in:.3f} ({width} points each)"),
            ("memory", f"peak RSS {rss_mb:.0f} MB (includes the benchmark's own float copy, "
                       f"{vectors.nbytes / 2**20:.0f} MB), build process peak {child_mb:.0f} MB, "
                       f"{disk_mb:.0f} MB on disk once built"),
        ]
        return Result(size, facts_list, rows)
    finally:
        store.close()
        shutil.rmtree(root / f"vectors-{size}", ignore_errors=True)


# --------------------------------------------------------------------------- main


def print_result(res: Result) -> None:
    """One table per size."""
    print(f"\n== {res.size} chunks in one user's collection")
    width = max(len(k) for k, _ in res.facts)
    for k, v in res.facts:
        print(f"  {k:<{width}}  {v}")
    print(f"  {'measure':<48}{'p50':>9}{'p95':>9}{'mean':>9}   (ms, n)")
    for row in res.rows:
        ms = [v * 1000 for v in row.values]
        print(f"  {row.name:<48}{statistics.median(ms):>9.1f}{pct(ms, 0.95):>9.1f}{statistics.fmean(ms):>9.1f}"
              f"   ({len(ms)})")


@dataclass
class Postgres:
    """The DSN to use and, for an embedded server, its handle."""

    dsn: str
    server: Any = None


def start_postgres(root: Path) -> Postgres:
    """``SB_POSTGRES_DSN`` when set, else an embedded server in ``root``."""
    if os.environ.get("SB_POSTGRES_DSN"):
        return Postgres(os.environ["SB_POSTGRES_DSN"])
    from secondbrain.infra.postgres import EmbeddedPostgres

    t0 = time.perf_counter()
    pg = EmbeddedPostgres(root / "postgres").start()
    print(f"  embedded Postgres started in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return Postgres(pg.dsn, pg)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000", help="chunk counts, comma-separated")
    ap.add_argument("--queries", type=int, default=50, help="questions per measure")
    ap.add_argument("--pool", type=int, default=None,
                    help="passages embedded for real (default: 2000, or largest size / 20 when smaller)")
    ap.add_argument("--llm-url", default=None, help="OpenAI-compatible endpoint: ask in LLM mode")
    ap.add_argument("--llm-model", default=None, help="the model name at --llm-url")
    ap.add_argument("--no-index", action="store_true",
                    help="turn the store's background HNSW build off (dense search scans the collection)")
    ap.add_argument("--quantization", choices=("none", "int8"), default="none",
                    help="int8 scalar quantization of the dense vectors (SB_VECTOR_QUANTIZATION)")
    ap.add_argument("--synthetic", action="store_true",
                    help="vector store only, synthetic vectors: search latency, index build and recall at "
                         "sizes too large to embed (1,000,000)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=None, help="results directory for query.json and query.png (bench/results/)")
    charts.docs_option(ap)
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    if not sizes or min(sizes) < 50 or args.queries < 1:
        ap.error("sizes must be at least 50 chunks and --queries at least 1")
    if bool(args.llm_url) != bool(args.llm_model):
        ap.error("--llm-url and --llm-model go together")
    if args.synthetic:
        main_synthetic(sizes, args)
        return
    pool_size = args.pool or min(2000, max(100, max(sizes) // 20))
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    root = Path(tempfile.mkdtemp(prefix="sb-bench-query-"))
    root.chmod(0o755)  # the embedded Postgres may run as another system user
    pg: Postgres | None = None
    results: list[Result] = []
    try:
        from secondbrain.embedding import load_embedder

        pg = start_postgres(root)
        pool = make_pool(pool_size, args.seed)
        embedder = load_embedder()
        t0 = time.perf_counter()
        pool_vectors = embed_pool(embedder, pool)
        pool_seconds = time.perf_counter() - t0
        del embedder
        for size in sizes:
            results.append(run_size(size, args, root, pg.dsn, pool, pool_vectors, pool_seconds))
            print_result(results[-1])
    finally:
        if pg is not None and pg.server is not None:
            pg.server.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(f"\nmachine: {platform.machine()}, {platform.platform()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}; load average {load_before:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at the end")
    print("note: dense vectors are pool-based (each chunk = one of the embedded pool passages + noise); BM25 "
          "vectors are real. Query embedding, understanding and HTTP are real.")
    print(f"total run time: {time.perf_counter() - started:.0f}s")
    png = write_charts(results, args)
    if args.publish:
        publish(results, "query", "Query latency", [png] if png else [],
                [f"Load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end. Dense vectors are "
                 "pool-based (each chunk one of the embedded pool passages plus noise); BM25 vectors, query "
                 "embedding, understanding and HTTP are real."])


def main_synthetic(sizes: list[int], args: argparse.Namespace) -> None:
    """``--synthetic``: only the vector store, on synthetic vectors."""
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    root = Path(tempfile.mkdtemp(prefix="sb-bench-vectors-"))
    results = []
    try:
        for size in sizes:
            results.append(run_synthetic(size, args, root))
            print_result(results[-1])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"\nmachine: {platform.machine()}, {platform.platform()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}; load average {load_before:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at the end")
    print("note: SYNTHETIC vectors (random clusters, Zipf terms), not embeddings of text; the search path "
          "is the product's own EdgeVectorStore.search.")
    print(f"total run time: {time.perf_counter() - started:.0f}s")
    if args.publish:
        publish(results, "query-vectors", "The vector store at scale", [],
                [f"Load average {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end. Synthetic "
                 "vectors (random clusters, Zipf terms), not embeddings of text; the search path is the product's "
                 "own EdgeVectorStore.search."])
    if args.out:
        out = charts.out_dir(args.out)
        charts.save_json(out / "query-vectors.json", {"sizes": {str(r.size): {"facts": dict(r.facts), "rows": {
            row.name: {"p50_ms": statistics.median(row.values) * 1000, "p95_ms": pct(row.values, 0.95) * 1000,
                       "n": len(row.values)} for row in r.rows}} for r in results}})


CHART_ROWS = {  # table row -> chart label
    "(a) search: plan+embed+BM25+fused query": "search",
    "(b) search with a one-month time filter": "search, 1-month filter",
    "(d) a dated question: own time or a time spoken of": "search, dated question",
    "HTTP ask: meta event": "ask: first event",
    "HTTP ask: sources event": "ask: sources",
    "HTTP ask: first token": "ask: first token",
}


def publish(results: list[Result], name: str, title: str, pngs: list[Path], notes: list[str]) -> None:
    """The figures for the documentation (``--publish``): p50 / p95 of every measure, and the facts, per size."""
    sizes = [f"{r.size:,} chunks" for r in results]
    measures = list(dict.fromkeys(row.name for r in results for row in r.rows))
    facts = list(dict.fromkeys(k for r in results for k, _v in r.facts))
    latency = [[m, *(next((f"{statistics.median(row.values) * 1000:.1f} / {pct(row.values, 0.95) * 1000:.1f}"
                           for row in r.rows if row.name == m), "") for r in results)] for m in measures]
    known = [[k, *(str(dict(r.facts).get(k, "")) for r in results)] for k in facts]
    charts.publish(name, title, [charts.table(["p50 / p95 (ms)", *sizes], latency),
                                 charts.table(["", *sizes], known, title="The collections")],
                   notes=notes, charts=pngs, bench="query")


def write_charts(results: list[Result], args: argparse.Namespace) -> Path | None:
    """query.json (every row, p50/p95/mean in ms) and query.png (p50 and p95 of the main measures)."""
    if not results:
        return None
    out = charts.out_dir(args.out)
    data = {"sizes": {str(r.size): {"facts": dict(r.facts), "rows": {
        row.name: {"p50_ms": statistics.median(row.values) * 1000, "p95_ms": pct(row.values, 0.95) * 1000,
                   "mean_ms": statistics.fmean(row.values) * 1000, "n": len(row.values)} for row in r.rows}}
        for r in results}}
    charts.save_json(out / "query.json", data)
    series: dict[str, list[float]] = {}
    labels = [label for name, label in CHART_ROWS.items()
              if all(any(row.name == name for row in r.rows) for r in results)]
    names = [name for name, label in CHART_ROWS.items() if label in labels]
    for r in results:
        by = {row.name: row.values for row in r.rows}
        series[f"{r.size:,} chunks p50"] = [statistics.median(by[n]) * 1000 for n in names]
        series[f"{r.size:,} chunks p95"] = [pct(by[n], 0.95) * 1000 for n in names]
    charts.bars(out / "query.png", "Query latency (ms): search and ask over HTTP", labels, series,
                ylabel="milliseconds", fmt="{:.0f}")
    print(f"wrote {out / 'query.json'} and {out / 'query.png'}")
    return out / "query.png"


if __name__ == "__main__":
    main()
