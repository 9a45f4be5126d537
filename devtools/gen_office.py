"""Generate office documents for the "other formats" extractor tests (no fixtures committed).

Each file is written by the library a real user's software would produce it with
(python-docx, python-pptx, openpyxl, pandoc, Python's email package), and carries
sentences that occur nowhere else, so a test can check that exactly those words survive.
"""

from __future__ import annotations

import csv
import io
import os
import re
import tempfile
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docx.text.paragraph import Paragraph

# --- docx / odt ---------------------------------------------------------------------------------
DOC_TITLE = "Otter Survey of the Lower Wensum"
DOC_AUTHOR = "Ada Okonkwo"
DOC_CREATED = datetime(2023, 4, 5, 6, 7, 8, tzinfo=UTC)
DOC_INTRO = "The river survey counted seventeen otters between the old mill and the railway bridge."
DOC_SECTION_1 = "Equipment"
DOC_SECTION_1_TEXT = "We replaced the cracked hydrophone with a spare borrowed from the marine biology lab."
DOC_LIST = ("Chest waders in three sizes", "Waterproof headlamps with red filters", "Laminated tally sheets")
DOC_SECTION_2 = "Budget and invoices"
DOC_SECTION_2_TEXT = "The cost of the night counts stayed below the grant, mostly thanks to volunteer drivers."
DOC_TABLE = (("Item", "Invoice", "Cost"), ("Hydrophone", "INV-8391", "420 EUR"), ("Headlamps", "INV-8402", "96 EUR"))
DOC_SUBSECTION = "Fuel claims"
DOC_SUBSECTION_TEXT = "Volunteers claimed fuel at thirty cents per kilometre, paid out every second Friday."


def make_docx() -> bytes:
    """A report: a title heading, two sections (one with a subsection), a bullet list, a table."""
    import docx

    d = docx.Document()
    d.core_properties.title = DOC_TITLE
    d.core_properties.author = DOC_AUTHOR
    d.core_properties.created = DOC_CREATED.replace(tzinfo=None)  # stored as UTC ("...Z")
    d.add_heading(DOC_TITLE, level=1)
    d.add_paragraph(DOC_INTRO)
    d.add_heading(DOC_SECTION_1, level=2)
    d.add_paragraph(DOC_SECTION_1_TEXT)
    for item in DOC_LIST:
        d.add_paragraph(item, style="List Bullet")
    d.add_page_break()
    heading = d.add_heading(DOC_SECTION_2, level=2)
    _mark_rendered_page_break(heading)
    d.add_paragraph(DOC_SECTION_2_TEXT)
    table = d.add_table(rows=len(DOC_TABLE), cols=len(DOC_TABLE[0]))
    for r, row in enumerate(DOC_TABLE):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    d.add_heading(DOC_SUBSECTION, level=3)
    d.add_paragraph(DOC_SUBSECTION_TEXT)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _mark_rendered_page_break(paragraph: Paragraph) -> None:
    """Record that a page starts here, as Word does (``w:lastRenderedPageBreak``) when it saves.

    python-docx never lays pages out; Word writes this marker at each page start it rendered,
    and it is what page numbers of a .docx come from.
    """
    from docx.oxml import OxmlElement

    paragraph.runs[0]._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))


def make_empty_docx() -> bytes:
    """A valid .docx with no text at all (what a user gets by saving a blank document)."""
    import docx

    buf = io.BytesIO()
    docx.Document().save(buf)
    return buf.getvalue()


