"""Each format read from an export written the way its tool writes it (devtools/gen_exports.py): what the
person would check afterwards: the titles, the times (in the right zone), tags, links, speakers, what is
left out and why, and that the format is found from the content, not the file's name."""

from __future__ import annotations

import json
import shutil
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from devtools import gen_exports as gen
from secondbrain.events.models import Recurrence
from secondbrain.temporal import recurrence
from services.extractors.text import extract_text
from services.importers import registry
from services.importers.archive import Export
from services.importers.model import Capture, ExportError, Options, Result, Skipped

pytestmark = pytest.mark.fast  # no services: in the fast lane

ATHENS = ZoneInfo("Europe/Athens")


def read(path: Path, options: Options | None = None, forced: str | None = None) -> tuple[str, list[Result]]:
    with Export.open(path) as export:
        detected = registry.detect(export, forced)
        return detected.format.name, list(detected.format.read(export, options or Options()))


def captures(results: list[Result]) -> list[Capture]:
    return [r for r in results if isinstance(r, Capture)]


def skips(results: list[Result]) -> dict[str, str]:
    return {r.label: r.reason for r in results if isinstance(r, Skipped)}


def by_title(results: list[Result]) -> dict[str | None, Capture]:
    return {c.title: c for c in captures(results)}


def text(c: Capture) -> str:
    return c.data().decode("utf-8")


def front(c: Capture) -> dict[str, str]:
    """A note's front matter as the text extractor reads it."""
    doc = extract_text(c.data(), content_type=c.content_type, filename=None, is_note=True)
    return {k.removeprefix("front_matter."): v for k, v in doc.metadata.items()}


def series_of(c: Capture) -> Recurrence | None:
    """The series a note's front matter holds, as the text extractor reads it."""
    return extract_text(c.data(), content_type=c.content_type, filename=None, is_note=True).recurrence


def test_keep_notes_checklists_labels_links_attachments_and_the_trash(tmp_path: Path) -> None:
    name, results = read(gen.write_keep(tmp_path))
    assert name == "keep"
    notes = by_title(results)
    groceries = notes["Groceries"]
    assert groceries.captured_at == gen.KEEP_CREATED["groceries"]
    assert "- [ ] Oat milk" in text(groceries) and "- [x] Saffron threads" in text(groceries)
    assert front(groceries)["tags"] == "shopping-list pinned"
    bike = notes["Bike lock"]
    assert "3-9-1-7" in text(bike) and "[Abus lock manual](https://example.org/lock-manual)" in text(bike)
    assert bike.source_uri == "import:keep:Keep/Bike%20lock.json"  # its file: Keep gives a note no id
    assert bike.attributes["import.file"] == "Keep/Bike lock.json"  # where it is in what was imported
    # An older export has no creation time: the note is dated when it was last edited.
    (untitled,) = [c for c in captures(results) if c.kind == "note" and c.title is None]
    assert untitled.captured_at == gen.KEEP_CREATED["piano"] and "piano tuner" in text(untitled)
    # The photo the note names .jpeg is the .jpg on disk; it goes to the extractors dated like its note.
    (photo,) = [c for c in captures(results) if c.kind == "file"]
    assert photo.filename == "1b7a9c0d2e.jpg" and photo.content_type == "image/png"
    assert photo.captured_at == gen.KEEP_CREATED["whiteboard"] and photo.title == "Whiteboard (1b7a9c0d2e.jpg)"
    assert skips(results) == {"Old idea": "in Keep's trash",
                              "Broken": "not a readable Keep note: Unterminated string starting at: line 1 column 36 "
                                        "(char 35)"}


