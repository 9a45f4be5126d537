"""What an artifact really is: bytes decide, names and declared types only confirm.

Every input is generated here by the library that writes that format (Pillow, fpdf2,
python-docx/pptx, openpyxl, pandoc, PyAV, xlwt, msoffcrypto), so the signatures checked are
the ones real files carry.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from secondbrain.errors import PermanentError
from secondbrain.sniff import AUDIO, HTML, IMAGE, OFFICE, PDF, TEXT, Resolved, resolve, sniff

pytestmark = pytest.mark.fast  # no services: in the fast lane

DOCX_CT = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PPTX_CT = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
XLSX_CT = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


# --------------------------------------------------------------------------- generators


def _image(fmt: str, **save: Any) -> bytes:
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (64, 48), "white")
    ImageDraw.Draw(im).rectangle((8, 8, 40, 30), fill="navy")
    buf = io.BytesIO()
    im.save(buf, format=fmt, **save)
    return buf.getvalue()


def _heic() -> bytes:
    import pillow_heif

    pillow_heif.register_heif_opener()
    return _image("HEIF")


def _pdf() -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text="Quarterly report: revenue grew in March.")
    return bytes(pdf.output())


def _docx() -> bytes:
    import docx

    d = docx.Document()
    d.add_heading("Trip plan", 1)
    d.add_paragraph("Train to Lyon on Friday.")
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _pptx() -> bytes:
    from pptx import Presentation

    p = Presentation()
    slide = p.slides.add_slide(p.slide_layouts[1])
    slide.shapes.title.text = "Roadmap"
    buf = io.BytesIO()
    p.save(buf)
    return buf.getvalue()


def _xlsx() -> bytes:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.append(["station", "reading"])
    ws.append(["ST-1001", 4.2])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _pandoc(fmt: str, tmp: Any) -> bytes:
    import pypandoc

    out = tmp / f"book.{fmt}"
    pypandoc.convert_text("---\ntitle: Field notes\n---\n\n# Day one\n\nWe saw otters.\n", fmt,
                          format="markdown", outputfile=str(out))
    return bytes(out.read_bytes())


def _xls() -> bytes:
    import xlwt

    wb = xlwt.Workbook()
    wb.add_sheet("Budget").write(0, 0, "rent")
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _encrypted_docx() -> bytes:
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    OOXMLFile(io.BytesIO(_docx())).encrypt("otter", out)
    return out.getvalue()


def _audio(container: str, codec: str, rate: int = 16000, options: dict[str, str] | None = None) -> bytes:
    """0.5 s of a 440 Hz tone, encoded by FFmpeg (PyAV) in memory."""
    import av

    buf = io.BytesIO()
    t = np.arange(rate // 2) / rate
    pcm = (np.sin(2 * np.pi * 440 * t) * 0.3 * 32767).astype(np.int16).reshape(1, -1)
    with av.open(buf, "w", format=container, options=options or {}) as out:
        stream: Any = out.add_stream(codec, rate=rate, layout="mono")
        frame = av.AudioFrame.from_ndarray(pcm, format="s16", layout="mono")
        frame.sample_rate = rate
        resampler = av.AudioResampler(format=stream.codec_context.format, layout="mono", rate=rate)
        for f in [*resampler.resample(frame), *resampler.resample(None), None]:
            for packet in stream.encode(f):
                out.mux(packet)
    return buf.getvalue()


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _exe() -> bytes:
    """The head of a Windows PE executable: DOS stub, PE signature, machine code."""
    dos = bytearray(b"MZ" + b"\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00" + bytes(46))
    dos[0x3C:0x40] = (0x80).to_bytes(4, "little")
    stub = bytes(dos).ljust(0x80, b"\x00")
    return stub + b"PE\x00\x00\x4c\x01\x03\x00" + bytes(range(256)) * 8


GENERATORS: dict[str, Callable[[Any], bytes]] = {
    "png": lambda _t: _image("PNG"),
    "jpeg": lambda _t: _image("JPEG", quality=80),
    "webp": lambda _t: _image("WEBP"),
    "gif": lambda _t: _image("GIF"),
    "tiff": lambda _t: _image("TIFF"),
    "bmp": lambda _t: _image("BMP"),
    "heic": lambda _t: _heic(),
    "pdf": lambda _t: _pdf(),
    "docx": lambda _t: _docx(),
    "pptx": lambda _t: _pptx(),
    "xlsx": lambda _t: _xlsx(),
    "epub": lambda t: _pandoc("epub", t),
    "odt": lambda t: _pandoc("odt", t),
    "xls": lambda _t: _xls(),
    "encrypted_docx": lambda _t: _encrypted_docx(),
    "wav": lambda _t: _audio("wav", "pcm_s16le"),
    "mp3": lambda _t: _audio("mp3", "libmp3lame"),
    "mp3_no_tag": lambda _t: _audio("mp3", "libmp3lame", options={"id3v2_version": "0"}),
    "ogg": lambda _t: _audio("ogg", "libopus", 48000),
    "flac": lambda _t: _audio("flac", "flac"),
    "m4a": lambda _t: _audio("ipod", "aac"),
    "webm": lambda _t: _audio("webm", "libopus", 48000),
    "adts": lambda _t: _audio("adts", "aac"),
    "zip": lambda _t: _zip({"photos/a.txt": b"first", "photos/b.txt": b"second"}),
    "exe": lambda _t: _exe(),
    "text": lambda _t: "# Groceries\n\n- oat milk\n- lentils\n\nCafé on the corner.\n".encode(),
    "html": lambda _t: b"<!DOCTYPE html>\n<html><head><title>Post</title></head><body><p>Hi</p></body></html>\n",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    tmp = tmp_path_factory.mktemp("sniff")
    return {name: make(tmp) for name, make in GENERATORS.items()}


def _refusal(raw: bytes, content_type: str, filename: str | None, *, is_note: bool = False) -> str:
    with pytest.raises(PermanentError) as info:
        resolve(raw, content_type, filename, is_note=is_note)
    return str(info.value)


# --------------------------------------------------------------------------- every format

FORMATS = [
    # (generated file, its usual name, sniffed kind, family, content type it is handled as)
    ("png", "scan.png", "png", IMAGE, "image/png"),
    ("jpeg", "photo.jpg", "jpeg", IMAGE, "image/jpeg"),
    ("webp", "sticker.webp", "webp", IMAGE, "image/webp"),
    ("gif", "anim.gif", "gif", IMAGE, "image/gif"),
    ("tiff", "fax.tiff", "tiff", IMAGE, "image/tiff"),
    ("bmp", "paint.bmp", "bmp", IMAGE, "image/bmp"),
    ("heic", "IMG_0001.heic", "heic", IMAGE, "image/heic"),
    ("pdf", "report.pdf", "pdf", PDF, "application/pdf"),
    ("docx", "plan.docx", "docx", OFFICE, DOCX_CT),
    ("pptx", "deck.pptx", "pptx", OFFICE, PPTX_CT),
    ("xlsx", "sheet.xlsx", "xlsx", OFFICE, XLSX_CT),
    ("epub", "book.epub", "epub", OFFICE, "application/epub+zip"),
    ("odt", "letter.odt", "odt", OFFICE, "application/vnd.oasis.opendocument.text"),
    ("xls", "budget.xls", "ole", OFFICE, "application/vnd.ms-excel"),
    ("wav", "memo.wav", "wav", AUDIO, "audio/wav"),
    ("mp3", "talk.mp3", "mp3", AUDIO, "audio/mpeg"),
    ("mp3_no_tag", "talk.mp3", "mp3", AUDIO, "audio/mpeg"),
    ("ogg", "voice.ogg", "ogg", AUDIO, "audio/ogg"),
    ("flac", "song.flac", "flac", AUDIO, "audio/flac"),
    ("m4a", "memo.m4a", "mp4", AUDIO, "audio/mp4"),
    ("webm", "call.webm", "webm", AUDIO, "audio/webm"),
    ("text", "groceries.txt", "text", TEXT, "text/plain"),
    ("html", "post.html", "html", HTML, "text/html"),
]
NO_NAME_CT = {"xls": None}  # an OLE file without a name is refused (test below)


@pytest.mark.parametrize(("name", "filename", "kind", "family", "ctype"), FORMATS, ids=[f[0] for f in FORMATS])
def test_every_format_is_recognised_with_its_family(files: dict[str, bytes], name: str, filename: str, kind: str,
                                                    family: str, ctype: str) -> None:
    raw = files[name]
    assert sniff(raw) == kind
    assert resolve(raw, "application/octet-stream", filename) == Resolved(family, ctype, kind)
    # the producer's exact type for the same file agrees
    assert resolve(raw, ctype, filename).family == family


@pytest.mark.parametrize(("name", "filename", "kind", "family", "ctype"),
                         [f for f in FORMATS if f[0] != "xls"], ids=[f[0] for f in FORMATS if f[0] != "xls"])
@pytest.mark.parametrize("declared", ["application/octet-stream", "", "binary/octet-stream"])
def test_generic_type_and_no_name_are_resolved_by_the_bytes(files: dict[str, bytes], name: str, filename: str,
                                                            kind: str, family: str, ctype: str, declared: str) -> None:
    assert resolve(files[name], declared, None) == Resolved(family, ctype, kind)


def test_the_generated_inputs_are_what_they_claim(files: dict[str, bytes]) -> None:
    """Guards the table above: the zip-based files really hold their formats' parts."""
    with zipfile.ZipFile(io.BytesIO(files["epub"])) as z:
        assert z.read("mimetype") == b"application/epub+zip"
    with zipfile.ZipFile(io.BytesIO(files["docx"])) as z:
        assert "word/document.xml" in z.namelist()
    assert files["mp3_no_tag"][:1] == b"\xff" and files["mp3"][:3] == b"ID3"
    assert files["adts"][:2] in (b"\xff\xf1", b"\xff\xf9")


