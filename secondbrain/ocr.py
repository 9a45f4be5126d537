"""Optical character recognition with Tesseract, and the line-joining rules shared with PDFs.

:class:`TesseractOcr` turns a Pillow image into paragraphs of text, each with Tesseract's
mean word confidence and a bounding box, so a citation can point at the region of a scan
or a photo the words came from.  :func:`join_lines` reflows hard-wrapped lines into
paragraphs (also used for the text layer of PDFs): a line broken only because the column
ended is joined with a space, a word hyphenated across lines is put back together, and a
line that was broken on purpose (a short line, a list item) keeps its line break.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import statistics
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from PIL import Image

from secondbrain.errors import PermanentError

#: Characters that start a list item: a line starting with one is never joined to the line before.
_LIST_ITEM = re.compile(r"^(?:[•◦▪▫‣∙·●○■□►▸*\-\u2013\u2014]\s"  # bullets and dashes
                        r"|\(?\d{1,3}[.)]\s|\d{1,3}(?:\.\d{1,3})+\.?\s"  # 1. 2) 3.1 3.1.
                        r"|\(?[a-zA-Z][.)]\s)")  # a) B.
#: A word hyphenated at the end of a line ("exam-"): a letter, then a hyphen.
_TRAILING_HYPHEN = re.compile(r"[^\W\d_]-$")
_SOFT_HYPHENS = ("\ufffe", "\u00ad", "\x02")  # PDFium marks a soft hyphen at a line end with U+FFFE


@dataclass(frozen=True, slots=True)
class TextLine:
    """One line of text with its horizontal extent, in any unit as long as it is the same for all lines.

    ``size`` is the font size or line height in the same unit; it estimates how wide a word is.
    """

    text: str
    x0: float
    x1: float
    size: float


def _fits_on_previous(prev: TextLine, cur: TextLine, right_edge: float) -> bool:
    """Whether the first word of ``cur`` would have fitted at the end of ``prev``.

    If it would have, the writer broke the line on purpose (an address, a poem, the last
    line of a paragraph), so the break is kept; otherwise the column simply ended.
    """
    first_word = cur.text.split(maxsplit=1)[0] if cur.text.split() else ""
    chars = max(1, len(prev.text))
    char_width = (prev.x1 - prev.x0) / chars if prev.x1 > prev.x0 else prev.size * 0.5
    needed = (len(first_word) + 1) * char_width
    return right_edge - prev.x1 > needed + char_width  # one character of slack for justified text


def join_lines(lines: Sequence[TextLine]) -> str:
    """Reflow the lines of one paragraph into running text.

    Lines are joined with a space, except: a soft hyphen or a letter followed by "-" at the
    end of a line followed by a lower-case letter is dehyphenated ("exam-" + "ple" ->
    "example"); a list item, or a line following a line that ended early on purpose,
    starts on a new line.
    """
    kept = [ln for ln in lines if ln.text.strip()]
    if not kept:
        return ""
    right_edge = max(ln.x1 for ln in kept)
    out = kept[0].text.strip()
    for prev, cur in itertools.pairwise(kept):
        text = cur.text.strip()
        if out.endswith(_SOFT_HYPHENS) or (_TRAILING_HYPHEN.search(out) and text[:1].islower()):
            out = out[:-1] + text  # "exam-" + "ple" -> "example"
        elif _LIST_ITEM.match(text) or _fits_on_previous(prev, cur, right_edge):
            out += "\n" + text
        else:
            out += " " + text
    for mark in _SOFT_HYPHENS:  # any left inside a line carry no meaning
        out = out.replace(mark, "")
    return out


@dataclass(frozen=True, slots=True)
class OcrBlock:
    """A paragraph found by OCR: its text, mean word confidence (0-100) and box in image pixels."""

    text: str
    confidence: float
    box: tuple[int, int, int, int]  # x, y (top-left), width, height

    def attributes(self, scale: float = 1.0) -> dict[str, str]:
        """Block attributes for the document: engine, confidence and the box as "x,y,w,h".

        ``scale`` converts pixels into another unit (72/dpi gives PDF points).
        """
        x, y, w, h = (round(v * scale) for v in self.box)
        return {"ocr": "tesseract", "confidence": f"{self.confidence:.1f}", "bbox": f"{x},{y},{w},{h}"}


@dataclass(frozen=True, slots=True)
class OcrResult:
    """The paragraphs OCR found in one image, in reading order."""

    blocks: list[OcrBlock]
    width: int
    height: int

    @property
    def text(self) -> str:
        """All paragraphs joined by a blank line."""
        return "\n\n".join(b.text for b in self.blocks)


def flatten(image: Image.Image) -> Image.Image:
    """An image Tesseract reads reliably: 1-bit, grey or RGB, transparency laid on white.

    Transparent pixels often hold black, so dropping the alpha channel would hide dark text
    on a transparent background.
    """
    if image.mode in ("1", "L", "RGB"):
        return image
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        flat = Image.new("RGB", rgba.size, "white")
        flat.paste(rgba, mask=rgba.getchannel("A"))
        return flat
    if image.mode.startswith("I;16"):  # 16-bit grey: scale into 8 bits instead of clipping to white
        return image.convert("I").point(lambda v: v * (1 / 256)).convert("L")
    return image.convert("RGB")


class _Word(NamedTuple):
    text: str
    conf: float
    left: int
    top: int
    width: int
    height: int


def parse_tsv(tsv: str) -> dict[tuple[int, int], dict[int, list[_Word]]]:
    """Tesseract's TSV output -> words grouped by (block, paragraph), then by line, in reading order."""
    paragraphs: dict[tuple[int, int], dict[int, list[_Word]]] = {}
    rows = tsv.splitlines()
    for row in rows[1:]:  # the first row names the columns
        cols = row.split("\t", 11)
        if len(cols) < 12 or not cols[11].strip():
            continue
        try:
            block, par, line = int(cols[2]), int(cols[3]), int(cols[4])
            word = _Word(cols[11].strip(), float(cols[10]), int(cols[6]), int(cols[7]), int(cols[8]), int(cols[9]))
        except ValueError:
            continue
        if word.conf < 0:  # conf -1 marks page/block/line rows, not words
            continue
        paragraphs.setdefault((block, par), {}).setdefault(line, []).append(word)
    return paragraphs


