"""The office extractor: format checks, the partition-and-build path shared by all formats, the dispatch."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from secondbrain.errors import PermanentError, RetryableError
from services.extractors.budget import Budget, check_container
from services.extractors.document import Extracted, ExtractionContext
from services.extractors.office import mail, markup, sheets, slides, word
from services.extractors.office.formats import (
    FORMATS,
    OFFICE_BINARY,
    OLE_MAGIC,
    REFUSED,
    resolve_binary,
    supported,
    wrap_error,
)
from services.extractors.office.offline import SPACY_MODEL, configure_unstructured_offline
from services.extractors.office.reading import PARTITION_MODULES, Reading

ROWS_PER_TABLE_BLOCK = 30
MAX_TABLE_HTML_CHARS = 2000


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
        self.reading = Reading(self.modality, rows_per_table_block, max_table_html_chars)
        self.unstructured_version = configure_unstructured_offline()
        import pypandoc

        try:  # pypandoc_binary ships pandoc; never let pypandoc try to download one
            self.pandoc_version = str(pypandoc.get_pandoc_version())
        except OSError as exc:
            raise RuntimeError(f"pandoc is not available ({exc}): install pypandoc_binary") from exc
        if warm_up:
            for module in PARTITION_MODULES.values():
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
            return _HANDLERS[fmt](self.reading, raw)
        except (PermanentError, RetryableError):
            raise
        except Exception as exc:  # a library's error about these bytes: retrying cannot help
            raise wrap_error(exc, fmt) from exc

_HANDLERS: dict[str, Callable[[Reading, bytes], Extracted]] = {
    "docx": word.extract_docx, "odt": word.extract_odt, "epub": word.extract_epub, "rtf": word.extract_rtf,
    "pptx": slides.extract_pptx,
    "xlsx": sheets.extract_xlsx, "xls": sheets.extract_xls, "csv": sheets.extract_csv,
    "rst": markup.extract_rst, "org": markup.extract_org,
    "eml": mail.extract_eml,
}
