"""Dependencies point one way: the core (``secondbrain``) imports neither the services, the connectors nor the
wiring; the services import neither the connectors nor the wiring (``app``); the connectors (clients of the
HTTP API: mail, calendar feeds, folder sync) do not import the wiring.  Within them, module by module: the
events, the ports and the stores never import the pipeline; a service imports no other service and no store
(what two services share is core, or the HTTP routes' shared sign-in and dependencies directly in
``services``); and no module imports itself through others (no import cycles).  The wiring (``app``) may
import anything, and holds the wiring only; no product function is over 80 lines."""

from __future__ import annotations

import ast
import graphlib
import re
from functools import cache
from pathlib import Path

import pytest

from tests.paths import REPO as ROOT

pytestmark = pytest.mark.fast  # no services: in the fast lane

PACKAGES = ("secondbrain", "services", "connectors", "app")


@cache
def parsed(path: Path) -> ast.Module:
    """A module's syntax tree, read once for every rule here (parsing is what costs)."""
    return ast.parse(path.read_text(), filename=str(path))


def imported_modules(path: Path) -> set[str]:
    tree = parsed(path)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def import_graph() -> dict[str, frozenset[str]]:
    """Every module of the packages -> the modules of the packages it imports, anywhere in it (a function's
    lazy import and a type checker's import included: both are dependencies).  ``from package import name``
    counts as importing the submodule when ``name`` is one, else the package."""
    paths = {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}
    graph: dict[str, frozenset[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, one level up per extra dot
                    up = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                for alias in node.names:
                    targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in paths else base)
        graph[name] = frozenset(t for t in targets if t in paths and t != name)
    return graph


def service_of(module: str) -> str | None:
    """The service (a folder under ``services``) a module belongs to; ``None`` for the modules directly in
    ``services`` (the HTTP services' shared sign-in and dependencies), which belong to none."""
    parts = module.split(".")
    if parts[0] == "services" and len(parts) > 1 and (ROOT / "services" / parts[1]).is_dir():
        return parts[1]
    return None


def layer_offenders(importer: str, forbidden: tuple[str, ...], *, other_service: bool = False) -> list[str]:
    """``importer``'s modules that import a module under one of ``forbidden`` (or, with ``other_service``, a
    service other than their own), as sentences."""
    out = []
    for module, targets in sorted(import_graph().items()):
        if module != importer and not module.startswith(importer + "."):
            continue
        for target in sorted(targets):
            service = service_of(target)
            if any(target == f or target.startswith(f + ".") for f in forbidden) or (
                    other_service and service is not None and service != service_of(module)):
                out.append(f"{module} imports {target}")
    return out


@pytest.mark.parametrize(("package", "forbidden"), [
    ("secondbrain", ("services", "connectors", "app")),
    ("services", ("connectors", "app")),
    ("connectors", ("app",)),
])
def test_dependencies_point_one_way(package: str, forbidden: tuple[str, ...]) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for module in imported_modules(path):
            if module.split(".")[0] in forbidden:
                offenders.append(f"{path.relative_to(ROOT)} imports {module}")
    assert offenders == [], "\n".join(offenders)


@pytest.mark.parametrize("package", ["secondbrain.events", "secondbrain.ports", "secondbrain.stores"])
def test_events_ports_and_stores_do_not_import_the_pipeline(package: str) -> None:
    """What they share with the pipeline (errors, stage and topic names, time formats) is core."""
    offenders = layer_offenders(package, ("secondbrain.pipeline",))
    assert offenders == [], "\n".join(offenders)


def test_services_import_no_store_and_no_other_service() -> None:
    """A service reaches storage through the ports, and what two services need lives in the core (or, for
    the HTTP routes' sign-in and dependencies, in ``services.access`` and ``services.deps``, which import no
    service themselves)."""
    offenders = layer_offenders("services", ("secondbrain.stores",), other_service=True)
    assert offenders == [], "\n".join(offenders)


def test_no_module_imports_itself_through_others() -> None:
    try:
        graphlib.TopologicalSorter(import_graph()).prepare()
    except graphlib.CycleError as exc:
        cycle = exc.args[1]
        pytest.fail("an import cycle: " + " -> ".join(cycle))


WEB = ROOT / "services" / "web" / "static"
# A static ``import ... from "./x.js"``, a bare ``import "./x.js"`` and a dynamic ``import("./x.js")``.
JS_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}/[^"']+)["']""", re.M)


def test_no_web_page_module_imports_itself_through_others() -> None:
    """The web page's modules, dynamic imports included: a circle loads a module half-initialised."""
    graph = {}
    for path in sorted(WEB.rglob("*.js")):
        graph[path.relative_to(WEB).as_posix()] = {
            (path.parent / target).resolve().relative_to(WEB.resolve()).as_posix()
            for target in JS_IMPORT.findall(path.read_text())}
    assert "js/failed.js" in graph["js/sources.js"]  # the pattern reads the page's imports
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        pytest.fail("an import cycle in the web page: " + " -> ".join(exc.args[1]))


STAGE_CLASSES = {
    "fetch": "services.fetcher.stage:FetcherStage",
    "extract": "services.extractors.stage:ExtractorStage",
    "chunk": "services.chunker.stage:ChunkerStage",
    "embed": "services.embedder.stage:EmbedderStage",
}


def readme_rows(path: Path) -> dict[str, str]:
    """The two-column table at the top of a stage folder's README: row name -> cell."""
    rows = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 2 and cells[0] and not set(cells[0]) <= {"-"}:
            rows[cells[0]] = cells[1]
    return rows


def test_every_stage_in_the_topology_has_a_stage_class_and_a_readme() -> None:
    from secondbrain.pipeline.topology import PIPELINE
    from secondbrain.stages import STAGES

    assert set(STAGE_CLASSES) == set(STAGES)
    # The job ledger knows the stages by name only: the topology's steps are those, in that order.
    assert tuple(s.name for s in PIPELINE) == STAGES


@pytest.mark.parametrize("name", sorted(STAGE_CLASSES))
def test_a_stage_folder_says_what_the_stage_reads_writes_and_uses(name: str) -> None:
    """A newcomer reads a stage's inputs, outputs and ports in its folder's README; they must be the
    topology's and the constructor's, not what they were when the README was written."""
    import importlib
    import inspect
    import re

    from secondbrain import ports
    from secondbrain.pipeline.topology import step

    module_name, class_name = STAGE_CLASSES[name].split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    s = step(name)
    assert cls.step is s
    rows = readme_rows(ROOT / module_name.rsplit(".", 1)[0].replace(".", "/") / "README.md")

    def named(cell: str) -> list[str]:
        return re.findall(r"`([^`]+)`", cell)

    assert named(rows["Reads"])[:2] == [s.input, s.input_type.__name__]
    assert named(rows["Writes"])[:2] == [s.output, s.output_type.__name__]
    assert named(rows["Job stage"]) == [s.name]
    assert (("searchable" in rows["Writes"]) == s.final) and (("admitted" in rows["Reads"]) == s.open_input)
    schema = next(n for n in named(rows["Reads"]) if n.endswith(".avsc"))
    assert (ROOT / schema).is_file()
    # The ports: every constructor parameter typed with one of secondbrain.ports' Protocols.
    hints = inspect.get_annotations(cls.__init__, eval_str=True)
    used = [t.__name__ for p, t in hints.items() if p != "return" and getattr(ports, getattr(t, "__name__", ""), None)
            is t and getattr(t, "_is_protocol", False)]
    assert sorted(named(rows["Ports"])) == sorted(used)
    assert f"secondbrain worker {name}" in rows["Runs as"]


def test_the_docs_show_the_topology_as_declared() -> None:
    """The architecture page's diagram is drawn from the topology when the site is built (devtools/docgen.py)."""
    from devtools.docgen import topology
    from secondbrain.pipeline.topology import diagram

    assert "<!-- generated: topology -->" in (ROOT / "docs" / "architecture.md").read_text()
    assert diagram() in topology()


# A statement a store would run: outside ``secondbrain/stores`` it means a store living somewhere else.
SQL = re.compile(r"\b(?:SELECT\s.+?\sFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(?:TABLE|INDEX)"
                 r"|ALTER\s+TABLE|TRUNCATE\s+\w+)\b", re.S)
STORE_PRIVATES = ("_tx", "_pool")
# Where SQL may stand outside the stores, and why.  The backup reads the database beneath the ports, as
# pg_dump does: in the snapshot's own transaction (capture) and before the restored instance starts (reconcile).
SQL_ALLOWED = ("secondbrain/backup/capture.py", "secondbrain/backup/reconcile.py")
# Attributes of those names that are not a store's: httpx's transport keeps its connection pool in ``_pool``
# (the SSRF guards replace it), and a stage runner its own thread pool.
PRIVATE_ALLOWED = {("services/fetcher/fetch.py", "transport"), ("connectors/calendars.py", "transport")}


def store_leaks(path: Path, source: str) -> list[str]:
    """The SQL statements in ``source``, and its reaches into a store's private connection (``x._tx``,
    ``x.db._pool``, ``hasattr(x, "_pool")``; an object's own ``self._pool`` is its own business)."""
    rel = path.relative_to(ROOT).as_posix()
    out = []
    for node in ast.walk(ast.parse(source, filename=rel)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
            if rel not in SQL_ALLOWED:
                out.append(f"{rel}:{node.lineno} SQL {node.value[:60]!r}")
        elif isinstance(node, ast.Attribute) and node.attr in STORE_PRIVATES:
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            if owner != "self" and (rel, owner) not in PRIVATE_ALLOWED:
                out.append(f"{rel}:{node.lineno} reaches {ast.unparse(node)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr")
              and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
              and node.args[1].value in STORE_PRIVATES):
            out.append(f"{rel}:{node.lineno} looks for {node.args[1].value!r}")
    return out


def test_no_sql_and_no_store_privates_outside_the_stores() -> None:
    """A store is a role in ``secondbrain/ports`` with its implementations in ``secondbrain/stores`` (and in
    the parity and contract suites); code elsewhere that writes SQL, or reaches into a store's pool or
    transaction, is a store living outside them."""
    offenders = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            source = path.read_text()
            # Parsing is what costs: only a module that could hold a leak is read closely.
            if not path.is_relative_to(ROOT / "secondbrain" / "stores") and (
                    SQL.search(source) or any(name in source for name in STORE_PRIVATES)):
                offenders += store_leaks(path, source)
    assert offenders == [], "\n".join(offenders)


@pytest.mark.parametrize("leak", [
    'conn.execute("SELECT name FROM feed_tokens WHERE user_id = %s", (user,))',
    'conn.execute("UPDATE feed_tokens SET revoked_at = now()")',
    "with self.db._tx() as conn: pass",
    "with database._pool.connection() as conn: pass",
    'kind = "pg" if hasattr(database, "_pool") else "memory"',
])
def test_the_store_rule_sees_a_leak(leak: str) -> None:
    """The rule above reads what a store outside the stores would write (so that it can fail)."""
    assert store_leaks(ROOT / "services" / "agenda" / "leak.py", leak) != []
    assert store_leaks(ROOT / "services" / "agenda" / "leak.py", "self._pool = ThreadPoolExecutor()") == []


# ``app`` is the process wiring: what starts and assembles the product, and the command line.  Each of its
# modules is one of these; a module that is none of them is product logic living in the wiring.
WIRING = {
    "app": "the package",
    "app.assembly": "builds the stores, models and runtime from the settings",
    "app.backups": "puts the backup and restore parts together for a data directory or servers",
    "app.data_home": "where the data directory is, and moving an old one there",
    "app.http": "the HTTP app factory: the services' routers, errors and health checks mounted on one app",
    "app.http_protocol": "uvicorn's HTTP/1.1 protocol, with a timeout for a request's head",
    "app.serve": "starts and stops a process's pieces (HTTP, stages, relay, loops)",
    "app.service": "the service manager's files (systemd, launchd) that run `up`",
    "app.upgrade": "upgrading a data directory in place before `up` serves it",
    "app.cli": "the command's entry point",
    "app.cli.__main__": "`python -m app.cli`",
    "app.cli.parser": "the argument parser: each command module's sub-parsers, in order",
    "app.cli.common": "what every command shares: settings, data directories, exit codes",
    "app.cli.client": "what every client command shares: the server's address and key, its errors",
    "app.cli.periodic": "where a periodic connector command keeps its state file",
}
# What gives a connector away: it reads mail or watches folders (the modules it would import), or it posts
# captures to the import batch route.  Those belong in ``connectors/``; a command only calls them.
CONNECTOR_IMPORTS = ("imaplib", "mailbox", "watchfiles")
CONNECTOR_ROUTE = "/v1/imports/batch"


def wiring_offenders(module: str, source: str) -> list[str]:
    """Why ``module`` (of ``app``, with this ``source``) is not wiring: a connector, or a module that is neither
    one of :data:`WIRING` nor a command module (under ``app.cli``, registering its own sub-parser)."""
    tree = ast.parse(source)
    out = []
    imports = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names}
    imports |= {node.module.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    for name in sorted(imports & set(CONNECTOR_IMPORTS)):
        out.append(f"{module} imports {name}: a connector; it belongs in connectors/")
    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("post", "request")
           and any(isinstance(a, ast.Constant) and a.value == CONNECTOR_ROUTE for a in n.args)
           for n in ast.walk(tree)):
        out.append(f"{module} sends to {CONNECTOR_ROUTE}: a connector's sender; it belongs in connectors/")
    if module not in WIRING:
        registers = any(isinstance(n, ast.FunctionDef) and n.name == "add_parser" for n in tree.body)
        if not module.startswith("app.cli.") or not registers:
            out.append(f"{module} is not wiring: neither a part of WIRING nor a command module registering its "
                       "own sub-parser (add_parser)")
    return out


