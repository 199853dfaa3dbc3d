"""Review of fixes, full screen: the matched entries' workarounds as a checklist, each with its state
and note; Try records the before state and says what to do, Enter re-runs the same test, before and
after side by side with the outcome it suggests, y confirms. Keyboard first (mouse too), fits 80x24.

The screen only shows; the review package (p2ptop/review) records, compares and re-tests. Every string
from entries, notes and results is appended to rich Text as plain text, never parsed as markup.
"""

from __future__ import annotations

import threading
from functools import partial
from typing import Any, Callable, Optional

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from ..bench.catalog import MEASUREMENTS
from ..model import Snapshot
from ..review import Review, ReviewStore, StoreError, compare, outcome_text, site_outcomes, suggest
from ..review.plan import PlanItem
from ..review.retest import retest
from ..review.store import STATES
from .look import clean

MARKS = {"not_tried": ("○", "dim"), "trying": ("◐", "yellow"), "helped": ("✔", "green"),
         "did_not_help": ("✖", "red"), "not_applicable": ("–", "dim")}
Reader = Callable[[], Snapshot]


def reader_for(snapshot: Snapshot) -> Reader:
    """How the re-test reads the host again: live NVML for a live source, else the same snapshot (a copy)."""
    if snapshot.source.kind == "nvml":
        def live() -> Snapshot:
            from ..sources import read_live
            return read_live()
        return live
    frozen = snapshot.to_dict()
    return lambda: Snapshot.from_dict(frozen, where="review")


def _fig(v: Optional[float], unit: str) -> str:
    if v is None:
        return "–"
    return f"{v:.1f}" if unit == "GB/s" else f"{v:.2f}"


def comparison_table(review: Review, attempt: Any) -> Optional[Table]:
    """Before and after of one attempt as a rich Table (None when it has no after yet)."""
    if not attempt or not attempt.after or "result" not in attempt.after:
        return None
    c = compare(attempt.before or review.before, attempt.after)
    t = Table(box=None, pad_edge=False, expand=False, show_edge=False)
    t.add_column("figure")
    t.add_column("before", justify="right")
    t.add_column("after", justify="right")
    t.add_column("", justify="right")
    t.add_row(Text("verdict", style="bold"), Text(clean(c.verdict_before or "–")), Text(clean(c.verdict_after or "–")), "")
    for row in c.rows:
        ratio = row.ratio
        change = "" if ratio is None else f"{(ratio - 1) * 100:+.0f}%"
        style = "green" if ratio and ratio >= 1.1 else "red" if ratio and ratio <= 0.9 else ""
        label = MEASUREMENTS.get(row.name, (row.unit, row.name, ""))[1]
        t.add_row(Text(f"{label} ({row.unit})"), _fig(row.before, row.unit), _fig(row.after, row.unit), Text(change, style=style))
    for cap in sorted(set(c.p2p_before) | set(c.p2p_after)):
        b, a = c.p2p_before.get(cap), c.p2p_after.get(cap)
        if b != a or cap == "read":
            t.add_row(Text(f"P2P {cap}"), Text(clean(str(b))), Text(clean(str(a))), "")
    return t


class NoteInput(Input):
    pass


