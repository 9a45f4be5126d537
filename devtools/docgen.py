"""The documentation's reference pages, generated from the code they describe.

``mkdocs build`` (through ``devtools/mkdocs_hooks.py``) replaces a marker line in a page,
``<!-- generated: NAME -->`` or ``<!-- generated: benchmark NAME -->``, with what the function of that name
here returns, so the configuration page is ``Settings``, the HTTP API page is the app's OpenAPI document, the
event contract is ``schemas/*.avsc``, the pipeline's diagram is the topology and the benchmark page is the JSON
the benchmarks wrote under ``docs/benchmarks/``.  Nothing here starts a service.

    python -m devtools.docgen settings|api|events|topology|benchmarks|readme-figures|benchmark NAME
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import SecretStr
from pydantic_core import PydanticUndefined

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
BENCHMARKS = DOCS / "benchmarks"
SCHEMAS = REPO / "schemas"
MARKER = re.compile(r"^<!-- generated: (?P<what>[a-z-]+)(?: (?P<arg>\S+))? -->$", re.M)


def cell(text: object) -> str:
    """``text`` fit for one cell of a Markdown table."""
    return str(text).replace("|", "\\|").replace("\n", " ").replace("](", "]\\(")  # prose, never a link


def table(columns: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table."""
    out = ["| " + " | ".join(cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(out)


# --- configuration: Settings


def settings_sections() -> list[tuple[str, list[str]]]:
    """The fields of ``Settings`` in the order they are declared, grouped by the ``# --- Section`` comment
    above them (``General`` before the first)."""
    from secondbrain.settings import Settings

    source = inspect.getsource(Settings)
    sections: list[tuple[str, list[str]]] = [("General", [])]
    for line in source.splitlines():
        heading = re.match(r"\s+# --- (.+)", line)
        if heading:
            title = re.split(r" \(", heading.group(1))[0].strip()
            sections.append((title[:1].upper() + title[1:], []))
            continue
        field = re.match(r"    (\w+): ", line)
        if field and field.group(1) in Settings.model_fields:
            sections[-1][1].append(field.group(1))
    return [(title, names) for title, names in sections if names]


def _type_text(annotation: Any) -> str:
    """What a value looks like: its choices, or its kind."""
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) is not None and len(args) == 1:
        return _type_text(args[0])
    if str(get_origin(annotation)).endswith("Literal"):
        return "one of " + ", ".join(f"`{a}`" for a in args)
    names = {str: "text", int: "integer", float: "number", bool: "`true` or `false`", Path: "path",
             SecretStr: "secret"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _default_text(field: Any) -> str:
    if field.default_factory is not None:
        return "see meaning"
    value = field.default
    if value is PydanticUndefined or value is None:
        return "unset"
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value == "":
        return "empty"
    return f"`{value}`"


def settings_rows() -> Iterator[tuple[str, str, str, str, str]]:
    """(section, variable, default, kind, meaning) for every field of ``Settings``."""
    from secondbrain.settings import Settings

    for section, names in settings_sections():
        for name in names:
            field = Settings.model_fields[name]
            kind = _type_text(field.annotation)
            secret = " (a secret: never printed or logged)" if "SecretStr" in str(field.annotation) else ""
            yield section, f"SB_{name.upper()}", _default_text(field), kind, (field.description or "") + secret


def settings() -> str:
    """The configuration reference: every setting, its default, what it takes and what it means."""
    out = []
    current = None
    for section, variable, default, kind, meaning in settings_rows():
        if section != current:
            if current is not None:
                out.append("")
            out += [f"### {section}", "", "| variable | default | takes | meaning |", "|---|---|---|---|"]
            current = section
        out.append(f"| `{variable}` | {cell(default)} | {cell(kind)} | {cell(meaning)} |")
    return "\n".join(out)


# --- HTTP API: the app's OpenAPI document


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of the app ``secondbrain up`` serves (gateway and query routes), built on the
    in-memory stores and hash-seeded models: no database, broker or model is started."""
    from app.http import create_app
    from secondbrain.events.codec import EventCodec
    from secondbrain.runtime import Runtime
    from secondbrain.settings import Settings
    from secondbrain.sparse import Bm25Encoder
    from secondbrain.stores.memory.models import HashEmbedder
    from secondbrain.stores.memory.store import MemoryMetadataStore
    from secondbrain.stores.objects_fs import FileObjectStore
    from secondbrain.stores.vectors_edge import EdgeVectorStore
    from secondbrain.topic_names import TopicNames

    with tempfile.TemporaryDirectory(prefix="sb-openapi-") as tmp:
        root = Path(tmp)
        rt = Runtime(settings=Settings(data_dir=root, _env_file=None),  # type: ignore[call-arg]
                     metadata=MemoryMetadataStore(), objects=FileObjectStore(root / "objects"), codec=EventCodec(),
                     names=TopicNames(""), vectors=EdgeVectorStore(root / "vectors"), embedder=HashEmbedder(),
                     sparse=Bm25Encoder())
        try:
            return create_app(rt, gateway=True, query=True).openapi()
        finally:
            rt.close()


def _schema_type(schema: dict[str, Any], doc: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " or ".join(_schema_type(s, doc) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_schema_type(schema.get('items', {}), doc)}"
    if "enum" in schema:
        return " / ".join(f"`{v}`" for v in schema["enum"])
    fmt = schema.get("format")
    return f"{schema.get('type', 'any')}{f' ({fmt})' if fmt else ''}"


def _body_fields(schema: dict[str, Any], doc: dict[str, Any]) -> list[list[str]]:
    if "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    required = set(schema.get("required", []))
    return [[f"`{name}`", _schema_type(prop, doc), "yes" if name in required else "",
             prop.get("description", "")] for name, prop in schema.get("properties", {}).items()]


HEADERS = {"idempotency-key": "Makes the request safe to retry: the same key with the same content is answered as "
                              "the first time, with other content it is a 422.",
           "x-filename": "The file's name, when the body is the file itself."}


def _operation(method: str, path: str, op: dict[str, Any], doc: dict[str, Any]) -> list[str]:
    out = [f"#### {method.upper()} `{path}`", "", f"**{op.get('summary', '')}**", ""]
    if op.get("description"):
        out += [op["description"].strip().replace("``", "`"), ""]
    # Every route takes the key (the page's introduction says how); a retry key is worth a word where it is taken.
    params = [[f"`{p['name']}`", p["in"], _schema_type(p.get("schema", {}), doc), "yes" if p.get("required") else "",
               p.get("description") or HEADERS.get(p["name"].lower(), "")]
              for p in op.get("parameters", []) if p["name"].lower() not in ("authorization", "cookie")]
    if params:
        out += [table(["parameter", "in", "type", "required", "meaning"], params), ""]
    for ctype, body in op.get("requestBody", {}).get("content", {}).items():
        fields = _body_fields(body.get("schema", {}), doc)
        out += [f"Body: `{ctype}`" + (":" if fields else ""), ""]
        if fields:
            out += [table(["field", "type", "required", "meaning"], fields), ""]
    answers = [f"`{code}` {r.get('description', '')}" for code, r in op.get("responses", {}).items()]
    if answers:
        out += ["Answers: " + "; ".join(answers) + ".", ""]
    return out


def api(doc: dict[str, Any] | None = None) -> str:
    """Every route of the OpenAPI document, grouped by tag, with its parameters, body and answers."""
    doc = doc if doc is not None else openapi_document()
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            by_tag.setdefault((op.get("tags") or ["other"])[0], []).append((method, path, op))
    out = [f"secondbrain {doc['info']['version']}, {sum(len(ops) for ops in doc['paths'].values())} routes.", ""]
    for tag, ops in by_tag.items():
        out += [f"### {tag[:1].upper() + tag[1:]}", ""]
        out += [table(["method", "path", "what"], [[m.upper(), f"`{p}`", o.get("summary", "")] for m, p, o in ops]),
                ""]
        for method, path, op in ops:
            out += _operation(method, path, op, doc)
    return "\n".join(out).rstrip() + "\n"


# --- event contract: schemas/*.avsc


def _avro_type(t: Any) -> str:
    if isinstance(t, list):
        return " or ".join(_avro_type(x) for x in t)
    if isinstance(t, dict):
        if t.get("logicalType"):
            return f"{t['type']} ({t['logicalType']})"
        if t.get("type") == "array":
            return f"array of {_avro_type(t['items'])}"
        if t.get("type") == "map":
            return f"map of {_avro_type(t['values'])}"
        if t.get("type") == "enum":
            return "enum: " + ", ".join(f"`{s}`" for s in t["symbols"])
        return str(t.get("name", t.get("type")))
    return str(t)


def _records(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The schema's record and every record declared inside it, outermost first."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop(0)
        if isinstance(node, list):
            stack[:0] = node
        elif isinstance(node, dict):
            if node.get("type") == "record":
                yield node
                stack[:0] = [f["type"] for f in node.get("fields", [])]
            elif node.get("type") in ("array", "map"):
                stack.insert(0, node.get("items", node.get("values")))


def _topics_of(name: str) -> str:
    from secondbrain import topic_names
    from secondbrain.pipeline.topology import OPEN_TOPICS, PIPELINE

    topics = {s.input: s.input_type for s in PIPELINE} | {s.output: s.output_type for s in PIPELINE}
    found = [t for t, typ in topics.items() if getattr(typ, "SCHEMA_NAME", "") == name]
    found += {"job_status": [topic_names.JOBS_STATUS], "dead_letter": [topic_names.DEAD_LETTER]}.get(name, [])
    return ", ".join(f"`{t}`" + (" (other apps publish here)" if t in OPEN_TOPICS else "") for t in found) or "-"


def events() -> str:
    """Each event's newest schema: its topic, versions, and every field of every record in it."""
    families: dict[str, list[int]] = {}
    for path in SCHEMAS.glob("*.avsc"):
        name, version = re.fullmatch(r"(\w+)\.v(\d+)\.avsc", path.name).groups()  # type: ignore[union-attr]
        families.setdefault(name, []).append(int(version))
    public = ("artifact_submitted", "url_requested")
    out = []
    for name in sorted(families, key=lambda n: (n not in public, n)):
        versions = sorted(families[name])
        schema = json.loads((SCHEMAS / f"{name}.v{versions[-1]}.avsc").read_text(encoding="utf-8"))
        out += [f"### `{name}`", "",
                f"Topic: {_topics_of(name)}. Versions: " + ", ".join(f"`{name}.v{v}.avsc`" for v in versions)
                + f" (the newest, v{versions[-1]}, below).", ""]
        for record in _records(schema):
            if record is not schema:
                out += [f"`{record['name']}`:", ""]
            if record.get("doc"):
                out += [record["doc"], ""]
            rows = [[f"`{f['name']}`", _avro_type(f["type"]),
                     "" if "default" not in f else f"`{json.dumps(f['default'])}`", f.get("doc", "")]
                    for f in record.get("fields", [])]
            out += [table(["field", "type", "default", "meaning"], rows), ""]
    return "\n".join(out).rstrip() + "\n"


# --- architecture: the topology


def _chain() -> list[tuple[str, str]]:
    """The pipeline top to bottom as (kind, name): each stage between the topic it reads and the one it writes."""
    from secondbrain.pipeline.topology import PIPELINE

    chain: list[tuple[str, str]] = []
    for s in PIPELINE:
        if ("topic", s.input) not in chain:
            chain.append(("topic", s.input))
        chain += [("stage", s.name), ("topic", s.output)]
    return chain


def topology_svg() -> str:
    """The pipeline as an SVG drawing (no script, readable offline, in either colour scheme): topics as rounded
    boxes, stages as square ones, the topics other apps publish to fed by the gateway and by them, the last topic
    read by the query service."""
    from secondbrain.pipeline.topology import OPEN_TOPICS, PIPELINE

    chain = _chain()
    row, box_w, box_h, left, side = 52, 230, 34, 20, 330
    height = row * len(chain) + box_h + 20
    y = {name: 10 + i * row for i, (_kind, name) in enumerate(chain)}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 580 {height}" width="580" '
             f'height="{height}" font-family="sans-serif" font-size="14" fill="currentColor">',
             "<title>secondbrain's pipeline, as its topology declares it</title>",
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="currentColor"/></marker></defs>']

    def box(x: int, top: int, text: str, kind: str) -> None:
        rx = 17 if kind == "topic" else 3
        fill = "#1e88e5" if kind == "topic" else "#43a047"
        parts.append(f'<rect x="{x}" y="{top}" width="{box_w}" height="{box_h}" rx="{rx}" fill="{fill}" '
                     f'fill-opacity="0.15" stroke="currentColor"/>')
        parts.append(f'<text x="{x + box_w // 2}" y="{top + 22}" text-anchor="middle">{text}</text>')

    def arrow(x1: int, y1: int, x2: int, y2: int, dashed: bool = False) -> None:
        dash = ' stroke-dasharray="5 4"' if dashed else ""
        parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="currentColor"{dash} '
                     'marker-end="url(#arrow)"/>')

    for i, (kind, name) in enumerate(chain):
        box(left, y[name], name if kind == "topic" else f"stage: {name}", kind)
        if i:
            arrow(left + box_w // 2, y[name] - row + box_h, left + box_w // 2, y[name])
    mid = left + box_w
    gateway_y, apps_y = y[chain[0][1]], y[chain[0][1]] + 2 * row
    box(side, gateway_y, "ingest gateway (HTTP, outbox)", "stage")
    box(side, apps_y, "other apps (signed events)", "stage")
    for topic in sorted(OPEN_TOPICS):
        arrow(side, gateway_y + box_h // 2, mid, y[topic] + box_h // 2)
        arrow(side, apps_y + box_h // 2, mid, y[topic] + box_h // 2, dashed=True)
    last = [s.output for s in PIPELINE if s.final][-1]
    query_y = y[last] + row
    box(left, query_y, "query (search, ask, agenda)", "stage")
    arrow(left + box_w // 2, y[last] + box_h, left + box_w // 2, query_y, dashed=True)
    parts.append("</svg>")
    return "".join(parts)


def topology() -> str:
    """The pipeline as declared in ``secondbrain.pipeline.topology``: a drawing, and the same as text."""
    from secondbrain.pipeline.topology import diagram

    return (f'<div class="pipeline-diagram">\n{topology_svg()}\n</div>\n\n'
            "The same, as `python -m secondbrain.pipeline.topology` prints it:\n\n```\n" + diagram() + "\n```\n")


# --- benchmarks: docs/benchmarks/*.json


ORDER = ("locomo", "answers", "answers_replay", "answers-model", "temporal", "mentions", "agenda", "modalities",
         "transcribers", "query", "query-vectors", "scale", "bulk", "imports", "fairness", "recurrence", "backbone",
         "backbone-otel", "folder_sync", "http_checks", "backup")


def _ordered(names: Iterable[str]) -> list[str]:
    """Benchmark names in the page's order (those it does not know yet last, by name)."""
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def bench_about(bench: str) -> str:
    """What ``bench/<bench>.py`` measures and how: its docstring, without the command lines it opens with."""
    tree = ast.parse((REPO / "bench" / f"{bench}.py").read_text(encoding="utf-8"))
    text = ast.get_docstring(tree) or ""
    kept = [line for line in text.splitlines() if not line.startswith("    ")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).replace("``", "`").strip()


def bench_figures(name: str) -> dict[str, Any]:
    """What ``bench/<name>.py --docs`` wrote last."""
    return dict(json.loads((BENCHMARKS / f"{name}.json").read_text(encoding="utf-8")))


def benchmark(name: str) -> str:
    """One benchmark's latest figures: the machine and date, its tables, its notes and its charts."""
    data = bench_figures(name)
    out = [f"*Measured {data['measured_at'][:10]} on {data['machine']}, with `{data['command']}`.*", ""]
    for t in data.get("tables", []):
        if t.get("title"):
            out += [f"**{t['title']}**", ""]
        out += [table(t["columns"], t["rows"]), ""]
    out += [f"- {note}" for note in data.get("notes", [])]
    if data.get("notes"):
        out.append("")
    for chart in data.get("charts", []):
        out += [f"![{data['title']}: {chart}](benchmarks/{chart})", ""]
    return "\n".join(out).rstrip() + "\n"


def benchmarks() -> str:
    """Every benchmark's section: what it measures (its docstring) and its latest figures."""
    out: list[str] = []
    described: set[str] = set()
    for name in _ordered(p.stem for p in BENCHMARKS.glob("*.json")):
        data = bench_figures(name)
        about = bench_about(data["bench"]) if data["bench"] not in described \
            else f"Another run of `bench/{data['bench']}.py` (above)."
        described.add(data["bench"])
        out += [f"## {data['title']}", "", about, "", benchmark(name)]
    return "\n".join(out)


def readme_figures() -> str:
    """The README's table of headline figures: each benchmark's ``headline`` entries, with its machine and
    date."""
    rows = []
    for name in _ordered(p.stem for p in BENCHMARKS.glob("*.json")):
        data = bench_figures(name)
        short = data.get("machine_short") or data["machine"]
        for h in data.get("headline", []):
            rows.append([h["label"], h["value"], f"{short}, {data['measured_at'][:10]}"])
    return table(["measure", "figure", "machine, date"], rows)


def include(path: str) -> str:
    """A Markdown file kept elsewhere in the repository (an operator guide beside its deployment files), its
    headings one level down and its links to the repository's files written as paths (the site has no copy
    of them)."""
    source = (REPO / path).resolve()
    text = source.read_text(encoding="utf-8")
    lines = text.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    fence = False
    out = []
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        if not fence and re.match(r"#{1,5} ", line):
            line = "#" + line
        out.append(line)

    def link(m: re.Match[str]) -> str:
        label, target = m.group(1), m.group(2)
        if re.match(r"[a-z]+:|#", target):
            return m.group(0)
        where = (source.parent / target.split("#")[0]).resolve().relative_to(REPO).as_posix()
        return f"`{where}`" if label.startswith("`") else f"{label} (`{where}`)"

    return re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", link, "\n".join(out)).strip() + "\n"


GENERATORS = {"settings": settings, "api": api, "events": events, "topology": topology, "benchmarks": benchmarks}


def expand(markdown: str) -> str:
    """``markdown`` with every marker line replaced by what it names."""
    def one(m: re.Match[str]) -> str:
        what, arg = m.group("what"), m.group("arg")
        if what == "benchmark":
            return benchmark(arg)
        if what == "include":
            return include(arg)
        return GENERATORS[what]()

    return MARKER.sub(one, markdown)


def main(argv: list[str]) -> None:
    what = argv[0] if argv else ""
    if what == "readme-figures":
        print(readme_figures())
    elif what == "benchmark" and len(argv) == 2:
        print(benchmark(argv[1]))
    elif what in GENERATORS:
        print(GENERATORS[what]())
    else:
        sys.exit(f"usage: python -m devtools.docgen {'|'.join([*GENERATORS, 'readme-figures'])}|benchmark NAME")


if __name__ == "__main__":
    main(sys.argv[1:])
