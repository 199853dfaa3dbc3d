"""The dashboard app: sources and polling, the panes, and the actions on pairs.

Workers (thread) read snapshots, run copy tests, load and match the knowledge base, write bundles; they
post messages (ui/messages.py) and never touch widgets. Polling never overlaps: the next poll is armed
when the previous one has been handled. Copy-test results live in the app and survive live refreshes.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import io
import os
import signal
import threading
import time
from functools import partial
from typing import Any, Callable, Iterable, Optional

from rich.console import Console
from rich.text import Text
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..model import BenchResult, Snapshot, SnapshotError
from . import look
from .look import clean
from .nccl_view import NcclView
from .messages import BenchFinished, BenchProgress, ExportDone, KbLoaded, MatchesReady, ReadFailed, StateReady
from .screens.help import HelpScreen
from .state import DashboardState
from .widgets.events_log import EventsLog
from .widgets.fabric_view import FabricView
from .widgets.header import Header
from .widgets.pair_matrix import MODES, PairMatrix
from .widgets.pair_panel import PairPanel, pair_text

Reader = Callable[[], Snapshot]
#: Layouts by terminal size. Wide: fabric | matrix over events | pair panel. Medium: one of fabric, matrix
#: and events (f, m, l switch) beside the pair panel. Narrow: that one pane above the pair panel.
WIDE_WIDTH = 160
INFO_EVENT_SECONDS = 60.0  # a routine change of one GPU is logged at most this often
NARROW_WIDTH, NARROW_HEIGHT = 100, 30
INSTALL_HINT = ("Copy tests need CuPy and a GPU: pip install 'p2ptop[cuda12]' (CUDA 12 driver) "
                "or 'p2ptop[cuda13]' (CUDA 13 driver).")


def _local_time(iso: Optional[str] = None) -> str:
    if iso:
        try:
            return _dt.datetime.fromisoformat(iso).astimezone().strftime("%H:%M:%S")
        except ValueError:
            pass
    return _dt.datetime.now().strftime("%H:%M:%S")


class LiveReader:
    """Live NVML for the dashboard's polls: NVML stays initialised between polls (sources.nvml.LiveSession).

    The first read goes through sources.read_live, whose error says clearly when there is no driver."""

    def __init__(self) -> None:
        self._session: Any = None

    def __call__(self) -> Snapshot:
        from ..sources import attach_host, read_live
        from ..sources.nvml import LiveSession

        if self._session is None:
            snap = read_live()
            self._session = LiveSession()
            return snap
        snap = self._session.read()
        attach_host(snap)
        return snap

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None


class MainScreen(Screen):
    """The dashboard's own screen; it tells the app when its size is known, to pick a layout."""

    def on_resize(self) -> None:
        self.app._apply_layout()