class ReviewScreen(Screen[None]):
    """Push with ``app.push_screen(ReviewScreen(store, review, reader))``."""

    DEFAULT_CSS = """
    ReviewScreen #review-title { height: auto; max-height: 2; background: $panel; padding: 0 1; text-style: bold; }
    ReviewScreen #review-items { height: 40%; min-height: 4; border: none; }
    ReviewScreen #review-detail { padding: 0 1; }
    ReviewScreen #review-note { dock: bottom; display: none; }
    ReviewScreen #review-note.editing { display: block; }
    """
    BINDINGS = [
        Binding("escape,q", "close", "Back"),
        Binding("t", "try", "Try"),
        Binding("enter", "step", "Try / re-test", show=False),
        Binding("y", "confirm", "Confirm"),
        Binding("h", "outcome('helped')", "Helped", show=False),
        Binding("n", "outcome('did_not_help')", "Did not help", show=False),
        Binding("a", "outcome('not_applicable')", "N/A", show=False),
        Binding("e", "note", "Note"),
    ]

    def __init__(self, store: ReviewStore, review: Review, read: Reader, *, bench: Any = None) -> None:
        super().__init__()
        self.store = store
        self.review = review
        self.read = read
        self.bench = bench  # a copy-test API for tests (p2ptop.bench.runner's run_pair), else the real one
        self.running: Optional[threading.Event] = None
        self.message = ""
        self.text = ""  # the detail pane as plain text (tests, screen readers)

    # -- layout --
    def compose(self) -> ComposeResult:
        yield Static(id="review-title")
        yield OptionList(id="review-items")
        with VerticalScroll(id="review-detail"):
            yield Static(id="review-body")
        yield NoteInput(placeholder="note for this attempt (Enter saves, Esc cancels)", id="review-note")
        yield Footer()

    def on_mount(self) -> None:
        self._refresh_items(0)
        open_attempt = self.review.open_attempt
        if open_attempt is not None:
            self.query_one(OptionList).highlighted = open_attempt.item
            if open_attempt.rebooted_since:
                self.message = "The machine rebooted since this fix was tried: press Enter to re-test now."
            elif not open_attempt.after:
                self.message = "A fix is under way: apply it, then press Enter to re-test."
        self._show()
        self.query_one(OptionList).focus()

    @property
    def index(self) -> int:
        h = self.query_one(OptionList).highlighted
        return h if h is not None else 0

    def _item(self, i: Optional[int] = None) -> Optional[PlanItem]:
        i = self.index if i is None else i
        if 0 <= i < len(self.review.items):
            return PlanItem.from_dict(self.review.items[i])
        return None

    def _reload(self) -> None:
        try:
            self.review = self.store.get(self.review.id)
        except StoreError as e:
            self.notify(str(e), severity="error", timeout=8)

    def _refresh_items(self, keep: Optional[int] = None) -> None:
        ol = self.query_one(OptionList)
        keep = self.index if keep is None else keep
        ol.clear_options()
        for i, it in enumerate(self.review.items):
            state = self.review.item_state(i)
            mark, style = MARKS.get(state, ("?", ""))
            t = Text(f"{mark} ", style=style)
            t.append(f"{STATES.get(state, state):<14} ", style=style)
            t.append(clean(str(it.get("entry_id") or it.get("entry_title") or "")), style="bold")
            t.append(": " + clean(str(it.get("action") or "")))
            ol.add_option(Option(t))
        if not self.review.items:
            ol.add_option(Option(Text("No workaround to try: no knowledge-base entry matched this problem.", style="dim"),
                                 disabled=True))
        if self.review.items:
            ol.highlighted = max(0, min(keep, len(self.review.items) - 1))

    def _title(self) -> Text:
        t = Text(f"Review {self.review.id} · ", style="bold")
        t.append(clean(self.review.problem))
        done = sum(1 for a in self.review.attempts if a.confirmed)
        t.append(f" · {len(self.review.attempts)} tried, {done} confirmed", style="dim")
        return t

    def _show(self) -> None:
        self.query_one("#review-title", Static).update(self._title())
        body = Text()
        if self.message:
            body.append(self.message + "\n\n", style="bold yellow")
        item = self._item()
        if item is None:
            body.append("Nothing to try here. Esc goes back.", style="dim")
            self.text = body.plain
            self.query_one("#review-body", Static).update(body)
            return
        body.append("What to do\n", style="bold underline")
        body.append(clean(item.action) + "\n")
        if item.command:
            body.append("  $ ", style="dim")
            body.append(clean(item.command) + "\n", style="bold")
        for c in item.caveats(self.review.test):
            body.append("  ! " + clean(c) + "\n", style="italic")
        rate = f"public estimate: works {item.success_rate * 100:.0f}%" if item.success_rate is not None else "no public estimate"
        here = ""
        try:
            tally = site_outcomes(self.store.all_attempts()).get((item.entry_id or "", item.workaround))
            here = outcome_text(tally)
        except StoreError:
            pass
        body.append(f"  {rate}" + (f"; {here}" if here else "") + "\n", style="dim")
        attempt = self.review.latest_attempt(self.index)
        state = self.review.item_state(self.index)
        body.append("\n")
        if attempt is None:
            body.append("t (or Enter) tries this fix: the failing result is kept as 'before'.\n", style="cyan")
        elif state == "trying" and not attempt.after:
            body.append("Trying since " + clean(attempt.started) + ". Apply the fix, then Enter re-runs the same test.\n", style="cyan")
        table = comparison_table(self.review, attempt)
        body_widget = self.query_one("#review-body", Static)
        if attempt is not None and attempt.suggested and state == "trying":
            body.append(f"Suggested outcome: {STATES.get(attempt.suggested, attempt.suggested)}. "
                        "y confirms; h helped, n did not help, a not applicable.\n", style="bold cyan")
        elif attempt is not None and attempt.confirmed:
            body.append(f"Outcome: {STATES.get(attempt.state, attempt.state)} (confirmed).\n", style="bold")
        if attempt is not None and attempt.note:
            body.append("Note: " + clean(attempt.note) + "\n", style="italic")
        if attempt is not None and attempt.after and attempt.after.get("result"):
            errors = attempt.after["result"].get("errors") or []
            for e in errors[:2]:
                body.append("  re-test said: " + clean(str(e)) + "\n", style="yellow")
        self.text = body.plain
        if table is not None:
            from rich.console import Group
            body_widget.update(Group(body, Text("\nBefore → after", style="bold underline"), table,
                                     *self._changes(attempt)))
        else:
            body_widget.update(body)

    def _changes(self, attempt: Any) -> list[Text]:
        c = compare(attempt.before or self.review.before, attempt.after)
        if not c.changes:
            return []
        t = Text("\nChanged between the two snapshots\n", style="bold underline")
        for line in c.changes[:8]:
            t.append("  · " + clean(line) + "\n")
        return [t]

    def on_option_list_option_highlighted(self, _event: OptionList.OptionHighlighted) -> None:
        self._show()

    def on_option_list_option_selected(self, _event: OptionList.OptionSelected) -> None:
        self.action_step()

    # -- actions --
    def action_close(self) -> None:
        note = self.query_one(NoteInput)
        if note.has_class("editing"):
            note.remove_class("editing")
            self.query_one(OptionList).focus()
            return
        if self.running is not None:
            self.running.set()
        self.dismiss(None)

    def action_try(self) -> None:
        if self._item() is None or self.running is not None:
            return
        if self.review.item_state(self.index) == "trying":
            self.notify("This fix is already under way: Enter re-tests.", timeout=3)
            return
        try:
            self.store.try_item(self.review, self.index)
        except StoreError as e:
            self.notify(str(e), severity="error", timeout=8)
            return
        self._reload()
        self.message = "Before state recorded. Apply the fix now; then Enter re-runs the same test."
        self._refresh_items()
        self._show()

    def action_step(self) -> None:
        """Enter: try the highlighted fix, or re-test it when it is under way."""
        if self._item() is None:
            return
        if self.review.item_state(self.index) == "trying":
            self.action_retest()
        else:
            self.action_try()

    def action_retest(self) -> None:
        attempt = self.review.latest_attempt(self.index)
        if attempt is None or attempt.state != "trying":
            return
        if self.running is not None:
            self.notify("The re-test is running.", timeout=3)
            return
        if self.review.test == "log":
            self.notify("Run the job again and paste its log: p2ptop explain FILE.", timeout=6)
            return
        cancel = threading.Event()
        self.running = cancel
        self.message = "Re-testing the same way… (Esc leaves; the test is cancelled)"
        self._show()
        self.run_worker(partial(self._retest_worker, attempt, cancel), thread=True, group="review", name="re-test")

    def _retest_worker(self, attempt: Any, cancel: threading.Event) -> None:
        try:
            if self.bench is not None:
                after = self.bench(self.review, self.review.items[attempt.item], self.read, cancel)
            else:
                after = retest(self.review, self.review.items[attempt.item], self.read, cancel=cancel)
            c = compare(attempt.before or self.review.before, after)
            updated = self.store.record_after(attempt, after, c.to_dict(), suggest(c))
            self.app.call_from_thread(self._retest_done, updated, None)
        except Exception as e:  # noqa: BLE001 - say it on screen, keep the review
            self.app.call_from_thread(self._retest_done, None, f"{type(e).__name__}: {e}")

    def _retest_done(self, attempt: Any, error: Optional[str]) -> None:
        self.running = None
        if error:
            self.message = f"The re-test could not run: {error}"
        else:
            self._reload()
            s = attempt.suggested
            self.message = ("Re-test done." if s
                            else "Re-test done, but its result is not comparable (see below): run it again or decide yourself.")
        self._refresh_items()
        self._show()

    def action_confirm(self) -> None:
        attempt = self.review.latest_attempt(self.index)
        if attempt is None or attempt.state != "trying" or not attempt.suggested:
            self.notify("Nothing to confirm: re-test first (Enter), or say h / n / a.", timeout=4)
            return
        self.action_outcome(attempt.suggested)

    def action_outcome(self, state: str) -> None:
        if self._item() is None:
            return
        attempt = self.review.latest_attempt(self.index)
        try:
            if attempt is not None and attempt.state == "trying":
                self.store.set_outcome(attempt, state)
            else:
                self.store.mark(self.review, self.index, state)
        except StoreError as e:
            self.notify(str(e), severity="error", timeout=8)
            return
        self._reload()
        self.message = f"Recorded: {STATES[state]}."
        if state == "helped":
            self.store.set_status(self.review.id, "closed")
            self._reload()
            self.message += " The review is closed; it stays in `p2ptop review list` and in ticket bundles."
        self._refresh_items()
        self._show()

    def action_note(self) -> None:
        if self._item() is None:
            return
        note = self.query_one(NoteInput)
        attempt = self.review.latest_attempt(self.index)
        note.value = attempt.note if attempt else ""
        note.add_class("editing")
        note.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        note = self.query_one(NoteInput)
        note.remove_class("editing")
        attempt = self.review.latest_attempt(self.index)
        try:
            if attempt is None:
                attempt = self.store.try_item(self.review, self.index)
                self.store.set_outcome(attempt, "not_tried", event.value)
            else:
                self.store.set_note(attempt, event.value)
        except StoreError as e:
            self.notify(str(e), severity="error", timeout=8)
        self._reload()
        self._refresh_items()
        self._show()
        self.query_one(OptionList).focus()


