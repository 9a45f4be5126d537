"""Generate realistic web pages for the HTML extractor tests (no fixtures committed).

Every page has the clutter of a real site around one ``<article>``: a navigation bar, a
sidebar ``<aside>``, a footer and a cookie banner.  The variants differ in how (and
whether) they state a published date, and in their character encoding.
"""

from __future__ import annotations

import json

# Words that only occur in the page's clutter: an extractor that keeps them failed.
NAV_WORDS = "Subscribe Newsletter Careers Zebrafish"
ASIDE_WORDS = "Trending elsewhere: Quokka migration secrets"
FOOTER_WORDS = "Copyright Marmalade Media Group, all rights reserved"
COOKIE_WORDS = "We use cookies to improve your experience. Accept all cookies"

TITLE = "How Lighthouses Keep Time"
SITE = "Harbour Notes"

# Sentences that only occur in the article: an extractor that loses them failed.
INTRO = ("The keeper of the Pointe Rouge lighthouse wound the clockwork of the lens every four hours, "
         "a ritual that kept the beam turning at exactly one revolution per twenty seconds.")
SECTION_HISTORY = "Early Fresnel lenses"
HISTORY_TEXT = ("Augustin Fresnel designed a lens built from concentric rings of glass prisms, which bent "
                "the light of a single lamp into a beam visible for more than twenty nautical miles.")
SECTION_SIGNALS = "Light characteristics"
SIGNALS_TEXT = ("Each lighthouse flashes a unique pattern called its characteristic, so that sailors can "
                "tell one coast from another in the middle of a moonless night.")
LIST_ITEMS = ("Fixed light that never blinks", "Occulting light with short eclipses",
              "Group flashing light with bursts of two or three")
SUBSECTION = "Measuring the period"
SUBSECTION_TEXT = ("Sailors time the period with a stopwatch and compare it with the list of lights "
                   "printed in the nautical almanac for that stretch of coast.")
TABLE_ROWS = (("Pointe Rouge", "Fl(2) 10s", "22 nm"), ("Cap Bleu", "Oc 6s", "18 nm"),
              ("Île Verte", "Fl 5s", "15 nm"))
SECTION_MAINT = "Maintenance today"
MAINT_TEXT = ("Most lights are automated now, and a technician visits twice a year to replace the "
              "bulbs, clean the prisms and check the backup batteries.")
DATE_IN_TEXT = ("A storm on 14 March 2019 cracked two prisms; the repair crew arrived on 2019-03-21 "
                "and finished the work before the spring equinox.")


def _head(title: str, extra_head: str, charset: str) -> str:
    return f"""<head>
<meta charset="{charset}">
<title>{title} | {SITE}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="Clockwork, Fresnel lenses and flashing patterns.">
<meta property="og:site_name" content="{SITE}">
<meta property="og:title" content="{title}">
<meta name="author" content="Maëlle Kerbrat">
<link rel="canonical" href="https://harbour.example.org/2021/lighthouses-keep-time">
<link rel="stylesheet" href="/static/site.css">
<script>window.dataLayer = window.dataLayer || []; function gtag(){{dataLayer.push(arguments);}}</script>
{extra_head}
</head>"""


def _clutter_top() -> str:
    return f"""
<div id="cookie-banner" class="cookie-consent" role="dialog">
  <p>{COOKIE_WORDS}</p><button>Accept</button><button>Settings</button>
</div>
<header class="site-header">
  <a class="logo" href="/">{SITE}</a>
  <nav class="main-nav"><ul>
    <li><a href="/news">News</a></li><li><a href="/subscribe">Subscribe</a></li>
    <li><a href="/newsletter">Newsletter</a></li><li><a href="/careers">Careers</a></li>
    <li><a href="/zebrafish">Zebrafish</a></li>
  </ul></nav>
</header>"""


def _clutter_bottom() -> str:
    related = "".join(f'<li><a href="/r/{i}">{ASIDE_WORDS} part {i}</a></li>' for i in range(1, 6))
    return f"""
<aside class="sidebar">
  <h3>Popular</h3>
  <ul>{related}</ul>
</aside>
<footer class="site-footer">
  <p>{FOOTER_WORDS}.</p>
  <ul><li><a href="/privacy">Privacy</a></li><li><a href="/terms">Terms</a></li></ul>
</footer>"""


