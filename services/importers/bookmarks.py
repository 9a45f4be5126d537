"""Browser bookmarks in the Netscape bookmark file format, which every browser exports (Chrome, Edge,
Firefox, Safari, Brave...) and Google Takeout includes (``Chrome/Bookmarks.html``).

``<!DOCTYPE NETSCAPE-Bookmark-file-1>``, folders as ``<DT><H3>Name</H3><DL>...</DL>``, bookmarks as
``<DT><A HREF="..." ADD_DATE="1709649131" TAGS="a,b">Title</A>``, an optional ``<DD>`` description.
Each bookmark becomes a web page capture, fetched by the fetcher with its limits (robots.txt, size, time,
public addresses only), dated by its ``ADD_DATE`` and titled as it was saved; its folder path and tags go
with it.  The same address bookmarked twice is fetched once.
"""

from __future__ import annotations

from collections.abc import Iterator

from lxml import etree
from lxml import html as lxml_html

from services.importers import render
from services.importers.archive import Entry, Export
from services.importers.format import Format
from services.importers.model import ExportError, Options, Result, Skipped, guarded
from services.importers.times import from_epoch

NAME = "bookmarks"


def _files(export: Export) -> list[Entry]:
    out = []
    for e in export.candidates(".html", ".htm", ""):
        try:
            with export.open_entry(e) as fh:
                head = fh.read(2048).upper()
        except (OSError, ExportError):
            continue
        if b"NETSCAPE-BOOKMARK-FILE" in head:
            out.append(e)
    return out


def _marks(export: Export, entry: Entry) -> list[tuple[etree._Element, list[str]]]:
    raw = export.read(entry, limit=256 * 1024 * 1024)
    root = lxml_html.fromstring(raw.decode("utf-8", "replace"))
    out = []
    for a in root.iter("a"):
        out.append((a, _folders(a)))
    return out


def _folders(a: etree._Element) -> list[str]:
    """The folder path of a bookmark: the ``<H3>`` that heads each ``<DL>`` it sits in."""
    path: list[str] = []
    node = a.getparent()
    while node is not None:
        if node.tag == "dl":
            # The heading is the <H3> just before the list: alone, or in the <DT> the parser closed around it.
            head = node.getprevious()
            while head is not None and head.tag == "p":
                head = head.getprevious()
            if head is not None and head.tag == "dt":
                head = head.find("h3")
            if head is None and node.getparent() is not None and node.getparent().tag == "dt":
                head = node.getparent().find("h3")
            if head is not None and head.tag == "h3":
                path.append(" ".join(head.text_content().split()))
        node = node.getparent()
    return list(reversed(path))


def detect(export: Export) -> str | None:
    files = _files(export)
    if not files:
        return None
    return f"{count(export, Options())} bookmarks"


def count(export: Export, options: Options) -> int:
    return sum(len(_marks(export, e)) for e in _files(export))


def read(export: Export, options: Options) -> Iterator[Result]:
    seen: dict[str, str] = {}
    for entry in _files(export):
        for a, folders in _marks(export, entry):
            yield from guarded(a.get("href") or "a bookmark", entry.path, _bookmark, a, folders, entry, seen)


def _bookmark(a: etree._Element, folders: list[str], entry: Entry, seen: dict[str, str]) -> Result:
    href = (a.get("href") or "").strip()
    title = " ".join(a.text_content().split()) or None
    folder = " / ".join(folders)
    label = title or href[:80] or "a bookmark"
    if not href.lower().startswith(("http://", "https://")):
        kind = href.split(":", 1)[0].lower() if ":" in href else "no address"
        return Skipped(label, f"not a web page ({kind}: bookmarks, such as bookmarklets, are not fetched)",
                       entry.path)
    where = seen.get(href)
    if where is not None:
        return Skipped(label, f"the same address is bookmarked again (in {where or 'the top level'})", entry.path,
                       duplicate=True)
    seen[href] = folder
    dd = a.getparent().getnext() if a.getparent() is not None else None
    description = " ".join(dd.text_content().split()) if dd is not None and dd.tag == "dd" else None
    return render.url(NAME, href, origin=entry.path, title=title, captured_at=from_epoch(a.get("add_date")),
                      folder=folder or None, tags=a.get("tags") or None, description=description)


FORMAT = Format(NAME, "browser bookmarks", "the browser's bookmark manager: Export bookmarks (an HTML file)",
                detect, count, read, aliases=("netscape", "chrome", "firefox", "safari"))