def test_keep_found_in_a_takeout_zip_next_to_chrome_bookmarks(tmp_path: Path) -> None:
    takeout = gen.write_keep(tmp_path / "t")
    gen.write_bookmarks(takeout / "Chrome", "https://example.org")
    archive = tmp_path / "takeout-20240601T101500Z-001.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for f in takeout.rglob("*"):
            if f.is_file():
                z.write(f, f.relative_to(tmp_path / "t").as_posix())
    with Export.open(archive) as export:
        detected = registry.detect(export)
        assert detected.format.name == "bookmarks"  # the more specific file wins...
        assert [f.name for f, _ in detected.also] == ["keep"]  # ...and the notes are pointed out
        keep = registry.detect(export, "keep")
        assert keep.found == "6 notes in Takeout/Keep"
        assert len(captures(list(keep.format.read(export, Options())))) == 5


def test_evernote_formatting_html_clips_checklists_and_attachments(tmp_path: Path) -> None:
    name, results = read(gen.write_evernote(tmp_path))
    assert name == "evernote"
    notes = by_title(results)
    lisbon = notes["Lisbon trip"]
    assert lisbon.captured_at == datetime(2023, 5, 14, 8, 30, tzinfo=UTC)
    assert front(lisbon)["tags"] == "travel portugal" and "updated: 2023-05-20T19:00:00+00:00" in text(lisbon)
    assert "**Day one**: we took tram 28" in text(lisbon) and "https://example.org/lisbon-guide" in text(lisbon)
    clip = text(notes["Pastry receipt"])  # an HTML-only web clip: styled table and spans
    assert "| Pastel de nata at Manteigaria | 1.30 EUR |" in clip and "*Paid in cash* on the terrace." in clip
    assert "- [x] Passport\n- [ ] Sunscreen for the Comporta beach" in text(notes["Packing list"])
    board = text(notes["Boarding pass and logbook"])
    assert "[attachment: boarding-pass.png]" in board and "Attachments: boarding-pass.png, harbour-logbook.pdf" in board
    files = {c.filename: c for c in captures(results) if c.kind == "file"}
    assert set(files) == {"boarding-pass.png", "harbour-logbook.pdf"}
    assert files["harbour-logbook.pdf"].content_type == "application/pdf"
    assert all(f.captured_at == datetime(2023, 5, 21, 6, 10, tzinfo=UTC) for f in files.values())
    (reason,) = skips(results).values()
    assert reason.startswith("secondbrain cannot read this attachment: unsupported content type application/zip")


def test_a_damaged_enex_keeps_the_notes_before_the_damage(tmp_path: Path) -> None:
    good = gen.enex_note("First", "<div>Kept before the damage</div>", "20230101T100000Z")
    whole = gen.enex([good, good.replace("First", "Second")])
    path = tmp_path / "Half.enex"
    path.write_text(whole[: whole.rindex("</en-export>")])  # the export's end is missing, its notes are whole
    _, results = read(path)
    assert [c.title for c in captures(results)] == ["First", "Second"]
    assert list(skips(results)) == ["Half: notes after note 2"]
    cut = tmp_path / "Cut.enex"
    cut.write_text(gen.enex([good, gen.enex_note("Lost", "<div>x</div>", "20230102T100000Z")])[:-300])
    _, results = read(cut)
    assert [c.title for c in captures(results)] == ["First"]
    ((label, reason),) = skips(results).items()
    assert label == "Cut: notes after note 1" and "export the notebook again" in reason


def test_notion_pages_take_their_hierarchy_and_database_rows_their_properties(tmp_path: Path) -> None:
    opts = Options(tz=ATHENS)
    name, results = read(gen.write_notion(tmp_path), opts)
    assert name == "notion"
    notes = by_title(results)
    assert set(notes) == {"Garden", "Garden > Seeds", "Reading list > The Overstory",
                          "Reading list > Braiding Sweetgrass", "Garden > Seeds (Cold frame plan.png)"}
    assert notes["Garden > Seeds"].source_uri == f"import:notion:{gen.NOTION_IDS['seeds']}"
    assert notes["Garden"].captured_at is None  # Notion's export does not say when a page was written
    row = notes["Reading list > The Overstory"]  # a row with its own page: imported once, with its body
    assert row.captured_at == datetime(2024, 3, 5, 14, 32, tzinfo=ATHENS)
    assert front(row)["tags"] == "fiction trees" and "hedgerow of hazel" in text(row)
    record = notes["Reading list > Braiding Sweetgrass"]  # a row without a page: a record of its columns
    assert "- **Author**: Robin Wall Kimmerer" in text(record)
    assert record.captured_at == datetime(2024, 1, 12, 8, 10, tzinfo=ATHENS)
    assert notes["Garden > Seeds (Cold frame plan.png)"].kind == "file"


