"""What a format module declares: how to recognise its exports, count and read them (the registry lists the
formats; the format modules do not import it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from services.importers.archive import Export
from services.importers.model import Options, Result


@dataclass(frozen=True, slots=True)
class Format:
    """One kind of export."""

    name: str  # what --from takes
    label: str  # what people call it
    what: str  # what to export in the tool, for the README and the error sentences
    detect: Callable[[Export], str | None]  # what was found ("412 notes in Takeout/Keep"), or None
    count: Callable[[Export, Options], int]  # how many items (captures or skips) reading it yields, about
    read: Callable[[Export, Options], Iterator[Result]]
    aliases: tuple[str, ...] = ()