def test_app_holds_the_wiring_only_and_no_connector() -> None:
    """``app`` goes back to wiring: the connectors live in ``connectors/``, and every module of ``app`` is a
    declared part of the wiring or a command (which registers its own sub-parser and calls the product)."""
    offenders = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        offenders += wiring_offenders(module_name(path), path.read_text())
    assert offenders == [], "\n".join(offenders)


@pytest.mark.parametrize(("module", "source"), [
    ("app.cli.mail", "import imaplib\ndef add_parser(sub): pass"),
    ("app.mail", "from connectors.mail import MailSync"),
    ("app.cli.calendar", 'def add_parser(sub): pass\ndef send(client): client.post("/v1/imports/batch", files=[])'),
    ("app.cli.helpers", "def say(text): print(text)"),
    ("app.folders", "import watchfiles"),
])
def test_the_wiring_rule_sees_a_connector_or_a_module_that_is_not_wiring(module: str, source: str) -> None:
    """The rule above reads what a connector or some product logic left in ``app`` would look like."""
    assert wiring_offenders(module, source) != []
    assert wiring_offenders("app.cli.mail", "from connectors.mail import take_mail\ndef add_parser(sub): pass") == []


PRODUCT = ("secondbrain", "services", "connectors", "app")
MAX_FUNCTION_LINES = 80
# Functions over the limit today, each in code being reshaped elsewhere; the list only shrinks (a function
# that fits leaves it, and the test below says so).
LONG_ALLOWED: set[str] = set()  # none: a function that must be longer is named here, with why