def test_bear_and_apple_notes_folders_keep_their_file_times_and_tags(tmp_path: Path) -> None:
    folder = gen.write_notes_folder(tmp_path)
    name, results = read(folder)
    assert name == "notes"
    notes = by_title(results)
    bear = notes["Sourdough starter"]
    assert bear.captured_at == gen.BEAR_TIME and bear.source_uri == "import:notes:Sourdough%20starter.md"
    assert front(bear)["tags"] == "baking kitchen/bread"
    soup = notes["Lentil soup"]
    assert soup.captured_at == gen.APPLE_TIME and "- Serves four" in text(soup) and "recipes" in front(soup)["tags"]
    assert skips(results) == {"Untitled.md": "the note is empty"}
    # The same folder zipped: the same sources (its top folder is left out of their names), dated alike.
    archive = tmp_path / "notes.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for f in folder.rglob("*"):
            z.write(f, f.relative_to(folder.parent).as_posix())
    _, zipped = read(archive, Options(tz=UTC))
    assert {c.source_uri for c in captures(zipped)} == {c.source_uri for c in captures(results)}


def test_bookmarks_are_pages_to_fetch_dated_by_add_date_with_their_folders(tmp_path: Path) -> None:
    name, results = read(gen.write_bookmarks(tmp_path, "https://example.org"))
    assert name == "bookmarks"
    pages = {c.url: c for c in captures(results)}
    assert list(pages) == ["https://example.org/article", "https://example.org/private/diary",
                           "https://example.org/gone"]
    first = pages["https://example.org/article"]
    assert first.kind == "url" and first.title == "Lighthouses and their clocks"
    assert first.captured_at == gen.BOOKMARK_ADDED and first.attributes["import.folder"] == "Bookmarks bar / Sea"
    assert pages["https://example.org/gone"].attributes["import.tags"] == "old,dead"
    assert skips(results) == {
        "Show title": "not a web page (javascript: bookmarks, such as bookmarklets, are not fetched)",
        "Lighthouses again": "the same address is bookmarked again (in Bookmarks bar / Sea)"}


def test_kindle_clippings_one_record_per_highlight_with_its_note(tmp_path: Path) -> None:
    name, results = read(gen.write_kindle(tmp_path), Options(tz=ATHENS))
    assert name == "kindle"
    notes = by_title(results)
    peregrine = notes["The Peregrine (location 201-203)"]
    assert peregrine.captured_at == datetime(2024, 3, 5, 21, 41, 7, tzinfo=ATHENS)
    body = text(peregrine)
    assert "> The hardest thing of all to see is what is really there." in body
    assert "My note: Compare with the heron passage in Meadowland." in body
    assert "Author: J. A. Baker" in body and "Page: 14" in body
    uk = notes["Meadowland: The Private Life of an English Field (location 1180-1182)"]
    assert uk.captured_at == datetime(2024, 6, 15, 7, 12, 45, tzinfo=ATHENS)  # a UK Kindle's date
    reasons = [r for r in results if isinstance(r, Skipped)]
    assert {(r.reason, r.duplicate) for r in reasons} == {
        ("a bookmark holds no text", False), ("the same highlight was clipped again", True),
        ("its details line is not Kindle's ('- Your Highlight ... | Added on ...')", False)}


def test_readwise_rows_with_quotes_notes_tags_and_no_time(tmp_path: Path) -> None:
    name, results = read(gen.write_readwise(tmp_path))
    assert name == "readwise"
    notes = by_title(results)
    poem = text(notes["Upstream (location 412)"])
    assert '> Attention is the beginning of devotion, said the poet; "stay astonished."\n> Then tell about it.' in poem
    orchard = notes["The Orchard Handbook (page 88)"]
    assert orchard.captured_at == datetime(2023, 10, 8, 15, 45, tzinfo=UTC)
    assert "My note: Plant two in the north corner" in text(orchard) and "garden" in front(orchard)["tags"]
    assert notes["Field Notes (page 3)"].captured_at is None


