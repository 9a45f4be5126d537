"""Plain text and Markdown extraction: structure, offsets, encodings and refusals."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from secondbrain.errors import PermanentError
from services.extractors.document import SEPARATOR
from services.extractors.text import (
    ExtractedText,
    decode_text,
    extract_text,
    is_markdown,
    supports,
)
from tests.examples import examples

pytestmark = pytest.mark.fast  # no services: in the fast lane


def md(text: str, *, filename: str | None = "notes.md", is_note: bool = False) -> ExtractedText:
    return extract_text(text.encode("utf-8"), content_type="text/markdown", filename=filename,
                        is_note=is_note)


def plain(raw: bytes | str, *, filename: str | None = "notes.txt") -> ExtractedText:
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    return extract_text(data, content_type="text/plain", filename=filename, is_note=False)


def assert_offsets_exact(doc: ExtractedText) -> None:
    """Every segment is an exact span of the full text, in order, separated by blank lines."""
    pos = 0
    for i, seg in enumerate(doc.segments):
        assert seg.index == i
        assert doc.full_text[seg.char_start:seg.char_end] == seg.text
        if i:
            assert doc.full_text[pos:seg.char_start] == SEPARATOR
        pos = seg.char_end
    assert pos == len(doc.full_text)


RICH = """\
---
title: "Trip planning"
date: 2024-03-01T09:30:00+01:00
tags: travel, lisbon
author: me
---
# Lisbon

We fly out on Friday. The hotel is near the river.

## Budget

- flights: 320 EUR
- hotel: 4 nights
  - breakfast included
- food

| item | cost |
|------|------|
| tram | 3    |
| pasta| 12   |

> Pack light.
> Really.

### Code

```python
def total(costs):
    # a comment, not a heading

    return sum(costs)
```

## Contacts

1. Ana
2. Rui

# Back home

