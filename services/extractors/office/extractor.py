"""The office extractor: format checks, the partition-and-build path shared by all formats, the dispatch."""

from __future__ import annotations

import importlib
import io
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from secondbrain.errors import PermanentError, RetryableError
from services.extractors import dates
from services.extractors.budget import Budget, check_container
from services.extractors.document import Block, Extracted, ExtractionContext
from services.extractors.office import mail, markup, sheets, slides, word
from services.extractors.office.blocks import Builder
from services.extractors.office.formats import (
    FORMATS,
    OFFICE_BINARY,
    OLE_MAGIC,
    REFUSED,
    no_text,
    resolve_binary,
    supported,
    wrap_error,
)
from services.extractors.office.offline import SPACY_MODEL, configure_unstructured_offline
from services.extractors.office.properties import language_code, properties

ROWS_PER_TABLE_BLOCK = 30
MAX_TABLE_HTML_CHARS = 2000
_PARTITION_MODULES = {fmt: f"unstructured.partition.{name}" for fmt, name in (
    ("docx", "docx"), ("pptx", "pptx"), ("xlsx", "xlsx"), ("xls", "xlsx"), ("csv", "csv"), ("epub", "epub"),
    ("eml", "email"), ("rst", "rst"), ("org", "org"), ("odt", "odt"), ("rtf", "rtf"))}
_TABULAR = {"xlsx", "xls", "csv"}  # language detection on cell values is noise


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
        if fmt in OFFICE_BINARY or raw.startswith(OLE_MAGIC):
            fmt = resolve_binary(fmt, raw)
        if fmt in REFUSED:
            raise PermanentError(REFUSED[fmt])
        check_container(raw, fmt, self.budget, f"{FORMATS[fmt].label} file")  # before any parser runs
        try:
            return _HANDLERS[fmt](self, raw)
        except (PermanentError, RetryableError):
            raise
        except Exception as exc:  # a library's error about these bytes: retrying cannot help
            raise wrap_error(exc, fmt) from exc

    # -- per format ----------------------------------------------------------------------------

    def _partition(self, fmt: str, **kwargs: Any) -> list[Any]:
        """Run the format's partitioner (imported lazily: it pulls in pandas, lxml, spaCy...)."""
        module = importlib.import_module(_PARTITION_MODULES[fmt])
        name = "partition_" + _PARTITION_MODULES[fmt].rsplit(".", 1)[1]
        return list(getattr(module, name)(**kwargs))

    def builder(self, mode: str = "document", root_path: tuple[str, ...] = ()) -> Builder:
        return Builder(self.rows_per_table_block, self.max_table_html_chars, mode=mode, root_path=root_path)

    def document(self, fmt: str, raw: bytes, mode: str = "document") -> Extracted:
        """The common path: partition, build blocks, add the file's properties."""
        elements = self._partition(fmt, file=io.BytesIO(raw))
        builder = self.builder(mode)
        for el in elements:
            builder.add(el)
        return self.finish(fmt, builder.finish(), elements, properties(raw, fmt))

    def finish(self, fmt: str, blocks: list[Block], elements: Sequence[Any], props: dict[str, str],
                *, title: str | None = None, extra_meta: dict[str, str] | None = None,
                stated: datetime | None = None) -> Extracted:
        if not blocks:
            raise PermanentError(no_text(fmt))
        meta = {"format": fmt, **{k: v for k, v in props.items() if k != "title"}, **(extra_meta or {})}
        if title is None:
            title = props.get("title") or next(
                (b.text for b in blocks if b.kind == "heading" and b.attributes.get("level") == "1"
                 and "sheet" not in b.attributes), None)
        if stated is None:
            stated = dates.iso_datetime(props.get("created")) or dates.iso_datetime(props.get("modified"))
        language = props.get("language") or (None if fmt in _TABULAR else language_code(elements))
        return Extracted(title=title, modality=self.modality, blocks=blocks, metadata=meta,
                         stated_time=stated, stated_time_source="file_metadata", language=language)


_HANDLERS: dict[str, Callable[[OfficeExtractor, bytes], Extracted]] = {
    "docx": word.extract_docx, "odt": word.extract_odt, "epub": word.extract_epub, "rtf": word.extract_rtf,
    "pptx": slides.extract_pptx,
    "xlsx": sheets.extract_xlsx, "xls": sheets.extract_xls, "csv": sheets.extract_csv,
    "rst": markup.extract_rst, "org": markup.extract_org,
    "eml": mail.extract_eml,
}
