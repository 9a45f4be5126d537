"""The formats secondbrain imports, and which one an export is, decided from its content.

Each format module declares a :class:`Format`: how to recognise an export of it (``detect`` looks at the
files and their first bytes, never only at names), how many items it holds (for progress), and how to read
it into captures.  Detection tries the specific formats first and the generic notes folder last.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from services.importers.archive import Export
from services.importers.format import Format
from services.importers.model import ExportError

log = logging.getLogger(__name__)


def formats() -> list[Format]:
    """Every format, in the order detection tries them."""
    from services.importers import (
        bookmarks,
        evernote,
        ics,
        keep,
        khoj,
        kindle,
        mem0,
        notes_folder,
        notion,
        readwise,
        secondbrain_export,
        telegram,
        whatsapp,
    )

    return [secondbrain_export.FORMAT, evernote.FORMAT, bookmarks.FORMAT, keep.FORMAT, notion.FORMAT, telegram.FORMAT,
            mem0.FORMAT, khoj.FORMAT, kindle.FORMAT, readwise.FORMAT, whatsapp.FORMAT, ics.FORMAT,
            notes_folder.FORMAT]


def by_name(name: str) -> Format:
    """The format ``--from NAME`` asks for (its name or an alias, any case)."""
    wanted = name.strip().lower()
    for f in formats():
        if wanted == f.name or wanted in f.aliases:
            return f
    raise ExportError(f"there is no import format called {name!r}; the formats are {names()}")


def names() -> str:
    return ", ".join(f.name for f in formats())


@dataclass(frozen=True, slots=True)
class Detected:
    """The format an export is, what was found, and other formats also present (e.g. a Takeout with
    Keep notes and Chrome bookmarks)."""

    format: Format
    found: str
    also: tuple[tuple[Format, str], ...] = ()


def _detect(fmt: Format, export: Export) -> str | None:
    """What ``fmt`` finds in the export; a file that trips its reader up (a hostile or damaged export) means
    it is not this format, never a failure of the import."""
    try:
        return fmt.detect(export)
    except ExportError:
        return None
    except Exception:  # a reader's own error on bytes it did not expect
        log.warning("the %s reader failed on an export while detecting its format", fmt.name, exc_info=True)
        return None


def detect(export: Export, forced: str | None = None) -> Detected:
    """Which format ``export`` is (``forced``: this one, checked all the same)."""
    if forced:
        fmt = by_name(forced)
        found = _detect(fmt, export)
        if found is None and export.damaged:
            raise ExportError(export.damage_report())
        if found is None:
            raise ExportError(f"{export.name} does not look like {fmt.label} ({fmt.what})")
        return Detected(fmt, found)
    hits = [(f, found) for f in formats() if (found := _detect(f, export)) is not None]
    if not hits and export.damaged:  # what it is cannot be told: the damage is the answer
        raise ExportError(export.damage_report())
    if not hits:
        raise ExportError(
            f"{export.name} is not an export secondbrain recognises. It reads: "
            + "; ".join(f"{f.label} ({f.what})" for f in formats())
            + ". Name the format with --from FORMAT if it is one of them.")
    (fmt, found), *rest = hits
    # The generic notes folder also matches the Markdown inside other exports: it is no second format there.
    also = tuple((f, s) for f, s in rest if f.name != "notes")
    return Detected(fmt, found, also)
