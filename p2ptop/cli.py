"""The ``p2ptop`` command: the dashboard by default, and the subcommands in p2ptop/commands/."""

from __future__ import annotations

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

    def add_parser(self, sub: "argparse._SubParsersAction") -> None:
        import argparse

        missing = getattr(self.error, "name", None) or str(self.error)
        p = sub.add_parser(self.name, help=f"(unavailable: needs {missing})", add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(func=self.run)

    def run(self, args: "argparse.Namespace") -> int:
        missing = getattr(self.error, "name", None)
        hint = f"; install it (pip install {missing}) or reinstall p2ptop" if missing else ""
        return fail(f"`p2ptop {self.name}` cannot run here: {self.error}{hint}")


def _command_modules(names: tuple[str, ...] = COMMANDS) -> list:
    import importlib

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


DESCRIPTION = ("Why two GPUs cannot talk to each other, or talk slowly, and what to do about it. "
               "With no command, opens the dashboard.")
#: the options before the command, for the dashboard or any command that has none: (flag, argparse keywords,
#: mutually exclusive group or None). build_parser adds them; top_help prints them without argparse.
TOP_OPTIONS = (
    ("--demo", {"dest": "top_demo", "metavar": "NAME",
                "help": "open a bundled demo topology (simulated); `p2ptop demo` lists them"}, "source"),
    ("--replay", {"dest": "top_replay", "metavar": "FILE", "help": "open a saved snapshot file"}, "source"),
    ("--interval", {"type": float, "default": 2.0, "metavar": "SECONDS", "help": "live refresh interval (default 2)"}, None),
    ("--no-mouse", {"action": "store_true", "help": "do not capture the mouse"}, None),
    ("--kb", {"metavar": "DIR", "action": "append", "default": [], "help": "extra knowledge-base entries (repeatable)"}, None),
)


def build_parser(commands: tuple[str, ...] = COMMANDS, summaries_only: bool = False) -> "argparse.ArgumentParser":
    """The parser; ``summaries_only``: the subcommands with their one-line help only."""
    import argparse

    p = argparse.ArgumentParser(prog="p2ptop", description=DESCRIPTION)
    p.add_argument("--version", action="version", version=f"p2ptop {__version__}")
    groups: dict = {}
    for flag, kw, group in TOP_OPTIONS:
        if group is not None and group not in groups:
            groups[group] = p.add_mutually_exclusive_group()
        (groups[group] if group is not None else p).add_argument(flag, **kw)
    p.set_defaults(command=None)
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    if summaries_only:
        for name in commands:
            sub.add_parser(name, help=SUMMARIES[name], add_help=False)  # only listed: never parses
        return p
    for mod in _command_modules(commands):
        mod.add_parser(sub)
    return p


def _columns() -> int:
    """The terminal's width as argparse finds it (shutil.get_terminal_size, without importing shutil)."""
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def top_help(columns: Optional[int] = None) -> str:
    """``p2ptop --help``: the text argparse prints for build_parser(summaries_only=True), laid out as its
    HelpFormatter does (tests/test_start_help.py holds the two equal at several widths), without importing
    argparse, gettext, locale and shutil or building the parser: ~20 ms of a ~40 ms start on an H100 host."""
    import textwrap

    width = (columns or _columns()) - 2
    usage_parts, group_done = ["[-h]", "[--version]"], set()
    options = [("-h, --help", "show this help message and exit"), ("--version", "show program's version number and exit")]
    for flag, kw, group in TOP_OPTIONS:
        inv = f"{flag} {kw['metavar']}" if "metavar" in kw else flag
        options.append((inv, kw["help"]))
        if group is None:
            usage_parts.append(f"[{inv}]")
        elif group not in group_done:
            group_done.add(group)
            usage_parts.append("[" + " | ".join(f"{f} {k['metavar']}" for f, k, g in TOP_OPTIONS if g == group) + "]")
    prefix, prog, pos_parts = "usage: ", "p2ptop", ["COMMAND", "..."]
    one_line = " ".join([prog] + usage_parts + pos_parts)
    if len(prefix) + len(one_line) <= width:
        usage = one_line
    else:
        narrow = len(prefix) + len(prog) > 0.75 * width  # argparse then puts the parts under "usage:"
        indent = " " * (len(prefix) if narrow else len(prefix) + len(prog) + 1)

        def lines_of(parts: list[str], first_len: int) -> list[str]:
            lines, line, line_len = [], [], first_len - 1
            for part in parts:
                if line_len + 1 + len(part) > width and line:
                    lines.append(indent + " ".join(line))
                    line, line_len = [], len(indent) - 1
                line.append(part)
                line_len += len(part) + 1
            if line:
                lines.append(indent + " ".join(line))
            return lines

        if narrow:
            lines = lines_of(usage_parts + pos_parts, len(indent))
            if len(lines) > 1:
                lines = lines_of(usage_parts, len(indent)) + lines_of(pos_parts, len(indent))
            lines = [prog] + lines
        else:
            lines = lines_of([prog] + usage_parts, len(prefix))
            lines[0] = lines[0][len(indent):]
            lines += lines_of(pos_parts, len(indent))
        usage = "\n".join(lines)
    help_position = min(max(len(inv) + 2 for inv, _ in options) + 2, min(24, max(width - 20, 4)))
    help_width = max(width - help_position, 11)

    def item(indent: int, inv: str, text: Optional[str]) -> str:
        if not text:
            return " " * indent + inv + "\n"
        action_width = help_position - indent - 2
        if len(inv) <= action_width:
            out, first = " " * indent + inv.ljust(action_width) + "  ", ""
        else:
            out, first = " " * indent + inv + "\n", " " * help_position
        wrapped = textwrap.wrap(" ".join(text.split()), help_width)
        return out + first + wrapped[0] + "\n" + "".join(" " * help_position + l + "\n" for l in wrapped[1:])

    parts = [f"{prefix}{usage}\n\n", textwrap.fill(DESCRIPTION, max(width, 11)) + "\n\n",
             "positional arguments:\n", item(2, "COMMAND", None)]
    parts += [item(4, name, SUMMARIES[name]) for name in COMMANDS]
    parts += ["\noptions:\n"] + [item(2, inv, text) for inv, text in options]
    return "".join(parts)


def main(argv: Optional[list[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if any(a in ("-h", "--help") for a in argv) and not any(a in COMMANDS for a in argv):
        sys.stdout.write(top_help())  # the bare --help: commands.SUMMARIES, no command module, no argparse
        return 0
    parser = build_parser(_commands_needed(argv))
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
    (NVML is left to the exit, not shut down first) and tearing down the modules costs more than the command's own work."""
    argv = sys.argv[1:]
    named = _commands_needed(argv)  # the one command named, as main will find it
    quick = len(named) == 1 and named[0] in QUICK_EXIT and not any(a in ("-h", "--help") for a in argv)
    if quick:
        if not any(a.split("=", 1)[0] in ("--demo", "--replay") for a in argv):
            from .sources import nvml_warm

            nvml_warm.start()  # NVML's first calls overlap the imports below (the exit releases NVML)
        from .sources import nvml

        nvml.LEAVE_OPEN_FOR_EXIT = True  # the exit below releases NVML: no nvmlShutdown first
    status = main(argv)
    if quick:
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