class TesseractOcr:
    """OCR through the ``tesseract`` command (Tesseract 4 or 5, TSV output).

    ``languages`` is Tesseract's ``-l`` value ("eng", "eng+deu"); each language needs its
    ``tesseract-ocr-<lang>`` package.  ``timeout_s`` bounds one image: a page that takes
    longer fails the document with a clear reason instead of blocking a worker.
    Paragraphs whose mean confidence is below ``min_confidence`` are dropped as noise
    (photo textures, speckles).  ``threads`` caps Tesseract's OpenMP threads per image:
    on a small, busy machine one thread per image is about three times faster than letting
    every Tesseract process spin a thread per core, and workers run images side by side.
    """

    def __init__(self, languages: str = "eng", timeout_s: float = 60, *, min_confidence: float = 40.0,
                 threads: int = 1, command: str = "tesseract") -> None:
        self.languages = languages
        self.timeout_s = timeout_s
        self.min_confidence = min_confidence
        self.threads = threads
        self.command = command

    def _run(self, args: list[str], stdin: bytes | None = None, timeout: float | None = None
             ) -> subprocess.CompletedProcess[bytes]:
        # The thread cap goes in the child's environment only: OpenMP libraries in this process
        # (speech models...) keep their own settings.
        env = {**os.environ, "OMP_THREAD_LIMIT": str(self.threads)}
        return subprocess.run([self.command, *args], input=stdin, capture_output=True, env=env,
                              timeout=timeout, check=False)

    def available(self) -> tuple[bool, str]:
        """Whether OCR can run here, and a sentence saying why not (or which version runs).

        Meant for start-up: the caller logs the sentence and runs without OCR when it is False.
        """
        try:
            version = self._run(["--version"], timeout=30)
            langs = self._run(["--list-langs"], timeout=30)
        except FileNotFoundError:
            return False, ("the tesseract program was not found: install tesseract-ocr "
                           "(apt install tesseract-ocr) to read scanned PDFs and text in images")
        except (OSError, subprocess.SubprocessError) as exc:
            return False, f"tesseract is installed but does not run ({exc}); reinstall tesseract-ocr"
        if version.returncode != 0 or langs.returncode != 0:
            detail = (version.stderr or langs.stderr).decode("utf-8", "replace").strip()
            return False, f"tesseract is installed but does not run ({detail}); reinstall tesseract-ocr"
        lines = langs.stdout.decode("utf-8", "replace").splitlines()
        installed = {ln.strip() for ln in lines[1:]}  # after "List of available languages ..."
        missing = [lang for lang in self.languages.split("+") if lang and lang not in installed]
        if missing:
            pkgs = " ".join(f"tesseract-ocr-{lang}" for lang in missing)
            return False, f"tesseract has no data for {', '.join(missing)}: install {pkgs}"
        first = (version.stdout or version.stderr).decode("utf-8", "replace").splitlines()
        return True, f"{first[0] if first else 'tesseract'} with languages {self.languages}"

    def read(self, image: Image.Image, *, dpi: int | None = None) -> OcrResult:
        """OCR ``image`` into paragraphs (grouped by Tesseract's block and paragraph numbers).

        ``dpi`` is the image's resolution when known (a rendered PDF page); Tesseract
        guesses otherwise.  Raises ``PermanentError`` when Tesseract is missing, fails on
        the image, or takes longer than ``timeout_s``.
        """
        image = flatten(image)
        buf = io.BytesIO()
        image.save(buf, "PPM")  # uncompressed: the cheapest format to hand over on stdin
        args = ["stdin", "stdout", "-l", self.languages]
        if dpi:
            args += ["--dpi", str(dpi)]
        try:
            proc = self._run([*args, "tsv"], stdin=buf.getvalue(), timeout=self.timeout_s)
        except FileNotFoundError as exc:
            raise PermanentError("OCR is not available on this server: install tesseract-ocr, "
                                 "then try again", retry_helps=True) from exc
        except subprocess.TimeoutExpired as exc:  # subprocess.run has killed it already
            raise PermanentError(f"OCR took longer than {self.timeout_s:g} s and was stopped; the image is "
                                 "too large or too complex to read") from exc
        except OSError as exc:
            raise PermanentError(f"OCR could not run: {exc}") from exc
        if proc.returncode != 0:
            detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise PermanentError(f"OCR failed on the image: {detail[-1] if detail else proc.returncode}")
        return OcrResult(self._paragraphs(proc.stdout.decode("utf-8", "replace")), image.width, image.height)

    def _paragraphs(self, tsv: str) -> list[OcrBlock]:
        """Group Tesseract's words into paragraphs, reflow their lines and drop noise."""
        blocks: list[OcrBlock] = []
        for lines in parse_tsv(tsv).values():
            words = [w for line_words in lines.values() for w in line_words]
            confidence = statistics.fmean(w.conf for w in words)
            text = join_lines([
                TextLine(" ".join(w.text for w in lw), min(w.left for w in lw),
                         max(w.left + w.width for w in lw), statistics.median(w.height for w in lw))
                for lw in lines.values()
            ])
            if confidence < self.min_confidence or sum(ch.isalnum() for ch in text) < 2:
                continue  # speckles, textures and stray marks, not words
            x0, y0 = min(w.left for w in words), min(w.top for w in words)
            x1, y1 = max(w.left + w.width for w in words), max(w.top + w.height for w in words)
            blocks.append(OcrBlock(text, confidence, (x0, y0, x1 - x0, y1 - y0)))
        return blocks
