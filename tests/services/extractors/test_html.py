"""Web page extraction: main content only, heading paths, title, stated dates, charsets, refusals."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from devtools import gen_web as g
from secondbrain.errors import PermanentError
from services.extractors.dates import web_datetime
from services.extractors.document import Block, Extracted, ExtractionContext, assemble
from services.extractors.html import NO_TEXT_REASON, HtmlExtractor, decode_html, supports

URL = "https://harbour.example.org/2021/lighthouses-keep-time?utm_source=feed"


def run(raw: bytes, content_type: str = "text/html", source_uri: str = URL) -> Extracted:
    return HtmlExtractor().extract(raw, ExtractionContext(content_type=content_type, source_uri=source_uri))


def full_text(doc: Extracted) -> str:
    return assemble(doc.blocks)[1]


def block_with(doc: Extracted, words: str) -> Block:
    hits = [b for b in doc.blocks if words in b.text]
    assert len(hits) == 1, f"{words!r} found in {len(hits)} blocks"
    return hits[0]


@pytest.fixture(scope="module")
def article() -> Extracted:
    return run(g.page_meta_published())


# --------------------------------------------------------------------------- main content


def test_article_text_list_and_table_are_kept(article: Extracted) -> None:
    text = full_text(article)
    for sentence in (g.INTRO, g.HISTORY_TEXT, g.SIGNALS_TEXT, g.SUBSECTION_TEXT, g.MAINT_TEXT, *g.LIST_ITEMS):
        assert sentence in text
    table = block_with(article, "Pointe Rouge | Fl(2) 10s | 22 nm")
    assert table.kind == "table"
    assert "Île Verte" in table.text and "Characteristic" in table.text
    lst = block_with(article, g.LIST_ITEMS[0])
    assert lst.kind == "list"
    assert all(item in lst.text for item in g.LIST_ITEMS)


def test_navigation_sidebar_footer_and_cookie_banner_are_dropped(article: Extracted) -> None:
    text = full_text(article)
    for clutter in ("Zebrafish", "Careers", "Quokka", "Trending elsewhere", "Marmalade", "all rights reserved",
                    "cookies", "Accept", "Privacy", "analytics", "dataLayer"):
        assert clutter not in text, clutter


def test_heading_paths_follow_the_article_outline(article: Extracted) -> None:
    assert block_with(article, g.INTRO).heading_path == (g.TITLE,)
    assert block_with(article, g.HISTORY_TEXT).heading_path == (g.TITLE, g.SECTION_HISTORY)
    assert block_with(article, g.LIST_ITEMS[1]).heading_path == (g.TITLE, g.SECTION_SIGNALS)
    assert block_with(article, g.SUBSECTION_TEXT).heading_path == (g.TITLE, g.SECTION_SIGNALS, g.SUBSECTION)
    assert block_with(article, "Cap Bleu").heading_path == (g.TITLE, g.SECTION_SIGNALS, g.SUBSECTION)
    # an h2 after an h3 closes the h3's section
    assert block_with(article, g.MAINT_TEXT).heading_path == (g.TITLE, g.SECTION_MAINT)
    headings = [(b.text, b.attributes.get("level")) for b in article.blocks if b.kind == "heading"]
    assert headings == [(g.TITLE, "1"), (g.SECTION_HISTORY, "2"), (g.SECTION_SIGNALS, "2"), (g.SUBSECTION, "3"),
                        (g.SECTION_MAINT, "2")]


def test_page_metadata(article: Extracted) -> None:
    assert article.modality == "web"
    assert article.title == g.TITLE
    assert article.language == "en"
    m = article.metadata
    assert m["url"] == URL
    assert m["site_name"] == g.SITE
    assert m["author"] == "Maëlle Kerbrat"
    assert m["language"] == "en"
    assert m["canonical_url"] == "https://harbour.example.org/2021/lighthouses-keep-time"
    assert m["description"] == "Clockwork, Fresnel lenses and flashing patterns."


def test_url_is_only_recorded_for_web_sources() -> None:
    doc = run(g.page_no_date(), source_uri="upload://saved-page.html")
    assert "url" not in doc.metadata


def test_title_suffix_dropped_only_when_it_is_the_site_name() -> None:
    no_og = g.page().replace(f'<meta property="og:title" content="{g.TITLE}">', "")
    assert run(no_og.encode()).title == g.TITLE  # "<title> | Harbour Notes" with og:site_name Harbour Notes
    other = no_og.replace(f"<title>{g.TITLE} | {g.SITE}</title>", "<title>Cats | Dogs</title>")
    assert run(other.encode()).title == "Cats | Dogs"  # not obviously a site name: kept whole


def test_markdown_escapes_and_emphasis_do_not_leak_into_the_text() -> None:
    html = ("<html><body><nav>Home | About</nav><article><h1>Notes on <em>snake_case</em></h1>"
            "<p>Call <code>parse_stated_date()</code> with a <b>bold</b> guess, 2*3 = 6 and [brackets] &amp; pipes |."
            " This sentence makes the paragraph long enough to be taken as the article body text.</p>"
            "<pre><code>def f(a_b):\n    return a_b * 2</code></pre></article></body></html>")
    doc = run(html.encode())
    para = block_with(doc, "Call parse_stated_date()")
    assert "with a bold guess, 2*3 = 6 and [brackets] & pipes |." in para.text
    assert "\\" not in para.text and "**" not in para.text
    assert para.heading_path == ("Notes on snake_case",)
    code = block_with(doc, "def f(a_b):")
    assert code.kind == "code" and code.text == "def f(a_b):\n    return a_b * 2"


# --------------------------------------------------------------------------- stated dates


def test_published_from_article_meta_with_offset(article: Extracted) -> None:
    assert article.stated_time == datetime(2021, 6, 3, 7, 15, tzinfo=UTC)
    assert article.stated_time_source == "published"
    assert article.metadata["published"] == "2021-06-03T07:15:00+00:00"
    assert article.metadata["modified"] == "2021-06-05T16:00:00+00:00"


def test_published_from_json_ld_graph_without_timezone_is_utc() -> None:
    doc = run(g.page_jsonld_graph())
    assert doc.stated_time == datetime(2020, 11, 23, 7, 30, tzinfo=UTC)
    assert doc.stated_time_source == "published"
    assert doc.metadata["modified"] == "2020-12-01T00:00:00+00:00"
    assert doc.metadata["author"] == "Maëlle Kerbrat"


def test_published_from_time_itemprop_date_only_is_midnight_utc() -> None:
    doc = run(g.page_time_itemprop())
    assert doc.stated_time == datetime(2019, 4, 2, tzinfo=UTC)
    assert "modified" not in doc.metadata


def test_no_date_is_invented_from_the_text_or_the_url() -> None:
    raw = g.page_no_date()
    # The hazard is real: a date guesser finds a "date" in this page's text.
    import trafilatura

    assert trafilatura.extract_metadata(raw.decode()).date == "2019-03-21"
    doc = run(raw)
    assert g.DATE_IN_TEXT in full_text(doc)
    assert doc.stated_time is None
    assert "published" not in doc.metadata and "modified" not in doc.metadata


@pytest.mark.parametrize(("markup", "expected"), [
    ('<meta name="DC.date.issued" content="2017-09-01">', datetime(2017, 9, 1, tzinfo=UTC)),
    ('<meta name="citation_publication_date" content="2016/02/29">', datetime(2016, 2, 29, tzinfo=UTC)),
    ('<meta name="date" content="Thu, 03 Jun 2021 09:15:00 GMT">', datetime(2021, 6, 3, 9, 15, tzinfo=UTC)),
    ('<meta name="pubdate" content="2015-01-02T03:04:05Z">', datetime(2015, 1, 2, 3, 4, 5, tzinfo=UTC)),
])
def test_published_from_named_meta_tags(markup: str, expected: datetime) -> None:
    assert run(g.page(extra_head=markup).encode()).stated_time == expected


def test_published_from_time_pubdate_in_article_header() -> None:
    doc = run(g.page(header_extra='<time pubdate datetime="2018-05-06T10:00">6 May</time>').encode())
    assert doc.stated_time == datetime(2018, 5, 6, 10, 0, tzinfo=UTC)


def test_dates_of_other_things_are_not_the_page_date() -> None:
    listing = {"@context": "https://schema.org", "@type": "ItemList", "itemListElement": [
        {"@type": "ListItem", "item": {"@type": "Article", "datePublished": "2010-01-01"}}]}
    event = {"@context": "https://schema.org", "@type": "Event", "startDate": "2024-07-01",
             "datePublished": "2011-01-01"}
    head = "".join(f'<script type="application/ld+json">{json.dumps(d)}</script>' for d in (listing, event))
    head += '<meta name="date" content="sometime last spring">'
    doc = run(g.page(extra_head=head, header_extra="<p><time>2012-03-04</time></p>").encode())
    assert doc.stated_time is None


def test_web_datetime_refuses_vague_values() -> None:
    assert web_datetime("June 3, 2021") is None
    assert web_datetime("2021") is None
    assert web_datetime("2021-02-30") is None
    assert web_datetime("2021-06-03T09:15:00-05:00") == datetime(2021, 6, 3, 14, 15, tzinfo=UTC)


# --------------------------------------------------------------------------- encodings


def test_windows_1252_page_declared_by_meta_charset() -> None:
    raw = g.page_windows_1252()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")  # the test page really is not UTF-8
    doc = run(raw)
    assert doc.title == g.TITLE_1252
    assert block_with(doc, "Le garçon").text == g.TEXT_1252
    assert doc.language == "fr"
    assert "Accueil" not in full_text(doc)


def test_charset_from_http_header() -> None:
    doc = run(g.page_plain_undeclared_1252(), content_type="text/html; charset=windows-1252")
    assert block_with(doc, "Le garçon").text == g.TEXT_1252


def test_utf8_page_wins_over_a_wrong_latin1_header() -> None:
    doc = run(g.page_meta_published(), content_type="text/html; charset=ISO-8859-1")
    assert doc.metadata["author"] == "Maëlle Kerbrat"
    assert "Île Verte" in full_text(doc)


def test_utf16_with_bom() -> None:
    raw = g.page_meta_published().decode().replace('charset="utf-8"', 'charset="utf-16"').encode("utf-16")
    doc = run(raw)
    assert g.HISTORY_TEXT in full_text(doc) and doc.title == g.TITLE


def test_undeclared_legacy_bytes_never_crash() -> None:
    text = decode_html(g.page_plain_undeclared_1252())
    assert "\ufffd" in text and "Caf" in text  # replaced, not raised
    assert decode_html(b"<p>caf\xe9</p>", "text/html; charset=no-such-charset") == "<p>caf\ufffd</p>"


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(("raw", "words"), [
    (b"", "empty"),
    (b"  \n\t ", "empty"),
    (bytes(range(256)) * 40, "binary"),
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "PNG image"),
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "PDF document"),
])
def test_bad_input_is_refused_with_a_reason(raw: bytes, words: str) -> None:
    with pytest.raises(PermanentError) as err:
        run(raw)
    assert words in err.value.reason


def test_javascript_only_page_is_refused() -> None:
    with pytest.raises(PermanentError) as err:
        run(g.page_js_only())
    assert err.value.reason == NO_TEXT_REASON


def test_supports() -> None:
    assert supports("text/html; charset=utf-8", None)
    assert supports("application/xhtml+xml", None)
    assert supports("application/octet-stream", "Saved Page.HTM")
    assert not supports("text/plain", "notes.txt")


def test_body_text_fallback_when_the_main_extractor_finds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import services.extractors.html as html_mod

    monkeypatch.setattr(html_mod, "_main_markdown", lambda tree, url: "")
    doc = run(g.page_meta_published())
    assert doc.metadata["extraction"] == "fallback"
    text = full_text(doc)
    assert g.INTRO in text and g.MAINT_TEXT in text
    assert "Zebrafish" not in text and "Marmalade" not in text and "dataLayer" not in text
    with pytest.raises(PermanentError):
        run(g.page_js_only())  # the fallback does not read "enable JavaScript" as content


# --------------------------------------------------------------------------- stated dates through htmldate

ARTICLE_DATE = datetime(2022, 8, 9, 6, 30, tzinfo=UTC)


@pytest.mark.parametrize(("head", "header"), [
    ('<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle", '
     '"headline": "Lighthouses", "datePublished": "2022-08-09T08:30:00+02:00"}</script>', ""),
    ('<meta property="article:published_time" content="2022-08-09T06:30:00Z">', ""),
    ("", '<p>Posted <time datetime="2022-08-09T06:30:00+00:00">9 August</time></p>'),
], ids=["json-ld", "article-meta", "time-datetime"])
def test_published_date_each_way_a_page_states_it(head: str, header: str) -> None:
    doc = run(g.page(extra_head=head, header_extra=header).encode())
    assert doc.stated_time == ARTICLE_DATE
    assert doc.metadata["published"] == ARTICLE_DATE.isoformat()


def test_a_page_without_a_date_has_none_even_with_dates_in_its_url_and_text() -> None:
    doc = run(g.page(date_in_text=True).encode(), source_uri="https://harbour.example.org/2019/03/21/lighthouses")
    assert doc.stated_time is None
    assert "published" not in doc.metadata and "modified" not in doc.metadata


@pytest.mark.parametrize("markup", [
    '<meta name="date" content="03/04/2021">',  # 3 April or March 4: htmldate picks one, that is a guess
    '<meta name="date" content="June 3, 2021">',  # natural language: refused like every vague value
    '<meta itemprop="copyrightYear" content="2015">',  # htmldate would say 2015-01-01
    '<meta name="og:url" content="https://harbour.example.org/2020/01/02/lighthouses">',  # a URL date
])
def test_htmldate_guesses_are_not_stated_dates(markup: str) -> None:
    assert run(g.page(extra_head=markup).encode()).stated_time is None


def test_dates_in_a_sidebar_listing_are_not_the_page_date() -> None:
    aside = '<aside><ul><li><time datetime="2015-01-01">Older post</time></li></ul></aside>'
    raw = g.page().replace("</main>", f"</main>{aside}").encode()
    assert run(raw).stated_time is None