def test_a_declared_type_is_enough_without_a_name(files: dict[str, bytes]) -> None:
    assert resolve(files["png"], "image/png", None) == Resolved(IMAGE, "image/png", "png")
    # The bytes name the exact format: the canonical type is recorded, not the client's alias.
    assert resolve(files["m4a"], "audio/x-m4a", None) == Resolved(AUDIO, "audio/mp4", "mp4")
    assert resolve(files["webm"], "video/webm; codecs=opus", None) == Resolved(AUDIO, "audio/webm", "webm")
    assert resolve(files["png"], "image/jpeg", "photo.jpg") == Resolved(IMAGE, "image/png", "png")


# --------------------------------------------------------------------------- lies

LIES = [
    # (generated file, name it was given, declared type, what the message says it really is)
    ("png", "report.pdf", "application/octet-stream", "a PNG image"),
    ("pdf", "photo.jpg", "application/octet-stream", "a PDF document"),
    ("text", "song.mp3", "application/octet-stream", "plain text"),
    ("mp3", "notes.txt", "text/plain", "MP3 audio"),
    ("docx", "notes.md", "", "a Word document"),
    ("xlsx", "data.csv", "text/csv", "an Excel workbook"),
    ("wav", "scan.png", "image/png", "WAV audio"),
    ("jpeg", "memo.wav", "", "a JPEG image"),
    ("pdf", "deck.pptx", "", "a PDF document"),
    ("html", "talk.mp3", "", "an HTML page"),
    ("exe", "holiday.png", "", "binary data of an unknown kind"),
]


