"""``p2ptop topo``: the path and P2P matrices, as nvidia-smi topo -m / -p2p print them."""

from __future__ import annotations

import argparse
import json

from ..fabric import Fabric
from ..topo_text import topo_json, topo_report
from .common import EXIT_OK, add_source_options, snapshot_from_args


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("topo", help="print the path matrix (topo -m) and the P2P matrices (topo -p2p r/w/n/a/p)")
    add_source_options(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    snap, status = snapshot_from_args(args)
    if snap is None:
        return status  # type: ignore[return-value]
    fabric = Fabric(snap)
    if args.json:
        print(json.dumps(topo_json(snap, fabric), indent=1))
    else:
        print(topo_report(snap, fabric), end="")
    return EXIT_OK
