"""What a format module reads a file with: the format's ``unstructured`` partitioner, the block builder and
the common finish (title, stated time, language).  The format modules take a :class:`Reading`, never the
extractor that dispatches to them."""

from __future__ import annotations

import importlib
import io
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from secondbrain.errors import PermanentError
from services.extractors import dates
from services.extractors.document import Block, Extracted
from services.extractors.office.blocks import Builder
from services.extractors.office.formats import no_text
from services.extractors.office.properties import language_code, properties

PARTITION_MODULES = {fmt: f"unstructured.partition.{name}" for fmt, name in (
    ("docx", "docx"), ("pptx", "pptx"), ("xlsx", "xlsx"), ("xls", "xlsx"), ("csv", "csv"), ("epub", "epub"),
    ("eml", "email"), ("rst", "rst"), ("org", "org"), ("odt", "odt"), ("rtf", "rtf"))}
_TABULAR = {"xlsx", "xls", "csv"}  # language detection on cell values is noise


def partition(fmt: str, **kwargs: Any) -> list[Any]:
    """Run the format's partitioner (imported lazily: it pulls in pandas, lxml, spaCy...)."""
    module = importlib.import_module(PARTITION_MODULES[fmt])
    name = "partition_" + PARTITION_MODULES[fmt].rsplit(".", 1)[1]
    return list(getattr(module, name)(**kwargs))


class Reading:
    """The extractor's settings and the steps every format shares.  ``partition`` is the partitioner (an
    attribute, so a test can make the library fail)."""

    def __init__(self, modality: str, rows_per_table_block: int, max_table_html_chars: int,
                 partition: Callable[..., list[Any]] = partition) -> None:
        self.modality = modality
        self.rows_per_table_block = rows_per_table_block
        self.max_table_html_chars = max_table_html_chars
        self.partition = partition

    def builder(self, mode: str = "document", root_path: tuple[str, ...] = ()) -> Builder:
        return Builder(self.rows_per_table_block, self.max_table_html_chars, mode=mode, root_path=root_path)

    def document(self, fmt: str, raw: bytes, mode: str = "document") -> Extracted:
        """The common path: partition, build blocks, add the file's properties."""
        elements = self.partition(fmt, file=io.BytesIO(raw))
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
