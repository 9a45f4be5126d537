"""Office formats: words, heading paths, slides, sheets, tables, properties, refusals, offline spaCy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from devtools import gen_office as g
from secondbrain.errors import PermanentError
from services.extractors.dates import iso_datetime
from services.extractors.document import Block, Extracted, ExtractionContext, assemble
from services.extractors.office import (
    SPACY_MODEL,
    OfficeExtractor,
    configure_unstructured_offline,
    supported,
)
from tests.paths import REPO as ROOT


@pytest.fixture(scope="module")
def office() -> OfficeExtractor:
    started = time.perf_counter()
    extractor = OfficeExtractor()
    print(f"\nOfficeExtractor start-up (spaCy model, partitioners, language profiles): "
          f"{time.perf_counter() - started:.2f} s")
    return extractor


def run(office: OfficeExtractor, raw: bytes, filename: str, content_type: str = "application/octet-stream"
        ) -> Extracted:
    return office.extract(raw, ExtractionContext(content_type=content_type, filename=filename))


def full_text(doc: Extracted) -> str:
    return assemble(doc.blocks)[1]


def block_with(doc: Extracted, words: str) -> Block:
    hits = [b for b in doc.blocks if words in b.text]
    assert len(hits) == 1, f"{words!r} found in {len(hits)} blocks"
    return hits[0]


def refusal(office: OfficeExtractor, raw: bytes, filename: str, content_type: str = "application/octet-stream"
            ) -> str:
    with pytest.raises(PermanentError) as info:
        run(office, raw, filename, content_type)
    return info.value.reason


# --------------------------------------------------------------------------- docx / odt


@pytest.fixture(scope="module")
def docx_doc(office: OfficeExtractor) -> Extracted:
    return run(office, g.make_docx(), "survey.docx",
               "application/vnd.openxmlformats-officedocument.wordprocessingml.document")


def test_docx_text_headings_list_and_table(docx_doc: Extracted) -> None:
    text = full_text(docx_doc)
    for sentence in (g.DOC_INTRO, g.DOC_SECTION_1_TEXT, g.DOC_SECTION_2_TEXT, g.DOC_SUBSECTION_TEXT, *g.DOC_LIST):
        assert sentence in text
    assert block_with(docx_doc, g.DOC_INTRO).heading_path == (g.DOC_TITLE,)
    assert block_with(docx_doc, g.DOC_SECTION_1_TEXT).heading_path == (g.DOC_TITLE, g.DOC_SECTION_1)
    assert block_with(docx_doc, g.DOC_SUBSECTION_TEXT).heading_path == (g.DOC_TITLE, g.DOC_SECTION_2,
                                                                         g.DOC_SUBSECTION)
    heading = [b for b in docx_doc.blocks if b.kind == "heading" and b.text == g.DOC_SECTION_2]
    assert len(heading) == 1 and heading[0].attributes["level"] == "2"
    lst = block_with(docx_doc, g.DOC_LIST[0])
    assert lst.kind == "list" and lst.text == "\n".join(f"- {item}" for item in g.DOC_LIST)
    table = block_with(docx_doc, "INV-8391")
    assert table.kind == "table"
    assert table.text.split("\n") == [" | ".join(row) for row in g.DOC_TABLE]
    assert table.heading_path == (g.DOC_TITLE, g.DOC_SECTION_2)


def test_docx_properties_and_pages(docx_doc: Extracted) -> None:
    assert docx_doc.title == g.DOC_TITLE
    assert docx_doc.stated_time == g.DOC_CREATED
    assert docx_doc.stated_time_source == "file_metadata"
    assert docx_doc.metadata["author"] == g.DOC_AUTHOR
    assert docx_doc.language == "en"
    # Page 2 starts at the "Budget" heading, where Word recorded a rendered page break.
    assert block_with(docx_doc, g.DOC_INTRO).page == 1
    assert block_with(docx_doc, g.DOC_SECTION_1_TEXT).page == 1
    assert block_with(docx_doc, g.DOC_SECTION_2_TEXT).page == 2
    assert block_with(docx_doc, "INV-8391").page == 2
    assert docx_doc.metadata["pages"] == "2"


def test_odt_text_headings_and_properties(office: OfficeExtractor) -> None:
    doc = run(office, g.make_odt(), "survey.odt", "application/vnd.oasis.opendocument.text")
    text = full_text(doc)
    for sentence in (g.DOC_INTRO, g.DOC_SECTION_1_TEXT, g.DOC_SECTION_2_TEXT, *g.DOC_LIST):
        assert sentence in text
    assert block_with(doc, g.DOC_SUBSECTION_TEXT).heading_path == (g.DOC_TITLE, g.DOC_SECTION_2, g.DOC_SUBSECTION)
    assert "Hydrophone | INV-8391 | 420 EUR" in block_with(doc, "INV-8391").text
    assert doc.title == g.DOC_TITLE
    assert doc.metadata["author"] == g.DOC_AUTHOR
    assert doc.stated_time == g.DOC_CREATED.replace(microsecond=123456)


# --------------------------------------------------------------------------- pptx


def test_pptx_slides_titles_and_notes(office: OfficeExtractor) -> None:
    doc = run(office, g.make_pptx(), "ferry.pptx")
    for n, (title, body, notes) in enumerate(g.SLIDES, start=1):
        b = block_with(doc, body)
        assert (b.page, b.attributes["slide"], b.heading_path) == (n, str(n), (title,))
        h = block_with(doc, title)
        assert (h.kind, h.page) == ("heading", n)
        note = block_with(doc, notes)
        assert (note.page, note.attributes["role"], note.heading_path) == (n, "notes", (title,))
        assert doc.blocks.index(note) > doc.blocks.index(b)  # notes follow the slide's own text
    assert [b.page for b in doc.blocks] == sorted(b.page or 0 for b in doc.blocks)
    assert doc.title == g.PPTX_TITLE
    assert doc.stated_time == g.PPTX_CREATED
    assert doc.metadata["author"] == g.PPTX_AUTHOR
    assert doc.metadata["slides"] == "3"


# --------------------------------------------------------------------------- spreadsheets


def test_xlsx_sheets_become_heading_paths_and_cells_are_searchable(office: OfficeExtractor) -> None:
    doc = run(office, g.make_xlsx(), "ledger.xlsx")
    inv = block_with(doc, "INV-8391")
    assert inv.kind == "table"
    assert (inv.heading_path, inv.page, inv.attributes["sheet"]) == ((g.SHEET_INVOICES,), 1, g.SHEET_INVOICES)
    assert inv.text.split("\n")[0] == "Invoice | Supplier | Amount | Status"
    assert "INV-8391 | Wensum Acoustics | 420 | paid" in inv.text
    sup = block_with(doc, "Priya Raman")
    assert (sup.heading_path, sup.page) == ((g.SHEET_SUPPLIERS,), 2)
    headings = [(b.text, b.page) for b in doc.blocks if b.kind == "heading"]
    assert headings == [(g.SHEET_INVOICES, 1), (g.SHEET_SUPPLIERS, 2)]
    assert doc.title == g.XLSX_TITLE
    assert doc.stated_time == g.XLSX_CREATED
    assert doc.metadata["sheets"] == f"{g.SHEET_INVOICES}, {g.SHEET_SUPPLIERS}"


def test_old_xls_is_read_without_libreoffice(office: OfficeExtractor) -> None:
    doc = run(office, g.make_xls(), "meters.xls", "application/vnd.ms-excel")
    row = block_with(doc, "GAS-7734")
    assert row.heading_path == (g.XLS_SHEET,)
    assert "GAS-7734 | 18234 | boiler serviced in March" in row.text
    assert doc.metadata["format"] == "xls"


def test_csv_is_split_into_self_describing_tables(office: OfficeExtractor) -> None:
    doc = run(office, g.make_csv(70), "readings.csv", "text/csv")
    header = " | ".join(g.CSV_HEADER)
    assert [b.kind for b in doc.blocks] == ["table"] * 3
    assert [b.attributes["rows"] for b in doc.blocks] == ["1-30", "31-60", "61-70"]
    for b in doc.blocks:
        assert b.text.split("\n")[0] == header  # every chunk says what its columns are
    rows = [line for b in doc.blocks for line in b.text.split("\n")[1:]]
    assert rows == [" | ".join(r) for r in g.csv_rows(70)]
    assert block_with(doc, "ST-1042").attributes["rows"] == "31-60"
    assert doc.metadata["columns"] == header


@pytest.mark.parametrize("encoding", ["cp1252", "utf-16"])
def test_csv_in_old_encodings_reads_the_same(office: OfficeExtractor, encoding: str) -> None:
    raw = g.make_csv(12, encoding=encoding)
    assert b"Zo\xc3\xab" not in raw  # really not UTF-8
    doc = run(office, raw, "readings.csv", "text/csv")
    assert doc.blocks[0].text == run(office, g.make_csv(12), "readings.csv", "text/csv").blocks[0].text
    assert "ST-1001 | 12.25 | José Martín" in doc.blocks[0].text


# --------------------------------------------------------------------------- epub, rst, org, rtf, eml


def test_epub_chapters_and_dublin_core(office: OfficeExtractor) -> None:
    doc = run(office, g.make_epub(), "almanac.epub", "application/epub+zip")
    assert block_with(doc, g.EPUB_CH1_TEXT).heading_path == (g.EPUB_CH1,)
    assert block_with(doc, g.EPUB_CH2_TEXT).heading_path == (g.EPUB_CH2,)
    assert doc.title == g.EPUB_TITLE
    assert doc.metadata["author"] == g.EPUB_AUTHOR
    assert doc.stated_time == datetime(2021, 9, 14, tzinfo=UTC)
    assert doc.language == "en"


def test_rst_and_org(office: OfficeExtractor) -> None:
    rst = run(office, g.make_rst(), "bees.rst", "text/x-rst")
    assert block_with(rst, g.RST_TEXT).heading_path == (g.RST_TITLE, g.RST_SECTION)
    assert block_with(rst, g.RST_ITEMS[0]).text == "\n".join(f"- {i}" for i in g.RST_ITEMS)
    assert rst.title == g.RST_TITLE
    assert rst.stated_time == datetime(2022, 6, 2, tzinfo=UTC)
    org = run(office, g.make_org(), "bread.org", "text/org")
    assert block_with(org, g.ORG_TEXT).heading_path == (g.ORG_TITLE, g.ORG_SECTION)
    assert block_with(org, g.ORG_ITEMS[1]).kind == "list"
    assert org.title == g.ORG_TITLE
    assert org.stated_time == datetime(2021, 5, 9, tzinfo=UTC)


def test_rtf_is_read_without_libreoffice(office: OfficeExtractor) -> None:
    doc = run(office, g.make_rtf(), "minutes.rtf", "application/rtf")
    assert block_with(doc, g.RTF_TEXT).heading_path == (g.RTF_HEADING,)


def test_eml_subject_headers_date_body_and_attachment(office: OfficeExtractor) -> None:
    doc = run(office, g.make_eml(), "quote.eml", "message/rfc822")
    assert doc.title == g.EML_SUBJECT
    assert doc.stated_time == g.EML_DATE
    assert doc.metadata["from"] == g.EML_FROM
    assert doc.metadata["to"] == g.EML_TO
    assert doc.metadata["attachments"] == g.EML_ATTACHMENT
    for sentence in (g.EML_SENTENCE_1, g.EML_SENTENCE_2):
        b = block_with(doc, sentence)
        assert (b.kind, b.heading_path) == ("paragraph", (g.EML_SUBJECT,))
    head = doc.blocks[0]
    assert head.attributes["role"] == "headers"
    assert f"From: {g.EML_FROM}" in head.text and f"Attachments: {g.EML_ATTACHMENT}" in head.text
    assert "%PDF" not in full_text(doc)  # attachments are listed, not inlined


# --------------------------------------------------------------------------- format detection


@pytest.mark.parametrize(("content_type", "filename", "expected"), [
    ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", None, "docx"),
    ("application/vnd.openxmlformats-officedocument.presentationml.presentation", "x.bin", "pptx"),
    ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", None, "xlsx"),
    ("text/csv; charset=utf-8", None, "csv"), ("application/epub+zip", None, "epub"),
    ("message/rfc822", None, "eml"), ("text/x-rst", None, "rst"), ("text/org", None, "org"),
    ("text/x-org", None, "org"), ("application/vnd.oasis.opendocument.text", None, "odt"),
    ("application/octet-stream", "Report.DOCX", "docx"), ("", "notes.org", "org"),
    ("text/plain", "table.csv", "csv"), ("application/msword", None, "doc"),
    ("text/plain", "notes.txt", None), ("application/pdf", None, None), ("application/octet-stream", None, None),
])
def test_supported(content_type: str, filename: str | None, expected: str | None) -> None:
    assert supported(content_type, filename) == expected


def test_property_dates_refuse_partial_dates() -> None:
    assert iso_datetime("2021") is None and iso_datetime("2021-09") is None
    assert iso_datetime("2023-04-05T06:07:08+02:00") == datetime(2023, 4, 5, 4, 7, 8, tzinfo=UTC)


def test_a_doc_that_is_really_a_docx_is_read(office: OfficeExtractor) -> None:
    doc = run(office, g.make_docx(), "renamed.doc", "application/msword")
    assert g.DOC_INTRO in full_text(doc)


# --------------------------------------------------------------------------- bad input


def test_corrupt_docx_is_refused_as_damaged(office: OfficeExtractor) -> None:
    reason = refusal(office, g.make_corrupt_docx(), "survey.docx")
    assert reason.startswith("the .docx file is damaged")
    assert "save it again" in reason


def test_password_protected_docx_is_refused(office: OfficeExtractor) -> None:
    raw = g.make_encrypted_docx()
    assert raw.startswith(b"\xd0\xcf\x11\xe0")  # Word wraps encrypted documents in OLE
    assert refusal(office, raw, "secret.docx").startswith("the document is password-protected; open it in Word")


def test_unknown_ole_file_named_docx_is_refused(office: OfficeExtractor) -> None:
    raw = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600
    reason = refusal(office, raw, "report.docx")
    assert reason.startswith("the document is password-protected or in the old binary Office format")
    assert "save it as .docx" in reason


def test_empty_documents_are_refused(office: OfficeExtractor) -> None:
    assert refusal(office, g.make_empty_docx(), "blank.docx").startswith("no text found in the .docx file")
    import openpyxl

    buf = __import__("io").BytesIO()
    openpyxl.Workbook().save(buf)
    assert refusal(office, buf.getvalue(), "blank.xlsx").startswith("no text found in the .xlsx file")


def test_old_binary_doc_and_ppt_are_refused_with_advice(office: OfficeExtractor) -> None:
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600
    reason = refusal(office, ole, "minutes.doc", "application/msword")
    assert "needs LibreOffice" in reason and "save it as .docx" in reason
    assert "save it as .pptx" in refusal(office, ole, "deck.ppt")


@pytest.mark.parametrize(("make", "filename", "start"), [
    (lambda: g.make_not_a_zip("xlsx"), "book.xlsx", "the .xlsx file is not an Excel workbook"),
    (lambda: g.make_pptx()[:5000], "deck.pptx", "the .pptx file is damaged"),
    (lambda: g.make_epub()[:3000], "book.epub", "the .epub file is damaged"),
    (lambda: g.make_odt()[:3000], "text.odt", "the .odt file is damaged"),
    (lambda: b"\x89PNG\r\n\x1a\n" + b"\x00" * 200, "table.csv", "the file looks binary"),
    (lambda: b"just a line of words\nand another\n", "mail.eml", "the file is not an e-mail message"),
    (lambda: b"plain words, no rtf header", "memo.rtf", "the .rtf file is not an RTF document"),
    (lambda: b"", "empty.docx", "the file is empty"),
])
def test_bad_input_gets_a_human_reason(office: OfficeExtractor, make: Callable[[], bytes], filename: str,
                                       start: str) -> None:
    assert refusal(office, make(), filename).startswith(start)


def test_library_os_errors_never_escape(office: OfficeExtractor, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(fmt: str, **kwargs: object) -> list[object]:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(office.reading, "partition", broken)
    reason = refusal(office, g.make_docx(), "survey.docx")
    assert reason.startswith("the .docx file is damaged or is not really a Word document")


# --------------------------------------------------------------------------- offline spaCy work-around

_CHILD = r"""
import io, json, os, sys
sys.path.insert(0, sys.argv[1])
attempts, downloads = [], []