@pytest.mark.parametrize(("name", "filename", "declared", "really"), LIES, ids=[f"{x[0]}-as-{x[1]}" for x in LIES])
def test_a_lying_name_is_refused_naming_both(files: dict[str, bytes], name: str, filename: str, declared: str,
                                             really: str) -> None:
    message = _refusal(files[name], declared, filename)
    assert f"named {filename!r}" in message
    assert f"its content is {really}" in message


def test_a_lying_declared_type_is_refused_naming_the_type(files: dict[str, bytes]) -> None:
    message = _refusal(files["png"], "application/pdf", None)
    assert "declared as application/pdf" in message and "a PNG image" in message
    message = _refusal(files["text"], "audio/mpeg", None)
    assert "declared as audio/mpeg" in message and "plain text" in message


SAME_FAMILY = [
    # a wrong name inside one family reaches the right extractor, which looks at the bytes again
    ("docx", "sheet.xlsx", OFFICE, "docx"),
    ("pptx", "plan.docx", OFFICE, "pptx"),
    ("odt", "book.epub", OFFICE, "odt"),
    ("png", "photo.jpg", IMAGE, "png"),
    ("heic", "photo.jpg", IMAGE, "heic"),
    ("mp3", "memo.wav", AUDIO, "mp3"),
]


@pytest.mark.parametrize(("name", "filename", "family", "kind"), SAME_FAMILY, ids=[f"{x[0]}-as-{x[1]}"
                                                                                    for x in SAME_FAMILY])
def test_a_wrong_name_within_one_family_is_accepted(files: dict[str, bytes], name: str, filename: str, family: str,
                                                    kind: str) -> None:
    got = resolve(files[name], "application/octet-stream", filename)
    assert (got.family, got.sniffed) == (family, kind)


