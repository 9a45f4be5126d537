"""Which office format an artifact is, checked against its bytes, and the sentences for refusals."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

from secondbrain.errors import PermanentError
from secondbrain.sniff import zip_kind
from services.extractors.office.blocks import clean

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_MAGIC = b"PK\x03\x04"


@dataclass(frozen=True, slots=True)
class _Format:
    label: str  # how a person names the file: "the .docx file"
    kind: str  # "a Word document"
    app: str  # what to open it with to repair or convert it


FORMATS: dict[str, _Format] = {
    "docx": _Format(".docx", "a Word document", "Word or LibreOffice Writer"),
    "pptx": _Format(".pptx", "a PowerPoint presentation", "PowerPoint or LibreOffice Impress"),
    "xlsx": _Format(".xlsx", "an Excel workbook", "Excel or LibreOffice Calc"),
    "xls": _Format(".xls", "an Excel 97-2003 workbook", "Excel or LibreOffice Calc"),
    "csv": _Format(".csv", "a CSV table", "a spreadsheet program"),
    "epub": _Format(".epub", "an EPUB book", "Calibre"),
    "eml": _Format(".eml", "an e-mail message", "your mail program"),
    "rst": _Format(".rst", "a reStructuredText document", "a text editor"),
    "org": _Format(".org", "an Org document", "a text editor"),
    "odt": _Format(".odt", "an OpenDocument text", "LibreOffice Writer"),
    "rtf": _Format(".rtf", "an RTF document", "a word processor"),
    # Recognised only to be refused with advice: reading them needs LibreOffice (or Outlook).
    "doc": _Format(".doc", "a Word 97-2003 document", "Word or LibreOffice Writer"),
    "ppt": _Format(".ppt", "a PowerPoint 97-2003 presentation", "PowerPoint or LibreOffice Impress"),
    "msg": _Format(".msg", "an Outlook message", "Outlook"),
}
REFUSED = {
    "doc": "the old Word .doc format cannot be read here (it needs LibreOffice, which this server "
           "does not have); open it in Word or LibreOffice Writer, save it as .docx and upload that",
    "ppt": "the old PowerPoint .ppt format cannot be read here (it needs LibreOffice, which this "
           "server does not have); open it in PowerPoint or LibreOffice Impress, save it as .pptx "
           "and upload that",
    "msg": "Outlook .msg files are not supported; save the message as .eml (most mail programs can, or "
           "drag it out of Outlook on the web) and upload that",
}
MIME_TYPES: dict[str, str] = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/vnd.ms-excel": "xls",
    "text/csv": "csv", "application/csv": "csv", "text/comma-separated-values": "csv",
    "application/epub+zip": "epub",
    "message/rfc822": "eml",
    "text/x-rst": "rst", "text/prs.fallenstein.rst": "rst",
    "text/org": "org", "text/x-org": "org",
    "application/vnd.oasis.opendocument.text": "odt",
    "application/rtf": "rtf", "text/rtf": "rtf",
    "application/msword": "doc",
    "application/vnd.ms-powerpoint": "ppt",
    "application/vnd.ms-outlook": "msg",
}
EXTENSIONS: dict[str, str] = {f".{key}": key for key in FORMATS}
_MODERN = {"doc": ".docx", "xls": ".xlsx", "ppt": ".pptx", "csv": ".xlsx"}
_ZIP_FORMATS = {"docx", "pptx", "xlsx", "odt", "epub"}
OFFICE_BINARY = {"docx", "pptx", "xlsx", "odt", "doc", "ppt", "xls"}  # where bytes decide the format


def supported(content_type: str, filename: str | None) -> str | None:
    """The format key (``"docx"``, ``"csv"``...) for the artifact, or None when not handled here.

    A specific MIME type wins; a generic one (``application/octet-stream``, ``text/plain``)
    falls back to the file name's extension.
    """
    ct = content_type.split(";")[0].strip().lower()
    if ct in MIME_TYPES:
        return MIME_TYPES[ct]
    if filename and "." in filename:
        return EXTENSIONS.get("." + filename.rsplit(".", 1)[1].lower())
    return None


def _ole_kind(raw: bytes) -> str:
    """What an OLE compound file holds: encrypted (OOXML or xls), xls, doc, ppt or unknown."""
    import olefile

    try:
        ole = olefile.OleFileIO(io.BytesIO(raw))
    except (OSError, ValueError, IndexError, TypeError):
        return "damaged"
    try:
        if ole.exists("EncryptedPackage") or ole.exists("EncryptionInfo"):
            return "encrypted"
        if ole.exists("Workbook") or ole.exists("Book"):
            return "xls"
        if ole.exists("WordDocument"):
            return "doc"
        if ole.exists("PowerPoint Document"):
            return "ppt"
        if ole.exists("__substg1.0_0037001F") or ole.exists("__substg1.0_0037001E"):
            return "msg"
        return "unknown"
    finally:
        ole.close()


def resolve_binary(fmt: str, raw: bytes) -> str:
    """Check the container of an office file against its claimed format; the bytes decide."""
    info = FORMATS[fmt]
    if raw.startswith(OLE_MAGIC):
        kind = _ole_kind(raw)
        if kind == "encrypted":
            raise PermanentError(
                f"the document is password-protected; open it in {info.app}, remove the password "
                f"(File > Info > Protect) and upload it again, or upload an unprotected copy")
        if kind in ("xls", "doc", "ppt", "msg"):
            return kind  # an old binary file, perhaps renamed: refused later unless it is .xls
        if fmt in REFUSED:
            return fmt  # a .doc/.ppt/.msg we could not look inside: refused with its advice
        raise PermanentError(
            f"the document is password-protected or in the old binary Office format; open it in "
            f"{info.app}, save it as {_MODERN.get(fmt, info.label)} without a password and upload it again")
    zkind = zip_kind(raw)
    if zkind in _ZIP_FORMATS:
        return zkind
    if raw.startswith(ZIP_MAGIC) and zkind is None:
        raise PermanentError(
            f"the {info.label} file is damaged (it is cut short or corrupted, perhaps by an interrupted "
            f"download); open it in {info.app} and save it again, or upload the original")
    if zkind == "zip":
        raise PermanentError(
            f"the {info.label} file is damaged or is not {info.kind}: it is a ZIP archive without the "
            f"document inside; open it in {info.app} and save it again, or upload the original")
    raise PermanentError(f"the {info.label} file is not {info.kind} (its content is something else); "
                         "upload it with its real type or extension")



def no_text(fmt: str) -> str:
    info = FORMATS[fmt]
    advice = {
        "docx": "it is blank, or holds only images (scanned pages need OCR: upload them as PDF or images)",
        "odt": "it is blank, or holds only images (scanned pages need OCR: upload them as PDF or images)",
        "pptx": "its slides hold only pictures or are blank",
        "xlsx": "its sheets are empty",
        "xls": "its sheets are empty",
        "csv": "it has no rows",
        "epub": "it has no readable chapters (it may be DRM-protected or contain only images)",
    }.get(fmt, "it is blank")
    return f"no text found in the {info.label} file: {advice}"


def wrap_error(exc: Exception, fmt: str) -> PermanentError:
    """A sentence a person can act on, for a library's exception about a file's bytes."""
    info = FORMATS[fmt]
    detail = clean(str(exc)).replace("\n", " ")
    detail = re.sub(r"<_io\.BytesIO object at 0x[0-9a-f]+>", "the file", detail)[:200]
    low = detail.lower()
    if "password" in low or "encrypt" in low:
        return PermanentError(f"the {info.label} file is password-protected; remove the password in "
                              f"{info.app} and upload it again")
    if "exceeds the maximum" in low:
        return PermanentError(f"the {info.label} file is too large to index ({detail})")
    if fmt in ("csv",):
        return PermanentError(f"the .csv file could not be read as a table ({detail}); check that it is "
                              "comma-, semicolon- or tab-separated with balanced quotes")
    if fmt in ("rst", "org", "rtf") and isinstance(exc, RuntimeError):
        return PermanentError(f"the {info.label} file could not be converted ({detail}); check its markup")
    return PermanentError(f"the {info.label} file is damaged or is not really {info.kind} ({detail}); "
                          f"open it in {info.app} and save it again, or upload the original")