def speakers_and_turns(c: Capture) -> list[tuple[str, str, str]]:
    """(speaker, turn id, text) of a chat record as the chat extractor reads it."""
    doc = extract_text(c.data(), content_type=c.content_type, filename=None, is_note=False)
    return [(s.attributes["speaker"], s.attributes["turn_id"], s.text) for s in doc.segments if s.kind == "turn"]


def test_whatsapp_android_day_first_24_hours_in_another_zone(tmp_path: Path) -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    name, results = read(gen.write_whatsapp_android(tmp_path), Options(tz=tokyo))
    assert name == "whatsapp"
    day1, day2 = captures(results)
    assert day1.title == "WhatsApp chat with Priya, Tuesday 12 March 2024"
    assert day1.captured_at == datetime(2024, 3, 12, 8, 56, tzinfo=tokyo) == datetime(2024, 3, 11, 23, 56, tzinfo=UTC)
    assert day1.source_uri == "import:whatsapp:Priya#2024-03-12"
    turns = speakers_and_turns(day1)
    assert [(s, t) for s, t, _ in turns] == [("Priya", "08:56"), ("Sam", "08:58"), ("Priya", "09:01"),
                                             ("Priya", "09:02")]
    # A multi-line message stays one turn, even its line that looks like a speaker ("Note: ...").
    assert turns[1][2] == ("Sam: Yes! Departure 07:30 from Piraeus on the 21st.\nBring the printed tickets,\n"
                           "Note:\u00a0the app keeps crashing on my phone.")
    assert turns[2][2] == "Priya: [media not included in the export]"
    assert WHATSAPP_NOTICE_WORD not in text(day1)  # the app's own notice is not a message
    assert [t for _, _, t in speakers_and_turns(day2)] == [
        "Sam: We'll send the hostel in Naxos our passport numbers on Friday"]  # the deleted message is gone


WHATSAPP_NOTICE_WORD = "end-to-end encrypted"


def test_whatsapp_iphone_month_first_12_hours_with_media(tmp_path: Path) -> None:
    name, results = read(gen.write_whatsapp_ios(tmp_path), Options(tz=ATHENS))
    assert name == "whatsapp"
    day1, day2, photo = captures(results)
    assert day1.title == "WhatsApp chat with Marco, Thursday 14 March 2024"
    assert [(s, t) for s, t, _ in speakers_and_turns(day1)] == [("Marco", "19:05"), ("Sam", "19:06"), ("Sam", "19:07")]
    assert speakers_and_turns(day1)[1][2] == "Sam: [photo: 00000003-PHOTO-2024-03-14-19-06-40.jpg]"
    assert day2.captured_at == datetime(2024, 3, 15, 0, 30, tzinfo=ATHENS)  # 12:30 AM is just after midnight
    assert photo.kind == "file" and photo.captured_at == datetime(2024, 3, 14, 19, 6, 40, tzinfo=ATHENS)
    assert photo.title == "Photo from Sam in the WhatsApp chat with Marco"


@pytest.mark.parametrize(("line", "order", "expected"), [
    ("3/5/24, 2:32 PM - Ann: hi", None, datetime(2024, 3, 5, 14, 32)),  # nothing settles it: month first
    ("3/5/24, 2:32 PM - Ann: hi", "dmy", datetime(2024, 5, 3, 14, 32)),  # the locale's order
    ("13/5/24, 2:32\u202fPM - Ann: hi", "mdy", datetime(2024, 5, 13, 14, 32)),  # a day over 12 settles it
    ("[2024-05-13, 14:32:05] Ann: hi", None, datetime(2024, 5, 13, 14, 32, 5)),
    ("05.03.24, 12:02 - Ann: hi", "dmy", datetime(2024, 3, 5, 12, 2)),  # German phones
    ("[5/3/24, 12:02:00 a.m.] Ann: hi", "dmy", datetime(2024, 3, 5, 0, 2)),
])
def test_whatsapp_date_orders_and_clocks(tmp_path: Path, line: str, order: str | None, expected: datetime) -> None:
    path = tmp_path / "WhatsApp Chat with Ann.txt"
    path.write_text(line + "\n")
    _, results = read(path, Options(tz=UTC, date_order=order))  # type: ignore[arg-type]
    (record,) = captures(results)
    assert record.captured_at == expected.replace(tzinfo=UTC)


