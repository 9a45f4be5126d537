"""The argument parser and the entry point: each command module registers its own sub-parsers."""

from __future__ import annotations

import argparse

from app.cli import (
    accounts,
    agenda,
    asking,
    backup,
    calendar,
    capture,
    data,
    deadletters,
    editing,
    importing,
    mail,
    mcp,
    reindex,
    servers,
    service,
    watch,
)
from app.cli.client import client_opts
from app.cli.common import server_url

# The command modules, in the order ``secondbrain --help`` lists their commands.
COMMANDS = (servers, service, accounts, capture, importing, backup, mail, calendar, watch, mcp, asking, agenda,
            deadletters, data, editing, reindex)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    p = argparse.ArgumentParser(prog="secondbrain", description="A personal memory engine.")
    sub = p.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.add_parser(sub, client_opts)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``secondbrain`` command."""
    args = build_parser().parse_args(argv)
    if hasattr(args, "url") and args.url is None:  # a client command: the server it talks to
        args.url = server_url(args)
    return int(args.func(args))
