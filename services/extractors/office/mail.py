"""E-mail messages (.eml): a headers block, then the body; attachments are named, not read."""

from __future__ import annotations

import email
import email.policy
import io
from collections.abc import Iterable
from email.message import EmailMessage
from typing import Any, cast

from secondbrain.errors import PermanentError
from services.extractors import dates
from services.extractors.document import Block, Extracted
from services.extractors.office.blocks import clean
from services.extractors.office.reading import Reading


def extract_eml(ex: Reading, raw: bytes) -> Extracted:
    if b"\x00" in raw[:65536]:
        raise PermanentError("the .eml file looks binary, not an e-mail message; upload it with its real type")
    msg = cast(EmailMessage, email.message_from_bytes(raw, policy=email.policy.default))
    headers = email_headers(msg)
    if not any(headers.get(k) for k in ("from", "to", "subject", "date")):
        raise PermanentError("the file is not an e-mail message (it has no From, To, Subject or Date "
                             "header); upload it as a text file instead")
    attachments = attachment_names(msg)
    subject = headers.get("subject") or None
    stated = dates.rfc2822_datetime(headers.get("date"))
    elements = ex.partition("eml", file=io.BytesIO(raw), process_attachments=False)
    builder = ex.builder("flat", root_path=(subject,) if subject else ())
    for el in elements:
        builder.add(el)
    body = builder.finish()
    lines = [f"{label}: {headers[key]}" for key, label in
             (("subject", "Subject"), ("from", "From"), ("to", "To"), ("cc", "Cc"), ("date", "Date"))
             if headers.get(key)]
    if attachments:
        lines.append("Attachments: " + ", ".join(attachments))
    head = Block("text", "\n".join(lines), (subject,) if subject else (), attributes={"role": "headers"})
    meta = {k: v for k, v in headers.items() if v and k != "subject"}
    if attachments:
        meta["attachments"] = ", ".join(attachments)
    if not body:
        meta["body"] = "empty"
    return ex.finish("eml", [head, *body], elements, {}, title=subject, extra_meta=meta, stated=stated)


def email_headers(msg: EmailMessage) -> dict[str, str]:
    out: dict[str, str] = {}
    for key in ("subject", "from", "to", "cc", "date", "message-id"):
        try:
            value = msg.get(key)
        except (ValueError, TypeError, IndexError):  # a malformed header: keep the rest
            value = None
        if value is not None:
            out[key.replace("-", "_")] = clean(str(value)).replace("\n", " ")
    return out


def attachment_names(msg: EmailMessage) -> list[str]:
    names: list[str] = []
    try:
        parts: Iterable[Any] = msg.iter_attachments()
        for part in parts:
            name = part.get_filename()
            names.append(clean(name) if name else part.get_content_type())
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        pass
    return names