def no_network(event, args):  # the test machine must not decide the outcome: block and record
    if event in ("socket.getaddrinfo", "socket.connect"):
        attempts.append(f"{event} {args[0]!r}"[:120])
        raise ConnectionRefusedError("network disabled in this test")

sys.addaudithook(no_network)
for key in ("DO_NOT_TRACK", "SCARF_NO_ANALYTICS"):
    os.environ.pop(key, None)
os.environ["UNSTRUCTURED_DISABLE_NOTICE"] = "1"
raw = open(sys.argv[3], "rb").read()
result = {}
if sys.argv[2] == "configured":
    from services.extractors.office import OfficeExtractor
    from services.extractors.document import ExtractionContext
    extractor = OfficeExtractor(warm_up=False)
import unstructured.nlp.tokenize as tk

def recorded_download():
    downloads.append(tk._SPACY_MODEL_NAME)
    raise RuntimeError("unstructured tried to download its spaCy model")

tk._install_spacy_model = recorded_download
result["model"] = tk._SPACY_MODEL_NAME
try:
    if sys.argv[2] == "configured":
        result["texts"] = [b.text for path in sys.argv[3:]
                           for b in extractor.extract(open(path, "rb").read(),
                                                      ExtractionContext(content_type="", filename=path)).blocks]
        result["sentences"] = tk.sent_tokenize("The mill stood idle. Otters came back in May.")
    else:
        from unstructured.partition.docx import partition_docx
        result["texts"] = [e.text for e in partition_docx(file=io.BytesIO(raw))]