def open_review(store: ReviewStore, snapshot: Snapshot, result: Any, matches: list, pair: tuple[int, int]) -> Review:
    """The open review of this pair's problem on this host (picked up where it stopped), or a new one."""
    from ..review import plan_items, problem_from_result
    from ..model import BenchResult

    if result is None:
        result = BenchResult(a=pair[0], b=pair[1], status="ok", verdict=None)
    p = problem_from_result(result, snapshot)
    found = store.find_open(p["host"], p["subject"], p["test"])
    if found is not None:
        return found
    from ..review import load_site_outcomes
    items = [i.to_dict() for i in plan_items(matches, load_site_outcomes(p["host"]))]
    return store.create(host=p["host"], subject=p["subject"], test=p["test"], problem=p["problem"],
                        before=p["before"], items=items)


def open_review_screen(app: Any) -> None:
    """The dashboard's ``v``: open (or resume) the review of the selected pair with its matched entries."""
    pair = getattr(app, "pair", None)
    state = getattr(app, "state", None)
    if not pair or state is None:
        app.notify("Select a pair first.", timeout=3)
        return
    result = app.bench_results.get(tuple(pair)) if hasattr(app, "bench_results") else None
    matches = list(getattr(app, "matches", []) or [])
    try:
        store = ReviewStore()
        review = open_review(store, state.snapshot, result, matches, tuple(pair))
    except StoreError as e:
        app.notify(str(e), title="Review store", severity="error", timeout=10)
        return
    app.push_screen(ReviewScreen(store, review, reader_for(state.snapshot)))
