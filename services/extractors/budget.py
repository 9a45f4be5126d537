"""Per-artifact budgets for extraction: how big a container may unpack, how many elements it may hold.

A 1 MB ``.docx`` can declare 1 GiB of XML (a zip bomb) and a 3 KB one can hold 20,000
paragraphs that the office parser then works through one by one.  Both are found here from the
zip's own directory and a streaming count of paragraph tags, in milliseconds and without
unpacking the whole thing, and refused with a sentence before any parser runs.  The wall-time
and memory budgets are enforced around the parser by :mod:`services.extractors.isolation`.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass

from secondbrain.errors import PermanentError

MB = 1024 * 1024
_BLOCK = 256 * 1024

# The tags that become one element each, by container format, and the members that hold them.
_PARAGRAPHS: dict[str, tuple[re.Pattern[str], re.Pattern[bytes]]] = {
    "docx": (re.compile(r"^word/(document|footnotes|endnotes|header\d*|footer\d*)\.xml$"),
             re.compile(rb"<w:p[\s>/]")),
    "pptx": (re.compile(r"^ppt/slides/slide\d+\.xml$"), re.compile(rb"<a:p[\s>/]")),
    "odt": (re.compile(r"^content\.xml$"), re.compile(rb"<text:[ph][\s>/]")),
    "epub": (re.compile(r".*\.(x?html?|xml)$", re.I), re.compile(rb"<(p|li|h[1-6]|td)[\s>/]", re.I)),
    "xlsx": (re.compile(r"^xl/worksheets/sheet\d+\.xml$"), re.compile(rb"<row[\s>/]")),
}


@dataclass(frozen=True, slots=True)
class Budget:
    """What one artifact may cost to extract (see the settings of the same names)."""

    max_expanded_bytes: int = 256 * MB  # SB_EXTRACT_MAX_EXPANDED_MB
    max_elements: int = 20_000  # SB_EXTRACT_MAX_ELEMENTS: paragraphs, slides' paragraphs, rows...
    timeout_s: float = 300.0  # SB_EXTRACT_TIMEOUT_S
    max_memory_bytes: int = 2048 * MB  # SB_EXTRACT_MAX_MEMORY_MB


def check_container(raw: bytes, fmt: str, budget: Budget, label: str) -> None:
    """Refuse a zip-based document that would unpack past the budget or hold too many elements.

    ``label`` names the file for a person (".docx file").  Bytes that are not a readable zip
    pass: the format's own parser says what is wrong with them.
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except (zipfile.BadZipFile, OSError, ValueError):
        return
    with archive:
        members = archive.infolist()
        expanded = sum(max(0, m.file_size) for m in members)
        if expanded > budget.max_expanded_bytes:
            raise PermanentError(
                f"the {label} would unpack to {_size(expanded)} (its {len(members)} parts), over the "
                f"{_size(budget.max_expanded_bytes)} limit for one document (SB_EXTRACT_MAX_EXPANDED_MB): it "
                "is damaged or built to exhaust memory (a zip bomb). If it is a real document, split it or "
                "save it again from its application.")
        rule = _PARAGRAPHS.get(fmt)
        if rule is None:
            return
        names, tag = rule
        limit = budget.max_elements * (50 if fmt == "xlsx" else 1)  # rows are cheap; paragraphs are not
        count = 0
        for m in members:
            if names.match(m.filename):
                count += _count(archive, m, tag)
                if count > limit:
                    what = "rows" if fmt == "xlsx" else "paragraphs"
                    raise PermanentError(
                        f"the {label} holds more than {limit:,} {what}; the limit for one document is {limit:,} "
                        "(SB_EXTRACT_MAX_ELEMENTS). Split it into smaller files, or ask the operator to raise "
                        "the limit.")


def _count(archive: zipfile.ZipFile, member: zipfile.ZipInfo, tag: re.Pattern[bytes]) -> int:
    """Occurrences of ``tag`` in one member, read in blocks; a match across two blocks counts once."""
    found, carry = 0, b""
    try:
        with archive.open(member) as fh:
            while block := fh.read(_BLOCK):
                data = carry + block
                cut = max(0, len(data) - 16)  # the last bytes wait for the next block (tags are shorter)
                found += sum(1 for m in tag.finditer(data) if m.start() < cut)
                carry = data[cut:]
        found += len(tag.findall(carry))
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, ValueError):
        pass  # a damaged part: the parser reports it
    return found


def _size(n: int) -> str:
    if n >= 1024 * MB:
        return f"{n / (1024 * MB):.1f} GiB"
    return f"{n / MB:.0f} MiB" if n >= MB else f"{n / 1024:.0f} KiB"