Unpack.
"""


# --------------------------------------------------------------------------- markdown structure


def test_markdown_headings_give_heading_paths() -> None:
    doc = md(RICH)
    by_text = {s.text: s for s in doc.segments}
    assert by_text["Lisbon"].kind == "heading" and by_text["Lisbon"].attributes == {"level": "1"}
    assert by_text["Lisbon"].heading_path == ["Lisbon"]
    assert by_text["We fly out on Friday. The hotel is near the river."].heading_path == ["Lisbon"]
    assert by_text["Budget"].heading_path == ["Lisbon", "Budget"]
    assert by_text["Code"].heading_path == ["Lisbon", "Budget", "Code"]
    # a level-2 heading closes the level-3 section before it
    assert by_text["Contacts"].heading_path == ["Lisbon", "Contacts"]
    assert by_text["1. Ana\n2. Rui"].heading_path == ["Lisbon", "Contacts"]
    # a new level-1 heading starts a new path
    assert by_text["Unpack."].heading_path == ["Back home"]
    assert doc.modality == "markdown"
    assert_offsets_exact(doc)


def test_fenced_code_stays_whole_with_its_language() -> None:
    doc = md(RICH)
    code = [s for s in doc.segments if s.kind == "code"]
    assert len(code) == 1
    assert code[0].text == "def total(costs):\n    # a comment, not a heading\n\n    return sum(costs)"
    assert code[0].attributes == {"language": "python"}
    assert code[0].heading_path == ["Lisbon", "Budget", "Code"]
    # the comment inside the code block did not become a heading
    assert not any(s.kind == "heading" and "comment" in s.text for s in doc.segments)


def test_code_without_language_and_indented_code() -> None:
    doc = md("# T\n\n```\nplain fence\n```\n\nText.\n\n    indented code\n    second line\n")
    code = [s for s in doc.segments if s.kind == "code"]
    assert [c.text for c in code] == ["plain fence", "indented code\nsecond line"]
    assert all(c.attributes == {} for c in code)


def test_empty_code_block_is_dropped() -> None:
    doc = md("# T\n\n```python\n\n```\n\nText.")
    assert [s.kind for s in doc.segments] == ["heading", "paragraph"]


def test_lists_tables_and_quotes_are_kept_whole() -> None:
    doc = md(RICH)
    kinds = {s.kind: s for s in doc.segments if s.kind in ("list", "table", "quote")}
    lists = [s for s in doc.segments if s.kind == "list"]
    assert lists[0].text == "- flights: 320 EUR\n- hotel: 4 nights\n  - breakfast included\n- food"
    assert kinds["table"].text == "| item | cost |\n|------|------|\n| tram | 3    |\n| pasta| 12   |"
    assert kinds["quote"].text == "Pack light.\nReally."  # quote markers removed, lines kept
    for seg in (lists[0], kinds["table"], kinds["quote"]):
        assert seg.heading_path == ["Lisbon", "Budget"]
    assert lists[1].text == "1. Ana\n2. Rui" and lists[1].heading_path == ["Lisbon", "Contacts"]


def test_front_matter_title_and_date() -> None:
    doc = md(RICH, filename="trip.md")
    assert doc.title == "Trip planning"
    assert doc.stated_time == datetime(2024, 3, 1, 9, 30, tzinfo=timezone(timedelta(hours=1)))
    assert doc.metadata == {"front_matter.title": "Trip planning",
                            "front_matter.date": "2024-03-01T09:30:00+01:00",
                            "front_matter.tags": "travel, lisbon", "tags": "travel lisbon"}
    assert doc.tags == ["travel", "lisbon"]
    # the front matter itself is not indexed as text
    assert "tags:" not in doc.full_text and "author" not in doc.full_text
    assert doc.segments[0].text == "Lisbon"


def test_front_matter_date_without_zone_is_utc_and_bad_date_is_ignored() -> None:
    doc = md("---\ndate: 2021-12-24\n---\nHello.")
    assert doc.stated_time == datetime(2021, 12, 24, tzinfo=UTC)
    zulu = md("---\ndate: 2021-12-24T08:00:00Z\n---\nHello.")
    assert zulu.stated_time == datetime(2021, 12, 24, 8, tzinfo=UTC)
    doc = md("---\ndate: last tuesday\n---\nHello.")
    assert doc.stated_time is None
    assert doc.metadata["front_matter.date"] == "last tuesday"


def test_front_matter_only_is_refused() -> None:
    with pytest.raises(PermanentError, match="no text content"):
        md("---\ntitle: Nothing else\n---\n")


def test_plain_text_is_not_parsed_as_markdown() -> None:
    doc = plain("# not a heading\n\n* not a list")
    assert doc.modality == "text"
    assert [s.kind for s in doc.segments] == ["paragraph", "paragraph"]
    assert doc.segments[0].text == "# not a heading"
    assert all(s.heading_path == [] for s in doc.segments)


def test_plain_text_paragraphs_split_at_blank_lines() -> None:
    text = "First line\nstill first paragraph.\n\n\n\nSecond paragraph.\n \t \nThird one.\n"
    doc = plain(text)
    assert [s.text for s in doc.segments] == [
        "First line\nstill first paragraph.", "Second paragraph.", "Third one."]
    assert doc.full_text == "First line\nstill first paragraph.\n\nSecond paragraph.\n\nThird one."
    assert doc.stated_time is None and doc.metadata == {}
    assert_offsets_exact(doc)


def test_windows_line_endings_are_normalised() -> None:
    doc = md("# Title\r\n\r\nLine one\r\nline two\r\n")
    assert doc.segments[1].text == "Line one\nline two"
    assert "\r" not in doc.full_text


def test_notes_are_markdown_with_modality_note() -> None:
    doc = extract_text(b"# Groceries\n\n- milk\n- eggs", content_type="text/plain", filename=None,
                       is_note=True)
    assert doc.modality == "note"
    assert [s.kind for s in doc.segments] == ["heading", "list"]
    assert doc.title == "Groceries"


def test_markdown_detected_by_extension() -> None:
    assert is_markdown("application/octet-stream", "README.MD")
    assert is_markdown("text/markdown; charset=utf-8", None)
    assert not is_markdown("text/plain", "notes.txt")
    doc = extract_text(b"# Heading\n\nBody.", content_type="application/octet-stream", filename="a.markdown",
                       is_note=False)
    assert doc.modality == "markdown" and doc.segments[0].kind == "heading"


def test_supported_types() -> None:
    assert supports("text/plain", None)
    assert supports("text/markdown", None)
    assert supports("TEXT/PLAIN; charset=utf-8", None)
    assert supports("application/octet-stream", "x.txt")
    assert not supports("application/pdf", "x.pdf")
    assert not supports("image/png", "x.txt")  # a declared binary type is not overridden by the name
    assert not supports("application/octet-stream", "x.bin")


def test_html_blocks_keep_their_text() -> None:
    doc = md("# T\n\n<div class='x'>\n<b>bold</b> words\n</div>\n\nAfter.")
    texts = [s.text for s in doc.segments]
    assert "bold words" in texts
    assert "<b>" not in doc.full_text


# --------------------------------------------------------------------------- titles


def test_title_from_front_matter_beats_h1() -> None:
    assert md("---\ntitle: FM\n---\n# H1\n\ntext").title == "FM"


def test_title_from_first_h1_not_h2() -> None:
    assert md("## Second level\n\ntext\n\n# Real title\n\nmore").title == "Real title"


def test_title_falls_back_to_first_line_without_filename() -> None:
    assert md("## Only a subheading\n\ntext", filename=None).title == "Only a subheading"
    assert plain("Meeting notes from Monday\nmore", filename=None).title == "Meeting notes from Monday"


def test_title_is_none_when_a_filename_can_name_the_document() -> None:
    """With a file name and no stated title the stage names the document after the file."""
    assert plain("Meeting notes from Monday", filename="monday.txt").title is None
    assert md("## Only a subheading\n\ntext", filename="f.md").title is None


def test_long_first_line_title_is_shortened_with_an_ellipsis() -> None:
    title = plain("word " * 100, filename=None).title
    assert title is not None
    assert len(title) <= 80 and title.endswith("…")
    assert title.startswith("word word")


def test_note_without_heading_is_titled_by_its_first_line() -> None:
    doc = extract_text(b"call the plumber tomorrow\n\nabout the sink", content_type="text/markdown",
                       filename=None, is_note=True)
    assert doc.title == "call the plumber tomorrow"


# --------------------------------------------------------------------------- encodings


def test_utf8_with_bom() -> None:
    doc = plain("\ufeffcafé naïve 東京".encode())
    assert doc.full_text == "café naïve 東京"


def test_utf8_without_bom() -> None:
    assert decode_text("Straße \u2013 ✓".encode()) == "Straße \u2013 ✓"


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_with_bom(codec: str) -> None:
    text = "héllo wörld ✓\n\nsecond paragraph"
    raw = text.encode(codec)
    if codec != "utf-16":  # the plain "utf-16" codec writes its own BOM
        raw = ("\ufeff".encode(codec)) + raw
    doc = plain(raw)
    assert [s.text for s in doc.segments] == ["héllo wörld ✓", "second paragraph"]


def test_cp1252_fallback() -> None:
    raw = "Café “quoted” \u2013 5 €\n\nnaïve".encode("cp1252")
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    doc = plain(raw)
    assert doc.full_text == "Café “quoted” \u2013 5 €\n\nnaïve"


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("raw", [b"", b"   ", b"\n\n\t \r\n", b"\xef\xbb\xbf  \n", "  \n ".encode("utf-16")],
                         ids=["empty", "spaces", "whitespace", "bom-whitespace", "utf16-whitespace"])
def test_empty_or_whitespace_only_file_is_refused(raw: bytes) -> None:
    with pytest.raises(PermanentError, match="empty"):
        plain(raw)


def test_binary_png_is_refused() -> None:
    rng = random.Random(8391)
    raw = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(rng.randrange(256) for _ in range(4096))
    with pytest.raises(PermanentError, match=r"binary|not text") as info:
        plain(raw, filename="photo.txt")
    assert info.value.kind == "permanent"


def test_random_bytes_without_nul_are_refused() -> None:
    rng = random.Random(7)
    raw = bytes(rng.choice([b for b in range(1, 256) if b not in b"\x81\x8d\x8f\x90\x9d"])
                for _ in range(4096))
    with pytest.raises(PermanentError, match=r"binary|not text"):
        plain(raw)


@pytest.mark.parametrize("raw", [b"hello\x00world", b"A normal looking line of text.\x00\n\nAnother."])
def test_nul_bytes_are_refused(raw: bytes) -> None:
    with pytest.raises(PermanentError, match="binary"):
        plain(raw)


def test_invalid_utf16_is_refused() -> None:
    with pytest.raises(PermanentError, match="UTF-16"):
        plain(b"\xff\xfe" + "ok".encode("utf-16-le") + b"\x00\xd8")  # a lone high surrogate


def test_a_few_control_characters_do_not_make_text_binary() -> None:
    doc = plain("Page one\x0c\n\nPage two with a bell \x07 in it. " + "More text. " * 20)
    assert doc.segments[0].text.startswith("Page one")


# --------------------------------------------------------------------------- properties

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
_SENTENCE = st.lists(_WORD, min_size=1, max_size=8).map(lambda ws: " ".join(ws).capitalize() + ".")


@st.composite
def markdown_documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A Markdown document and the words it contains (that must all survive extraction)."""
    parts: list[str] = []
    words: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["heading", "paragraph", "code", "list", "quote"]))
        if kind == "heading":
            text = " ".join(draw(st.lists(_WORD, min_size=1, max_size=4)))
            parts.append("#" * draw(st.integers(1, 4)) + " " + text)
            words += text.split()
        elif kind == "paragraph":
            sentences = draw(st.lists(_SENTENCE, min_size=1, max_size=4))
            parts.append(" ".join(sentences))
            words += " ".join(sentences).replace(".", "").split()
        elif kind == "code":
            n_lines = draw(st.integers(1, 4))
            lines = [" ".join(draw(st.lists(_WORD, min_size=1, max_size=4))) for _ in range(n_lines)]
            parts.append("```\n" + "\n".join(lines) + "\n```")
            words += " ".join(lines).split()
        elif kind == "list":
            items = draw(st.lists(_SENTENCE, min_size=1, max_size=4))
            parts.append("\n".join(f"- {i}" for i in items))
            words += " ".join(items).replace(".", "").split()
        else:
            lines = draw(st.lists(_SENTENCE, min_size=1, max_size=3))
            parts.append("\n".join(f"> {ln}" for ln in lines))
            words += " ".join(lines).replace(".", "").split()
    return "\n\n".join(parts) + "\n", words