except Exception as exc:
    result["error"] = f"{type(exc).__name__}: {exc}"[:300]
result["downloads"], result["network"] = downloads, attempts
print(json.dumps(result))
"""


def test_spacy_workaround_is_needed_and_works_offline(tmp_path: Path) -> None:
    """Without the work-around unstructured reaches for the network (model download, analytics);
    with it a docx whose paragraphs need the tokenizer is extracted with no network attempt."""
    import importlib.util

    assert importlib.util.find_spec("en_core_web_sm") is None  # the model unstructured wants is absent
    path, rst = tmp_path / "survey.docx", tmp_path / "bees.rst"
    path.write_bytes(g.make_docx())
    rst.write_bytes(g.make_rst())  # through pandoc and partition_html: also offline
    env = {k: v for k, v in os.environ.items() if k not in ("DO_NOT_TRACK", "SCARF_NO_ANALYTICS")}
    procs = {mode: subprocess.Popen([sys.executable, "-c", _CHILD, str(ROOT), mode, str(path), str(rst)], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for mode in ("bare", "configured")}
    out = {}
    for mode, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr[-2000:]
        out[mode] = json.loads(stdout.strip().splitlines()[-1])

    bare, fixed = out["bare"], out["configured"]
    assert bare["model"] == "en_core_web_sm"
    assert bare["downloads"] == ["en_core_web_sm"], bare
    assert "tried to download its spaCy model" in bare["error"]
    assert bare["network"], "unstructured's import-time analytics ping should have tried the network"

    assert fixed["model"] == SPACY_MODEL
    assert "error" not in fixed, fixed
    assert fixed["downloads"] == [] and fixed["network"] == []
    assert g.DOC_INTRO in fixed["texts"] and g.DOC_SUBSECTION_TEXT in fixed["texts"] and g.RST_TEXT in fixed["texts"]
    assert fixed["sentences"] == ["The mill stood idle.", "Otters came back in May."]


def test_configure_fails_loudly_when_the_private_attribute_is_gone(office: OfficeExtractor,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from unstructured.nlp import tokenize

    assert tokenize._SPACY_MODEL_NAME == SPACY_MODEL
    assert os.environ["DO_NOT_TRACK"] and os.environ["SCARF_NO_ANALYTICS"]
    monkeypatch.delattr(tokenize, "_SPACY_MODEL_NAME")
    with pytest.raises(RuntimeError, match="_SPACY_MODEL_NAME"):
        configure_unstructured_offline()
