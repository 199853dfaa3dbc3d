"""``p2ptop review [list | show ID | export ID]``: the fixes tried, kept in the review store.

Reviews are opened and tried in the dashboard (``v`` on a pair) or from ``p2ptop explain FILE --review``;
this command lists them, shows one with every attempt and its before/after figures, and exports one
(Markdown or JSON) for a ticket. For scripts and pasted logs: ``review try ID N`` starts an attempt at
checklist item N, ``review retest ID`` re-runs the same test (``--log FILE`` for a log review: the job's
log after the fix), ``review outcome ID N STATE [--note TEXT]`` records the outcome.
"""

from __future__ import annotations

import argparse
import json

from .common import EXIT_OK, add_source_options, fail
from . import SUMMARIES


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("review", help=SUMMARIES["review"],
                       description="Reviews of fixes, kept under the user's data directory "
                       "($P2PTOP_DATA_DIR, else $XDG_DATA_HOME/p2ptop, else ~/.local/share/p2ptop). "
                       "Open one in the dashboard with v on a failing or slow pair.")
    p.add_argument("action", nargs="?", default="list", choices=("list", "show", "export", "try", "retest", "outcome"))
    p.add_argument("id", nargs="?", type=int, metavar="ID")
    p.add_argument("item", nargs="?", type=int, metavar="N", help="checklist item (1-based, as `review show` numbers them)")
    p.add_argument("state", nargs="?", choices=("helped", "did_not_help", "not_applicable"), help="outcome")
    p.add_argument("--note", metavar="TEXT", help="a note for the attempt")
    p.add_argument("--log", metavar="FILE", help="retest of a log review: the job's log after the fix (- for stdin)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--redact", action="store_true", help="replace host names and addresses (export)")
    p.add_argument("--db", metavar="FILE", help="use this review store instead of the default")
    add_source_options(p)
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
        if args.action in ("try", "retest", "outcome"):
            return _step(args, store, review)
        print(f"Review {review.id}: {review.problem}")
        print(f"  host {review.host or '-'}, test {review.test}, opened {review.created}, {review.status}")
        for i, item in enumerate(review.items):
            state = review.item_state(i)
            print(f"  {i + 1:>2}. [{STATES[state]:>14}] {item.get('entry_id') or item.get('entry_title')}: {item.get('action')}")
        print()
        print(trail_markdown([review], redact) or "No fix tried yet.")
        return EXIT_OK
    except StoreError as e:
        return fail(str(e))
    finally:
        store.close()


def _step(args: argparse.Namespace, store, review) -> int:
    from ..review import compare, suggest
    from ..review.plan import PlanItem
    from ..review.store import STATES

    if args.action == "retest":
        attempt = review.open_attempt
        if attempt is None:
            return fail(f"review {review.id} has no fix under way: `p2ptop review try {review.id} N` first")
        if review.test == "log":
            if not args.log:
                return fail("a log review is re-tested with the job's new log: --log FILE")
            from .explain import read_text
            text, why = read_text(args.log)
            if why:
                return fail(why)
            after = {"log": (text or "")[-20000:]}
            updated = store.record_after(attempt, after, {}, _log_suggestion(review, text or ""))
        else:
            from ..review.retest import retest
            from .common import snapshot_from_args

            def read():
                snap, status = snapshot_from_args(args)
                if snap is None:
                    raise RuntimeError("the host could not be read")
                return snap
            try:
                after = retest(review, review.items[attempt.item], read)
            except RuntimeError as e:
                return fail(str(e))
            c = compare(attempt.before or review.before, after)
            updated = store.record_after(attempt, after, c.to_dict(), suggest(c))
        s = updated.suggested
        print(f"re-test recorded; suggested outcome: {STATES.get(s, s) if s else 'none (not comparable)'}; "
              f"confirm with `p2ptop review outcome {review.id} {attempt.item + 1} STATE`")
        return EXIT_OK
    if args.item is None or not (1 <= args.item <= len(review.items)):
        return fail(f"give a checklist item from 1 to {len(review.items)} (see `p2ptop review show {review.id}`)")
    index = args.item - 1
    if args.action == "try":
        attempt = store.try_item(review, index)
        item = PlanItem.from_dict(review.items[index])
        print(f"trying: {item.action}")
        if item.command:
            print(f"  $ {item.command}")
        for c in item.caveats(review.test):
            print(f"  ! {c}")
        print(f"then: p2ptop review retest {review.id}" + (" --log FILE" if review.test == "log" else ""))
        return EXIT_OK
    if args.state is None:
        return fail("say the outcome: helped, did_not_help or not_applicable")
    latest = review.latest_attempt(index)
    if latest is not None and latest.state == "trying":
        store.set_outcome(latest, args.state, args.note)
    else:
        store.mark(review, index, args.state, args.note or "")
    if args.state == "helped":
        store.set_status(review.id, "closed")
    print(f"recorded: item {args.item} {STATES[args.state]}")
    return EXIT_OK


def _log_suggestion(review, text: str):
    """A log review helped when the new log no longer matches the entry the fix came from."""
    try:
        from ..knowledge import load_kb, match
        attempt = review.open_attempt
        entry_id = review.items[attempt.item].get("entry_id") if attempt else None
        ids = {m.entry.id for m in match(load_kb(), text) if m.confidence in ("likely", "possible")}
    except Exception:  # noqa: BLE001 - a suggestion only
        return None
    if not text.strip():
        return None
    return "did_not_help" if entry_id in ids else "helped"
