"""``p2ptop report``: the ticket without a terminal UI.

Without ``--bundle`` it prints report.md on stdout (pipe it into ``gh issue create --body-file -``).
With ``--bundle [DIR]`` it writes the whole bundle (screenshot rendered headless, report.md,
snapshot.json) in DIR, the current directory by default, and prints the folder's path.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional

from ..model import Snapshot
from .common import EXIT_OK, add_source_options, fail, snapshot_from_args
from . import SUMMARIES

SCREEN_WIDTH, SCREEN_HEIGHT = 200, 50


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help=SUMMARIES["report"],
        description="Without --bundle, print report.md (Markdown, paste-ready in a GitHub or Jira issue). "
        "With --bundle, write p2ptop-<host>-<time>/ with screenshot.svg/.txt/.png, report.md and snapshot.json.",
    )
    add_source_options(p)
    p.add_argument("--bundle", nargs="?", const=".", default=None, metavar="DIR",
                   help="write the bundle folder in DIR (default: the current directory)")
    p.add_argument("--redact", action="store_true",
                   help="replace hostnames, serial numbers, UUIDs and IP addresses (tickets that leave the company)")
    p.add_argument("--tar", action="store_true", help="also write <folder>.tar.gz beside the bundle (needs --bundle)")
    p.set_defaults(func=run)


def screenshot(snapshot: Snapshot, kb_dirs: list[str]) -> tuple[Optional[str], Optional[str], Optional[str]]:
    """(svg, text, None) of the dashboard rendered headless, or (None, None, why not)."""
    try:
        from ..ui.headless import render_screen
    except ModuleNotFoundError as e:
        if e.name and e.name.startswith("p2ptop.ui"):
            return None, None, "the dashboard is not part of this build, so the bundle has no screenshot"
        raise
    svg, text = render_screen(snapshot, width=SCREEN_WIDTH, height=SCREEN_HEIGHT, kb_dirs=tuple(kb_dirs))
    return svg, text, None


def run(args: argparse.Namespace) -> int:
    from ..export.bundle import ExportError, notice, report_markdown, write_bundle

    if args.tar and args.bundle is None:
        return fail("--tar needs --bundle [DIR]")
    snap, status = snapshot_from_args(args)
    if snap is None:
        return status  # type: ignore[return-value]
    kb_dirs = list(getattr(args, "kb", []) or [])
    if args.bundle is None:
        sys.stdout.write(report_markdown(snap, redact=args.redact, kb_dirs=kb_dirs))
        return EXIT_OK
    svg, text, why = screenshot(snap, kb_dirs)
    if why:
        print(f"p2ptop: note: {why}", file=sys.stderr)
    try:
        path = write_bundle(snap, args.bundle, svg=svg, text=text, redact=args.redact, tar=args.tar, kb_dirs=kb_dirs)
    except ExportError as e:
        return fail(str(e))
    print(notice(path), file=sys.stderr)
    print(path)
    if args.tar:
        print(path.with_name(path.name + ".tar.gz"))
    return EXIT_OK