@settings(max_examples=examples(60), deadline=None)
@given(markdown_documents())
def test_generated_markdown_keeps_every_word_and_exact_offsets(doc_words: tuple[str, list[str]]) -> None:
    source, words = doc_words
    doc = md(source)
    assert_offsets_exact(doc)
    found = doc.full_text.split()
    for w in words:
        assert any(w in token for token in found), f"{w!r} lost from {source!r}"


@pytest.mark.parametrize(("front", "tags"), [
    ("tags: [Garden, '#plans']", "garden plans"),
    ("tags: garden, plans", "garden plans"),
    ("tags:\n  - garden\n  - plans\ndate: 2026-03-01", "garden plans"),
    ("title: No tags", None),
])
def test_a_notes_front_matter_tags_become_its_metadata(front: str, tags: str | None) -> None:
    doc = extract_text(f"---\n{front}\n---\n# Beds\n\nDig the beds.\n".encode(), content_type="text/markdown",
                       filename="beds.md", is_note=False)
    assert doc.metadata.get("tags") == tags
    assert doc.tags == (tags.split() if tags else [])  # the list its passages carry


def test_text_from_a_web_address_is_a_web_page() -> None:
    from services.extractors.document import ExtractionContext
    from services.extractors.text import TextExtractor

    rendered = b"Kiln schedule\n\nThe kiln is fired every second Sunday."
    page = TextExtractor().extract(rendered, ExtractionContext("text/plain; charset=utf-8",
                                                               source_uri="https://wiki.example/kiln"))
    assert page.modality == "web" and page.title == "Kiln schedule"
    # The same text from a file, or a note that quotes a page, keeps its own kind.
    assert TextExtractor().extract(rendered, ExtractionContext("text/plain", filename="kiln.txt",
                                                               source_uri="file:kiln.txt")).modality == "text"
    assert TextExtractor().extract(rendered, ExtractionContext("text/markdown", source_uri="note:1",
                                                               is_note=True)).modality == "note"
