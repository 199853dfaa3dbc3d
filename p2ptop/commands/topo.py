"""``p2ptop topo``: the path and P2P matrices, as nvidia-smi topo -m / -p2p print them."""

from __future__ import annotations

import argparse

from ..topo_text import topo_json, topo_report
from .common import EXIT_OK, add_source_options, snapshot_from_args
from . import SUMMARIES


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("topo", help=SUMMARIES["topo"])
    add_source_options(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # topo shows no host facts: not read; live, only what the matrices need (--json: all, for expected bandwidth)
    snap, status = snapshot_from_args(args, host_facts=False, what="all" if args.json else "topo")
    if snap is None:
        return status  # type: ignore[return-value]
    if args.json:  # expected bandwidth per pair: the graph (networkx) is needed
        import json

        print(json.dumps(topo_json(snap), indent=1))
    else:  # the graph only where the snapshot alone cannot give a pair's path class
        print(topo_report(snap), end="")
    return EXIT_OK
