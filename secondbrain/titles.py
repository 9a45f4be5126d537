"""Titles people can recognise: a stored title that says nothing gives way to the file name.

PDF and office generators write placeholders into a file's metadata ("untitled", "Microsoft Word -
report.docx", "Document1"); shown as is, every such file reads the same.  The extractor skips them
when it picks a title, and the API applies the same rule when it serves titles stored earlier.
"""

from __future__ import annotations

import re

# Placeholders generators write when nobody typed a title (matched on the whole, lower-cased title).
_PLACEHOLDER = re.compile(
    r"(untitled|untitled document|no title|none|null|unknown|title|document\d*|presentation\d*|book\d*"
    r"|sheet\d*|slide\s*\d*|new document|new microsoft word document|powerpoint presentation|pdf|doc\d*"
    r"|microsoft word|microsoft powerpoint|microsoft excel)(\.\w{1,5})?"
)
# "Microsoft Word - report.docx": the generator's name before the file name.
_GENERATOR_PREFIX = re.compile(r"^(microsoft (word|powerpoint|excel)|libreoffice \w+|google docs)\s*-\s*", re.I)
_URI_SCHEMES = ("file:", "note:")


def meaningful(title: str | None) -> str | None:
    """The title as a person would want it, or None when it is empty or a generator's default."""
    if title is None:
        return None
    text = " ".join(title.split())
    text = _GENERATOR_PREFIX.sub("", text)
    if not text or _PLACEHOLDER.fullmatch(text.lower().strip(" .-_")):
        return None
    return text


def name_from_uri(uri: str | None) -> str | None:
    """A file's name from its source address ("file:report.pdf" -> "report.pdf"); None for notes."""
    if not uri or uri.startswith("note:"):
        return None
    if uri.startswith("file:"):
        return uri[len("file:"):] or None
    return None


def display_title(title: str | None, source_uri: str | None = None, filename: str | None = None) -> str | None:
    """What to show for a source: its own title when it means something, else the file's name."""
    return meaningful(title) or filename or name_from_uri(source_uri) or (title.strip() or None if title else None)


__all__ = ["display_title", "meaningful", "name_from_uri"]