def make_corrupt_docx() -> bytes:
    """The first half of a real .docx: an interrupted download."""
    raw = make_docx()
    return raw[: len(raw) // 2]


def make_encrypted_docx(password: str = "otter") -> bytes:
    """A real password-protected .docx (Word wraps it in an OLE container, not a zip)."""
    from msoffcrypto.format.ooxml import OOXMLFile

    plain = io.BytesIO(make_docx())
    out = io.BytesIO()
    OOXMLFile(plain).encrypt(password, out)
    return out.getvalue()


def make_odt() -> bytes:
    """The same report as an OpenDocument text written by pandoc, with a fixed creation date.

    Pandoc stamps ``meta:creation-date`` with the current time; it is set to DOC_CREATED the
    way LibreOffice records when a document was first saved.
    """
    raw = _pandoc(_report_markdown(), "odt")
    stamp = DOC_CREATED.strftime("%Y-%m-%dT%H:%M:%S.123456789")  # LibreOffice writes nanoseconds
    return _rewrite_zip(raw, "meta.xml", lambda xml: re.sub(
        rb"<meta:creation-date>[^<]*</meta:creation-date>",
        f"<meta:creation-date>{stamp}</meta:creation-date>".encode(), xml))


def _rewrite_zip(raw: bytes, member: str, change: Callable[[bytes], bytes]) -> bytes:
    """Copy a zip container with one member changed (``mimetype`` stays first and stored)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == member:
                data = change(data)
            dst.writestr(info, data)
    return out.getvalue()


def _report_markdown() -> str:
    rows = "\n".join("| " + " | ".join(r) + " |" for r in DOC_TABLE[1:])
    items = "\n".join(f"- {i}" for i in DOC_LIST)
    return f"""---
title: "{DOC_TITLE}"
author: "{DOC_AUTHOR}"
date: "{DOC_CREATED.date().isoformat()}"
---

# {DOC_TITLE}

{DOC_INTRO}

## {DOC_SECTION_1}

{DOC_SECTION_1_TEXT}

{items}

## {DOC_SECTION_2}

{DOC_SECTION_2_TEXT}

| {" | ".join(DOC_TABLE[0])} |
|---|---|---|
{rows}

### {DOC_SUBSECTION}

{DOC_SUBSECTION_TEXT}
"""


def _pandoc(markdown: str, fmt: str, extra: list[str] | None = None) -> bytes:
    import pypandoc

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, f"out.{fmt}")
        pypandoc.convert_text(markdown, fmt, format="markdown", outputfile=out,
                              extra_args=["--standalone", *(extra or [])])
        with open(out, "rb") as f:
            return f.read()


# --- pptx ---------------------------------------------------------------------------------------
SLIDES = (
    ("Harbour Ferry Timetable", "The first ferry leaves the north pier at 05:40 on weekdays.",
     "Remind the audience that Sunday service starts later."),
    ("Winter Changes", "From November the island crossing stops at the lighthouse jetty only on request.",
     "Mention the fog horn test on the first Monday."),
    ("Ticket Prices", "A return ticket for cyclists costs the same as a foot passenger ticket.",
     "The price list was approved by the harbour board."),
)
PPTX_TITLE = "Ferry Briefing 2024"
PPTX_AUTHOR = "Tomasz Nowak"
PPTX_CREATED = datetime(2024, 1, 15, 9, 30, 0, tzinfo=UTC)


def make_pptx() -> bytes:
    """Three slides, each with a title, a distinct body sentence and speaker notes."""
    from pptx import Presentation

    prs = Presentation()
    prs.core_properties.title = PPTX_TITLE
    prs.core_properties.author = PPTX_AUTHOR
    prs.core_properties.created = PPTX_CREATED.replace(tzinfo=None)
    layout = prs.slide_layouts[1]  # "Title and Content"
    for title, body, notes in SLIDES:
        slide = prs.slides.add_slide(layout)
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = body
        slide.notes_slide.notes_text_frame.text = notes
    buf = io.BytesIO()
    prs.save(buf)
    return buf.getvalue()


# --- xlsx ---------------------------------------------------------------------------------------
SHEET_INVOICES = "Invoices"
SHEET_SUPPLIERS = "Suppliers"
INVOICE_ROWS = (("Invoice", "Supplier", "Amount", "Status"),
                ("INV-8391", "Wensum Acoustics", 420, "paid"),
                ("INV-8402", "Brightbeam Lamps", 96, "overdue"),
                ("INV-8417", "Riverside Garage", 58.5, "disputed"))
SUPPLIER_ROWS = (("Supplier", "Contact", "City"),
                 ("Wensum Acoustics", "Priya Raman", "Norwich"),
                 ("Brightbeam Lamps", "Jonas Eklund", "Gothenburg"))
XLSX_TITLE = "Field Budget Ledger"
XLSX_AUTHOR = "Mira Castellanos"
XLSX_CREATED = datetime(2022, 11, 30, 17, 45, 0, tzinfo=UTC)


def make_xlsx() -> bytes:
    """Two sheets, each with a header row; one cell holds the identifier INV-8391."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = SHEET_INVOICES
    for row in INVOICE_ROWS:
        ws.append(list(row))
    ws2 = wb.create_sheet(SHEET_SUPPLIERS)
    for supplier in SUPPLIER_ROWS:
        ws2.append(list(supplier))
    wb.properties.title = XLSX_TITLE
    wb.properties.creator = XLSX_AUTHOR
    wb.properties.created = XLSX_CREATED.replace(tzinfo=None)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


# --- xls (Excel 97-2003, read without LibreOffice) ---------------------------------------------
XLS_SHEET = "Meter Readings"
XLS_ROWS = (("Meter", "Reading", "Note"), ("GAS-7734", "18234", "boiler serviced in March"),
            ("WAT-1190", "902", "leak under the sink fixed"))


def make_xls() -> bytes:
    """An old-format .xls workbook (OLE container, BIFF8) written by xlwt."""
    import xlwt

    wb = xlwt.Workbook()
    ws = wb.add_sheet(XLS_SHEET)
    for r, row in enumerate(XLS_ROWS):
        for c, value in enumerate(row):
            ws.write(r, c, value)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


# --- csv ----------------------------------------------------------------------------------------
CSV_HEADER = ("Date", "Station", "Reading", "Observer")


def csv_rows(n: int = 70) -> list[tuple[str, str, str, str]]:
    """``n`` data rows; row i has the unique station code ``ST-{1000+i}``."""
    observers = ("Zoë Fontaine", "José Martín", "Renée Blanc")
    return [(f"2023-05-{1 + i % 28:02d}", f"ST-{1000 + i}", f"{12 + i * 0.25:.2f}", observers[i % 3])
            for i in range(n)]


def make_csv(n: int = 70, encoding: str = "utf-8") -> bytes:
    """A spreadsheet export with a header row and accented names (cp1252 for old Excel)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(CSV_HEADER)
    w.writerows(csv_rows(n))
    return buf.getvalue().encode(encoding)


# --- epub ---------------------------------------------------------------------------------------
EPUB_TITLE = "Almanac of the Lighthouse Keeper"
EPUB_AUTHOR = "Ingrid Solheim"
EPUB_DATE = "2021-09-14"
EPUB_CH1 = "Winding the Clockwork"
EPUB_CH1_TEXT = "Every four hours the keeper climbed ninety-two steps to wind the weights of the lens."
EPUB_CH2 = "Fog Signals"
EPUB_CH2_TEXT = "In thick fog the diaphone sounded two blasts every sixty seconds until the wind turned."


def make_epub() -> bytes:
    """A two-chapter book with Dublin Core title, creator and date (written by pandoc)."""
    md = f"""---
title: "{EPUB_TITLE}"
author: "{EPUB_AUTHOR}"
date: "{EPUB_DATE}"
lang: en
---

# {EPUB_CH1}

{EPUB_CH1_TEXT}

# {EPUB_CH2}

{EPUB_CH2_TEXT}
"""
    return _pandoc(md, "epub")


# --- rtf (pandoc writes it; no LibreOffice needed to read it) -----------------------------------
RTF_TEXT = "The allotment committee agreed to share the rainwater butts between plots nine and ten."
RTF_HEADING = "Allotment Minutes"


def make_rtf() -> bytes:
    """A short RTF memo with one heading and one paragraph."""
    return _pandoc(f"# {RTF_HEADING}\n\n{RTF_TEXT}\n", "rtf")


# --- rst / org (text formats, written by hand) --------------------------------------------------
RST_TITLE = "Beekeeping Log"
RST_SECTION = "Spring Inspection"
RST_TEXT = "The second hive had capped queen cells on three frames, so we split it before swarming."
RST_ITEMS = ("Check the varroa board", "Replace the mouse guard")
RST_DATE = "2022-06-02"


def make_rst() -> bytes:
    """A reStructuredText note with a title, a section, a paragraph and a bullet list."""
    items = "\n".join(f"* {i}" for i in RST_ITEMS)
    return f"""{"=" * len(RST_TITLE)}
{RST_TITLE}
{"=" * len(RST_TITLE)}

:Author: Lena Fischer
:Date: {RST_DATE}

{RST_SECTION}
{"-" * len(RST_SECTION)}

{RST_TEXT}

{items}
""".encode()


ORG_TITLE = "Sourdough Experiments"
ORG_SECTION = "Hydration trials"
ORG_TEXT = "At seventy-eight percent hydration the rye loaf spread flat but had the best crumb so far."
ORG_ITEMS = ("Try a colder retard overnight", "Buy a second banneton")
ORG_DATE = "2021-05-09"


def make_org() -> bytes:
    """An Emacs org-mode file with a title keyword, a heading tree and a list."""
    items = "\n".join(f"- {i}" for i in ORG_ITEMS)
    return f"""#+TITLE: {ORG_TITLE}
#+DATE: <{ORG_DATE} Sun>

* {ORG_TITLE}
** {ORG_SECTION}
{ORG_TEXT}

{items}
""".encode()


# --- eml ----------------------------------------------------------------------------------------
EML_SUBJECT = "Boathouse roof repair quote"
EML_FROM = "Hannah Birch <hannah.birch@example.org>"
EML_TO = "Rowing Club Committee <committee@example.org>"
EML_DATE = datetime(2023, 3, 14, 16, 20, 5, tzinfo=UTC)
EML_BODY = ("Hello all,\n\nThe roofer quoted 2,300 pounds to replace the torn felt above the boat racks.\n\n"
            "He can start on the twentieth if we confirm by Friday.\n\nHannah\n")
EML_SENTENCE_1 = "The roofer quoted 2,300 pounds to replace the torn felt above the boat racks."
EML_SENTENCE_2 = "He can start on the twentieth if we confirm by Friday."
EML_ATTACHMENT = "roof-quote.pdf"


def make_eml() -> bytes:
    """A plain-text e-mail with From/To/Date headers and one PDF attachment."""
    msg = EmailMessage()
    msg["Subject"] = EML_SUBJECT
    msg["From"] = EML_FROM
    msg["To"] = EML_TO
    msg["Date"] = format_datetime(EML_DATE)
    msg["Message-ID"] = "<roof-quote-1@example.org>"
    msg.set_content(EML_BODY)
    msg.add_attachment(b"%PDF-1.4\n% not a real quote\n", maintype="application", subtype="pdf",
                       filename=EML_ATTACHMENT)
    return bytes(msg)


def make_not_a_zip(name_hint: str = "docx") -> bytes:
    """Random bytes that are neither zip nor OLE (a mislabelled file)."""
    return f"this is not a {name_hint} file, just some text someone renamed\n".encode() * 4


def zip_names(raw: bytes) -> list[str]:
    """The members of a zip container (used to sanity-check generated files)."""
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        return z.namelist()


def make_docx_bomb(expanded_bytes: int = 1 << 30) -> bytes:
    """A real .docx whose body XML inflates to ``expanded_bytes`` (spaces inside a paragraph): a zip bomb.

    Deflate compresses runs of one byte about 1000:1, so 1 GiB makes a file of about 1 MB; the
    spaces are streamed into the archive, never held in memory.
    """
    head, tail = b'<w:p><w:r><w:t xml:space="preserve">', b"</w:t></w:r></w:p>"
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(make_docx())) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename != "word/document.xml":
                dst.writestr(info, data)
                continue
            before, _, after = data.partition(b"<w:body>")
            member = zipfile.ZipInfo(info.filename, info.date_time)
            member.compress_type = zipfile.ZIP_DEFLATED
            with dst.open(member, "w", force_zip64=True) as fh:
                fh.write(before + b"<w:body>" + head)
                left, block = expanded_bytes - len(data) - len(head) - len(tail), b" " * (1 << 20)
                while left > 0:
                    fh.write(block[:left])
                    left -= len(block)
                fh.write(tail + after)
    return out.getvalue()


def make_docx_with_empty_paragraphs(n: int = 20_000) -> bytes:
    """A small .docx holding ``n`` empty paragraphs (a few KB: they compress to almost nothing)."""
    return _rewrite_zip(make_docx(), "word/document.xml",
                        lambda xml: xml.replace(b"<w:body>", b"<w:body>" + b"<w:p/>" * n, 1))
