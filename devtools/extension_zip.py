"""The browser extension as a zip a browser (or a store, later) takes: ``make extension``.

Standard library only, so ``make extension`` needs nothing installed.  The zip holds what the manifest
uses (``manifest.json``, the scripts, pages, stylesheet and icons), with fixed dates and order, so the same
sources make the same bytes.

    python3 -m devtools.extension_zip            # dist/secondbrain-extension-<version>.zip
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "clients" / "browser-extension"
PACKED = (".json", ".js", ".html", ".css", ".png")  # not the README: it is for people reading the repository
FIXED_DATE = (2026, 1, 1, 0, 0, 0)


def files(source: Path = SOURCE) -> list[Path]:
    """What goes in the zip, in a fixed order."""
    return sorted(p for p in source.rglob("*") if p.is_file() and p.suffix in PACKED
                  and not any(part.startswith(".") for part in p.relative_to(source).parts))


def build(dest_dir: Path = REPO / "dist", source: Path = SOURCE) -> Path:
    """Write the zip into ``dest_dir``; its path."""
    manifest = json.loads((source / "manifest.json").read_text())
    missing = [str(p) for p in _referenced(manifest) if not (source / p).is_file()]
    if missing:
        raise SystemExit(f"error: the extension's manifest names files that are not there: {', '.join(missing)}")
    dest_dir.mkdir(parents=True, exist_ok=True)
    out = dest_dir / f"secondbrain-extension-{manifest['version']}.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in files(source):
            info = zipfile.ZipInfo(path.relative_to(source).as_posix(), FIXED_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes())
    return out


def _referenced(manifest: dict[str, object]) -> list[str]:
    """The files a Manifest V3 extension's manifest points at."""
    named: list[str] = []
    icons = manifest.get("icons")
    if isinstance(icons, dict):
        named += [str(v) for v in icons.values()]
    action = manifest.get("action")
    if isinstance(action, dict) and isinstance(action.get("default_icon"), dict):
        named += [str(v) for v in action["default_icon"].values()]
    background = manifest.get("background")
    if isinstance(background, dict) and background.get("service_worker"):
        named.append(str(background["service_worker"]))
    options = manifest.get("options_ui")
    if isinstance(options, dict) and options.get("page"):
        named.append(str(options["page"]))
    return named


def main() -> int:
    out = build()
    print(f"{out.relative_to(REPO)}: load it in chrome://extensions (Developer mode: drag the zip in, or unzip it "
          "and Load unpacked)", file=sys.stderr)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
