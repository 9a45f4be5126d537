"""Office documents, e-books, spreadsheets and e-mail -> a structured document.

The "other formats" extractor: Word (.docx), PowerPoint (.pptx), Excel (.xlsx and old
.xls), CSV, EPUB, e-mail (.eml), reStructuredText, Org, OpenDocument text (.odt) and RTF.
The ``unstructured`` library turns each format into typed elements (titles, paragraphs,
list items, tables); :mod:`.blocks` maps them onto :class:`Block` objects with heading paths,
slide numbers (pptx), sheet names (xlsx) and page numbers (docx, when Word recorded them),
and :mod:`.properties` reads title, author and dates from the file's own properties.

* :mod:`.extractor`: :class:`OfficeExtractor`, the path all formats share;
* :mod:`.formats`: which format the bytes are, refusals and error sentences;
* :mod:`.word`, :mod:`.slides`, :mod:`.sheets`, :mod:`.markup`, :mod:`.mail`: one per format family;
* :mod:`.offline`: ``unstructured`` without analytics pings or model downloads (run once at start-up).

Nothing here imports ``unstructured`` at import time: :func:`configure_unstructured_offline`
must run before it is first imported.
"""

from __future__ import annotations

from services.extractors.office.blocks import table_chunks
from services.extractors.office.extractor import MAX_TABLE_HTML_CHARS, ROWS_PER_TABLE_BLOCK, OfficeExtractor
from services.extractors.office.formats import EXTENSIONS, FORMATS, MIME_TYPES, supported
from services.extractors.office.offline import SPACY_MODEL, TESTED_UNSTRUCTURED_VERSION, configure_unstructured_offline

__all__ = ["EXTENSIONS", "FORMATS", "MAX_TABLE_HTML_CHARS", "MIME_TYPES", "ROWS_PER_TABLE_BLOCK", "SPACY_MODEL",
           "TESTED_UNSTRUCTURED_VERSION", "OfficeExtractor", "configure_unstructured_offline", "supported",
           "table_chunks"]