def _article_body(*, header_extra: str = "", date_in_text: bool = False, repeat: int = 1) -> str:
    items = "".join(f"<li>{it}</li>" for it in LIST_ITEMS)
    rows = "".join(f"<tr><td>{a}</td><td>{b}</td><td>{c}</td></tr>" for a, b, c in TABLE_ROWS)
    extra_text = f"<p>{DATE_IN_TEXT}</p>" if date_in_text else ""
    filler = "".join(
        f"<p>Paragraph {i} of the archive notes: the keepers logged weather, ships sighted and the oil "
        f"burned each night, entry number {i}, in a ledger that is still kept in the harbour museum.</p>"
        for i in range(repeat - 1))
    return f"""
<article class="post">
  <header class="post-header">
    <h1>{TITLE}</h1>
    <p class="byline">By Maëlle Kerbrat</p>
    {header_extra}
  </header>
  <p>{INTRO}</p>
  <h2>{SECTION_HISTORY}</h2>
  <p>{HISTORY_TEXT}</p>
  {extra_text}
  <h2>{SECTION_SIGNALS}</h2>
  <p>{SIGNALS_TEXT}</p>
  <ul>{items}</ul>
  <h3>{SUBSECTION}</h3>
  <p>{SUBSECTION_TEXT}</p>
  <table>
    <thead><tr><th>Light</th><th>Characteristic</th><th>Range</th></tr></thead>
    <tbody>{rows}</tbody>
  </table>
  <h2>{SECTION_MAINT}</h2>
  <p>{MAINT_TEXT}</p>
  {filler}
</article>"""


def page(*, extra_head: str = "", header_extra: str = "", date_in_text: bool = False, lang: str = "en",
         charset: str = "utf-8", repeat: int = 1) -> str:
    """A full article page with clutter around it."""
    return f"""<!DOCTYPE html>
<html lang="{lang}">
{_head(TITLE, extra_head, charset)}
<body>
{_clutter_top()}
<main id="content">
{_article_body(header_extra=header_extra, date_in_text=date_in_text, repeat=repeat)}
</main>
{_clutter_bottom()}
<script src="/static/analytics.js"></script>
</body>
</html>
"""


def page_meta_published() -> bytes:
    """Published date in ``article:published_time`` (with an offset), modified date too."""
    head = ('<meta property="article:published_time" content="2021-06-03T09:15:00+02:00">\n'
            '<meta property="article:modified_time" content="2021-06-05T18:00:00+02:00">')
    return page(extra_head=head).encode("utf-8")


def page_jsonld_graph() -> bytes:
    """Published date only inside a JSON-LD ``@graph`` (Yoast style), no timezone."""
    data = {"@context": "https://schema.org", "@graph": [
        {"@type": "WebSite", "name": SITE, "url": "https://harbour.example.org/"},
        {"@type": "Article", "headline": TITLE, "datePublished": "2020-11-23T07:30:00",
         "dateModified": "2020-12-01", "author": {"@type": "Person", "name": "Maëlle Kerbrat"}},
    ]}
    head = f'<script type="application/ld+json">{json.dumps(data)}</script>'
    return page(extra_head=head).encode("utf-8")


def page_time_itemprop() -> bytes:
    """Published date only on a ``<time itemprop="datePublished">`` in the article header (date only)."""
    header = '<p>Published <time datetime="2019-04-02" itemprop="datePublished">2 April 2019</time></p>'
    return page(header_extra=header).encode("utf-8")


def page_no_date() -> bytes:
    """No stated date anywhere, but date-like strings in the text (must not become a stated time)."""
    return page(date_in_text=True).encode("utf-8")


APOS = "\u2019"  # a typographic apostrophe: in windows-1252 but not in Latin-1
TITLE_1252 = "Café crème à la plage"
TEXT_1252 = ("Le garçon apporta un café crème très chaud; « c\u2019est la spécialité de la maison », "
             "déclara-t-il — prix: 3,50 €.")


def page_windows_1252() -> bytes:
    """A French page in windows-1252 that only says so in ``<meta charset>``."""
    html = f"""<!DOCTYPE html>
<html lang="fr"><head><meta charset="windows-1252"><title>{TITLE_1252}</title></head>
<body>
<nav><a href="/">Accueil</a> <a href="/carte">Carte</a></nav>
<article><h1>{TITLE_1252}</h1>
<p>{TEXT_1252}</p>
<p>Les clients du matin préfèrent s{APOS}asseoir en terrasse, face à la mer, pour lire le journal
en attendant que le soleil réchauffe enfin les galets de la plage.</p>
</article>
</body></html>"""
    return html.encode("cp1252")


def page_plain_undeclared_1252() -> bytes:
    """The same French text in windows-1252 with NO declaration (charset comes from HTTP)."""
    html = f"""<html><head><title>{TITLE_1252}</title></head><body><article><h1>{TITLE_1252}</h1>
<p>{TEXT_1252}</p>
<p>Les clients du matin préfèrent s{APOS}asseoir en terrasse, face à la mer, pour lire le journal
en attendant que le soleil réchauffe enfin les galets de la plage.</p></article></body></html>"""
    return html.encode("cp1252")


def page_js_only() -> bytes:
    """A single-page app shell: nothing readable without running JavaScript."""
    return b"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Dashboard</title>
<script src="/static/js/main.4f3a2b.js" defer></script></head>
<body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div></body></html>
"""


def big_page(target_bytes: int = 200_000) -> bytes:
    """An article page of about ``target_bytes`` (for throughput measurements)."""
    one = len(page(repeat=1).encode("utf-8"))
    per = len(page(repeat=3).encode("utf-8")) - len(page(repeat=2).encode("utf-8"))
    return page(repeat=max(1, (target_bytes - one) // per + 1)).encode("utf-8")
