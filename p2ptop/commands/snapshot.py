"""``p2ptop snapshot``: write a snapshot file that ``--replay`` opens anywhere."""

from __future__ import annotations

import argparse

from .common import add_source_options, snapshot_from_args, write_snapshot
from . import SUMMARIES


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("snapshot", help=SUMMARIES["snapshot"])
    add_source_options(p)
    p.add_argument("-o", "--output", default="-", metavar="FILE", help="file to write, - for stdout (default)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    snap, status = snapshot_from_args(args)
    if snap is None:
        return status  # type: ignore[return-value]
    return write_snapshot(snap, args.output)
