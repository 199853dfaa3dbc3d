"""``p2ptop fleet``: many hosts' snapshots (or Prometheus), ranked by worst state, each against its siblings."""

from __future__ import annotations

import argparse
import sys

from .common import EXIT_CANNOT_RUN, EXIT_OK, EXIT_PROBLEM, fail
from . import SUMMARIES


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fleet",
        help=SUMMARIES["fleet"],
        description="Load many hosts' snapshots in parallel (or read the exporters' series back from Prometheus), rank "
        "the hosts by worst state and compare each pair's copy-test figures and each link with the same pair or link "
        "on hosts of the same GPU model and topology. Opens the fleet screen in a terminal; --json, --markdown or "
        "--text print instead. Exit status: 0 every host fine, 1 a host needs a look, 2 nothing could be read.",
    )
    p.add_argument("sources", nargs="*", metavar="SOURCE", help="a directory of snapshots (*.json), a glob, or files")
    p.add_argument("--prometheus", metavar="URL", help="read the fleet from Prometheus (p2ptop exporter's series)")
    p.add_argument("--json", action="store_true", help="print the ranked hosts as JSON")
    p.add_argument("--markdown", action="store_true", help="print a Markdown report (for a ticket)")
    p.add_argument("--text", action="store_true", help="print the ranked hosts as text instead of opening the fleet screen")
    p.add_argument("--model", metavar="TEXT", help="only hosts whose GPU model contains TEXT")
    p.add_argument("--topology", metavar="ID", help="only hosts of this topology (its id or its words)")
    p.add_argument("--redact", action="store_true", help="replace host names, UUIDs, serials, IP/MAC addresses and user names, the same way on every host")
    p.add_argument("--workers", type=int, metavar="N", help="processes loading files (default: one per CPU)")
    p.add_argument("--no-cache", action="store_true", help="summarise every file again (default: reuse summaries of unchanged "
                   "files from $XDG_CACHE_HOME/p2ptop/fleet.sqlite)")
    p.set_defaults(func=run)


def _progress():
    if not sys.stderr.isatty():
        return None, lambda: None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    bar = Progress("loading snapshots", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True,
                   console=__import__("rich.console").console.Console(stderr=True))
    task = bar.add_task("load", total=None)
    bar.start()

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    return update, bar.stop


def run(args: argparse.Namespace) -> int:
    from ..fleet import load_fleet, load_prometheus, ranked, to_json, to_markdown, to_text
    from ..fleet.prometheus import PrometheusError

    if bool(args.sources) == bool(args.prometheus):
        return fail("give snapshot files, directories or globs, or --prometheus URL (one of the two)")
    if args.workers is not None and args.workers < 1:
        return fail("--workers must be at least 1")
    formatted = args.json or args.markdown or args.text or not sys.stdout.isatty()
    if args.prometheus:
        try:
            fleet = load_prometheus(args.prometheus)
        except PrometheusError as e:
            return fail(str(e))
    elif not formatted:  # the screen loads the files itself, showing the worst hosts as they arrive
        from ..ui.fleet_screen import run_fleet_screen

        return run_fleet_screen(None, args, sources=args.sources,
                                load_options={"workers": args.workers, "kb_dirs": getattr(args, "kb", []) or [], "cache": not args.no_cache})
    else:
        update, stop = _progress()
        try:
            fleet = load_fleet(args.sources, workers=args.workers, kb_dirs=getattr(args, "kb", []) or [], progress=update,
                               cache=not args.no_cache)
        finally:
            stop()
    if not fleet.hosts:
        why = "; ".join(f"{f}: {w}" for f, w in fleet.problems[:5]) or "no hosts"
        return fail(f"no host could be read ({why})")
    hosts = ranked(fleet, args.model, args.topology)
    redactor = None
    if args.redact:
        from ..fleet.redact import fleet_redactor

        redactor = fleet_redactor(fleet)
    if args.json:
        print(to_json(fleet, hosts, redactor))
    elif args.markdown:
        print(to_markdown(fleet, hosts, redactor), end="")
    elif args.text or not sys.stdout.isatty():
        text = to_text(fleet, hosts)
        print(redactor.text(text) if redactor else text, end="")
    else:
        from ..ui.fleet_screen import run_fleet_screen

        return run_fleet_screen(fleet, args)
    from ..fleet.report import state_words

    return EXIT_PROBLEM if any(state_words(h) != "ok" for h in hosts) else EXIT_OK
