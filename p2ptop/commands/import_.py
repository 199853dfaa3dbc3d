"""``p2ptop import FILE|-``: a pasted ``nvidia-smi topo -m`` (with ``-p2p`` matrices, ``nvidia-smi -q``
text or XML where present) becomes a snapshot marked imported, for ``--replay``, ``doctor``,
``report`` and the dashboard."""

from __future__ import annotations

import argparse
import os
import sys

from ..evidence.snapshot import ImportError_, snapshot_from_text
from .common import fail, write_snapshot
from . import SUMMARIES


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help=SUMMARIES["import"],
                       description="Read a paste of `nvidia-smi topo -m` (with `topo -p2p r|w|n|a|p` matrices and "
                       "`nvidia-smi -q` text or XML when present) and write a snapshot marked imported; what "
                       "the paste does not say is N/A. Open it with `p2ptop --replay FILE`.")
    p.add_argument("file", metavar="FILE", help="the paste, - for stdin")
    p.add_argument("-o", "--output", default="-", metavar="FILE", help="snapshot file to write, - for stdout (default)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        if args.file == "-":
            text, name = sys.stdin.read(), "stdin"
        else:
            with open(args.file, encoding="utf-8", errors="replace") as f:
                text = f.read()
            name = os.path.basename(args.file)
    except OSError as e:
        return fail(f"cannot read {args.file}: {e.strerror or e}")
    try:
        snap = snapshot_from_text(text, name)
    except ImportError_ as e:
        return fail(f"{args.file}: {e}")
    return write_snapshot(snap, args.output)
