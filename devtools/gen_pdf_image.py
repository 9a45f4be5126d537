"""Generators for the PDF and image extractor tests: every input is written by the tests.

PDFs are made with fpdf2, pictures with Pillow (text drawn with a TrueType font when the
system has one), EXIF written through ``PIL.Image.Exif``.  Each function returns bytes.
"""

from __future__ import annotations

import io
import struct
import subprocess
import zlib
from datetime import datetime, timedelta, timezone
from functools import lru_cache

from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont
from PIL.TiffImagePlugin import IFDRational

#: One distinct sentence per page of the text PDF.
PAGE_SENTENCES = {
    1: "The lighthouse keeper counted forty-two ships passing the northern breakwater before noon.",
    2: "Marmalade sandwiches were served at the annual beekeeping conference in Tromsø last spring.",
    3: "Quantum tunnelling lets the electron cross the barrier without ever climbing over it.",
}
PDF_TITLE = "Harbour Logbook"
PDF_AUTHOR = "Ada Keeper"
PDF_CREATED = datetime(2024, 3, 1, 12, 0, 0, tzinfo=timezone(timedelta(hours=1)))
#: The words drawn on the "scanned" page (page 2) of the scanned PDF.
SCANNED_LINES = ("HARBOUR LANTERN INVENTORY", "Seventeen brass lanterns were", "polished before the storm.")
#: The words drawn on the test photo.
PHOTO_LINES = ("INVOICE NUMBER 4471", "Blue Heron Paper Company")

_FILLER = ("It was recorded in the log together with the weather, the state of the tide and the names of the "
           "crew on watch, as the harbour rules require for every day of the season.")


