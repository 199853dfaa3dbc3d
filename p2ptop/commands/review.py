"""``p2ptop review [list | show ID | export ID]``: the fixes tried, kept in the review store.

Reviews are opened and tried in the dashboard (``v`` on a pair); this command lists them, shows one
with every attempt and its before/after figures, and exports one (Markdown or JSON) for a ticket.
"""

from __future__ import annotations

import argparse
import json

from .common import EXIT_OK, fail


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("review", help="fixes tried on failing pairs: list, show ID, export ID",
                       description="Reviews of fixes, kept under the user's data directory "
                       "($P2PTOP_DATA_DIR, else $XDG_DATA_HOME/p2ptop, else ~/.local/share/p2ptop). "
                       "Open one in the dashboard with v on a failing or slow pair.")
    p.add_argument("action", nargs="?", default="list", choices=("list", "show", "export"))
    p.add_argument("id", nargs="?", type=int, metavar="ID")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--redact", action="store_true", help="replace host names and addresses (export)")
    p.add_argument("--db", metavar="FILE", help="use this review store instead of the default")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..review import ReviewStore, StoreError, trail_dict, trail_markdown
    from ..review.store import STATES

    try:
        store = ReviewStore(args.db)
    except StoreError as e:
        return fail(str(e))
    try:
        if args.action == "list":
            reviews = store.list()
            if args.json:
                print(json.dumps(trail_dict(reviews), indent=1))
                return EXIT_OK
            if not reviews:
                print(f"No reviews yet in {store.path}. Open one in the dashboard: v on a failing or slow pair.")
                return EXIT_OK
            print(f"{'ID':>4}  {'status':<7} {'updated':<25} {'host':<16} problem (attempts)")
            for r in reviews:
                done = sum(1 for a in r.attempts if a.confirmed)
                print(f"{r.id:>4}  {r.status:<7} {r.updated:<25} {(r.host or '-')[:16]:<16} "
                      f"{r.problem} ({len(r.attempts)} tried, {done} confirmed)")
            return EXIT_OK
        if args.id is None:
            return fail(f"`p2ptop review {args.action}` needs a review ID (see `p2ptop review list`)")
        review = store.get(args.id)
        redact = None
        if args.redact:
            from ..export.redact import Redactor
            redactor = Redactor()
            if review.host:
                redactor.add("host", review.host)
            redact = redactor.text
        if args.json:
            print(json.dumps(trail_dict([review], redact), indent=1))
            return EXIT_OK
        if args.action == "export":
            print(trail_markdown([review], redact))
            return EXIT_OK
        print(f"Review {review.id}: {review.problem}")
        print(f"  host {review.host or '-'}, test {review.test}, opened {review.created}, {review.status}")
        for i, item in enumerate(review.items):
            state = review.item_state(i)
            print(f"  [{STATES[state]:>14}] {item.get('entry_id')}: {item.get('action')}")
        print()
        print(trail_markdown([review], redact) or "No fix tried yet.")
        return EXIT_OK
    except StoreError as e:
        return fail(str(e))
    finally:
        store.close()
