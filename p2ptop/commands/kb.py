"""``p2ptop kb``: lint, list and show knowledge-base entries (built-in kb/, the user's, --kb DIR)."""

from __future__ import annotations

import argparse
import json

from ..knowledge import load_kb
from ..knowledge.lint import lint
from ..knowledge.loader import default_dirs
from ..knowledge.render import clean, entry_text
from .common import EXIT_OK, EXIT_PROBLEM, fail
from . import SUMMARIES


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("kb", help=SUMMARIES["kb"])
    ksub = p.add_subparsers(dest="kb_command", metavar="ACTION", required=True)
    pl = ksub.add_parser("lint", help="validate entry files (default: all KB directories); exit 1 when any is broken")
    pl.add_argument("paths", nargs="*", metavar="PATH", help="entry files or directories")
    pl.add_argument("--json", action="store_true", help="problems as JSON")
    pi = ksub.add_parser("list", help="one line per entry")
    pi.add_argument("--json", action="store_true", help="entries as JSON")
    ps = ksub.add_parser("show", help="one entry in full")
    ps.add_argument("id", metavar="ID")
    ps.add_argument("--lang", choices=("en", "zh"), default="en", help="language of signature, root cause and workarounds")
    ps.add_argument("--json", action="store_true", help="the entry's JSON as stored")
    for q in (pl, pi, ps):
        q.add_argument("--kb", metavar="DIR", action="append", default=argparse.SUPPRESS, help="extra entry directory (repeatable)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return {"lint": _lint, "list": _list, "show": _show}[args.kb_command](args)


def _kb(args):
    return load_kb(extra_dirs=getattr(args, "kb", []) or [])


def _lint(args) -> int:
    paths = args.paths or [str(d) for d in default_dirs(getattr(args, "kb", []) or [])]
    problems = lint(paths)
    if args.json:
        print(json.dumps([{"file": p.file, "field": p.field, "message": p.message} for p in problems], indent=1))
    else:
        for p in problems:
            print(clean(str(p)))
        print(f"{len(problems)} problem(s) in {', '.join(clean(p) for p in paths)}")
    return EXIT_PROBLEM if problems else EXIT_OK


def _list(args) -> int:
    kb = _kb(args)
    if args.json:
        print(json.dumps([{"id": e.id, "failure_class": e.failure_class, "verification_tier": e.verification_tier,
                           "signature": e.signature, "file": e.file} for e in kb.entries], indent=1, ensure_ascii=False))
    else:
        for e in kb.entries:
            sig = clean(e.signature)
            print(f"{clean(e.id):50} {clean(e.failure_class or '-'):34} {e.verification_tier:15} {sig[:70]}")
        print(f"{len(kb.entries)} entries" + (f"; {len(kb.problems)} file(s) skipped, see `p2ptop kb lint`" if kb.problems else ""))
    return EXIT_OK


def _show(args) -> int:
    kb = _kb(args)
    entry = kb.get(args.id)
    if entry is None:
        return fail(f"no knowledge-base entry {clean(args.id)!r}; `p2ptop kb list` shows the ids")
    if args.json:
        print(json.dumps(entry.data, indent=2, ensure_ascii=False))
    else:
        print(entry_text(entry, args.lang))
        print(f"  file: {clean(entry.file)}")
    return EXIT_OK
