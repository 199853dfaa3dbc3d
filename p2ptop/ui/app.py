"""The dashboard app: the panes and their layout, the keys, drawing a state, the command palette.

What it does lives in mixins, one module each: sources and polling (poller.py; the live path itself is
p2ptop.live), copy tests (copy_tests.py), knowledge-base matches (matches.py), export (export_actions.py).
Workers (thread) post messages (ui/messages.py) and never touch widgets. Polling never overlaps: the next
poll is armed when the previous one has been handled. Copy-test results live in the app and survive live
refreshes. The first frame is painted before the first read returns: the panes say they are being read.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import threading
import time
from functools import partial
from typing import TYPE_CHECKING, Any, Iterable, Optional

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static

from ..model import BenchResult, Snapshot
from .copy_tests import INSTALL_HINT, CopyTests  # noqa: F401 - INSTALL_HINT: where tests and helpers find it
from .export_actions import ExportActions
from .look import clean
from .nccl_view import NcclView
from .matches import KnowledgeMatches
from .poller import INFO_EVENT_SECONDS, LiveReader, Poller, Reader, local_time  # noqa: F401
from .widgets.events_log import EventsLog
from .widgets.fabric_view import FabricView
from .widgets.header import Header
from .widgets.pair_matrix import MODES, PairMatrix
from .widgets.pair_panel import PairPanel, pair_text

if TYPE_CHECKING:
    from .state import DashboardState

#: Layouts by terminal size. Wide: fabric | matrix over events | pair panel. Medium: one of fabric, matrix
#: and events (f, m, l switch) beside the pair panel. Narrow: that one pane above the pair panel.
WIDE_WIDTH = 160
NARROW_WIDTH, NARROW_HEIGHT = 100, 30
#: set to a file name, the app writes there the wall-clock time (time.time()) of its first painted frame
FIRST_FRAME_ENV = "P2PTOP_FIRST_FRAME_FILE"
_local_time = local_time


class MainScreen(Screen):
    """The dashboard's own screen; it tells the app when its size is known, to pick a layout."""

    def on_resize(self, event: events.Resize) -> None:
        if event.size == self.outer_size:
            # already laid out at this size (at start the screen is told its size again after its first layout,
            # and tmux reports it in-band too): each would lay out and repaint the whole screen again before
            # the first frame is done. Textual's own test on resume (Screen._on_screen_resume) is the same.
            event.prevent_default()
            return
        self.app._apply_layout()


class P2PTopApp(Poller, CopyTests, KnowledgeMatches, ExportActions, App[int]):
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
        self._routine_drawn = float("-inf")  # when a refresh of routine changes last redrew the pair panel
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
        snapshot, demo, replay = self._initial
        what = "reading live NVML…" if snapshot is None and not demo and not replay else "reading…"
        self.panel.show(Text(what[0].upper() + what[1:], style="dim"))
        for pane in (self.fabric, self.matrix):
            pane.border_subtitle = what  # until the first state is drawn
        self._apply_layout()
        self.matrix.focus()
        if os.environ.get(FIRST_FRAME_ENV):
            self.call_after_refresh(self._first_frame_painted)
        try:
            asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, self._hangup)
        except (NotImplementedError, RuntimeError, ValueError, AttributeError):
            pass  # no SIGHUP here (or not the main thread): nothing to do when the terminal goes
        # the first read starts after the first paint: its thread (pynvml, nvmlInit) would hold the GIL meanwhile
        source = {"snapshot": snapshot} if snapshot is not None else {"demo": demo, "replay": replay} if demo or replay else {"reader": self._reader}
        self.call_after_refresh(partial(self.open_source, **source))

    def _first_frame_painted(self) -> None:
        try:
            with open(os.environ[FIRST_FRAME_ENV], "w", encoding="utf-8") as f:
                f.write(f"{time.time():.6f}\n")
        except OSError:
            pass  # a benchmark's marker only

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

    # -- drawing ---------------------------------------------------------------------------------
    def _result(self, a: int, b: int) -> Optional[BenchResult]:
        return self.bench_results.get((a, b))

    def _render_state(self) -> None:
        state = self.state
        for pane in (self.fabric, self.matrix):
            if str(pane.border_subtitle).startswith("reading"):
                pane.border_subtitle = ""
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

    def _show_pair(self, a: int, b: int, rematch: bool = True, routine: bool = False) -> None:
        if self.state is None:
            return
        changed = self.pair != (a, b)
        self.pair = (a, b)
        self.fabric.show_pair(a, b)
        self.panel.border_title = f"Pair GPU{a} → GPU{b}"
        self.panel.show(self.nccl.with_pair(pair_text(self.state, a, b, self._result(a, b), self._progress.get((a, b)),
                                                      self.pair_findings(a, b)), a, b), routine=routine)
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
        from .screens.help import HelpScreen  # on first use: not needed for the first frame

        self.push_screen(HelpScreen(self.BINDINGS))

    def action_nccl_run(self) -> None:
        self.nccl.run()

    def action_review(self) -> None:
        from .review_screen import open_review_screen
        open_review_screen(self)

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