def test_telegram_speakers_times_links_and_media(tmp_path: Path) -> None:
    name, results = read(gen.write_telegram(tmp_path), Options(tz=ATHENS))
    assert name == "telegram"
    day1, day2, photo = captures(results)
    assert day1.title == "Telegram chat: Aunt Rosa, Sunday 2 July 2023"
    assert day1.captured_at == gen.TELEGRAM_START  # from date_unixtime, whatever zone the export was made in
    turns = speakers_and_turns(day1)
    assert [s for s, _, _ in turns] == ["Aunt Rosa", "Sam", "Aunt Rosa"]
    assert turns[1][2] == "Sam: Thanks! I found the [copper pan](https://example.org/copper-pan) you mentioned"
    assert turns[2][2] == "Aunt Rosa: [voice message not included in the export]"
    assert photo.kind == "file" and photo.captured_at == datetime(2023, 7, 3, 16, 9, 11, tzinfo=UTC)
    assert speakers_and_turns(day2)[0][2] == ("Aunt Rosa: [photo: photo_1@03-07-2023_16-09-11.jpg] Photo of the "
                                              "finished jars")


def test_telegram_full_account_export(tmp_path: Path) -> None:
    folder = gen.write_telegram(tmp_path)
    chat = json.loads((folder / "result.json").read_text())
    (folder / "result.json").write_text(json.dumps({"about": "Here is the data you requested.",
                                                    "personal_information": {"first_name": "Sam"},
                                                    "chats": {"about": "...", "list": [chat, {**chat, "id": 7,
                                                                                               "name": "Jo"}]}}))
    _, results = read(folder)
    assert sorted({c.attributes["import.chat"] for c in captures(results) if c.kind == "chat"}) == ["Aunt Rosa", "Jo"]


def test_openmemory_export_with_categories_states_and_metadata(tmp_path: Path) -> None:
    name, results = read(gen.write_openmemory(tmp_path))
    assert name == "mem0"
    notes = by_title(results)
    hazel = notes["Is allergic to hazelnuts; carries an antihistamine on hikes"]
    assert hazel.captured_at == datetime(2024, 2, 3, 8, 20, tzinfo=UTC)
    assert front(hazel)["tags"] == "memory health" and "source: chat" in text(hazel) and "App: claude" in text(hazel)
    seats = notes["Prefers window seats on night trains"]
    assert front(seats)["tags"] == "memory preferences archived" and "updated: 2024-04-01" in text(seats)
    assert skips(results) == {"An old phone number": "deleted in OpenMemory"}  # read once, from memories.json


def test_mem0_get_all_json(tmp_path: Path) -> None:
    name, results = read(gen.write_mem0_get_all(tmp_path))
    assert name == "mem0"
    (memory,) = captures(results)
    assert memory.captured_at == datetime(2024, 5, 20, 14, 30, tzinfo=UTC)
    assert front(memory)["tags"] == "memory sports goals"


def test_khoj_conversations_become_dated_chats_with_you_and_the_agent(tmp_path: Path) -> None:
    name, results = read(gen.write_khoj(tmp_path), Options(tz=ATHENS))
    assert name == "khoj"
    day1, day2 = captures(results)
    assert day1.title == "Khoj: Greenhouse heater, Saturday 20 January 2024"
    assert day1.captured_at == datetime(2024, 1, 20, 18, 2, tzinfo=ATHENS)
    assert [s for s, _, _ in speakers_and_turns(day1)] == ["You", "Khoj"]
    assert "Parasene 5-day heater" in text(day1) and day2.captured_at == datetime(2024, 1, 21, 8, 15, tzinfo=ATHENS)
    assert skips(results) == {"Conversation with Gardener": "the conversation has no dated messages"}


