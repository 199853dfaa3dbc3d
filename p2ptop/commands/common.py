"""Pieces the subcommands share: the source options and the one-line error exit."""

from __future__ import annotations

import argparse
import sys
TYPE_CHECKING = False  # typing is not imported at run time (start-up); the annotations are strings
if TYPE_CHECKING:
    from typing import Optional

from ..model import Snapshot, SnapshotError, save_snapshot
from ..sources import SourceUnavailable, open_snapshot

EXIT_OK, EXIT_PROBLEM, EXIT_CANNOT_RUN = 0, 1, 2


def add_source_options(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--demo", metavar="NAME", help="use a bundled demo topology (simulated); `p2ptop demo` lists them")
    g.add_argument("--replay", metavar="FILE", help="use a saved snapshot file")


def fail(message: str) -> int:
    """One line on stderr, no traceback; exit status 2 (could not run)."""
    print(f"p2ptop: {message}", file=sys.stderr)
    return EXIT_CANNOT_RUN


def read_input(name: str, limit: int) -> tuple[Optional[str], Optional[str]]:
    """(text, None) of file ``name`` (``-``: stdin), at most ``limit`` bytes, undecodable bytes replaced;
    or (None, 'cannot read NAME: why')."""
    try:
        if name == "-":
            data = sys.stdin.buffer.read(limit)
        else:
            with open(name, "rb") as f:
                data = f.read(limit)
    except FileNotFoundError:
        return None, f"cannot read {name}: no such file"
    except IsADirectoryError:
        return None, f"cannot read {name}: is a directory"
    except PermissionError:
        return None, f"cannot read {name}: permission denied"
    except OSError as e:
        return None, f"cannot read {name}: {e.strerror or e}"
    return data.decode("utf-8", errors="replace"), None


def write_snapshot(snap: Snapshot, output: str) -> int:
    """The snapshot as JSON on stdout (``-``) or into ``output``, saying what was written; exit status."""
    if output == "-":
        sys.stdout.write(snap.to_json() + "\n")
        return EXIT_OK
    try:
        save_snapshot(snap, output)
    except OSError as e:
        return fail(f"cannot write {output}: {e.strerror or e}")
    print(f"wrote {output} ({len(snap.gpus)} GPUs, {snap.source.label})", file=sys.stderr)
    return EXIT_OK


def snapshot_from_args(args: argparse.Namespace, host_facts: bool = True,
                       what: str = "all") -> tuple[Optional[Snapshot], Optional[int]]:
    """(snapshot, None), or (None, exit status) after printing why. ``host_facts=False``: a live read
    leaves them out (for commands that do not show them)."""
    try:
        return open_snapshot(demo=getattr(args, "demo", None), replay=getattr(args, "replay", None),
                             host_facts=host_facts, what=what), None
    except (SnapshotError, SourceUnavailable) as e:
        return None, fail(str(e))
