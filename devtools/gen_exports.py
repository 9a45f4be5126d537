"""Exports of other tools, written the way each tool writes them (from their documentation and their own
code), with our own content and the awkward cases: for the importer tests and ``bench/imports.py``.

Every sample names facts found nowhere else (a ferry at 07:30 from Piraeus, the bike lock's 3-9-1-7), so a
test can search for them and know which item answered.  Times are chosen in several zones and formats.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import os
import zipfile
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from devtools import gen_pdf_image


def _usec(dt: datetime) -> int:
    return int(dt.timestamp() * 1_000_000)


def _touch(path: Path, when: datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()))


def png_with_text(lines: tuple[str, ...]) -> bytes:
    """A picture with large clear text (read by OCR)."""
    return gen_pdf_image.encode(gen_pdf_image.text_image(lines), "PNG")


# ------------------------------------------------------------------------------------------ Google Keep
KEEP_WHITEBOARD_LINES = ("ORCHARD ROADMAP", "PRUNE THE QUINCE")
KEEP_CREATED = {
    "groceries": datetime(2023, 11, 4, 9, 15, tzinfo=UTC),
    "bike": datetime(2022, 6, 12, 18, 40, tzinfo=UTC),
    "whiteboard": datetime(2024, 1, 9, 16, 5, tzinfo=UTC),
    "piano": datetime(2024, 2, 1, 9, 0, tzinfo=UTC),  # only its edit time is in the export
}


def keep_note(*, title: str, created: datetime | None, edited: datetime, text: str | None = None,
              items: Sequence[tuple[str, bool]] | None = None, labels: Sequence[str] = (),
              annotations: Sequence[dict[str, str]] = (), attachments: Sequence[dict[str, str]] = (),
              trashed: bool = False, archived: bool = False, pinned: bool = False) -> dict[str, object]:
    """One note as Takeout writes it."""
    note: dict[str, object] = {"color": "DEFAULT", "isTrashed": trashed, "isPinned": pinned, "isArchived": archived,
                               "title": title, "userEditedTimestampUsec": _usec(edited)}
    if created is not None:
        note["createdTimestampUsec"] = _usec(created)
    if items is not None:
        note["listContent"] = [{"textHtml": t, "text": t, "isChecked": c} for t, c in items]
    else:
        note["textContent"] = text or ""
        note["textContentHtml"] = f"<p dir=\"ltr\" style=\"line-height:1.38;margin-top:0.0pt;\">{text}</p>"
    if labels:
        note["labels"] = [{"name": lb} for lb in labels]
    if annotations:
        note["annotations"] = list(annotations)
    if attachments:
        note["attachments"] = list(attachments)
    return note


def write_keep(root: Path) -> Path:
    """``Takeout/Keep`` with a checklist, a plain note with a link, a note with a photo, an untitled note of an
    older export (edit time only), a note in the trash and a file that is not valid JSON."""
    keep = root / "Takeout" / "Keep"
    keep.mkdir(parents=True, exist_ok=True)
    notes = {
        "Groceries": keep_note(title="Groceries", created=KEEP_CREATED["groceries"],
                               edited=datetime(2023, 11, 5, 7, 0, tzinfo=UTC),
                               items=[("Oat milk", False), ("Saffron threads", True), ("Cardamom pods", False)],
                               labels=["Shopping list"], pinned=True),
        "Bike lock": keep_note(title="Bike lock", created=KEEP_CREATED["bike"],
                               edited=datetime(2022, 6, 12, 18, 41, tzinfo=UTC),
                               text="The combination for the blue bike lock is 3-9-1-7.\nDo not tell the neighbours.",
                               labels=["Personal"],
                               annotations=[{"description": "Lock manual", "source": "WEBLINK",
                                             "title": "Abus lock manual", "url": "https://example.org/lock-manual"}]),
        "Whiteboard": keep_note(title="Whiteboard", created=KEEP_CREATED["whiteboard"],
                                edited=datetime(2024, 1, 9, 16, 6, tzinfo=UTC),
                                text="Photo of the planning whiteboard after the orchard meeting.",
                                attachments=[{"filePath": "1b7a9c0d2e.jpeg", "mimetype": "image/png"}]),
        "2024-02-01T10_00_00.000+01_00": keep_note(title="", created=None, edited=KEEP_CREATED["piano"],
                                                   text="Call the piano tuner about the sticky A string."),
        "Old idea": keep_note(title="Old idea", created=datetime(2021, 1, 1, tzinfo=UTC),
                              edited=datetime(2021, 1, 2, tzinfo=UTC), text="A thrown-away idea.", trashed=True),
    }
    for name, note in notes.items():
        (keep / f"{name}.json").write_text(json.dumps(note, indent=2))
        (keep / f"{name}.html").write_text(f"<html><body><div class=\"note\">{note.get('title')}</div></body></html>")
    # Takeout names the file .jpg on disk while the note says .jpeg (a known quirk).
    (keep / "1b7a9c0d2e.jpg").write_bytes(png_with_text(KEEP_WHITEBOARD_LINES))
    (keep / "Broken.json").write_text('{"title": "Broken", "textContent": "cut short')
    (keep / "Labels.txt").write_text("Shopping list\nPersonal\n")
    return root / "Takeout"


def write_many_keep_notes(root: Path, count: int) -> Path:
    """``count`` plain Keep notes (a paragraph each, distinct words), for the speed bench."""
    keep = root / "Takeout" / "Keep"
    keep.mkdir(parents=True, exist_ok=True)
    start = datetime(2020, 1, 1, tzinfo=UTC).timestamp()
    for i in range(count):
        when = datetime.fromtimestamp(start + i * 3600 * 7, UTC)
        text = (f"Note {i}: the crate numbered {i * 7 + 3} holds {i % 13 + 2} jars of plum jam and "
                f"{i % 5 + 1} bags of walnuts from the {['north', 'south', 'east', 'west'][i % 4]} shed. "
                f"Check the lid seals before winter; label {hashlib.sha256(str(i).encode()).hexdigest()[:8]}.")
        note = keep_note(title=f"Pantry crate {i}", created=when, edited=when, text=text,
                         labels=[["Pantry", "Garden", "Home"][i % 3]])
        (keep / f"Pantry crate {i}.json").write_text(json.dumps(note))
    return root / "Takeout"


def write_same_time_keep_notes(root: Path, count: int) -> Path:
    """``count`` different Keep notes made in the same microsecond (a script, a sync, a restore makes them so):
    Takeout names each one's file apart, ``Pantry label.json``, ``Pantry label(1).json``..."""
    keep = root / "Takeout" / "Keep"
    keep.mkdir(parents=True, exist_ok=True)
    when = datetime(2023, 3, 4, 10, 20, 30, 123456, tzinfo=UTC)
    for i in range(count):
        note = keep_note(title="Pantry label", created=when, edited=when,
                         text=f"Label {i}: shelf {i // 10}, jar {i % 10}, the {i}th jar of quince jelly.")
        (keep / (f"Pantry label({i}).json" if i else "Pantry label.json")).write_text(json.dumps(note))
    return root / "Takeout"