def long_functions(path: Path, source: str | ast.Module, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """The functions and methods (nested ones too) of ``source`` (its text or its tree) longer than ``limit``
    lines, from ``def`` to their last line: ``path:Class.method`` -> lines."""
    rel = path.relative_to(ROOT).as_posix()
    found: dict[str, int] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                assert child.end_lineno is not None
                if child.end_lineno - child.lineno + 1 > limit:
                    found[f"{rel}:{prefix}{child.name}"] = child.end_lineno - child.lineno + 1
                walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(ast.parse(source, filename=rel) if isinstance(source, str) else source, "")
    return found


def test_no_product_function_is_over_80_lines() -> None:
    """A function that does not fit on a screen hides its steps: name them (a function each, or a small
    class).  The allowed ones above are being reshaped elsewhere."""
    found: dict[str, int] = {}
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            found |= long_functions(path, parsed(path))
    over = [f"{where}: {n} lines" for where, n in sorted(found.items()) if where not in LONG_ALLOWED]
    assert over == [], "\n".join(over)
    assert sorted(LONG_ALLOWED - set(found)) == [], "these fit now: take them off LONG_ALLOWED"


def test_the_length_rule_sees_a_long_function() -> None:
    """The rule above reads a long function, a long method and a long nested function, and lets 80 lines be."""
    import textwrap

    body = "".join(f"x{i} = {i}\n" for i in range(80))
    where = ROOT / "services" / "agenda" / "long.py"
    assert long_functions(where, "def f():\n" + textwrap.indent(body, "    ")) == {"services/agenda/long.py:f": 81}
    method = "class C:\n    def m(self):\n" + textwrap.indent(body, "        ")
    assert list(long_functions(where, method)) == ["services/agenda/long.py:C.m"]
    nested = "def outer():\n    def inner():\n" + textwrap.indent(body, "        ") + "    return inner\n"
    assert list(long_functions(where, nested)) == ["services/agenda/long.py:outer",
                                                   "services/agenda/long.py:outer.inner"]
    assert long_functions(where, "def f():\n" + textwrap.indent(body[:body.rindex("x79")], "    ")) == {}
