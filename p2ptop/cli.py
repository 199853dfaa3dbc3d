"""The ``p2ptop`` command: the dashboard by default, and the subcommands in p2ptop/commands/."""

from __future__ import annotations

import argparse
import importlib
import sys
TYPE_CHECKING = False  # importing typing costs ~2 ms of every start; the annotations are never evaluated
if TYPE_CHECKING:
    from typing import Optional

from . import __version__
from .commands import COMMANDS, MODULES, SUMMARIES


def fail(message: str) -> int:
    """commands.common.fail, imported when needed (it imports the model: ``--help`` does not need it)."""
    from .commands.common import fail as _fail

    return _fail(message)


class _Unavailable:
    """Stands in for a subcommand whose module cannot be imported (a dependency is missing),
    so one missing package breaks that command only, with a message saying what to install."""

    def __init__(self, name: str, error: ImportError):
        self.name, self.error = name, error

    def add_parser(self, sub: argparse._SubParsersAction) -> None:
        missing = getattr(self.error, "name", None) or str(self.error)
        p = sub.add_parser(self.name, help=f"(unavailable: needs {missing})", add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=self.run)

    def run(self, args: argparse.Namespace) -> int:
        missing = getattr(self.error, "name", None)
        hint = f"; install it (pip install {missing}) or reinstall p2ptop" if missing else ""
        return fail(f"`p2ptop {self.name}` cannot run here: {self.error}{hint}")


def _command_modules(names: tuple[str, ...] = COMMANDS) -> list:
    mods = []
    for name in names:
        modname = f"{__package__}.commands.{MODULES.get(name, name)}"
        try:
            mods.append(importlib.import_module(modname))
        except ModuleNotFoundError as e:
            if e.name == modname:
                continue  # not written (yet)
            mods.append(_Unavailable(name, e))
        except ImportError as e:
            mods.append(_Unavailable(name, e))
    return mods


def _commands_needed(argv: list[str]) -> tuple[str, ...]:
    """Only the named subcommand's module is imported (start-up stays fast); all of them for --help
    (for a bare --help, build_parser shows commands.SUMMARIES without importing them)."""
    if any(a in ("-h", "--help") for a in argv):
        named = [a for a in argv if a in COMMANDS]
        return (named[0],) if named else COMMANDS
    takes_value = {"--demo", "--replay", "--interval", "--kb"}
    for i, a in enumerate(argv):
        if a in COMMANDS:
            return (a,)
        if not a.startswith("-") and (i == 0 or argv[i - 1] not in takes_value):
            return COMMANDS  # not a command we know: argparse lists the choices
    return ()


def build_parser(commands: tuple[str, ...] = COMMANDS, summaries_only: bool = False) -> argparse.ArgumentParser:
    """The parser; ``summaries_only``: the subcommands with their one-line help only (for ``p2ptop --help``)."""
    p = argparse.ArgumentParser(
        prog="p2ptop",
        description="Why two GPUs cannot talk to each other, or talk slowly, and what to do about it. "
        "With no command, opens the dashboard.",
    )
    p.add_argument("--version", action="version", version=f"p2ptop {__version__}")
    g = p.add_mutually_exclusive_group()  # before the command: for the dashboard, or any command that has none
    g.add_argument("--demo", dest="top_demo", metavar="NAME", help="open a bundled demo topology (simulated); `p2ptop demo` lists them")
    g.add_argument("--replay", dest="top_replay", metavar="FILE", help="open a saved snapshot file")
    p.add_argument("--interval", type=float, default=2.0, metavar="SECONDS", help="live refresh interval (default 2)")
    p.add_argument("--no-mouse", action="store_true", help="do not capture the mouse")
    p.add_argument("--kb", metavar="DIR", action="append", default=[], help="extra knowledge-base entries (repeatable)")
    p.set_defaults(command=None)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    if summaries_only:  # `p2ptop --help`: the one-line help of each command, without importing its module
        for name in commands:
            sub.add_parser(name, help=SUMMARIES[name], add_help=False)  # only listed: never parses
        return p
    for mod in _command_modules(commands):
        mod.add_parser(sub)
    return p


def main(argv: Optional[list[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    needed = _commands_needed(argv)
    bare_help = any(a in ("-h", "--help") for a in argv) and not any(a in COMMANDS for a in argv)
    parser = build_parser(needed, summaries_only=bare_help)
    args = parser.parse_args(argv)
    for key in ("demo", "replay"):  # `p2ptop --demo X topo` means what `p2ptop topo --demo X` does
        if getattr(args, key, None) is None:
            setattr(args, key, getattr(args, f"top_{key}"))
    if args.command is None:
        if args.interval <= 0:
            return fail("--interval must be a positive number of seconds")
        try:
            from .ui.app import run_dashboard
        except ModuleNotFoundError as e:
            if e.name and e.name.startswith(f"{__package__}.ui"):
                return fail("the dashboard is not built yet; use `p2ptop topo`")
            raise
        return run_dashboard(args)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


#: commands that print and end: as a process (``entry``) they end without the interpreter's teardown, which
#: after NVML was loaded took ~17 ms of `p2ptop topo`'s ~140 ms on an H100 host (benchmarks/device/live2.sh)
QUICK_EXIT = frozenset({"topo"})


def entry() -> None:
    """The ``p2ptop`` console script and ``python -m p2ptop``: :func:`main`, then exit. After a QUICK_EXIT
    command the output is flushed and the process ends at once (``os._exit``): nothing is left to clean up
    (the command closed NVML itself) and tearing down the modules costs more than the command's own work."""
    argv = sys.argv[1:]
    status = main(argv)
    named = _commands_needed(argv)  # the one command named, as main found it
    if len(named) == 1 and named[0] in QUICK_EXIT:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (BrokenPipeError, OSError):
            status = status or 0
        import os

        os._exit(status if isinstance(status, int) else 1)
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    entry()
