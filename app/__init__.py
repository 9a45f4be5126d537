"""Process wiring: the ``secondbrain`` command, the processes it starts, the HTTP app factory and the
assembly of concrete stores and models from Settings.

Dependencies point one way: ``app`` imports the core (``secondbrain``) and the stages and routers
(``services``); neither of those imports ``app``.
"""
