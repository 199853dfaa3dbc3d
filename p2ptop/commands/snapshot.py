"""``p2ptop snapshot``: write a snapshot file that ``--replay`` opens anywhere."""

from __future__ import annotations

import argparse
import sys

from ..model import save_snapshot
from .common import EXIT_OK, add_source_options, fail, snapshot_from_args


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("snapshot", help="write a snapshot (JSON) of this host, or of a demo/replay")
    add_source_options(p)
    p.add_argument("-o", "--output", default="-", metavar="FILE", help="file to write, - for stdout (default)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    snap, status = snapshot_from_args(args)
    if snap is None:
        return status  # type: ignore[return-value]
    if args.output == "-":
        sys.stdout.write(snap.to_json() + "\n")
        return EXIT_OK
    try:
        save_snapshot(snap, args.output)
    except OSError as e:
        return fail(f"cannot write {args.output}: {e.strerror or e}")
    print(f"wrote {args.output} ({len(snap.gpus)} GPUs, {snap.source.label})", file=sys.stderr)
    return EXIT_OK
