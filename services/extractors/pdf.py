"""PDF -> a document of page-numbered blocks, with OCR for pages that have no text layer.

Text comes from PDFium's text layer (fast), one block per paragraph, each carrying the
number of the page it is on, so a citation can say "page 7".  Paragraphs are found from
the layout (blank lines, larger gaps between lines, a change of font size) and their
hard-wrapped lines are reflowed.  A page with (almost) no text layer is a scan: it is
rendered and read with OCR, and its blocks say so (kind ``ocr``, confidence, box in PDF
points from the top-left corner of the page).
"""

from __future__ import annotations

import ctypes
import itertools
import math
import re
import statistics
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from secondbrain.errors import PermanentError
from secondbrain.ocr import TesseractOcr, TextLine, join_lines
from services.extractors import dates
from services.extractors.document import Block, Extracted, ExtractionContext

if TYPE_CHECKING:
    from PIL import Image

#: PDFium is not thread-safe and the runner calls stages from worker threads: every PDFium
#: call in this process goes through this lock (OCR runs outside it).
PDFIUM_LOCK = threading.Lock()

_METADATA_KEYS = {"Title": "title", "Author": "author", "Subject": "subject", "Keywords": "keywords",
                  "Creator": "creator", "Producer": "producer", "CreationDate": "creation_date"}
_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})
_CONTROL = re.compile(r"[\x00-\x01\x03-\x08\x0b\x0c\x0e-\x1f\x7f]")  # \x02 is a soft hyphen, kept for join_lines



PDF_TYPES = {"application/pdf", "application/x-pdf", "application/acrobat"}


def supports(content_type: str, filename: str | None) -> bool:
    """Whether this extractor handles the artifact (a PDF type, or a generic type and a .pdf name)."""
    ct = content_type.split(";")[0].strip().lower()
    if ct in PDF_TYPES:
        return True
    return bool(ct in ("", "application/octet-stream") and filename and filename.lower().endswith(".pdf"))


def _page_list(pages: list[int]) -> str:
    """1,2,3,5 -> "1-3,5"."""
    parts: list[str] = []
    for p in pages:
        if parts and p == int(parts[-1].split("-")[-1]) + 1:
            parts[-1] = f"{parts[-1].split('-')[0]}-{p}"
        else:
            parts.append(str(p))
    return ",".join(parts)


def _clean(text: str) -> str:
    return _CONTROL.sub("", text.translate(_LIGATURES))


@dataclass(frozen=True, slots=True)
class _Line:
    """A line of the text layer: text, left and right edges, the baselines of its first and last
    characters (PDF y grows upwards; PDFium puts the two halves of a hyphenated word on one line)
    and its font size."""

    text: str
    x0: float
    x1: float
    y_first: float
    y_last: float
    size: float


