"""Importers: the exports people already have (Evernote, Google Keep, Notion, Bear and Apple Notes folders,
browser bookmarks, Kindle and Readwise highlights, WhatsApp and Telegram chats, Mem0/OpenMemory and Khoj,
calendars in iCalendar)
read into captures that go through the gateway like any other, each with its own event time, title, tags,
links and provenance back to the original file and item.

One module per format, each declaring a :class:`~services.importers.format.Format`; the registry decides
from an export's content which one it is.  ``secondbrain import`` reads an export on the person's machine
and sends its captures in batches (``POST /v1/imports/batch``); ``POST /v1/imports`` takes an export file
and reads it on the server (the web page).  Both submit through the gateway's own submission, with an
idempotency key per item and content, so running an import again adds nothing.
"""
