"""axe-core in the browser tests: the page's serious and critical accessibility findings.

``label-content-name-mismatch`` (WCAG 2.5.3, label in name) is switched on explicitly: axe files it as
experimental in some releases, and a control whose spoken name differs from its visible words is what a
voice-control user cannot click."""

from __future__ import annotations

import subprocess
from pathlib import Path

from playwright.sync_api import Page

RUN = """async () => (await axe.run(document, {resultTypes: ['violations'],
                                           rules: {'label-content-name-mismatch': {enabled: true}}})).violations
    .map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(' '))}))"""


def axe_source(folder: Path) -> str:
    """axe-core 4 from the npm registry, installed into ``folder``."""
    subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(folder), "axe-core@4"],
                   check=True, timeout=240, capture_output=True)
    return (folder / "node_modules" / "axe-core" / "axe.min.js").read_text()


def serious(page: Page, source: str) -> list[str]:
    """What axe finds serious or critical on the page as it is now (the page must allow the injected script:
    open it with ``bypass_csp=True``)."""
    page.add_script_tag(content=source)
    found = page.evaluate(RUN)
    return [f"{v['id']} ({v['impact']}): {v['nodes'][:3]}" for v in found if v["impact"] in ("serious", "critical")]