def _layout_lines(textpage: Any, text: str) -> list[_Line | None] | None:
    """The page's lines with their geometry (``None`` items stand for blank lines).

    Returns ``None`` when PDFium's character indices do not line up with the text (it can
    happen with characters outside the Basic Multilingual Plane); the caller then works
    from the text alone.
    """
    import pypdfium2.raw as pdfium_c

    lines: list[_Line | None] = []
    offset = 0
    x, y = ctypes.c_double(), ctypes.c_double()
    box = ctypes.c_double(), ctypes.c_double(), ctypes.c_double(), ctypes.c_double()  # left, right, bottom, top
    for raw_line in text.splitlines(keepends=True):
        start = offset
        offset += len(raw_line)
        body = raw_line.rstrip("\r\n")
        stripped = body.strip()
        if not stripped:
            lines.append(None)
            continue
        first = start + (len(body) - len(body.lstrip()))
        last = start + len(body.rstrip()) - 1
        if pdfium_c.FPDFText_GetUnicode(textpage, first) != ord(text[first]) \
                or pdfium_c.FPDFText_GetUnicode(textpage, last) != ord(text[last]):
            return None
        if not pdfium_c.FPDFText_GetCharOrigin(textpage, first, ctypes.byref(x), ctypes.byref(y)):
            return None
        x0, y_first = x.value, y.value
        if not pdfium_c.FPDFText_GetCharOrigin(textpage, last, ctypes.byref(x), ctypes.byref(y)):
            return None
        y_last = y.value
        if not pdfium_c.FPDFText_GetCharBox(textpage, last, *box):
            return None
        # The median of three samples, so a small bullet or footnote mark does not decide the size.
        sizes = sorted(float(pdfium_c.FPDFText_GetFontSize(textpage, i)) for i in (first, (first + last) // 2, last))
        size = sizes[1] or 10.0
        lines.append(_Line(stripped, x0, max(box[1].value, x0), y_first, y_last, size))
    return lines


def _paragraphs(lines: list[_Line | None]) -> list[list[_Line]]:
    """Split a page's lines into paragraphs at blank lines, wide gaps, font-size changes and column jumps."""
    real = [ln for ln in lines if ln is not None]

    def pitch(a: _Line, b: _Line) -> float:  # distance between baselines, in font sizes
        return (a.y_last - b.y_first) / max(a.size, b.size)

    # Typical line pitch: gaps well above it separate paragraphs.
    ratios = [pitch(a, b) for a, b in itertools.pairwise(real)
              if abs(a.size - b.size) <= 0.15 * max(a.size, b.size) and 0.5 < pitch(a, b) < 3]
    typical = statistics.median(ratios) if len(ratios) >= 2 else None
    paragraphs: list[list[_Line]] = []
    current: list[_Line] = []
    blank = False
    for ln in lines:
        if ln is None:
            blank = True
            continue
        if current:
            prev = current[-1]
            size = max(prev.size, ln.size)
            ratio = pitch(prev, ln)
            split = (blank
                     or abs(prev.size - ln.size) > 0.15 * size        # a heading or a footnote
                     or ratio < -0.5                                 # moved up: next column or a float
                     or ratio > 3
                     or (typical is not None and ratio > typical * 1.35 + 0.1)
                     or (typical is None and ratio > 1.7))
            if split:
                paragraphs.append(current)
                current = []
        current.append(ln)
        blank = False
    if current:
        paragraphs.append(current)
    return paragraphs


def _text_only_paragraphs(text: str) -> list[list[_Line]]:
    """Paragraphs at blank lines, with character counts standing in for positions."""
    paragraphs: list[list[_Line]] = []
    for part in re.split(r"(?:\r\n|\r|\n)[ \t]*(?:\r\n|\r|\n)+", text):
        lines = [ln.strip() for ln in part.splitlines() if ln.strip()]
        if lines:
            paragraphs.append([_Line(ln, 0.0, float(len(ln)), 0.0, 0.0, 2.0) for ln in lines])
    return paragraphs


def page_text_blocks(textpage: Any, page_number: int) -> tuple[list[Block], int]:
    """Blocks of one page's text layer and how many letters and digits it holds."""
    text = textpage.get_text_range()
    layout = _layout_lines(textpage, text)
    paragraphs = _paragraphs(layout) if layout is not None else _text_only_paragraphs(text)
    blocks: list[Block] = []
    for para in paragraphs:
        joined = _clean(join_lines([TextLine(ln.text, ln.x0, ln.x1, ln.size) for ln in para])).strip()
        if joined:
            blocks.append(Block("page", joined, page=page_number))
    letters = sum(ch.isalnum() for b in blocks for ch in b.text)
    return blocks, letters


class PdfExtractor:
    """Extracts PDFs: text layer per page, OCR for scanned pages, document metadata.

    ``ocr`` may be ``None`` (no Tesseract here): pages without a text layer are then skipped
    and listed in the metadata as ``pages_without_text``.  A page counts as scanned when its
    text layer has fewer than ``min_text_chars_per_page`` letters and digits.  Pages are
    rendered for OCR at ``ocr_dpi`` (lowered for huge pages so a render stays under
    ``max_render_pixels``).
    """

    modality = "pdf"

    def __init__(self, ocr: TesseractOcr | None, *, ocr_dpi: int = 200, max_pages: int = 2000,
                 min_text_chars_per_page: int = 20, max_render_pixels: int = 40_000_000) -> None:
        self.ocr = ocr
        self.ocr_dpi = ocr_dpi
        self.max_pages = max_pages
        self.min_text_chars_per_page = min_text_chars_per_page
        self.max_render_pixels = max_render_pixels

    def extract(self, raw: bytes, ctx: ExtractionContext) -> Extracted:
        """Extract a PDF; raise ``PermanentError`` for a damaged, encrypted, empty or text-less file."""
        import pypdfium2 as pdfium

        doc = self._open(raw)
        try:
            with PDFIUM_LOCK:
                page_count = len(doc)
                try:
                    info = {k: str(v) for k, v in doc.get_metadata_dict().items()}
                except pdfium.PdfiumError:
                    info = {}
            if page_count == 0:
                raise PermanentError("the PDF has no pages: there is nothing to index")
            if page_count > self.max_pages:
                raise PermanentError(f"the PDF has {page_count} pages, over the limit of {self.max_pages}; "
                                     "split it into smaller files and upload them separately")
            blocks: list[Block] = []
            ocr_pages: list[int] = []
            skipped: list[int] = []
            blank: list[int] = []
            unreadable: list[int] = []
            for number in range(1, page_count + 1):
                page_blocks, letters, image, scale = self._read_page(doc, number)
                if page_blocks is None:
                    unreadable.append(number)
                    continue
                if letters >= self.min_text_chars_per_page:
                    blocks.extend(page_blocks)
                    continue
                if image is None:  # OCR disabled: keep whatever little text there is
                    blocks.extend(page_blocks)
                    skipped.append(number)
                    continue
                ocr_pages.append(number)
                ocr_blocks = self._ocr_page(image, number, scale)
                blocks.extend(ocr_blocks or page_blocks)
                if not ocr_blocks and not page_blocks:
                    blank.append(number)
        finally:
            with PDFIUM_LOCK:
                doc.close()

        metadata: dict[str, str] = {key: _clean(info[src]).strip() for src, key in _METADATA_KEYS.items()
                                    if info.get(src, "").strip()}
        metadata["page_count"] = str(page_count)
        for key, pages in (("pages_ocr", ocr_pages), ("pages_without_text", skipped), ("pages_blank", blank),
                           ("pages_unreadable", unreadable)):
            if pages:
                metadata[key] = _page_list(pages)
        if not blocks:
            if len(unreadable) == page_count:
                raise PermanentError(f"the PDF is damaged and cannot be read: none of its {page_count} pages "
                                     "could be loaded")
            hint = ""
            if skipped:
                hint = ("; it looks scanned, and OCR is not enabled on this server "
                        "(install tesseract-ocr to read scanned pages)")
            count = f"{page_count} page" + ("s" if page_count != 1 else "")
            raise PermanentError(f"no text found in the PDF ({count}){hint}")
        return Extracted(title=metadata.get("title") or None, modality=self.modality, blocks=blocks,
                         metadata=metadata, stated_time=dates.pdf_datetime(info.get("CreationDate")),
                         stated_time_source="file_metadata")

    def _open(self, raw: bytes) -> Any:
        """Open the document or explain, in a sentence, why it cannot be read."""
        import pypdfium2 as pdfium
        import pypdfium2.raw as pdfium_c

        if not raw.strip():
            raise PermanentError("the file is empty: there is nothing to index")
        if b"%PDF-" not in raw[:1024]:
            raise PermanentError("the file is not a PDF (it has no %PDF header); upload it with its real type")
        try:
            with PDFIUM_LOCK:
                return pdfium.PdfDocument(raw)
        except pdfium.PdfiumError as exc:
            code = getattr(exc, "err_code", None)
            # PDFium's error codes are not always right (a page-less file can report a password
            # error), so the bytes are checked too.
            if code == pdfium_c.FPDF_ERR_PASSWORD and re.search(rb"/Encrypt\b", raw):
                raise PermanentError("the PDF is password-protected; remove the password and upload it again") \
                    from exc
            if code == pdfium_c.FPDF_ERR_SECURITY:
                raise PermanentError("the PDF is encrypted with a scheme that cannot be read; save an unencrypted "
                                     "copy and upload it again") from exc
            if re.search(rb"/Count\s+0\b", raw) and not re.search(rb"/Type\s*/Page(?!s)\b", raw):
                raise PermanentError("the PDF has no pages: there is nothing to index") from exc
            raise PermanentError(f"the PDF is damaged and cannot be read: {exc}") from exc

    def _read_page(self, doc: Any, number: int) -> tuple[list[Block] | None, int, Image.Image | None, float]:
        """Text-layer blocks of page ``number``, plus a render of it when it needs OCR.

        Returns ``(None, 0, None, 0)`` when PDFium cannot load the page.
        """
        import pypdfium2 as pdfium

        with PDFIUM_LOCK:
            try:
                page = doc[number - 1]
            except pdfium.PdfiumError:
                return None, 0, None, 0.0
            try:
                textpage = page.get_textpage()
                try:
                    blocks, letters = page_text_blocks(textpage, number)
                finally:
                    textpage.close()
                if letters >= self.min_text_chars_per_page or self.ocr is None:
                    return blocks, letters, None, 0.0
                width, height = page.get_size()
                scale = self.ocr_dpi / 72
                if width * height * scale * scale > self.max_render_pixels:  # a poster-sized page
                    scale = math.sqrt(self.max_render_pixels / max(1.0, width * height))
                bitmap = page.render(scale=scale, grayscale=True)
                try:
                    image = bitmap.to_pil().copy()  # to_pil shares the bitmap's buffer
                finally:
                    bitmap.close()
                return blocks, letters, image, scale
            except pdfium.PdfiumError:
                return None, 0, None, 0.0
            finally:
                page.close()

    def _ocr_page(self, image: Image.Image, number: int, scale: float) -> list[Block]:
        """OCR a rendered page into ``ocr`` blocks (boxes converted to PDF points)."""
        assert self.ocr is not None
        try:
            result = self.ocr.read(image, dpi=round(72 * scale))
        except PermanentError as exc:
            raise PermanentError(f"page {number}: {exc.reason}") from exc
        finally:
            image.close()
        return [Block("ocr", b.text, page=number, attributes=b.attributes(1 / scale)) for b in result.blocks]
