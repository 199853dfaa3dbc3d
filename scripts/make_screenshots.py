#!/usr/bin/env python3
"""Render the README screenshots into screenshots/ through the ticket bundle's own path.

Each picture is the dashboard rendered headless (p2ptop.ui.headless.render_screen), written by
write_bundle (which swaps the web font for an installed monospace and draws the PNG) and copied
out as screenshots/<name>.svg, .png and .txt. So the README shows what a ticket bundle shows.

    python scripts/make_screenshots.py                      # every bundled demo
    python scripts/make_screenshots.py --demo nvlink-degraded --demo pcie-4gpu-iommu
    python scripts/make_screenshots.py --live --name h200x2-live --redact   # this host (needs a driver)
    python scripts/make_screenshots.py --replay snap.json --name h200x2-live --redact

Exit 0 when every picture has its PNG, 1 when a PNG could not be made (the reason is printed),
2 when a source could not be opened.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p2ptop.demos import DEMOS  # noqa: E402
from p2ptop.export.bundle import ExportError, write_bundle  # noqa: E402
from p2ptop.export.png import unavailable_reason  # noqa: E402
from p2ptop.model import SnapshotError  # noqa: E402
from p2ptop.sources import SourceUnavailable, open_snapshot  # noqa: E402
from p2ptop.ui.headless import render_screen  # noqa: E402

COPIED = ("svg", "png", "txt")


def shoot(snapshot, name: str, out: pathlib.Path, width: int, height: int, redact: bool, kb_dirs) -> list[pathlib.Path]:
    """Render one snapshot and copy the bundle's screenshot files to ``out/<name>.<ext>``."""
    svg, text = render_screen(snapshot, width=width, height=height, kb_dirs=tuple(kb_dirs))
    written = []
    with tempfile.TemporaryDirectory(prefix="p2ptop-shots-") as tmp:
        folder = write_bundle(snapshot, tmp, svg=svg, text=text, redact=redact, kb_dirs=kb_dirs)
        for ext in COPIED:
            src = folder / f"screenshot.{ext}"
            if src.exists():
                dst = out / f"{name}.{ext}"
                shutil.copyfile(src, dst)
                written.append(dst)
    return written


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = p.add_mutually_exclusive_group()
    src.add_argument("--demo", action="append", metavar="NAME", help="a bundled demo (repeatable; default: all)")
    src.add_argument("--live", action="store_true", help="this host, read through NVML")
    src.add_argument("--replay", metavar="FILE", help="a saved snapshot")
    p.add_argument("--name", help="file name (without extension) for --live/--replay")
    p.add_argument("--out", default=str(ROOT / "screenshots"), metavar="DIR", help="default: screenshots/")
    p.add_argument("--width", type=int, default=200)
    p.add_argument("--height", type=int, default=50)
    p.add_argument("--redact", action="store_true", help="replace hostnames, serials, UUIDs and IP addresses")
    p.add_argument("--kb", action="append", default=[], metavar="DIR", help="extra knowledge-base entries")
    args = p.parse_args(argv)

    if (args.live or args.replay) and not args.name:
        p.error("--live and --replay need --name")
    out = pathlib.Path(args.out)
    os.makedirs(out, exist_ok=True)
    try:
        if args.live or args.replay:
            jobs = [(args.name, open_snapshot(replay=args.replay))]
        else:
            jobs = [(name, open_snapshot(demo=name)) for name in (args.demo or list(DEMOS))]
    except (SnapshotError, SourceUnavailable) as e:
        print(f"make_screenshots: {e}", file=sys.stderr)
        return 2

    missing_png = False
    for name, snap in jobs:
        try:
            written = shoot(snap, name, out, args.width, args.height, args.redact, args.kb)
        except ExportError as e:
            print(f"make_screenshots: {name}: {e}", file=sys.stderr)
            return 2
        print(f"{name}: " + ", ".join(str(w.relative_to(out.parent) if w.is_relative_to(out.parent) else w) for w in written))
        missing_png = missing_png or not any(w.suffix == ".png" for w in written)
    if missing_png:
        print(f"make_screenshots: {unavailable_reason() or 'a PNG could not be drawn (see above)'}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