# --------------------------------------------------------------------------- text formats

TEXT_FORMATS = [
    ("notes.md", b"# Plan\n\n* call Ana\n", TEXT, "text/markdown"),
    ("notes.markdown", b"# Plan\n", TEXT, "text/markdown"),
    ("log.txt", b"2026-04-01 backup done\n", TEXT, "text/plain"),
    ("stations.csv", b"station,reading\nST-1001,4.2\n", OFFICE, "text/csv"),
    ("guide.rst", b"Guide\n=====\n\nRead *this*.\n", OFFICE, "text/x-rst"),
    ("todo.org", b"#+TITLE: Todo\n* TODO water plants\n", OFFICE, "text/org"),
    ("mail.eml", b"From: ana@example.org\r\nTo: me@example.org\r\nSubject: Lunch\r\n\r\nNoon?\r\n",
     OFFICE, "message/rfc822"),
    ("memo.rtf", b"{\\rtf1\\ansi{\\fonttbl\\f0 Helvetica;}\\f0 Meeting at noon.\\par}\n", OFFICE, "application/rtf"),
    ("page.html", b"<p>A fragment without html or head tags</p>\n", HTML, "text/html"),
    ("page.htm", b"<!doctype html><html><body>x</body></html>", HTML, "text/html"),
]


@pytest.mark.parametrize(("filename", "raw", "family", "ctype"), TEXT_FORMATS, ids=[t[0] for t in TEXT_FORMATS])
@pytest.mark.parametrize("declared", ["application/octet-stream", "text/plain", "text/plain; charset=utf-8", ""])
def test_text_formats_are_resolved_by_extension(filename: str, raw: bytes, family: str, ctype: str,
                                                declared: str) -> None:
    got = resolve(raw, declared, filename)
    assert (got.family, got.content_type) == (family, ctype)


def test_the_markdown_type_of_a_browser_is_kept() -> None:
    assert resolve(b"# Plan\n", "text/markdown", None) == Resolved(TEXT, "text/markdown", "text")
    assert resolve(b"a,b\n1,2\n", "text/csv", None) == Resolved(OFFICE, "text/csv", "text")


@pytest.mark.parametrize("raw", [
    b"<!DOCTYPE html><html><head><title>t</title></head><body>Hello</body></html>",
    b"\n\n   <html lang='en'><body>Hello</body></html>",
    b"\xef\xbb\xbf<!doctype HTML>\n<p>Hello</p>",
    b"<?xml version='1.0'?>\n<!-- saved page -->\n<HTML><HEAD><TITLE>t</TITLE></HEAD></HTML>",
], ids=["doctype", "leading-blank", "utf8-bom", "after-prolog"])
def test_html_is_sniffed_without_a_name(raw: bytes) -> None:
    assert sniff(raw) == "html"
    assert resolve(raw, "application/octet-stream", None) == Resolved(HTML, "text/html", "html")


def test_text_that_mentions_tags_or_pdf_headers_stays_text(files: dict[str, bytes]) -> None:
    note = b"# PDF internals\n\nA file starts with %PDF-1.7; write <html> at the top of a page.\n"
    assert sniff(note) == "text"
    assert resolve(note, "", "pdf-notes.md") == Resolved(TEXT, "text/markdown", "text")
    # a real PDF with junk before its header (tolerated by readers) is still a PDF
    assert sniff(b"\r\nsaved by a mail client\r\n" + files["pdf"]) == "pdf"


@pytest.mark.parametrize("bom_text", [
    "Grüße aus Köln\nZweite Zeile\n".encode("utf-16"),  # little-endian with BOM (FF FE), as Notepad saves
    b"\xfe\xff" + "Grüße aus Köln\n".encode("utf-16-be"),
    "\U0001f9a6 otter emoji, surrogate pairs\n".encode("utf-16") * 300,  # longer than the sniffed head
], ids=["le", "be", "surrogates"])
def test_utf16_text_with_a_bom_is_text(bom_text: bytes) -> None:
    assert sniff(bom_text) == "text"
    assert resolve(bom_text, "", None) == Resolved(TEXT, "text/plain", "text")
    assert resolve(bom_text, "text/plain; charset=utf-16", "notes.txt").family == TEXT


def test_utf16_html_is_html() -> None:
    raw = "<!DOCTYPE html><html><head></head><body>Hallo</body></html>".encode("utf-16")
    assert sniff(raw) == "html"


