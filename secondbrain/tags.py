"""Tags: what a person files a source under, kept as a list of short names per source.

A tag is lower case, without ``#``, its words joined by ``-`` (``Reading List`` -> ``reading-list``), at most
:data:`MAX_TAG_CHARS` characters; ``/`` stays (``work/plans``, as Bear and Obsidian nest them).  The same
rule reads a tag typed in the API, the CLI, a query's ``tag:`` word and an imported note's front matter, so
one tag has one spelling wherever it comes from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_TAG_CHARS = 64
MAX_TAGS_PER_SOURCE = 50

_NOT_TAG = re.compile(r"[^\w/-]+", re.U)
# ``tag:garden`` standing alone in a query (``#`` is left alone: "#1", "C#" are words people search for)
_QUERY_TAG = re.compile(r"(?:(?<=\s)|^)tag:([\w/-]+)(?=\s|$)", re.U | re.I)


def normalise_tag(name: str) -> str:
    """``name`` as a tag ("" when nothing of it is left)."""
    return _NOT_TAG.sub("-", name.strip().lstrip("#").lower()).strip("-/")[:MAX_TAG_CHARS].strip("-/")


def normalise_tags(names: Iterable[str]) -> list[str]:
    """Each name as a tag, in order, once each, without the empty ones."""
    return list(dict.fromkeys(t for t in (normalise_tag(n) for n in names) if t))


def tags_in_query(text: str) -> tuple[str, list[str]]:
    """The query without its ``tag:x`` words, and those tags: ``"plans tag:garden"`` is
    ``("plans", ["garden"])``."""
    found = normalise_tags(m.group(1) for m in _QUERY_TAG.finditer(text))
    rest = " ".join(_QUERY_TAG.sub(" ", text).split())
    return rest, found