class P2PTopApp(App[int]):
    CSS_PATH = "p2ptop.tcss"
    TITLE = "p2ptop"
    BINDINGS = [
        Binding("q", "quit", "Quit", tooltip="Leave p2ptop (a running copy test is cancelled)"),
        Binding("question_mark", "help", "Help", tooltip="This list of keys"),
        Binding("ctrl+p", "command_palette", "Commands", show=False,
                tooltip="Command palette: copy tests, export, cell modes, sources"),
        Binding("tab", "focus_next", "Next pane", show=False, tooltip="Move to the next pane"),
        Binding("shift+tab", "focus_previous", "Previous pane", show=False, tooltip="Move to the previous pane"),
        Binding("f", "pane('fabric')", "Fabric", show=False, tooltip="Show and focus the fabric view"),
        Binding("m", "pane('matrix')", "Matrix", show=False, tooltip="Show and focus the pair matrix"),
        Binding("l", "pane('events')", "Events log", show=False, tooltip="Show and focus the events log"),
        Binding("p", "pane('pair')", "Pair panel", show=False, tooltip="Focus the pair panel (scroll, open KB entries)"),
        Binding("z", "zoom", "Zoom", show=False, tooltip="Fill the screen with the focused pane (again: back)"),
        Binding("c", "cycle_mode", "Cells", tooltip="Cycle what the matrix cells show"),
        Binding("r", "run_pair", "Test pair", show=False, tooltip="Copy test of the highlighted pair (as Enter in the matrix)"),
        Binding("R", "run_all", "Test all", tooltip="Copy test of every ordered pair, one after another"),
        Binding("escape", "cancel", "Cancel test", show=False, tooltip="Cancel the running copy test"),
        Binding("N", "nccl_run", "NCCL", show=False, tooltip="Run NCCL on every pair in the background (cells: c → nccl)"),
        Binding("x", "export", "Export", tooltip="Write a ticket bundle: screenshot, report, snapshot"),
        Binding("k", "open_entry", "KB entry", show=False, tooltip="Open the first knowledge-base entry matched for the pair"),
        Binding("v", "review", "Review fixes", show=False, tooltip="Review fixes for the pair: try a workaround, re-test, before and after"),
        Binding("u", "poll_now", "Refresh now", show=False, tooltip="Read live NVML now instead of waiting for the interval"),
    ]

    def __init__(
        self,
        *,
        snapshot: Optional[Snapshot] = None,
        demo: Optional[str] = None,
        replay: Optional[str] = None,
        reader: Optional[Reader] = None,
        interval: float = 2.0,
        kb_dirs: Iterable[str] = (),
        bench: Any = None,
        poll: bool = True,
        export_dir: Optional[str] = None,
    ) -> None:
        """One of ``snapshot`` (shown as is), ``demo``, ``replay`` or live (``reader``, default NVML).

        ``reader`` is any callable returning a snapshot: tests feed a sequence through it. ``bench`` is an
        object with the copy-test runner's functions (default: p2ptop.bench.runner, imported on first use).
        ``poll=False`` shows one snapshot and never polls (headless rendering).
        """
        super().__init__()
        self.animation_level = "none"  # no animations: they flood slow SSH links
        self._initial = (snapshot, demo, replay)
        self._reader = reader
        self.interval = interval
        self.kb_dirs = list(kb_dirs)
        self._bench_api = bench
        self._poll_enabled = poll
        self.export_dir = export_dir or os.getcwd()
        self.state: Optional[DashboardState] = None
        self.live = False
        self._token = 0
        self._poll_timer = None
        self._poll_failing = False
        self._info_logged_at: dict[tuple[str, str], float] = {}  # (change kind, subject) -> when last logged
        self.pair: Optional[tuple[int, int]] = None
        self.bench_results: dict[tuple[int, int], BenchResult] = {}
        self._progress: dict[tuple[int, int], dict[str, Any]] = {}
        self._bench_cancel: Optional[threading.Event] = None
        self.kb: Any = None
        self.kb_error: Optional[str] = None
        self.kb_loaded = threading.Event()
        self._kb_started = False
        self.matches: list[Any] = []
        self.pane = "matrix"
        self.nccl = NcclView(self)

    # -- layout ---------------------------------------------------------------------------------
    def get_default_screen(self) -> Screen:
        return MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        self.header = Header(id="header")
        self.banner = Static("", id="banner")
        self.fabric = FabricView(id="fabric")
        self.matrix = PairMatrix(id="matrix")
        self.matrix.nccl = self.nccl.cell
        self.events = EventsLog(id="events")
        self.panel = PairPanel(id="pair")
        yield self.header
        yield self.banner
        with Horizontal(id="body"):
            yield self.fabric
            with Vertical(id="middle"):
                yield self.matrix
                yield self.events
            yield self.panel
        yield Footer()

    def on_mount(self) -> None:
        self.main_screen: Screen = self.screen
        self.banner.display = False
        self.panel.border_title = "Pair"
        self.header.show(None)
        self._apply_layout()
        self.matrix.focus()
        try:
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self._hangup)
        except (NotImplementedError, RuntimeError, ValueError, AttributeError):
            pass  # no SIGHUP here (or not the main thread): nothing to do when the terminal goes
        snapshot, demo, replay = self._initial
        if snapshot is not None:
            self.open_source(snapshot=snapshot)
        elif demo or replay:
            self.open_source(demo=demo, replay=replay)
        else:
            self.open_source(reader=self._reader)

    def on_unmount(self) -> None:
        self.live = False  # no further polls
        if self._poll_timer is not None:
            self._poll_timer.stop()
        if isinstance(self._reader, LiveReader):
            self._reader.close()
        if self._bench_cancel is not None:
            self._bench_cancel.set()  # the runner kills its child process

    def _hangup(self) -> None:
        """The terminal went away (SSH dropped): stop work and leave."""
        if self._bench_cancel is not None:
            self._bench_cancel.set()
        self.exit(0)

    def layout_name(self) -> str:
        width, height = self.size
        if width < NARROW_WIDTH or height < NARROW_HEIGHT:
            return "narrow"
        return "medium" if width < WIDE_WIDTH else "wide"

    def _apply_layout(self) -> None:
        screen = getattr(self, "main_screen", None)
        if screen is None:
            return
        layout = self.layout_name()
        screen.set_class(layout == "narrow", "-narrow")
        screen.set_class(layout == "medium", "-medium")
        middle = self.query_one("#middle")
        pane = self.pane if self.pane != "pair" else "matrix"
        if layout == "wide":
            shown = {"fabric", "matrix", "events"}
        elif layout == "medium":  # fabric, or the matrix over the events log, beside the pair panel
            shown = {"fabric"} if pane == "fabric" else {"matrix", "events"}
        else:  # one pane above the pair panel
            shown = {pane}
        self.fabric.display = "fabric" in shown
        self.matrix.display = "matrix" in shown
        self.events.display = "events" in shown
        middle.display = bool(shown & {"matrix", "events"})
        self._titles()
        if layout == "narrow" and pane == "matrix" and self.state is not None:
            # as tall as the matrix needs (rows, header, border, scrollbar), at most half the screen
            middle.styles.height = min(len(self.state.indices) + 3, max(6, self.size.height // 2))
        else:
            middle.styles.height = "1fr"

    def _titles(self) -> None:
        """Pane titles; where panes fold away, the titles say which keys bring them back."""
        hint = "" if self.layout_name() == "wide" else "  (f fabric · m matrix · l events)"
        self.fabric.border_title = "Fabric" + hint
        self.matrix.border_title = f"Pairs: {MODES[self.matrix.mode]}" + hint
        self.events.border_title = "Events" + (hint if self.layout_name() == "narrow" else "")

    def action_zoom(self) -> None:
        screen = self.main_screen
        if screen.maximized is not None:
            screen.minimize()
        elif self.focused is not None and self.screen is screen:
            pane = next((w for w in (self.fabric, self.matrix, self.events, self.panel)
                         if w is self.focused or self.focused in w.walk_children()), None)
            if pane is not None:
                screen.maximize(pane, container=False)

    def action_pane(self, name: str) -> None:
        """Show and focus a pane (on a narrow terminal the others fold away)."""
        if name != "pair":
            self.pane = name
        self._apply_layout()
        {"fabric": self.fabric, "matrix": self.matrix, "events": self.events, "pair": self.panel}[name].focus()

    # -- sources --------------------------------------------------------------------------------
    def open_source(self, *, snapshot: Optional[Snapshot] = None, demo: Optional[str] = None,
                    replay: Optional[str] = None, reader: Optional[Reader] = None) -> None:
        """Switch to a source; results of a previous source are dropped when they arrive."""
        self._token += 1
        if self._poll_timer is not None:
            self._poll_timer.stop()
            self._poll_timer = None
        self._poll_failing = False
        self.live = snapshot is None and not demo and not replay
        if self.state is not None:
            self.bench_results.clear()
        if snapshot is not None:
            read: Reader = lambda: snapshot  # noqa: E731
        elif demo or replay:
            from ..sources import open_snapshot

            read = partial(open_snapshot, demo=demo, replay=replay)
        else:
            if reader is None:
                reader = LiveReader()
            self._reader = reader
            read = reader
        self._read(read, first=True)

    def _read(self, read: Reader, first: bool) -> None:
        previous = None if first else self.state
        self.run_worker(partial(self._read_worker, read, self._token, previous, first),
                        thread=True, group="read", exclusive=True, name="read snapshot")

    def _read_worker(self, read: Reader, token: int, previous: Optional[DashboardState], first: bool) -> None:
        from ..sources import SourceUnavailable

        try:
            snap = read()
        except SourceUnavailable as e:
            self.post_message(ReadFailed(str(e), token, first, no_driver=True))
            return
        except SnapshotError as e:
            self.post_message(ReadFailed(str(e), token, first))
            return
        except Exception as e:  # noqa: BLE001 - any failure of a read is shown, never a crash
            self.post_message(ReadFailed(f"{type(e).__name__}: {e}", token, first))
            return
        try:
            state = DashboardState(snap, previous)
        except Exception as e:  # noqa: BLE001
            self.post_message(ReadFailed(f"could not analyse the snapshot: {type(e).__name__}: {e}", token, first))
            return
        self.post_message(StateReady(state, token))

    def _arm_poll(self) -> None:
        if self.live and self._poll_enabled:
            self._poll_timer = self.set_timer(self.interval, self._poll)

    def _poll(self) -> None:
        self._poll_timer = None
        if self.live and self._reader is not None:
            self._read(self._reader, first=False)

    def action_poll_now(self) -> None:
        if not self.live:
            self.notify("Not a live source: nothing to refresh.", timeout=3)
            return
        if self._poll_timer is not None:  # a poll in flight arms its own successor; never two at once
            self._poll_timer.stop()
            self._poll()

    def on_state_ready(self, message: StateReady) -> None:
        if message.token != self._token:
            return
        state = message.state
        if self.kb is None and self.kb_error is None and not self._kb_started:
            # the knowledge base loads once the first picture is up, so as not to slow it down
            self._kb_started = True
            self.run_worker(self._kb_worker, thread=True, group="kb", name="load knowledge base")
        state.snapshot.bench = list(self.bench_results.values())  # results survive live refreshes
        was = self.state
        self.state = state
        if self._poll_failing:
            self._poll_failing = False
            self.set_banner(None)
            self.events.add("NVML answers again", "info")
        now = time.monotonic()
        for change in state.changes:
            if change.severity == "info":
                # routine changes (CRC errors at a harmless rate...): once a minute per GPU, not every poll
                key = (change.kind, change.subject)
                if now - self._info_logged_at.get(key, -INFO_EVENT_SECONDS) < INFO_EVENT_SECONDS:
                    continue
                self._info_logged_at[key] = now
            self.events.add(change.text, change.severity, _local_time(change.at))
        new_source = (was is None or was.snapshot.source.kind != state.snapshot.source.kind
                      or was.snapshot.source.detail != state.snapshot.source.detail)
        if new_source:
            self.events.add(f"Showing {state.snapshot.source.label} ({len(state.indices)} GPUs)", "info")
        if was is not None and state.unchanged and state.marked() == was.marked():
            # an idle live refresh: nothing to redraw but the time in the header
            self.fabric.state = self.matrix.state = state
            self.header.show(state.snapshot, _local_time(state.snapshot.source.taken_at))
        else:
            self._render_state()
        if new_source and state.worst_pair():
            self.matrix.select_pair(*state.worst_pair())  # open on the worst pair: a problem shows at once
        self._arm_poll()

    def on_read_failed(self, message: ReadFailed) -> None:
        if message.token != self._token:
            return
        what = "No usable NVIDIA driver here" if message.no_driver else "Could not read the snapshot"
        if message.first and self.state is None:  # nothing on screen yet: fall back to a demo, and say so
            from ..demos import DEFAULT_DEMO, DEMOS

            reason = clean(message.reason).rstrip(".") + "."
            choose = "" if "--demo" in reason else " Choose another with --demo NAME or --replay FILE."
            self.set_banner(
                Text(f"{what}: {reason}{choose}\nShowing the {DEFAULT_DEMO} demo (simulated) instead. "
                     f"Demos: {', '.join(DEMOS)}; ctrl+p switches the source."),
                "warning" if message.no_driver else "error")
            self.events.add(f"{what}: {message.reason}", "problem")
            self.open_source(demo=DEFAULT_DEMO)
            return
        if message.first:  # a switch of source failed: keep what is shown
            self.live = False
            self.set_banner(Text(f"{what}: {clean(message.reason)}\nStill showing "
                                 f"{clean(self.state.snapshot.source.label)}."), "error")
            self.events.add(f"{what}: {message.reason}", "problem")
            return
        # a live poll failed mid-run: keep the last picture, say so, keep polling
        taken = self.state.snapshot.source.taken_at if self.state else None
        self.set_banner(Text(f"NVML read failed at {_local_time()}: {clean(message.reason)}\nShowing the last snapshot "
                             f"(taken {_local_time(taken)}); retrying every {self.interval:g} s."), "error")
        if not self._poll_failing:
            self.events.add(f"NVML read failed: {message.reason}", "problem")
        self._poll_failing = True
        self._arm_poll()

    def set_banner(self, text: Optional[Text], kind: str = "warning") -> None:
        if text is None:
            self.banner.display = False
            return
        self.banner.update(text)
        self.banner.set_classes(f"-{kind}")
        self.banner.display = True

    # -- drawing ---------------------------------------------------------------------------------
    def _result(self, a: int, b: int) -> Optional[BenchResult]:
        return self.bench_results.get((a, b))

    def _render_state(self) -> None:
        state = self.state
        updated = _local_time(state.snapshot.source.taken_at) if self.live else None
        self.header.show(state.snapshot, updated)
        self._apply_layout()
        self.matrix.show(state, self._result)
        self.fabric.show(state, self.matrix.pair_at_cursor())
        notes = [n for n in state.snapshot.notes]
        self.fabric.border_subtitle = clean(notes[0])[:80] if notes else ""
        pair = self.matrix.pair_at_cursor()
        if pair:
            self._show_pair(*pair)
        else:
            why = state.snapshot.na.get("gpus")
            self.pair = None
            self.panel.border_title = "Pair"
            self.panel.show(Text("No GPUs in this snapshot" + (f": NVML said {clean(why)}" if why else "."), style="yellow"))
            self.panel.show_matches(Text(""), [])

    def _show_pair(self, a: int, b: int, rematch: bool = True) -> None:
        if self.state is None:
            return
        changed = self.pair != (a, b)
        self.pair = (a, b)
        self.fabric.show_pair(a, b)
        self.panel.border_title = f"Pair GPU{a} → GPU{b}"
        self.panel.show(self.nccl.with_pair(pair_text(self.state, a, b, self._result(a, b), self._progress.get((a, b)),
                                                      self.pair_findings(a, b)), a, b))
        if rematch or changed:
            self._request_matches(a, b)

    def pair_findings(self, a: int, b: int) -> list:
        """What is known about a pair: its own findings, its GPUs', the host's, and its copy test's."""
        state = self.state
        out = list(state.pair_findings(a, b))
        for i in (a, b):
            out.extend(state.gpu_findings(i))
        out.extend(state.host_findings())
        out.extend(self.nccl.findings(a, b))
        result = self._result(a, b)
        if result is not None:
            out.extend(self._bench_findings(result))
        return out

    def _bench_findings(self, result: BenchResult) -> list:
        try:
            from ..bench.judge import result_finding
        except ImportError:
            return []
        try:
            finding = result_finding(result, self.state.fabric)
        except Exception:  # noqa: BLE001 - a judgement that fails adds nothing rather than a crash
            return []
        return [finding] if finding is not None else []

    def on_pair_matrix_highlighted(self, message: PairMatrix.Highlighted) -> None:
        self._show_pair(message.a, message.b)

    def on_fabric_view_pair_chosen(self, message: FabricView.PairChosen) -> None:
        self.matrix.select_pair(message.a, message.b)
        self.notify(f"Pair GPU{message.a} → GPU{message.b} selected: Enter in the matrix tests it", timeout=3)

    def on_pair_matrix_selected(self, message: PairMatrix.Selected) -> None:
        self._start_bench((message.a, message.b))

    def action_cycle_mode(self) -> None:
        mode = self.matrix.cycle_mode()
        self._titles()
        self.notify(f"Cells show: {MODES[mode]}", timeout=2)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.BINDINGS))

    # -- copy tests --------------------------------------------------------------------------------
    def _bench(self) -> Any:
        if self._bench_api is None:
            try:
                from ..bench import runner
            except ImportError as e:
                self.notify(f"Copy tests are not available in this p2ptop ({e}).", severity="error", timeout=8)
                return None
            self._bench_api = runner
        return self._bench_api

    def action_run_pair(self) -> None:
        pair = self.matrix.pair_at_cursor()
        if pair:
            self._start_bench(pair)

    def action_run_all(self) -> None:
        self._start_bench(None)

    def _start_bench(self, pair: Optional[tuple[int, int]]) -> None:
        if self.state is None:
            return
        if self._bench_cancel is not None:
            self.notify("A copy test is running: Esc cancels it.", severity="warning", timeout=4)
            return
        api = self._bench()
        if api is None:
            return
        snap = self.state.snapshot
        try:
            ok, why = api.bench_available(snap)
        except Exception as e:  # noqa: BLE001
            ok, why = False, f"{type(e).__name__}: {e}"
        if not ok:
            text = clean(why)
            if "cuda12" not in text and "cuda13" not in text:
                text = f"{text} {INSTALL_HINT}"
            self.notify(text, title="Copy tests unavailable", severity="error", timeout=12)
            self.events.add(f"Copy tests unavailable: {text}", "warning")
            return
        cancel = threading.Event()
        self._bench_cancel = cancel
        what = f"GPU{pair[0]} → GPU{pair[1]}" if pair else "every pair"
        self.events.add(f"Copy test started: {what}", "info")
        if pair:
            self.matrix.set_running(pair, 0.0)
            self._progress[pair] = {"fraction": 0.0, "step": "starting"}
            if self.pair == pair:
                self._show_pair(*pair, rematch=False)
        self.run_worker(partial(self._bench_worker, api, snap, pair, cancel), thread=True, group="bench", name="copy test")

    def _bench_worker(self, api: Any, snap: Snapshot, pair: Optional[tuple[int, int]], cancel: threading.Event) -> None:
        def on_event(event: dict) -> None:
            self.post_message(BenchProgress(dict(event)))

        try:
            if pair is not None:
                results = [api.run_pair(snap, pair[0], pair[1], options=None, on_event=on_event, cancel=cancel)]
            else:
                pairs = api.all_pairs(snap, host_links=True) if hasattr(api, "all_pairs") else None  # host links too
                results = list(api.run_all(snap, pairs, options=None, on_event=on_event, cancel=cancel))
        except Exception as e:  # noqa: BLE001 - the runner should not raise; if it does, say so
            self.post_message(BenchFinished([], f"{type(e).__name__}: {e}"))
            return
        self.post_message(BenchFinished([r for r in results if r is not None]))

    def on_bench_progress(self, message: BenchProgress) -> None:
        ev = message.event
        try:
            pair = (int(ev["a"]), int(ev["b"]))
        except (KeyError, TypeError, ValueError):
            return
        if ev.get("pairs"):
            self.matrix.border_subtitle = f"copy tests {ev.get('pairs_done', 0)}/{ev['pairs']} (Esc cancels)"
        if ev.get("type") == "result" and isinstance(ev.get("result"), BenchResult):
            self._progress.pop(pair, None)
            self.matrix.set_running(pair, None)
            self._store_result(ev["result"])
            if self.pair == pair:
                self._show_pair(*pair)
            return
        if ev.get("type") != "progress":
            return
        for other in [p for p in self._progress if p != pair]:  # run_all goes pair by pair
            self._progress.pop(other)
            self.matrix.set_running(other, None)
        frac = ev.get("fraction")
        frac = float(frac) if isinstance(frac, (int, float)) else 0.0
        self._progress[pair] = ev
        self.matrix.set_running(pair, max(0.0, min(frac, 1.0)))
        if self.pair == pair:
            self._show_pair(*pair, rematch=False)

    def _store_result(self, r: BenchResult) -> None:
        self.bench_results[(r.a, r.b)] = r
        if self.state is not None:
            self.state.snapshot.bench = list(self.bench_results.values())
        self.matrix.refresh_pair(r.a, r.b)

    def on_bench_finished(self, message: BenchFinished) -> None:
        self._bench_cancel = None
        self.matrix.border_subtitle = ""
        for pair in list(self._progress):
            self._progress.pop(pair)
            self.matrix.set_running(pair, None)
        if message.error:
            self.notify(f"Copy test failed to run: {clean(message.error)}", severity="error", timeout=8)
            self.events.add(f"Copy test failed to run: {message.error}", "problem")
        text = ""
        many = len(message.results) > 1
        outcomes: dict[str, int] = {}
        for r in message.results:
            self._store_result(r)
            share = self.state.share(r) if self.state else None
            text = f"Copy test GPU{r.a} → GPU{r.b}: {r.status}" + (f", {r.verdict}" if r.verdict else "")
            if share is not None:
                text += f", {share * 100:.0f}% of expected"
            if r.simulated:
                text += " (simulated)"
            sev = ("problem" if r.verdict == "failing" or r.status not in ("ok", "cancelled", "interrupted", "busy", "locked")
                   else "warning" if r.verdict in ("slow", "contended", "interrupted") or r.status in ("cancelled", "locked") else "info")
            outcome = r.verdict if r.status == "ok" and r.verdict else r.status
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if not many or sev != "info":  # after a run of every pair, only what is not healthy is listed
                self.events.add(text, sev)
        if many:
            text = f"{len(message.results)} pairs tested: " + ", ".join(f"{n} {o}" for o, n in sorted(outcomes.items()))
            self.events.add(text, "info")
        if message.results:
            self.notify(clean(text), timeout=5)
        self.matrix.refresh_cells()
        if self.pair:
            self._show_pair(*self.pair)

    def action_nccl_run(self) -> None:
        self.nccl.run()

    def action_cancel(self) -> None:
        self.nccl.cancel()
        if self._bench_cancel is not None and not self._bench_cancel.is_set():
            self._bench_cancel.set()
            self.notify("Cancelling the copy test…", timeout=3)

    # -- knowledge base ------------------------------------------------------------------------------
    def _kb_worker(self) -> None:
        try:
            from ..knowledge import load_kb
        except ImportError as e:
            self.post_message(KbLoaded(None, f"knowledge base not available in this p2ptop ({e})"))
            return
        try:
            kb = load_kb(extra_dirs=self.kb_dirs)
        except Exception as e:  # noqa: BLE001
            self.post_message(KbLoaded(None, f"knowledge base could not be loaded: {type(e).__name__}: {e}"))
            return
        self.post_message(KbLoaded(kb))

    def on_kb_loaded(self, message: KbLoaded) -> None:
        self.kb, self.kb_error = message.kb, message.error
        self.kb_loaded.set()
        if message.error:
            self.events.add(message.error, "warning")
        if self.pair:
            self._request_matches(*self.pair)

    def _request_matches(self, a: int, b: int) -> None:
        if self.kb is None:
            status = Text(self.kb_error or "loading…", style="dim" if not self.kb_error else "yellow")
            self.panel.show_matches(status, [])
            return
        findings = self.pair_findings(a, b)
        self.run_worker(partial(self._match_worker, (a, b), findings), thread=True, group="match", exclusive=True,
                        name="match knowledge base")

    def _match_worker(self, pair: tuple[int, int], findings: list) -> None:
        from ..knowledge import match

        try:
            matches = list(match(self.kb, findings=findings))
        except Exception as e:  # noqa: BLE001
            self.post_message(MatchesReady(pair, [], f"matching failed: {type(e).__name__}: {e}"))
            return
        self.post_message(MatchesReady(pair, matches))

    def on_matches_ready(self, message: MatchesReady) -> None:
        if message.pair != self.pair:
            return
        self.matches = message.matches
        if message.error:
            self.panel.show_matches(Text(message.error, style="yellow"), [])
            return
        if not message.matches:
            self.panel.show_matches(Text("✔ no known problem matches this pair", style="green"), [])
            return
        items = []
        for m in message.matches:
            entry = m.entry
            t = Text(f"{clean(getattr(m, 'confidence', '')):<8} ", style="bold")
            t.append(clean(getattr(entry, "title", None) or getattr(entry, "id", "entry")))
            cls = getattr(entry, "failure_class", None)
            if cls:
                t.append(f"  [{clean(cls)}]", style="dim")
            reasons = list(getattr(m, "reasons", []) or [])[:2]
            if reasons:
                t.append("\n     " + "; ".join(clean(r) for r in reasons), style="dim")
            missing = getattr(m, "deciding_facts", None)
            if missing:
                t.append("\n     would decide: " + ", ".join(clean(f) for f in list(missing)[:3]), style="italic dim")
            items.append(t)
        self.panel.show_matches(Text(f"{len(items)} matching entr{'y' if len(items) == 1 else 'ies'}: Enter or click opens, "
                                     "k opens the first", style="dim"), items)

    def on_pair_panel_open_entry(self, message: PairPanel.OpenEntry) -> None:
        self._open_entry(message.index)

    def action_review(self) -> None:
        from .review_screen import open_review_screen
        open_review_screen(self)

    def action_open_entry(self) -> None:
        self._open_entry(0)

    def _open_entry(self, index: int) -> None:
        if not (0 <= index < len(self.matches)):
            self.notify("No knowledge-base entry matches this pair.", timeout=3)
            return
        try:
            from .entry_screen import EntryScreen
        except ImportError as e:
            self.notify(f"Knowledge-base entry view not available ({e}).", severity="error", timeout=6)
            return
        match = self.matches[index]
        self.push_screen(EntryScreen(match.entry, self.kb, match=match))

    # -- export ----------------------------------------------------------------------------------------
    def export_text(self) -> str:
        """The current screen as plain text (the companion of export_screenshot's SVG)."""
        width, height = self.size
        console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                          color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
        console.print(self.screen._compositor.render_update(full=True, screen_stack=self._background_screens))
        return console.export_text(styles=False)

    def action_export(self) -> None:
        if self.state is None:
            self.notify("Nothing to export yet.", timeout=3)
            return
        svg, text = self.export_screenshot(), self.export_text()
        self.notify("Exporting…", timeout=2)
        self.run_worker(partial(self._export_worker, self.state.snapshot, svg, text), thread=True, group="export",
                        name="export bundle")

    def _export_worker(self, snap: Snapshot, svg: str, text: str) -> None:
        try:
            from ..export.bundle import write_bundle
        except ImportError as e:
            self.post_message(ExportDone(None, f"export is not available in this p2ptop ({e})"))
            return
        try:
            path = write_bundle(snap, self.export_dir, svg=svg, text=text)
        except Exception as e:  # noqa: BLE001 - the bundle writer's message says what went wrong
            self.post_message(ExportDone(None, f"{type(e).__name__}: {e}" if not str(e) else str(e)))
            return
        self.post_message(ExportDone(str(path)))

    def on_export_done(self, message: ExportDone) -> None:
        if message.error:
            self.notify(f"Export failed: {clean(message.error)}", severity="error", timeout=10)
            self.events.add(f"Export failed: {message.error}", "problem")
        else:
            self.notify(f"Exported to {clean(message.path)}", title="Bundle written", timeout=8)
            self.events.add(f"Bundle written: {message.path}", "info")

    # -- command palette ----------------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield SystemCommand("Copy test: highlighted pair", "Measure the pair under the matrix cursor", self.action_run_pair)
        yield SystemCommand("Copy test: every pair", "Measure every ordered pair, one after another", self.action_run_all)
        yield SystemCommand("Cancel copy test", "Stop the running copy test (Esc)", self.action_cancel)
        yield from self.nccl.commands()
        yield SystemCommand("Export bundle", f"Write screenshot, report and snapshot into {self.export_dir}", self.action_export)
        for mode, title in MODES.items():
            yield SystemCommand(f"Cells: {mode}", f"Matrix cells show {title}", partial(self._set_mode, mode))
        yield SystemCommand("Open knowledge-base entry", "The first entry matched for the pair (k)", self.action_open_entry)
        yield SystemCommand("Source: live NVML", "Read this host's GPUs, refreshed every interval", partial(self.open_source, reader=None))
        from ..demos import DEMOS

        for name, what in DEMOS.items():
            yield SystemCommand(f"Source: demo {name}", f"Simulated: {what}", partial(self.open_source, demo=name))
        yield SystemCommand("Source: open snapshot file…", "Replay a saved snapshot.json", self._ask_replay)
        yield SystemCommand("Help: keys", "Every key (?)", self.action_help)
        yield SystemCommand("Quit", "Leave p2ptop (q)", self.action_quit)

    def _set_mode(self, mode: str) -> None:
        self.matrix.mode = mode
        self._titles()

    def _ask_replay(self) -> None:
        from .screens.open_file import OpenFileScreen

        def opened(path: Optional[str]) -> None:
            if path:
                self.open_source(replay=path)

        self.push_screen(OpenFileScreen(), opened)


def run_dashboard(args: argparse.Namespace) -> int:
    """Open the dashboard for ``p2ptop`` with no subcommand."""
    app = P2PTopApp(
        demo=getattr(args, "demo", None),
        replay=getattr(args, "replay", None),
        interval=getattr(args, "interval", 2.0),
        kb_dirs=getattr(args, "kb", None) or (),
    )
    app.run(mouse=not getattr(args, "no_mouse", False))
    return app.return_code or 0
