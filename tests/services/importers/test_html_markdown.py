"""A note's HTML as Markdown: what the person wrote stays, in the shape they gave it."""

from __future__ import annotations

import pytest

from services.importers.html_markdown import html_to_markdown

pytestmark = pytest.mark.fast  # no services: in the fast lane


def test_structure_is_kept() -> None:
    md = html_to_markdown("<h1>Trip</h1><p>Day <b>one</b> and <i>two</i>, see <a href='https://x.org/a'>the map</a>."
                          "</p><ol><li>Pack<ul><li>boots</li><li>map</li></ul></li><li>Leave</li></ol>"
                          "<blockquote><p>Go early.</p></blockquote><pre>ssh  host\n  ls</pre><hr>")
    assert md == ("# Trip\n\nDay **one** and *two*, see [the map](https://x.org/a).\n\n1. Pack\n  - boots\n  - map\n"
                  "2. Leave\n\n> Go early.\n\n```\nssh  host\n  ls\n```\n\n---")


def test_checklists_of_evernote_apple_notes_and_keep() -> None:
    assert html_to_markdown('<en-note><div><en-todo checked="true"/>Milk</div><div><en-todo/>Eggs</div>'
                            "<div>After</div></en-note>") == "- [x] Milk\n- [ ] Eggs\n\nAfter"
    assert html_to_markdown('<ul><li><input type="checkbox" checked>Call Joana</li></ul>') == "- [x] Call Joana"


def test_nothing_that_runs_or_hides_comes_through() -> None:
    md = html_to_markdown("<html><head><title>T</title><style>p{}</style><script>alert(1)</script></head>"
                          "<body><p>Visible <a href='javascript:alert(2)'>link</a></p><!-- a comment --></body></html>")
    assert md == "Visible link"


def test_tables_line_breaks_and_attachments() -> None:
    md = html_to_markdown('<table><tr><td>a|b</td><td>1</td></tr><tr><td>c</td></tr></table><p>x<br>y</p>'
                          '<en-media hash="h1" type="image/png"/>', media={"h1": "scan.png"})
    assert md == "| a\\|b | 1 |\n|---|---|\n| c |  |\n\nx\ny\n\n[attachment: scan.png]"


def test_empty_and_broken_markup() -> None:
    assert html_to_markdown("") == ""
    assert html_to_markdown("<div>  </div>") == ""
    assert html_to_markdown(b"<p>caf\xc3\xa9 <b>open") == "café **open**"