# ------------------------------------------------------------------------------------------ broken archives


def damaged_zip(kind: str, files: dict[str, bytes] | None = None, *, bad: str | None = None) -> bytes:
    """A zip of ``files`` (stored, not compressed) with ``bad`` (default: the first) damaged as ``kind`` says:
    ``crc`` (a byte of its content changed after the checksum was written: a lying header, a flipped bit),
    ``encrypted`` (marked as password-protected, as a zip made with a password is) or ``truncated`` (the whole
    archive cut short, as a download that stopped: its table of contents, at the end, is gone)."""
    files = files or {"Notes/Tuesday.md": b"# Tuesday\n\nThe boiler service is booked for 9:00."}
    bad = bad or next(iter(files))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    raw = bytearray(out.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as z:
        info = z.getinfo(bad)
    if kind == "crc":
        at = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
        raw[at] ^= 0x20
    elif kind == "encrypted":
        raw[info.header_offset + 6] |= 0x01  # the local header's flag: encrypted
        raw[_central_entry(bytes(raw), bad) + 8] |= 0x01  # and the central directory's
    elif kind == "truncated":
        raw = raw[: len(raw) * 2 // 3]
    else:
        raise ValueError(f"unknown damage {kind!r}")
    return bytes(raw)


def _central_entry(raw: bytes, name: str) -> int:
    """Where the central directory's entry for ``name`` starts."""
    at = raw.index(b"PK\x01\x02")
    while at >= 0:
        length = int.from_bytes(raw[at + 28:at + 30], "little")
        if raw[at + 46:at + 46 + length] == name.encode():
            return at
        at = raw.find(b"PK\x01\x02", at + 4)
    raise ValueError(f"{name} is not in the central directory")


# ------------------------------------------------------------------------------------------ Evernote
ENEX_BOARDING_LINES = ("BOARDING PASS TP1352", "LISBON GATE 14")


def _enml(body: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
            '<!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">\n'
            f'<en-note>{body}</en-note>')


def _resource(data: bytes, mime: str, name: str) -> tuple[str, str]:
    digest = hashlib.md5(data, usedforsecurity=False).hexdigest()
    b64 = "\n".join(base64.b64encode(data)[i:i + 76].decode() for i in range(0, len(base64.b64encode(data)), 76))
    xml = (f'<resource><data encoding="base64">\n{b64}\n</data><mime>{mime}</mime><width>1100</width>'
           f'<height>360</height><resource-attributes><file-name>{name}</file-name></resource-attributes>'
           '</resource>')
    return digest, xml


def enex(notes: Sequence[str]) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<!DOCTYPE en-export SYSTEM "http://xml.evernote.com/pub/evernote-export4.dtd">\n'
            '<en-export export-date="20240601T101500Z" application="Evernote" version="10.86.5">\n'
            + "\n".join(notes) + "\n</en-export>\n")


def enex_note(title: str, body: str, created: str, updated: str | None = None, tags: Sequence[str] = (),
              source_url: str | None = None, resources: Sequence[str] = ()) -> str:
    source = f"<source-url>{source_url}</source-url>" if source_url else ""
    attrs = f"<note-attributes><author>Sam Rivera</author>{source}</note-attributes>"
    return (f"<note><title>{title}</title><created>{created}</created>"
            + (f"<updated>{updated}</updated>" if updated else "")
            + "".join(f"<tag>{t}</tag>" for t in tags) + attrs
            + f"<content><![CDATA[{_enml(body)}]]></content>" + "".join(resources) + "</note>")


def write_evernote(root: Path) -> Path:
    """``Travel.enex``: a formatted note with tags and a source URL, an HTML-only web clip, a note with a
    picture and a PDF attached (``<en-media>``), a checklist, and an attachment no extractor reads."""
    root.mkdir(parents=True, exist_ok=True)
    image = png_with_text(ENEX_BOARDING_LINES)
    img_hash, img_res = _resource(image, "image/png", "boarding-pass.png")
    pdf = gen_pdf_image.text_pdf()
    pdf_hash, pdf_res = _resource(pdf, "application/pdf", "harbour-logbook.pdf")
    zip_hash, zip_res = _resource(b"PK\x05\x06" + b"\x00" * 18, "application/zip", "photos.zip")
    notes = [
        enex_note("Lisbon trip", "<div><b>Day one</b>: we took tram 28 up to the Alfama and ate grilled "
                  "sardines at a place with blue azulejo tiles.</div><div><br/></div><div>Ask Joana about the "
                  "fado bar in Mouraria.</div>", "20230514T083000Z", "20230520T190000Z", tags=["travel", "Portugal"],
                  source_url="https://example.org/lisbon-guide"),
        enex_note("Pastry receipt", '<div style="font-family: Helvetica;"><table border="1" cellpadding="4"><tr>'
                  '<th>Item</th><th>Price</th></tr><tr><td><span style="color:#333">Pastel de nata at '
                  'Manteigaria</span></td><td>1.30 EUR</td></tr><tr><td>Bica coffee</td><td>0.90 EUR</td></tr>'
                  '</table><p style="margin:0"><i>Paid in cash</i> on the terrace.</p></div>',
                  "20230515T101500Z", tags=["receipts"]),
        enex_note("Boarding pass and logbook", f'<div>Scanned before the flight home.</div><en-media hash="{img_hash}"'
                  f' type="image/png"/><div>The harbour logbook PDF:</div><en-media hash="{pdf_hash}" '
                  f'type="application/pdf"/><en-media hash="{zip_hash}" type="application/zip"/>',
                  "20230521T061000Z", tags=["travel"], resources=[img_res, pdf_res, zip_res]),
        enex_note("Packing list", '<div><en-todo checked="true"/>Passport</div><div><en-todo/>Sunscreen for the '
                  'Comporta beach</div><div><en-todo/>Adapter plug</div>', "20230510T200000Z"),
    ]
    path = root / "Travel.enex"
    path.write_text(enex(notes))
    return path


# ------------------------------------------------------------------------------------------ Notion
NOTION_IDS = {"garden": "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "seeds": "11112222333344445555666677778888",
              "reading": "aaaabbbbccccddddeeeeffff00001111", "overstory": "9a8b7c6d5e4f30211203f4e5d6c7b8a9"}


def write_notion(root: Path) -> Path:
    """A Markdown & CSV export zip holding ``Export-...-Part-1.zip`` (as large exports come): a page with a
    sub-page and a picture, and a database with a row page (properties with a date and tags) and a row
    without one."""
    root.mkdir(parents=True, exist_ok=True)
    ids = NOTION_IDS
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr(f"Garden {ids['garden']}.md", "# Garden\n\nThe quince tree was pruned in late February; "
                   "the espalier pears wait until summer.\n\n"
                   f"[Seeds](Garden%20{ids['garden']}/Seeds%20{ids['seeds']}.md)\n")
        z.writestr(f"Garden {ids['garden']}/Seeds {ids['seeds']}.md", "# Seeds\n\nHeirloom tomato seeds from the "
                   "Brandywine packet go in the cold frame on the first of April.\n\n- Marigolds between the rows\n"
                   "- Basil after the last frost\n")
        z.writestr(f"Garden {ids['garden']}/Seeds {ids['seeds']}/Cold frame plan.png",
                   png_with_text(("COLD FRAME", "BRANDYWINE ROW 3")))
        z.writestr(f"Reading list {ids['reading']}.csv",
                   "Name,Author,Created,Status,Tags\n"
                   "The Overstory,Richard Powers,\"March 5, 2024 2:32 PM\",Done,\"fiction, trees\"\n"
                   "Braiding Sweetgrass,Robin Wall Kimmerer,\"January 12, 2024 8:10 AM\",Reading,\"botany\"\n")
        z.writestr(f"Reading list {ids['reading']}_all.csv",
                   "Name,Author,Created,Status,Tags\n"
                   "The Overstory,Richard Powers,\"March 5, 2024 2:32 PM\",Done,\"fiction, trees\"\n"
                   "Braiding Sweetgrass,Robin Wall Kimmerer,\"January 12, 2024 8:10 AM\",Reading,\"botany\"\n")
        z.writestr(f"Reading list {ids['reading']}/The Overstory {ids['overstory']}.md",
                   "# The Overstory\n\nAuthor: Richard Powers\nCreated: March 5, 2024 2:32 PM\nStatus: Done\n"
                   "Tags: fiction, trees\n\nThe chestnut chapter made me want to plant a hedgerow of hazel.\n")
    outer = root / "Export-5a1b2c3d-Notion.zip"
    with zipfile.ZipFile(outer, "w") as z:
        z.writestr("Export-5a1b2c3d-Part-1.zip", inner.getvalue())
    return outer


# ------------------------------------------------------------------------------------------ notes folders
BEAR_TIME = datetime(2022, 9, 3, 7, 45, tzinfo=UTC)
APPLE_TIME = datetime(2021, 12, 12, 18, 30, tzinfo=UTC)


def write_notes_folder(root: Path) -> Path:
    """A Bear Markdown export (inline tags, the file's time set to the note's) and an Apple Notes exporter's
    HTML note in a folder, as one folder."""
    notes = root / "Notes export"
    (notes / "Recipes").mkdir(parents=True, exist_ok=True)
    bear = notes / "Sourdough starter.md"
    bear.write_text("# Sourdough starter\n\nFeed the starter 50 g of rye flour and 50 g of water every "
                    "morning; it peaks after six hours. #baking #kitchen/bread\n")
    _touch(bear, BEAR_TIME)
    apple = notes / "Recipes" / "Lentil soup.html"
    apple.write_text("<html><head><meta charset=\"utf-8\"><title>Lentil soup</title></head><body>"
                     "<div><h1>Lentil soup</h1></div><div>Red lentils, two carrots, cumin and a squeeze of "
                     "lemon; simmer for 25 minutes.</div><ul><li>Serves four</li><li>Freezes well</li></ul>"
                     "</body></html>")
    _touch(apple, APPLE_TIME)
    empty = notes / "Untitled.md"
    empty.write_text("   \n")
    return notes


# ------------------------------------------------------------------------------------------ bookmarks
BOOKMARK_ADDED = datetime(2019, 8, 14, 12, 0, tzinfo=UTC)


def write_bookmarks(root: Path, base: str) -> Path:
    """A Netscape bookmark file as Chrome exports it: nested folders, a bookmarklet, the same address twice,
    a page that is gone and one robots.txt forbids (``base`` serves the pages)."""
    root.mkdir(parents=True, exist_ok=True)
    added = int(BOOKMARK_ADDED.timestamp())
    html = f"""<!DOCTYPE NETSCAPE-Bookmark-file-1>
<!-- This is an automatically generated file.
     It will be read and overwritten.
     DO NOT EDIT! -->
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">
<TITLE>Bookmarks</TITLE>
<H1>Bookmarks</H1>
<DL><p>
    <DT><H3 ADD_DATE="1565784000" LAST_MODIFIED="1700000000" PERSONAL_TOOLBAR_FOLDER="true">Bookmarks bar</H3>
    <DL><p>
        <DT><H3 ADD_DATE="1565784000" LAST_MODIFIED="1700000000">Sea</H3>
        <DL><p>
            <DT><A HREF="{base}/article" ADD_DATE="{added}" ICON="data:,">Lighthouses and their clocks</A>
            <DT><A HREF="{base}/private/diary" ADD_DATE="{added + 60}">Keeper's diary</A>
        </DL><p>
        <DT><A HREF="javascript:alert(document.title)" ADD_DATE="{added}">Show title</A>
    </DL><p>
    <DT><H3 ADD_DATE="1565784000">Other bookmarks</H3>
    <DL><p>
        <DT><A HREF="{base}/article" ADD_DATE="{added + 3600}">Lighthouses again</A>
        <DT><A HREF="{base}/gone" ADD_DATE="{added + 7200}" TAGS="old,dead">A page that is gone</A>
    </DL><p>
</DL><p>
"""
    path = root / "bookmarks_6_1_24.html"
    path.write_text(html)
    return path


# ------------------------------------------------------------------------------------------ Kindle, Readwise
def write_kindle(root: Path) -> Path:
    """``My Clippings.txt`` with a BOM and CRLF line ends: US and UK date formats, a note on a highlight, a
    bookmark, the same highlight clipped twice, and a clipping whose details line is damaged."""
    root.mkdir(parents=True, exist_ok=True)
    sep = "=========="
    clips = [
        "The Peregrine (J. A. Baker)\n- Your Highlight on page 14 | Location 201-203 | Added on Tuesday, "
        "March 5, 2024 9:41:07 PM\n\nThe hardest thing of all to see is what is really there.",
        "The Peregrine (J. A. Baker)\n- Your Note on page 14 | Location 203 | Added on Tuesday, March 5, 2024 "
        "9:42:30 PM\n\nCompare with the heron passage in Meadowland.",
        "The Peregrine (J. A. Baker)\n- Your Bookmark on page 20 | Location 290 | Added on Tuesday, March 5, "
        "2024 10:02:00 PM\n\n",
        "The Peregrine (J. A. Baker)\n- Your Highlight on page 14 | Location 201-203 | Added on Tuesday, "
        "March 5, 2024 9:41:07 PM\n\nThe hardest thing of all to see is what is really there.",
        "Meadowland: The Private Life of an English Field (John Lewis-Stempel)\n- Your Highlight at location "
        "1180-1182 | Added on Saturday, 15 June 2024 07:12:45\n\nThe hare sat in her form like a stone that "
        "breathed.",
        "Broken book\nnot a details line\n\nlost text",
    ]
    text = "\ufeff" + "".join(f"{c}\n{sep}\n" for c in clips)
    path = root / "My Clippings.txt"
    path.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    return path


def write_readwise(root: Path) -> Path:
    """Readwise's CSV export: a highlight with a comma, quotes and a line break, one with a note and tags, and
    one made before Readwise recorded times."""
    root.mkdir(parents=True, exist_ok=True)
    header = ("Highlight,Book Title,Book Author,Amazon Book ID,Note,Color,Tags,Location Type,Location,"
              "Highlighted at,Document tags\n")
    rows = (
        '"Attention is the beginning of devotion, said the poet; ""stay astonished.""\nThen tell about it.",'
        "Upstream,Mary Oliver,B01N9ZQ7XY,,yellow,,location,412,2024-05-01 10:00:00+00:00,poetry\n"
        '"A walnut tree takes ten years to bear its first full crop.",The Orchard Handbook,Ines Vidal,,'
        '"Plant two in the north corner",blue,"garden trees",page,88,2023-10-08 17:45:00+02:00,\n'
        '"Slow is smooth, smooth is fast.",Field Notes,Anonymous,,,,,page,3,,\n'
    )
    path = root / "readwise-data.csv"
    path.write_text(header + rows)
    return path


# ------------------------------------------------------------------------------------------ WhatsApp, Telegram
WHATSAPP_NOTICE = ("Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, "
                   "can read or listen to them. Tap to learn more.")
WHATSAPP_ANDROID = f"""12/03/2024, 08:55 - {WHATSAPP_NOTICE}
12/03/2024, 08:56 - Priya: Did you book the ferry to Naxos?
12/03/2024, 08:58 - Sam: Yes! Departure 07:30 from Piraeus on the 21st.
Bring the printed tickets,
Note: the app keeps crashing on my phone.
12/03/2024, 09:01 - Priya: <Media omitted>
12/03/2024, 09:02 - Priya: That was the hostel confirmation
13/03/2024, 19:20 - Sam: We'll send the hostel in Naxos our passport numbers on Friday
13/03/2024, 19:21 - Priya: This message was deleted
"""

WHATSAPP_IOS = """[3/14/24, 7:05:12 PM] Marco: The violin teacher moved the lesson to Thursday at five
[3/14/24, 7:06:40 PM] Sam: \u200e<attached: 00000003-PHOTO-2024-03-14-19-06-40.jpg>
[3/14/24, 7:07:02 PM] Sam: Here is the new timetable from the music school
[3/15/24, 12:30:00 AM] Marco: Thanks, see you then
"""
WHATSAPP_PHOTO_LINES = ("MUSIC SCHOOL TIMETABLE", "VIOLIN THURSDAY 17:00")


def write_whatsapp_android(root: Path) -> Path:
    """Android's export (24-hour clock, day first): a multi-line message, a line that looks like a speaker,
    media left out, a deleted message and the encryption notice."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "WhatsApp Chat with Priya.txt"
    path.write_text(WHATSAPP_ANDROID)
    return path


def write_whatsapp_ios(root: Path) -> Path:
    """An iPhone's export with media (a zip of ``_chat.txt`` and the photo), 12-hour clock, month first."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "WhatsApp Chat - Marco.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("_chat.txt", WHATSAPP_IOS)
        z.writestr("00000003-PHOTO-2024-03-14-19-06-40.jpg", png_with_text(WHATSAPP_PHOTO_LINES))
    return path


TELEGRAM_START = datetime(2023, 7, 2, 16, 4, 11, tzinfo=UTC)


def write_telegram(root: Path) -> Path:
    """Telegram Desktop's ``result.json`` of one personal chat: plain and formatted text (a link), a service
    message, a voice message left out of the export, and a photo in it."""
    folder = root / "ChatExport_2024-06-01"
    (folder / "photos").mkdir(parents=True, exist_ok=True)
    t0 = int(TELEGRAM_START.timestamp())

    def msg(i: int, dt: int, who: str, text: object, **more: object) -> dict[str, object]:
        when = datetime.fromtimestamp(t0 + dt, UTC).astimezone()  # Telegram writes the exporting machine's time
        return {"id": i, "type": "message", "date": when.strftime("%Y-%m-%dT%H:%M:%S"),
                "date_unixtime": str(t0 + dt), "from": who, "from_id": f"user{abs(hash(who)) % 10**9}",
                "text": text, "text_entities": [], **more}

    chat = {"name": "Aunt Rosa", "type": "personal_chat", "id": 5550123, "messages": [
        {"id": 1, "type": "service", "date": "2023-07-02T16:00:00", "date_unixtime": str(t0 - 251),
         "actor": "Aunt Rosa", "actor_id": "user1", "action": "phone_call", "duration_seconds": 63, "text": ""},
        msg(2, 0, "Aunt Rosa", "The apricot jam recipe needs 800 g of sugar per kilo of fruit"),
        msg(3, 45, "Sam", ["Thanks! I found the ", {"type": "text_link", "text": "copper pan",
                                                     "href": "https://example.org/copper-pan"}, " you mentioned"]),
        msg(4, 90, "Aunt Rosa", "", media_type="voice_message",
            file="(File not included. Change data exporting settings to download.)", duration_seconds=12),
        msg(5, 86400 + 300, "Aunt Rosa", "Photo of the finished jars", photo="photos/photo_1@03-07-2023_16-09-11.jpg",
            width=1100, height=360),
    ]}
    (folder / "result.json").write_text(json.dumps(chat, indent=1, ensure_ascii=False))
    (folder / "photos" / "photo_1@03-07-2023_16-09-11.jpg").write_bytes(png_with_text(("APRICOT JAM", "JULY 2023")))
    return folder


# ------------------------------------------------------------------------------------------ Mem0, Khoj
def write_openmemory(root: Path) -> Path:
    """OpenMemory's export zip (``memories.json`` and ``memories.jsonl.gz``): memories with categories and
    metadata, one archived, one deleted."""
    root.mkdir(parents=True, exist_ok=True)
    cats = [{"id": "c1", "name": "health", "description": None, "created_at": "2024-02-01T10:00:00+00:00"},
            {"id": "c2", "name": "preferences", "description": None, "created_at": "2024-02-01T10:00:00+00:00"}]
    memories: list[dict[str, Any]] = [
        {"id": "7d0a3f5e-0000-4000-8000-000000000001", "user_id": "u1", "app_id": "a1",
         "content": "Is allergic to hazelnuts; carries an antihistamine on hikes", "metadata": {"source": "chat"},
         "state": "active", "created_at": "2024-02-03T08:20:00+00:00", "updated_at": "2024-02-03T08:20:00+00:00",
         "archived_at": None, "deleted_at": None, "category_ids": ["c1"]},
        {"id": "7d0a3f5e-0000-4000-8000-000000000002", "user_id": "u1", "app_id": "a1",
         "content": "Prefers window seats on night trains", "metadata": {}, "state": "archived",
         "created_at": "2024-03-11T21:00:00+00:00", "updated_at": "2024-04-01T09:00:00+00:00",
         "archived_at": "2024-04-01T09:00:00+00:00", "deleted_at": None, "category_ids": ["c2"]},
        {"id": "7d0a3f5e-0000-4000-8000-000000000003", "user_id": "u1", "app_id": "a1",
         "content": "An old phone number", "metadata": {}, "state": "deleted",
         "created_at": "2023-01-01T00:00:00+00:00", "updated_at": "2023-02-01T00:00:00+00:00",
         "archived_at": None, "deleted_at": "2023-02-01T00:00:00+00:00", "category_ids": []},
    ]
    payload = {"user": {"id": "u1", "user_id": "alex", "name": "Alex", "email": None, "metadata": {},
                        "created_at": "2024-01-01T00:00:00+00:00", "updated_at": "2024-01-01T00:00:00+00:00"},
               "apps": [{"id": "a1", "owner_id": "u1", "name": "claude", "description": None, "metadata": {},
                         "is_active": True, "created_at": "2024-01-01T00:00:00+00:00",
                         "updated_at": "2024-01-01T00:00:00+00:00"}],
               "categories": cats, "memories": memories,
               "memory_categories": [{"memory_id": m["id"], "category_id": c} for m in memories
                                     for c in m["category_ids"]],
               "status_history": [], "access_controls": [],
               "export_meta": {"app_id_filter": None, "from_date": None, "to_date": None, "version": "1",
                               "generated_at": "2024-06-01T10:00:00+00:00"}}
    lines = [{"id": m["id"], "content": m["content"], "metadata": m["metadata"], "created_at": m["created_at"],
              "updated_at": m["updated_at"], "state": m["state"], "app": "claude",
              "categories": [c["name"] for c in cats if c["id"] in m["category_ids"]]}
             for m in memories]
    path = root / "memories_export_alex.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("memories.json", json.dumps(payload, indent=2))
        z.writestr("memories.jsonl.gz", gzip.compress("".join(json.dumps(x) + "\n" for x in lines).encode()))
    return path


def write_mem0_get_all(root: Path) -> Path:
    """What Mem0's ``get_all()`` returns, saved as JSON."""
    root.mkdir(parents=True, exist_ok=True)
    data = {"results": [
        {"id": "f1e2d3c4-1111-4222-8333-444455556666", "memory": "Training for the Lisbon half marathon in October",
         "hash": "5b0f8a7e", "metadata": {"source": "onboarding"}, "categories": ["sports", "goals"],
         "created_at": "2024-05-20T07:30:00-07:00", "updated_at": "2024-05-21T07:30:00-07:00", "user_id": "alex"},
    ]}
    path = root / "mem0-export.json"
    path.write_text(json.dumps(data, indent=2))
    return path


def write_khoj(root: Path) -> Path:
    """Khoj's "Export chats" zip (``conversations.json``) with two conversations over two days."""
    root.mkdir(parents=True, exist_ok=True)
    convs = [
        {"title": "Greenhouse heater", "agent": "Khoj", "created_at": "2024-01-20 18:02:00",
         "updated_at": "2024-01-21 08:15:00", "conversation_log": {"chat": [
             {"by": "you", "message": "Which paraffin heater did I pick for the greenhouse?",
              "created": "2024-01-20 18:02:00", "turnId": "t1"},
             {"by": "khoj", "message": "You chose the Parasene 5-day heater because it runs without power.",
              "created": "2024-01-20 18:02:09", "turnId": "t1", "context": [], "intent": {"type": "remember"}},
             {"by": "you", "message": "And how long does a tank last?", "created": "2024-01-21 08:15:00",
              "turnId": "t2"},
             {"by": "khoj", "message": "About five days on the low setting.", "created": "2024-01-21 08:15:04",
              "turnId": "t2"},
         ]}, "file_filters": []},
        {"title": "", "agent": "Gardener", "created_at": "2024-02-02 09:00:00", "updated_at": "2024-02-02 09:00:00",
         "conversation_log": {"chat": []}, "file_filters": []},
    ]
    path = root / "khoj-conversations.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("conversations.json", json.dumps(convs, indent=2))
    return path


# ------------------------------------------------------------------------------------------ Calendar (iCalendar)
_LONDON_TZ = """BEGIN:VTIMEZONE
TZID:Europe/London
X-LIC-LOCATION:Europe/London
BEGIN:DAYLIGHT
TZOFFSETFROM:+0000
TZOFFSETTO:+0100
TZNAME:BST
DTSTART:19700329T010000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:+0100
TZOFFSETTO:+0000
TZNAME:GMT
DTSTART:19701025T020000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
END:STANDARD
END:VTIMEZONE"""
_TOKYO_TZ = """BEGIN:VTIMEZONE
TZID:Asia/Tokyo
X-LIC-LOCATION:Asia/Tokyo
BEGIN:STANDARD
TZOFFSETFROM:+0900
TZOFFSETTO:+0900
TZNAME:JST
DTSTART:19700101T000000
END:STANDARD
END:VTIMEZONE"""


def calendar_anchor(now: datetime) -> date:
    """The Monday about ten weeks before ``now``: the sample calendar's events sit around it, so they stay
    inside the import's window whenever the tests run."""
    day = (now - timedelta(weeks=10)).date()
    return day - timedelta(days=day.weekday())


def calendar_times(anchor: date) -> dict[str, datetime]:
    """When each sample event starts (aware), as a calendar app shows it."""
    london, tokyo = ZoneInfo("Europe/London"), ZoneInfo("Asia/Tokyo")
    return {
        "osei": datetime.combine(anchor + timedelta(days=3), time(9, 30), london),
        "picnic": datetime.combine(anchor + timedelta(days=12), time(0), london),  # all day: the day in London
        "kenji": datetime.combine(anchor + timedelta(days=8), time(8, 0), tokyo),
        "physio": datetime.combine(anchor + timedelta(days=1), time(18, 0), london),  # the first Tuesday
        "physio_moved": datetime.combine(anchor + timedelta(days=16), time(19, 0), london),
        "graduation": datetime(2015, 7, 10, 14, 0, tzinfo=london),
    }


def _fold(line: str) -> str:
    """RFC 5545 folding: lines of at most 75 octets, continued with a space (as every calendar app writes)."""
    data, out = line.encode("utf-8"), list[bytes]()
    while len(data) > 75:
        cut = 75 if not out else 74
        while cut and (data[cut] & 0xC0) == 0x80:  # never inside a UTF-8 character
            cut -= 1
        out.append(data[:cut])
        data = data[cut:]
    out.append(data)
    return "\r\n ".join(part.decode("utf-8") for part in out)


def _ics_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def _stamp(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _local(dt: datetime) -> str:
    return dt.strftime("%Y%m%dT%H%M%S")


def _vevent(uid: str, summary: str, lines: Sequence[str], *, location: str = "", description: str = "",
            status: str = "CONFIRMED") -> list[str]:
    out = ["BEGIN:VEVENT", *lines, "DTSTAMP:20251201T090000Z", f"UID:{uid}", "CREATED:20240101T090000Z"]
    if description:
        out.append(f"DESCRIPTION:{_ics_escape(description)}")
    out += ["LAST-MODIFIED:20240102T090000Z", f"LOCATION:{_ics_escape(location)}", "SEQUENCE:0",
            f"STATUS:{status}", f"SUMMARY:{_ics_escape(summary)}", "TRANSP:OPAQUE", "END:VEVENT"]
    return out


def calendar_ics(anchor: date) -> str:
    """One calendar as Google Calendar exports it (Settings > Import & export > Export): CRLF, folded lines,
    the calendar's zone in X-WR-TIMEZONE and a VTIMEZONE for each zone used, one-off events in UTC, a weekly
    series in local time with one occurrence moved and two cancelled (an EXDATE, and a cancelled instance),
    an all-day event, an event set in Tokyo, a yearly birthday since 1990, a cancelled dinner and an event
    from 2015."""
    t = calendar_times(anchor)
    sam = "ORGANIZER;CN=Sam Rivera:mailto:sam.rivera@example.org"
    physio, moved = t["physio"], t["physio_moved"]
    week = timedelta(weeks=1)
    events: list[str] = []
    events += _vevent(
        "5q1m0osei7c2r9k3j4h8g6f2d1@google.com", "Check-up with Dr. Osei",
        [f"DTSTART:{_stamp(t['osei'])}", f"DTEND:{_stamp(t['osei'] + timedelta(minutes=45))}", sam,
         "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Dr. Ama Osei;X-NUM-GUESTS=0:"
         "mailto:ama.osei@marylebone-dental.example",
         "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=ACCEPTED;CN=Sam Rivera;X-NUM-GUESTS=0:"
         "mailto:sam.rivera@example.org"],
        location="Marylebone Dental Practice, 14 Harley Street, London W1G 9PQ, UK",
        description="Check-up and the crown on the lower left molar.<br>Bring the X-ray from March; ask "
                    "about a <b>night guard</b>.")
    events += _vevent(
        "2b7d4picnic0a1e5f9c3@google.com", "Lena's birthday picnic",
        [f"DTSTART;VALUE=DATE:{t['picnic']:%Y%m%d}", f"DTEND;VALUE=DATE:{t['picnic'] + timedelta(days=1):%Y%m%d}"],
        location="Primrose Hill, London", description="Bring the lemon cake and the blue blanket.")
    events += _vevent(
        "8c3e1kenji5d7f2a9b4@google.com", "Call with Kenji about the Kyoto print run",
        [f"DTSTART;TZID=Asia/Tokyo:{_local(t['kenji'])}",
         f"DTEND;TZID=Asia/Tokyo:{_local(t['kenji'] + timedelta(minutes=30))}", sam,
         "ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;CN=Kenji Watanabe:"
         "mailto:kenji@kyoto-press.example"],
        location="https://meet.example.org/kyoto-print", description="Paper stock for the 300 copies: washi or "
                                                                     "recycled cotton.")
    series = "4f6a2physio8e1c7d3b5@google.com"
    events += _vevent(
        series, "Physio with Marta",
        [f"DTSTART;TZID=Europe/London:{_local(physio)}",
         f"DTEND;TZID=Europe/London:{_local(physio + timedelta(minutes=45))}",
         "RRULE:FREQ=WEEKLY;WKST=MO;COUNT=8;BYDAY=TU",
         f"EXDATE;TZID=Europe/London:{_local(physio + 4 * week)}"],
        location="Islington Physio Hub, 3 Upper Street, London", description="Knee exercises: ten squats "
                                                                            "against the wall.")
    events += _vevent(
        series, "Physio with Marta",
        [f"DTSTART;TZID=Europe/London:{_local(moved)}",
         f"DTEND;TZID=Europe/London:{_local(moved + timedelta(minutes=45))}",
         f"RECURRENCE-ID;TZID=Europe/London:{_local(physio + 2 * week)}"],
        location="Camden Physio Hub, 12 Parkway, London", description="Moved to Wednesday: Marta is at a course "
                                                                    "on Tuesday.")
    events += _vevent(
        series, "Physio with Marta",
        [f"DTSTART;TZID=Europe/London:{_local(physio + 5 * week)}",
         f"DTEND;TZID=Europe/London:{_local(physio + 5 * week + timedelta(minutes=45))}",
         f"RECURRENCE-ID;TZID=Europe/London:{_local(physio + 5 * week)}"],
        location="Islington Physio Hub, 3 Upper Street, London", status="CANCELLED")
    events += _vevent(
        "1a9mumbirthday3c5e7@google.com", "Mum's birthday",
        ["DTSTART;VALUE=DATE:19900417", "DTEND;VALUE=DATE:19900418", "RRULE:FREQ=YEARLY"],
        description="Call her in the morning; she likes freesias.")
    events += _vevent(
        "6d2dinner4b8a1c0e@google.com", "Dinner at Ottolenghi",
        [f"DTSTART:{_stamp(t['osei'] + timedelta(days=2, hours=10))}",
         f"DTEND:{_stamp(t['osei'] + timedelta(days=2, hours=12))}", sam],
        location="Ottolenghi Islington", status="CANCELLED")
    events += _vevent(
        "0e5graduation9f3b2a7@google.com", "Graduation ceremony",
        [f"DTSTART:{_stamp(t['graduation'])}", f"DTEND:{_stamp(t['graduation'] + timedelta(hours=3))}"],
        location="Senate House, Malet Street, London", description="Gown collected at 12:30 from the Crush Hall.")
    head = ["BEGIN:VCALENDAR", "PRODID:-//Google Inc//Google Calendar 70.9054//EN", "VERSION:2.0",
            "CALSCALE:GREGORIAN", "METHOD:PUBLISH", "X-WR-CALNAME:sam.rivera@example.org",
            "X-WR-TIMEZONE:Europe/London", *_LONDON_TZ.split("\n"), *_TOKYO_TZ.split("\n")]
    return "".join(_fold(line) + "\r\n" for line in [*head, *events, "END:VCALENDAR"])


def write_calendar(root: Path, now: datetime) -> Path:
    """Google Calendar's export: a zip holding one ``.ics`` per calendar (here one)."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / "calendar-sam.rivera@example.org.ical.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("sam.rivera@example.org.ics", calendar_ics(calendar_anchor(now)))
    return path