@lru_cache(maxsize=8)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """A clear TrueType font at ``size`` pixels: DejaVu Sans if present, else any font fc-list knows,
    else Pillow's built-in font scaled (Pillow >= 10.1)."""
    candidates = ["DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "LiberationSans-Regular.ttf"]
    try:
        listed = subprocess.run(["fc-list", ":style=Regular:fontformat=TrueType", "file"], capture_output=True,
                                text=True, timeout=10, check=False).stdout
        candidates += [ln.split(":")[0].strip() for ln in listed.splitlines() if ln.strip()]
    except (OSError, subprocess.SubprocessError):
        pass
    for name in candidates:
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def _new_pdf() -> FPDF:
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(auto=False)
    pdf.set_title(PDF_TITLE)
    pdf.set_author(PDF_AUTHOR)
    pdf.set_subject("Ship counts")
    pdf.set_keywords("harbour ships log")
    pdf.set_creator("secondbrain tests")
    pdf.set_creation_date(PDF_CREATED)
    return pdf


def _text_page(pdf: FPDF, number: int) -> None:
    """A heading, then a narrow paragraph (so the page's sentence wraps over several lines), then filler."""
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    pdf.cell(0, 10, f"Chapter {number}", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(90, 6, PAGE_SENTENCES[number] + " " + _FILLER, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(8)
    if number == 1:  # a word hyphenated by hand across two lines
        pdf.cell(0, 6, "Each entry is an exam-", new_x="LMARGIN", new_y="NEXT")
        pdf.cell(0, 6, "ple of careful record keeping.", new_x="LMARGIN", new_y="NEXT")


def text_pdf() -> bytes:
    """Three pages of text, one known sentence each, with title, author and creation date."""
    pdf = _new_pdf()
    for number in (1, 2, 3):
        _text_page(pdf, number)
    return bytes(pdf.output())


def text_image(lines: tuple[str, ...], size: tuple[int, int] = (1100, 360), font_px: int = 56) -> Image.Image:
    """Black text on white, one line under the other, in a large clear font."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    f = font(font_px)
    for i, line in enumerate(lines):
        draw.text((40, 40 + i * int(font_px * 1.6)), line, fill="black", font=f)
    return image


def scanned_pdf() -> bytes:
    """Three pages; page 2 has no text layer, only a 150-dpi picture of printed text."""
    pdf = _new_pdf()
    _text_page(pdf, 1)
    pdf.add_page()
    scan = text_image(SCANNED_LINES, size=(1240, 1754), font_px=64)  # A4 at 150 dpi
    pdf.image(scan, x=0, y=0, w=210, h=297)
    _text_page(pdf, 3)
    return bytes(pdf.output())


def encrypted_pdf() -> bytes:
    """A text PDF that needs a password to open."""
    pdf = _new_pdf()
    pdf.set_encryption(owner_password="owner-secret", user_password="user-secret")
    _text_page(pdf, 1)
    return bytes(pdf.output())


def truncated_pdf() -> bytes:
    """The text PDF cut in half, as an interrupted download would leave it."""
    data = text_pdf()
    return data[: len(data) // 2]


def zero_page_pdf() -> bytes:
    """A well-formed PDF whose page tree is empty."""
    objects = [b"<</Type/Catalog/Pages 2 0 R>>", b"<</Type/Pages/Kids[]/Count 0>>"]
    out = b"%PDF-1.4\n"
    offsets = []
    for i, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return out


def exif(*, taken: str | None = None, offset: str | None = None, make: str | None = None,
         model: str | None = None, gps: tuple[float, float] | None = None, orientation: int | None = None
         ) -> Image.Exif:
    """An EXIF block with DateTimeOriginal (and OffsetTimeOriginal), camera, GPS and orientation."""
    data = Image.Exif()
    if make:
        data[0x010F] = make
    if model:
        data[0x0110] = model
    if orientation:
        data[0x0112] = orientation
    if taken:
        data.get_ifd(0x8769)[0x9003] = taken
        if offset:
            data.get_ifd(0x8769)[0x9011] = offset

    def dms(value: float) -> tuple[IFDRational, IFDRational, IFDRational]:
        value = abs(value)
        d = int(value)
        m = int((value - d) * 60)
        s = round(((value - d) * 60 - m) * 60 * 100)
        return IFDRational(d, 1), IFDRational(m, 1), IFDRational(s, 100)

    if gps:
        lat, lon = gps
        data.get_ifd(0x8825).update({1: "N" if lat >= 0 else "S", 2: dms(lat),
                                     3: "E" if lon >= 0 else "W", 4: dms(lon)})
    return data


def encode(image: Image.Image, fmt: str, exif_data: Image.Exif | None = None, **options: object) -> bytes:
    """Encode ``image`` as ``fmt`` (HEIF needs pillow-heif's opener registered) with optional EXIF."""
    if fmt == "HEIF":
        import pillow_heif

        pillow_heif.register_heif_opener()
    out = io.BytesIO()
    if exif_data is not None:
        options["exif"] = exif_data
    image.save(out, fmt, **options)
    return out.getvalue()


def text_photo(fmt: str, exif_data: Image.Exif | None = None) -> bytes:
    """The invoice picture (:data:`PHOTO_LINES`) as ``fmt`` bytes."""
    return encode(text_image(PHOTO_LINES), fmt, exif_data, **({"quality": 92} if fmt in ("JPEG", "WEBP") else {}))


def rotated_text_photo() -> bytes:
    """The invoice picture stored sideways with EXIF orientation 6, as a phone camera writes it."""
    sideways = text_image(PHOTO_LINES).transpose(Image.Transpose.ROTATE_90)
    return encode(sideways, "JPEG", exif(orientation=6), quality=92)


def wordless_photo(fmt: str = "PNG") -> bytes:
    """A smooth colour gradient: a picture with nothing to read."""
    image = Image.linear_gradient("L").resize((480, 320)).convert("RGB")
    tinted = Image.merge("RGB", (image.getchannel(0), image.getchannel(0).point(lambda v: 255 - v),
                                 Image.new("L", image.size, 140)))
    return encode(tinted, fmt)


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def bomb_png(width: int, height: int) -> bytes:
    """A few hundred bytes of PNG whose header claims ``width`` x ``height`` grey pixels.

    Its data stream holds only the first rows; a decoder that trusted the header would
    allocate ``width * height`` bytes before noticing.
    """
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit greyscale, no interlace
    rows = zlib.compress(b"\x00" * (width + 1) * 4, 9)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", rows)
            + _png_chunk(b"IEND", b""))


def blank_pdf() -> bytes:
    """One empty page: nothing in the text layer and nothing for OCR to read."""
    pdf = _new_pdf()
    pdf.add_page()
    return bytes(pdf.output())


def transparent_text_image() -> bytes:
    """Black text on a fully transparent background (transparent pixels are black too), as PNG."""
    text = text_image(PHOTO_LINES).convert("L")
    alpha = text.point(lambda v: 255 - v)  # opaque where the ink is
    rgba = Image.merge("RGBA", (Image.new("L", text.size, 0),) * 3 + (alpha,))
    return encode(rgba, "PNG")


def scan_only_pdf() -> bytes:
    """One page that is only a picture of text (no text layer at all)."""
    pdf = _new_pdf()
    pdf.add_page()
    pdf.image(text_image(SCANNED_LINES, size=(1240, 1754), font_px=64), x=0, y=0, w=210, h=297)
    return bytes(pdf.output())
