"""Title, author, dates and language as the file itself states them (document properties, Org keywords...)."""

from __future__ import annotations

import io
import logging
import re
import zipfile
from collections.abc import Sequence
from typing import Any

from services.extractors import dates
from services.extractors.office.blocks import clean

log = logging.getLogger(__name__)


def _xml_root(data: bytes) -> Any:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, recover=True)
    return etree.fromstring(data, parser=parser)


def _first_text(root: Any, xpath: str) -> str | None:
    for node in root.xpath(xpath):
        text = clean(node if isinstance(node, str) else node.text)
        if text:
            return text
    return None


def _read_member(raw: bytes, name: str) -> bytes | None:
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            return z.read(name)
    except (KeyError, zipfile.BadZipFile, OSError, RuntimeError, EOFError, ValueError):
        return None


def _any_ns(tag: str) -> str:
    return f"*[local-name()='{tag}']"


def properties(raw: bytes, fmt: str) -> dict[str, str]:
    """Title, author, dates and language from the file's own properties (empty when absent)."""
    props: dict[str, str] = {}
    try:
        if fmt in ("docx", "pptx", "xlsx"):
            data = _read_member(raw, "docProps/core.xml")
            if data:
                root = _xml_root(data)
                for key, tag in (("title", "title"), ("author", "creator"), ("created", "created"),
                                 ("modified", "modified"), ("language", "language"), ("subject", "subject")):
                    value = _first_text(root, f"/{_any_ns('coreProperties')}/{_any_ns(tag)}")
                    if value:
                        props[key] = value
        elif fmt == "odt":
            data = _read_member(raw, "meta.xml")
            if data:
                root = _xml_root(data)
                meta = f"//{_any_ns('meta')}"
                for key, tags in (("title", ("title",)), ("author", ("initial-creator", "creator")),
                                  ("created", ("creation-date",)), ("modified", ("date",)),
                                  ("language", ("language",)), ("subject", ("subject",))):
                    for tag in tags:
                        value = _first_text(root, f"{meta}/{_any_ns(tag)}")
                        if value:
                            props[key] = value
                            break
        elif fmt == "epub":
            props.update(_epub_properties(raw))
    except Exception as exc:  # broken properties must not lose the document's text
        log.info("could not read %s properties: %s", fmt, exc)
    return props


def _epub_properties(raw: bytes) -> dict[str, str]:
    container = _read_member(raw, "META-INF/container.xml")
    if not container:
        return {}
    opf_path = _first_text(_xml_root(container), f"//{_any_ns('rootfile')}/@full-path")
    opf = _read_member(raw, opf_path) if opf_path else None
    if not opf:
        return {}
    root = _xml_root(opf)
    meta = f"//{_any_ns('metadata')}"
    props: dict[str, str] = {}
    for key, tag in (("title", "title"), ("author", "creator"), ("created", "date"),
                     ("language", "language"), ("publisher", "publisher")):
        value = _first_text(root, f"{meta}/{_any_ns(tag)}")
        if value:
            props[key] = value
    modified = _first_text(root, f"{meta}/{_any_ns('meta')}[@property='dcterms:modified']")
    if modified:
        props["modified"] = modified
    return props


_ORG_KEYWORD = re.compile(r"^#\+(TITLE|AUTHOR|DATE|LANGUAGE):[ \t]*(.+?)\s*$", re.I | re.M)
_RST_FIELD = re.compile(r"^:(Author|Date):[ \t]*(.+?)\s*$", re.I | re.M)


def text_markup_properties(text: str, fmt: str) -> dict[str, str]:
    """Org ``#+TITLE:``/``#+DATE:`` keywords and reStructuredText ``:Date:`` fields."""
    props: dict[str, str] = {}
    pattern = _ORG_KEYWORD if fmt == "org" else _RST_FIELD
    for key, value in pattern.findall(text):
        key = key.lower()
        key = "created" if key == "date" else key
        if fmt == "org" and key == "created":
            value = dates.org_timestamp(value)  # <2023-03-14 Tue 10:00> or [2023-03-14 Tue]
        props.setdefault(key, value.strip())
    return props


def language_code(elements: Sequence[Any]) -> str | None:
    """The language unstructured detected for the document, as a two-letter code when it has one."""
    for el in elements:
        langs = getattr(el.metadata, "languages", None)
        if langs and len(langs) == 1 and langs[0]:
            try:
                import iso639

                return str(iso639.Language.from_part3(langs[0]).part1 or langs[0])
            except Exception:
                return str(langs[0])
    return None