def test_khoj_memories_and_files(tmp_path: Path) -> None:
    memories = tmp_path / "memories.json"
    memories.write_text(json.dumps([{"id": 3, "raw": "Likes the Thursday farmers market",
                                     "created_at": "2024-04-02T10:00:00+00:00"}]))
    _, results = read(memories)
    (m,) = captures(results)
    assert m.source_uri == "import:khoj:memory/3" and m.captured_at == datetime(2024, 4, 2, 10, tzinfo=UTC)
    files = tmp_path / "files.json"
    files.write_text(json.dumps({"files": [{"file_name": "notes/boat.org", "raw_text": "* Boat\nRe-varnish the tiller",
                                            "updated_at": "2024-05-01 09:00:00+00:00"}], "num_pages": 1}))
    _, results = read(files, forced="khoj")
    (f,) = captures(results)
    assert f.title == "boat.org" and "Re-varnish the tiller" in text(f)


def test_formats_are_found_from_content_not_names(tmp_path: Path) -> None:
    """Renamed files are still recognised; a file of no known format gets a sentence listing what is read."""
    renamed = {"evernote": gen.write_evernote(tmp_path / "e"), "kindle": gen.write_kindle(tmp_path / "k"),
               "whatsapp": gen.write_whatsapp_android(tmp_path / "w"), "readwise": gen.write_readwise(tmp_path / "r"),
               "bookmarks": gen.write_bookmarks(tmp_path / "b", "https://example.org")}
    for fmt, path in renamed.items():
        other = tmp_path / "renamed" / fmt / "export.dat"
        other.parent.mkdir(parents=True)
        shutil.copy(path, other)
        assert read(other)[0] == fmt, fmt
    stray = tmp_path / "stray.bin"
    stray.write_bytes(bytes(range(256)) * 4)
    recognised = r"is not an export secondbrain recognises\. It reads: secondbrain \(.*\); Evernote"
    with pytest.raises(ExportError, match=recognised):
        read(stray)
    with pytest.raises(ExportError, match=r"does not look like Evernote \(File > Export Notes"):
        read(renamed["kindle"], forced="evernote")
    with pytest.raises(ExportError, match="there is no import format called 'onenote'"):
        read(renamed["kindle"], forced="onenote")


def test_an_item_that_breaks_its_reader_is_skipped_and_the_rest_goes_on(tmp_path: Path) -> None:
    path = gen.write_openmemory(tmp_path)
    with zipfile.ZipFile(path) as z:
        data = json.loads(z.read("memories.json"))
    data["memories"][0]["metadata"] = "not an object"  # tolerated: no metadata
    data["memories"][1]["category_ids"] = 5  # what no Mem0 writes: that item alone is skipped
    broken = tmp_path / "memories.json"
    broken.write_text(json.dumps(data))
    _, results = read(broken)
    assert [c.title for c in captures(results)] == ["Is allergic to hazelnuts; carries an antihistamine on hikes"]
    reasons = skips(results)
    assert reasons["7d0a3f5e-0000-4000-8000-000000000002"].startswith("it could not be read (")


def test_the_same_item_with_the_same_content_has_the_same_submission_key(tmp_path: Path) -> None:
    _, first = read(gen.write_keep(tmp_path / "a"))
    _, again = read(gen.write_keep(tmp_path / "b"))
    assert [c.submission_key() for c in captures(first)] == [c.submission_key() for c in captures(again)]
    note = captures(first)[0]
    changed = Capture(**{**{f: getattr(note, f) for f in note.__dataclass_fields__}, "content": b"edited"})
    assert changed.submission_key() != note.submission_key() and changed.source_uri == note.source_uri


