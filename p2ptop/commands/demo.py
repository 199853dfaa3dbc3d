"""``p2ptop demo``: list the bundled demo topologies."""

from __future__ import annotations

import argparse

from ..demos import DEMOS
from .common import EXIT_OK
from . import SUMMARIES


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help=SUMMARIES["demo"])
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    width = max(len(n) for n in DEMOS)
    print("Bundled demo topologies (simulated; open one with --demo NAME):")
    for name, what in DEMOS.items():
        print(f"  {name:<{width}}  {what}")
    return EXIT_OK
