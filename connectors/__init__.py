"""Connectors: clients of secondbrain's HTTP API that bring outside data in, each on its own schedule.

Mail (IMAP folders over TLS, a Maildir: :mod:`connectors.mail`), calendar feeds (:mod:`connectors.calendars`)
and folder sync (:mod:`connectors.folders`).  They share one sender (:mod:`connectors.sender`: the import batch
route, waiting until what was sent is searchable), the state file (:mod:`connectors.state`), their repeated
passes (:mod:`connectors.periodic`) and a client's patience with a busy or restarting server
(:mod:`connectors.patience`).  They import the core and the importers' formats, never the wiring (``app``),
which runs them: from the command line, or beside the server ``secondbrain up`` starts.
"""