def test_a_zip_that_climbs_out_or_bombs_is_not_read_past_its_limits(tmp_path: Path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("../../etc/passwd.md", "# root\n\nnot yours")
        z.writestr("notes/ok.md", "# Fine\n\nA fine note.")
    with Export.open(archive) as export:
        assert [e.path for e in export.entries()] == ["notes/ok.md"]
        assert export.read("notes/ok.md", limit=1024) == b"# Fine\n\nA fine note."
        with pytest.raises(ExportError, match=r"notes/ok\.md is larger than 5 bytes"):
            export.read("notes/ok.md", limit=5)


CALENDAR_NOW = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


def test_calendar_events_at_their_own_time_with_place_people_and_provenance(tmp_path: Path) -> None:
    """Google Calendar's export: a one-off event written in UTC is shown at its London time, an all-day event
    is that day in the calendar's zone, an event set in Tokyo keeps Tokyo's time; cancelled ones are left out."""
    name, results = read(gen.write_calendar(tmp_path, CALENDAR_NOW), Options(now=CALENDAR_NOW))
    assert name == "ics"
    t = gen.calendar_times(gen.calendar_anchor(CALENDAR_NOW))
    notes = by_title(results)
    osei = notes["Check-up with Dr. Osei"]
    assert osei.captured_at == t["osei"]
    body = text(osei)
    assert f"When: {t['osei']:%A} {t['osei'].day} {t['osei']:%B %Y}, 09:30-10:15 (Europe/London)" in body
    assert "Where: Marylebone Dental Practice, 14 Harley Street, London W1G 9PQ, UK" in body
    assert "Organizer: Sam Rivera" in body and "Attendees: Dr. Ama Osei\n" in body
    assert "Bring the X-ray from March; ask about a **night guard**." in body  # Google's HTML description
    assert dict(osei.attributes) == {
        "kind": "note", "import.format": "ics", "import.file": "sam.rivera@example.org.ics",
        "import.item": "5q1m0osei7c2r9k3j4h8g6f2d1@google.com", "import.uid": "5q1m0osei7c2r9k3j4h8g6f2d1@google.com"}
    assert osei.source_uri == "import:ics:5q1m0osei7c2r9k3j4h8g6f2d1@google.com"
    picnic = notes["Lena's birthday picnic"]
    assert picnic.captured_at == t["picnic"] and picnic.captured_at.utcoffset() is not None
    assert f"When: All day, {t['picnic']:%A} {t['picnic'].day} {t['picnic']:%B %Y}\n" in text(picnic)
    kenji = notes["Call with Kenji about the Kyoto print run"]
    assert kenji.captured_at == t["kenji"]  # 08:00 in Tokyo is the evening before in London
    assert "08:00-08:30 (Asia/Tokyo)" in text(kenji) and "Attendees: Kenji Watanabe" in text(kenji)
    # A one-off event is imported however long ago it was; the window is for recurring ones.
    assert notes["Graduation ceremony"].captured_at == t["graduation"]
    assert front(osei)["tags"] == "calendar"
    assert "Dinner at Ottolenghi" not in notes
    # The cancelled dinner is left out; the cancelled physio session is a date left out of its series.
    assert {r.label.split(",")[0]: r.reason for r in results if isinstance(r, Skipped)} == {
        "Dinner at Ottolenghi": "cancelled in the calendar"}


def test_a_weekly_series_is_one_record_with_its_rule_its_exceptions_and_its_moved_occurrence(tmp_path: Path) -> None:
    _, results = read(gen.write_calendar(tmp_path, CALENDAR_NOW), Options(now=CALENDAR_NOW))
    t = gen.calendar_times(gen.calendar_anchor(CALENDAR_NOW))
    (physio,) = [c for c in captures(results) if c.title == "Physio with Marta"]
    week = timedelta(weeks=1)
    assert physio.captured_at == t["physio"]  # dated by its first occurrence
    assert physio.source_uri == "import:ics:4f6a2physio8e1c7d3b5@google.com"
    body = text(physio)
    assert "Repeats: every week on Tuesday at 18:00 (Europe/London), from " in body and ", 8 times" in body
    assert "Moved to Wednesday: Marta is at a course on Tuesday." in body and "Camden Physio Hub" in body
    assert "Not on: " in body
    series = series_of(physio)
    assert series is not None and front(physio)["repeats"].startswith("every week on Tuesday")
    # Eight Tuesdays: the third moved to a Wednesday, the fifth taken out (EXDATE), the sixth cancelled.
    got = recurrence.between(series, t["physio"] - week, t["physio"] + 20 * week).occurrences
    assert [o.start for o in got] == [t["physio"], t["physio"] + week, t["physio_moved"], t["physio"] + 3 * week,
                                      t["physio"] + 6 * week, t["physio"] + 7 * week]
    assert got[2].moved_from == t["physio"] + 2 * week
    # A yearly birthday since 1990 is one record too, without end: every year is there, none made ahead.
    (birthday,) = [c for c in captures(results) if c.title == "Mum's birthday"]
    yearly = series_of(birthday)
    assert yearly is not None and yearly.until is None and yearly.all_day
    assert [o.start.date().isoformat() for o in recurrence.between(
        yearly, datetime(1995, 1, 1, tzinfo=UTC), datetime(1997, 1, 1, tzinfo=UTC)).occurrences] == [
        "1995-04-17", "1996-04-17"]


@pytest.mark.parametrize(("rule", "says"), [
    ("RRULE:FREQ=HOURLY", "every hour (UTC), from Monday 1 January 2024, without end"),
    ("RRULE:FREQ=SECONDLY", "every second (UTC), from Monday 1 January 2024, without end"),
    ("RRULE:FREQ=DAILY;COUNT=1000000000", "1,000,000,000 times; secondbrain keeps it until"),
])
def test_an_endless_or_huge_rule_is_read_at_the_cost_of_the_file(tmp_path: Path, rule: str, says: str) -> None:
    """The 200-byte calendar that made 20,000 jobs: one record, read in a moment, whatever the rule makes."""
    path = tmp_path / "endless.ics"
    path.write_text("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:endless@example.org\r\n"
                    "DTSTART:20240101T090000Z\r\nSUMMARY:Stand-up\r\n" + rule + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    began = time.perf_counter()
    _, results = read(path, Options(now=CALENDAR_NOW))
    assert time.perf_counter() - began < 2.0  # a fraction of that on an idle machine; see bench/recurrence.py
    (standup,) = captures(results)
    assert says in text(standup)


def test_a_rule_that_never_gives_a_date_leaves_the_event_at_its_first_date(tmp_path: Path) -> None:
    path = tmp_path / "never.ics"
    path.write_text("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:never@example.org\r\n"
                    "DTSTART:20240101T090000Z\r\nSUMMARY:Never\r\nRRULE:FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30\r\n"
                    "END:VEVENT\r\nEND:VCALENDAR\r\n")
    (never,) = captures(read(path, Options(now=CALENDAR_NOW))[1])
    assert "Repeats: kept at its first date only: its repeat rule never gives a date" in text(never)
    assert series_of(never) is None


def test_a_calendar_file_is_found_by_its_content_and_read_the_same_again(tmp_path: Path) -> None:
    zipped = gen.write_calendar(tmp_path, CALENDAR_NOW)
    with zipfile.ZipFile(zipped) as z:
        data = z.read("sam.rivera@example.org.ics")
    renamed = tmp_path / "agenda-backup.dat"
    renamed.write_bytes(data)
    name, first = read(renamed, Options(now=CALENDAR_NOW))
    assert name == "ics"
    _, again = read(renamed, Options(now=CALENDAR_NOW))
    assert [c.submission_key() for c in captures(first)] == [c.submission_key() for c in captures(again)]
    assert len(captures(first)) == 6  # four one-off events and two series, each one record
    with Export.open(renamed) as export:
        assert registry.detect(export).found == "7 events in 1 calendar"
    # An export of notes is no calendar.
    with pytest.raises(ExportError, match="does not look like Calendar"):
        read(gen.write_readwise(tmp_path / "r"), forced="calendar")
