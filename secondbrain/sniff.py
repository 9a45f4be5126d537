"""What an artifact really is: its bytes decide, its name and declared type only confirm.

Clients and producers send a content type and a file name; both can be wrong (a browser's
guess, a renamed file) or lie.  :func:`resolve` looks at the first bytes (magic numbers,
container signatures), compares them with what was declared, and picks the extractor
family.  A declared binary format contradicted by the bytes is refused with a sentence
that says what the file really is, instead of being fed to the wrong parser.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

from secondbrain.errors import PermanentError

# Families map one to one to extractors.
TEXT, HTML, PDF, IMAGE, AUDIO, OFFICE = "text", "html", "pdf", "image", "audio", "office"

_EXTENSIONS: dict[str, tuple[str, str]] = {
    # extension: (family, canonical content type)
    ".txt": (TEXT, "text/plain"), ".text": (TEXT, "text/plain"), ".log": (TEXT, "text/plain"),
    ".md": (TEXT, "text/markdown"), ".markdown": (TEXT, "text/markdown"), ".mdown": (TEXT, "text/markdown"),
    ".mkd": (TEXT, "text/markdown"), ".chat": (TEXT, "text/x-chat"),
    ".html": (HTML, "text/html"), ".htm": (HTML, "text/html"), ".xhtml": (HTML, "application/xhtml+xml"),
    ".pdf": (PDF, "application/pdf"),
    ".png": (IMAGE, "image/png"), ".jpg": (IMAGE, "image/jpeg"), ".jpeg": (IMAGE, "image/jpeg"),
    ".webp": (IMAGE, "image/webp"), ".gif": (IMAGE, "image/gif"), ".tif": (IMAGE, "image/tiff"),
    ".tiff": (IMAGE, "image/tiff"), ".heic": (IMAGE, "image/heic"), ".heif": (IMAGE, "image/heif"),
    ".jfif": (IMAGE, "image/jpeg"), ".bmp": (IMAGE, "image/bmp"), ".aac": (AUDIO, "audio/aac"),
    ".mp3": (AUDIO, "audio/mpeg"), ".m4a": (AUDIO, "audio/mp4"), ".mp4": (AUDIO, "audio/mp4"),
    ".wav": (AUDIO, "audio/wav"), ".ogg": (AUDIO, "audio/ogg"), ".oga": (AUDIO, "audio/ogg"),
    ".opus": (AUDIO, "audio/ogg"), ".webm": (AUDIO, "audio/webm"), ".flac": (AUDIO, "audio/flac"),
    ".docx": (OFFICE, "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ".pptx": (OFFICE, "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
    ".xlsx": (OFFICE, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ".odt": (OFFICE, "application/vnd.oasis.opendocument.text"),
    ".epub": (OFFICE, "application/epub+zip"),
    ".csv": (OFFICE, "text/csv"), ".eml": (OFFICE, "message/rfc822"), ".rst": (OFFICE, "text/x-rst"),
    ".org": (OFFICE, "text/org"), ".rtf": (OFFICE, "application/rtf"),
    ".doc": (OFFICE, "application/msword"), ".xls": (OFFICE, "application/vnd.ms-excel"),
    ".ppt": (OFFICE, "application/vnd.ms-powerpoint"), ".msg": (OFFICE, "application/vnd.ms-outlook"),
}

def shareable() -> list[str]:
    """What a phone may share as a file (the web app's share target): each content type with an extractor
    and each file name extension, as a manifest's ``accept`` list lists them."""
    types = sorted({ct for _fam, ct in _EXTENSIONS.values()} | {"image/*", "audio/*", "video/mp4", "video/webm"})
    return [*types, *sorted(_EXTENSIONS)]


_TYPES: dict[str, str] = {ct: fam for fam, ct in _EXTENSIONS.values()}
_TYPES.update({
    "text/x-markdown": TEXT, "audio/mp3": AUDIO, "audio/x-wav": AUDIO, "audio/wave": AUDIO,
    "audio/x-m4a": AUDIO, "audio/aac": AUDIO, "audio/x-flac": AUDIO, "audio/opus": AUDIO,
    "video/webm": AUDIO, "video/mp4": AUDIO, "image/jpg": IMAGE, "image/x-png": IMAGE,
    "text/x-org": OFFICE, "application/vnd.ms-outlook": OFFICE, "application/csv": OFFICE,
    "audio/m4a": AUDIO, "image/pjpeg": IMAGE, "image/x-ms-bmp": IMAGE, "text/rtf": OFFICE,
    "text/comma-separated-values": OFFICE, "text/prs.fallenstein.rst": OFFICE,
})
# Office formats that are text inside: the bytes cannot contradict them.
_TEXT_OFFICE = {"text/csv", "message/rfc822", "text/x-rst", "text/org", "text/x-org", "application/csv",
                "application/rtf", "text/rtf", "text/comma-separated-values", "text/prs.fallenstein.rst"}
_GENERIC = {"", "application/octet-stream", "binary/octet-stream", "application/unknown"}

_DESCRIPTIONS = {
    "pdf": "a PDF document", "png": "a PNG image", "jpeg": "a JPEG image", "gif": "a GIF image",
    "webp": "a WebP image", "tiff": "a TIFF image", "heic": "a HEIC image", "bmp": "a BMP image", "mp3": "MP3 audio",
    "wav": "WAV audio", "ogg": "Ogg audio", "flac": "FLAC audio", "mp4": "MPEG-4 audio/video",
    "webm": "WebM audio/video", "docx": "a Word document", "pptx": "a PowerPoint presentation",
    "xlsx": "an Excel workbook", "epub": "an EPUB book", "odt": "an OpenDocument text",
    "zip": "a ZIP archive", "ole": "a legacy or password-protected Office file", "html": "an HTML page",
    "text": "plain text", "binary": "binary data of an unknown kind",
}
_FAMILY_OF_SNIFFED = {
    "pdf": PDF, "png": IMAGE, "jpeg": IMAGE, "gif": IMAGE, "webp": IMAGE, "tiff": IMAGE, "heic": IMAGE,
    "bmp": IMAGE, "mp3": AUDIO, "wav": AUDIO, "ogg": AUDIO, "flac": AUDIO, "mp4": AUDIO, "webm": AUDIO,
    "docx": OFFICE, "pptx": OFFICE, "xlsx": OFFICE, "epub": OFFICE, "odt": OFFICE, "ole": OFFICE,
}
_CONTENT_TYPE_OF_SNIFFED = {
    "pdf": "application/pdf", "png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif",
    "webp": "image/webp", "tiff": "image/tiff", "heic": "image/heic", "bmp": "image/bmp", "mp3": "audio/mpeg",
    "wav": "audio/wav", "ogg": "audio/ogg", "flac": "audio/flac", "mp4": "audio/mp4", "webm": "audio/webm",
    "docx": _EXTENSIONS[".docx"][1], "pptx": _EXTENSIONS[".pptx"][1], "xlsx": _EXTENSIONS[".xlsx"][1],
    "epub": "application/epub+zip", "odt": "application/vnd.oasis.opendocument.text", "html": "text/html",
    "text": "text/plain",
}
SUPPORTED_HINT = ("supported are notes, text, Markdown, HTML, PDF, images (PNG, JPEG, WebP, GIF, TIFF, BMP, HEIC), "
                  "audio (MP3, M4A, AAC, WAV, Ogg, WebM, FLAC) and DOCX, PPTX, XLSX, XLS, CSV, EPUB, EML, RST, Org, "
                  "RTF and ODT")


@dataclass(frozen=True, slots=True)
class Resolved:
    """The extractor family for an artifact and the content type it is handled as."""

    family: str
    content_type: str
    sniffed: str


def sniff(raw: bytes) -> str:
    """Name the format the bytes are in (``binary`` when unknown, ``text`` for decodable text)."""
    head = raw[:4096]
    # Readers accept junk before the header (within 1 KB); a note that merely mentions
    # "%PDF-" is not a PDF though, so a late header needs the end-of-file marker as well.
    if head.startswith(b"%PDF-") or (b"%PDF-" in head[:1024] and b"%%EOF" in raw[-2048:]):
        return "pdf"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return "tiff"
    if head[:2] == b"BM" and len(head) >= 18 and int.from_bytes(head[14:18], "little") in _BMP_HEADERS:
        return "bmp"  # "BM" alone starts plenty of texts: the DIB header size must be a real one
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "wav"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in (b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1", b"avif"):
            return "heic"
        return "mp4"
    if head.startswith(b"OggS"):
        return "ogg"
    if head.startswith(b"fLaC"):
        return "flac"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "webm"
    utf16 = _utf16_text(head)
    if utf16 is not None:
        # Checked before MPEG audio: the UTF-16LE BOM (FF FE) is also a valid frame sync.
        lowered16 = utf16[:1024].lstrip("\ufeff \t\r\n").lower()
        return "html" if _html_start(lowered16.encode("utf-8", "replace")) else "text"
    if head.startswith(b"ID3") or _mpeg_audio_frame(head):
        return "mp3"
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return "ole"
    if head.startswith(b"PK\x03\x04"):
        # A damaged container is still a zip: the office extractor explains what is wrong with it.
        return zip_kind(raw) or "zip"
    if _looks_text(head):
        lowered = head[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
        return "html" if _html_start(lowered) else "text"
    return "binary"


def _html_start(lowered: bytes) -> bool:
    """Whether the (lower-cased, left-stripped) start of a text is an HTML page."""
    return lowered.startswith((b"<!doctype html", b"<html")) or (b"<html" in lowered and b"<head" in lowered)


def _utf16_text(head: bytes) -> str | None:
    """The start of a text with a UTF-16 byte order mark, decoded; None when it is not one."""
    if head.startswith(b"\xff\xfe"):
        codec = "utf-16-le"
    elif head.startswith(b"\xfe\xff"):
        codec = "utf-16-be"
    else:
        return None
    body = head[2:len(head) - (len(head) % 2)]
    try:
        text = body.decode(codec)
    except UnicodeDecodeError:
        try:  # the 4 KB head may cut a surrogate pair in two
            text = body[:-2].decode(codec)
        except UnicodeDecodeError:
            return None
    controls = sum(1 for c in text if ord(c) < 32 and c not in "\t\n\x0c\r\x1b")
    return text if controls <= max(2, len(text) // 100) else None


_BMP_HEADERS = {12, 16, 40, 52, 56, 64, 108, 124}


def _mpeg_audio_frame(head: bytes) -> bool:
    """An MPEG audio frame header: 11 sync bits, a valid version and a layer (not ADTS's 00)."""
    return (len(head) > 2 and head[0] == 0xFF and (head[1] & 0xE0) == 0xE0
            and (head[1] >> 3) & 3 != 1 and (head[1] >> 1) & 3 != 0)


def zip_kind(raw: bytes) -> str | None:
    """Which zip-based format the bytes are (docx, pptx, xlsx, epub, odt), "zip" for another
    archive, ``None`` when they are not a readable zip at all (damaged or something else).

    Shared by sniffing and the office extractor so both judge a container the same way."""
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            names = set(z.namelist())
            if "mimetype" in names:
                mime = z.read("mimetype")[:100].strip()
                if mime == b"application/epub+zip":
                    return "epub"
                if mime.startswith(b"application/vnd.oasis.opendocument.text"):
                    return "odt"
    except (zipfile.BadZipFile, OSError, KeyError, RuntimeError, EOFError, ValueError):
        return None
    if "word/document.xml" in names:
        return "docx"
    if "ppt/presentation.xml" in names:
        return "pptx"
    if "xl/workbook.xml" in names:
        return "xlsx"
    return "zip"


def _looks_text(head: bytes) -> bool:
    if not head:
        return False
    if b"\x00" in head:
        return False
    controls = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13, 27))
    return controls <= max(2, len(head) // 100)


def describe(kind: str) -> str:
    """A few words for a sniffed format, for error messages."""
    return _DESCRIPTIONS.get(kind, kind)


def _extension(filename: str | None) -> str:
    if not filename or "." not in filename:
        return ""
    return "." + filename.rsplit(".", 1)[1].lower()


def resolve(raw: bytes, content_type: str, filename: str | None, *, is_note: bool = False) -> Resolved:
    """Pick the extractor family, trusting the bytes over the declared type and the file name."""
    if not raw.strip():
        raise PermanentError("the file is empty: there is nothing to index")
    declared = content_type.split(";")[0].strip().lower()
    if is_note:
        return Resolved(TEXT, "text/markdown", "text")
    kind = sniff(raw)
    ext = _extension(filename)
    by_ext = _EXTENSIONS.get(ext)
    by_type = _TYPES.get(declared) if declared not in _GENERIC else None
    # The declared MIME type wins over the extension when both are given (the producer chose it);
    # text/plain with a specific extension (.csv, .md, .html) is a generic declaration though.
    claim_family, claim_type = None, None
    if by_type is not None and not (declared == "text/plain" and by_ext is not None):
        claim_family, claim_type = by_type, declared
    elif by_ext is not None:
        claim_family, claim_type = by_ext
    claimed_as = f"named {filename!r}" if claim_type and by_ext and claim_type == by_ext[1] \
        else f"declared as {declared}"

    real_family = _FAMILY_OF_SNIFFED.get(kind)
    if real_family is not None:  # a binary format the bytes prove
        if claim_family is not None and claim_family != real_family:
            raise PermanentError(
                f"the file is {claimed_as} but its content is {describe(kind)}; "
                f"upload it with its real type or extension")
        if kind == "ole" and claim_family is None:
            raise PermanentError("the file is a legacy or password-protected Office document; save it as "
                                 ".docx, .pptx or .xlsx without a password and upload it again")
        if claim_family == OFFICE and kind != "ole" and claim_type in _TEXT_OFFICE:
            raise PermanentError(f"the file is {claimed_as} but its content is {describe(kind)}")
        # The bytes name the exact format; a claim only chose the family (a PNG named .jpg is a PNG).
        ct = _CONTENT_TYPE_OF_SNIFFED.get(kind) or claim_type or "application/octet-stream"
        return Resolved(real_family, ct, kind)
    if kind in ("text", "html"):
        if claim_family is None:
            fam = HTML if kind == "html" else TEXT
            return Resolved(fam, _CONTENT_TYPE_OF_SNIFFED[kind], kind)
        if claim_family in (TEXT, HTML) or claim_type in _TEXT_OFFICE:
            return Resolved(claim_family, claim_type or "text/plain", kind)
        raise PermanentError(f"the file is {claimed_as} but its content is {describe(kind)}; "
                             "upload it with its real type or extension")
    if kind == "zip":
        if claim_family == OFFICE and claim_type not in _TEXT_OFFICE:
            # A damaged document: the office extractor explains what is wrong with it.
            return Resolved(OFFICE, claim_type or "application/zip", kind)
        raise PermanentError(f"the file is {describe(kind)}; secondbrain does not unpack archives: "
                             "extract it and upload the files inside")
    # Unknown binary: only audio (raw MPEG/AAC streams have weak signatures) is worth a try.
    if claim_family == AUDIO:
        return Resolved(AUDIO, claim_type or "application/octet-stream", kind)
    if claim_family is not None:
        raise PermanentError(f"the file is {claimed_as} but its content is {describe(kind)}; "
                             "upload it with its real type or extension")
    what = f"{declared or 'unknown'}{f' ({filename})' if filename else ''}"
    raise PermanentError(f"unsupported content type {what}: {SUPPORTED_HINT}")