def test_a_bom_followed_by_binary_is_not_text(files: dict[str, bytes]) -> None:
    # FF FE is also an MPEG-1 Layer I frame sync: control characters once decoded mean it is not text
    raw = b"\xff\xfe" + b"\x01\x00\x02\x00\x00\x00\x07\x00" * 300
    assert sniff(raw) == "mp3"
    # a real MPEG stream is never mistaken for UTF-16
    assert sniff(files["mp3_no_tag"]) == "mp3"


# --------------------------------------------------------------------------- refusals

@pytest.mark.parametrize("filename", [None, "backup.zip", "stations.csv"])
def test_a_zip_archive_is_refused(files: dict[str, bytes], filename: str | None) -> None:
    assert sniff(files["zip"]) == "zip"
    message = _refusal(files["zip"], "application/zip", filename)
    assert "a ZIP archive" in message and "does not unpack archives" in message


def test_a_damaged_office_file_goes_to_the_office_extractor(files: dict[str, bytes]) -> None:
    # named as a document, a zip without its parts is reported precisely by the office extractor
    assert resolve(files["zip"], "", "report.docx") == Resolved(OFFICE, DOCX_CT, "zip")
    assert resolve(files["docx"][: len(files["docx"]) // 2], "", "report.docx").family == OFFICE


@pytest.mark.parametrize("name", ["xls", "encrypted_docx"])
def test_a_legacy_or_encrypted_office_file_without_a_name_gets_advice(files: dict[str, bytes], name: str) -> None:
    assert sniff(files[name]) == "ole"
    message = _refusal(files[name], "application/octet-stream", None)
    assert "legacy or password-protected Office document" in message
    assert ".docx, .pptx or .xlsx" in message


def test_an_ole_file_with_its_name_reaches_the_office_extractor(files: dict[str, bytes]) -> None:
    assert resolve(files["encrypted_docx"], "", "secret.docx") == Resolved(OFFICE, DOCX_CT, "ole")
    assert resolve(files["xls"], "", "budget.xls").content_type == "application/vnd.ms-excel"
    assert resolve(files["xls"], "", "mail.msg").content_type == "application/vnd.ms-outlook"
    # an OLE file is not a picture
    assert "legacy or password-protected Office file" in _refusal(files["xls"], "", "chart.png")


@pytest.mark.parametrize("raw", [b"", b" ", b"\n\n\t  \r\n", b"\x0b\x0c"], ids=["empty", "space", "blank", "vt-ff"])
@pytest.mark.parametrize("filename", [None, "notes.md", "photo.jpg"])
def test_empty_and_blank_files_are_refused_as_empty(raw: bytes, filename: str | None) -> None:
    assert "empty" in _refusal(raw, "text/plain", filename)


@pytest.mark.parametrize(("declared", "filename", "shown"), [
    ("application/x-msdownload", "setup.exe", "application/x-msdownload (setup.exe)"),
    ("application/octet-stream", None, "application/octet-stream"),
    ("", "tool", "unknown (tool)"),
])
def test_an_executable_is_an_unsupported_type(files: dict[str, bytes], declared: str, filename: str | None,
                                              shown: str) -> None:
    assert sniff(files["exe"]) == "binary"
    message = _refusal(files["exe"], declared, filename)
    assert message.startswith(f"unsupported content type {shown}:")
    assert "PDF" in message and "DOCX" in message  # says what would have worked


def test_unknown_bytes_named_as_audio_are_given_a_try(files: dict[str, bytes]) -> None:
    # raw AAC (ADTS) has no strong signature: the audio decoder is the judge
    assert sniff(files["adts"]) == "binary"
    assert resolve(files["adts"], "", "voice.aac") == Resolved(AUDIO, "audio/aac", "binary")
    assert resolve(files["adts"], "audio/aac", None).family == AUDIO


# --------------------------------------------------------------------------- notes

@pytest.mark.parametrize("name", ["text", "html", "png", "pdf", "zip", "exe"])
def test_a_note_is_always_markdown(files: dict[str, bytes], name: str) -> None:
    assert resolve(files[name], "application/pdf", "x.pdf", is_note=True) == Resolved(TEXT, "text/markdown", "text")


def test_an_empty_note_is_still_refused() -> None:
    assert "empty" in _refusal(b"  \n", "text/markdown", None, is_note=True)
