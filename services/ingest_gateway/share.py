"""What a share from another app holds, as captures: a link to fetch, words to keep as a note.

A phone's share sheet fills the manifest's ``title``, ``text`` and ``url`` as the sharing app likes:
Chrome on Android sends a page's address in ``text`` (``url`` empty), many apps send "Headline
https://..." in ``text``, others a title that only repeats the link.  So the link is looked for in
``text`` too, and the words are kept only when they say more than the link and the title.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import parse_qsl

from fastapi import HTTPException

MAX_SHARED_FILES = 10  # a share sheet's multi-select; together they stay within SB_MAX_UPLOAD_BYTES
MAX_FORM_BYTES = 256 * 1024  # a share's title, text and link as a plain form (no files)
_LINK = re.compile(r"https?://[^\s<>\"']+", re.I)


@dataclass(frozen=True, slots=True)
class Shared:
    title: str | None
    text: str | None  # the note to keep (None: nothing beyond the link and the title)
    url: str | None  # the page to fetch


def split_share(title: str | None, text: str | None, url: str | None, *, fetch: bool = True) -> Shared:
    """The capture a share makes (``fetch=False``: no page is fetched, a link stays in the words)."""
    title = " ".join((title or "").split())[:500] or None
    text = (text or "").strip() or None
    url = (url or "").strip() or None
    if url and (not fetch or not url.lower().startswith(("http://", "https://"))):
        # Not a page to fetch (content://, a private address): the link is kept in the words.
        if url not in (text or ""):
            text = f"{text}\n\n{url}" if text else url
        url = None
    if fetch and url is None and text:
        links = _LINK.findall(text)
        if len(links) == 1:
            url = links[0].rstrip(".,;:!?)")
    if text and url:
        rest = " ".join(text.replace(url, " ").split())
        if not rest or rest == title:
            text = None  # only the link (and the title again): the page says it all
        elif url not in text:
            text = f"{text}\n\n{url}"  # the note names the page it was shared with
    return Shared(title, text, url)


async def read_small_form(stream: AsyncIterator[bytes]) -> dict[str, str]:
    """An application/x-www-form-urlencoded body, refused with 413 past :data:`MAX_FORM_BYTES`."""
    body = bytearray()
    async for block in stream:
        body += block
        if len(body) > MAX_FORM_BYTES:
            raise HTTPException(413, f"a share without files is at most {MAX_FORM_BYTES} bytes")
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
