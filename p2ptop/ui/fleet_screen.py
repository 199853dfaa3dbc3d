"""The fleet screen (``p2ptop fleet``): hosts ranked by worst state, filtered by GPU model and topology;
Enter opens the host's own dashboard (Esc there returns here); the selected host's findings and odd ones
out below the table.

Everything shown from a host (its name, GPU model, findings) is data: put into rich Text as plain text.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Optional

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Footer, ProgressBar, Select, Static

from ..fleet import Fleet, groups, load_fleet, ranked, state_words
from ..fleet.summary import rank_key
from .look import clean

ALL = "__all__"
STATE_STYLE = {"ok": "green"}
PARTIAL_ROWS = 200  # while loading, the worst hosts so far (the whole table once every file is in)
REFRESH_S = 0.5


@dataclass
class FleetView:
    """What the screen keeps between visits to a host's dashboard."""

    model: str = ALL
    topology: str = ALL
    row: int = 0


def _cell(value: Any, style: str = "") -> Text:
    return Text(clean(value if value is not None else ""), style=style)


class FleetApp(App[Optional[dict]]):
    TITLE = "p2ptop fleet"
    CSS = """
    #summary { height: auto; padding: 0 1; }
    #filters { height: auto; }
    #filters Select { width: 1fr; }
    #hosts { height: 2fr; }
    #loading { height: auto; padding: 0 1; }
    #loading.-done { display: none; }
    #detail { height: 1fr; border-top: solid $accent; padding: 0 1; }
    """
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("enter", "open_host", "Open host", priority=False),
        Binding("m", "focus_model", "Model filter"),
        Binding("t", "focus_topology", "Topology filter"),
        Binding("escape", "focus_hosts", "Hosts", show=False),
    ]

    def __init__(self, fleet: Optional[Fleet] = None, view: Optional[FleetView] = None, message: Optional[str] = None,
                 *, sources: Optional[list[str]] = None, load_options: Optional[dict] = None) -> None:
        """A loaded ``fleet``, or ``sources`` to load here: the screen shows at once with a progress bar and the
        worst hosts so far, and the whole ranked table (with the sibling comparison) once every file is in."""
        super().__init__()
        self.animation_level = "none"
        self.fleet = fleet or Fleet(source=", ".join(sources or []))
        self.loading = fleet is None and bool(sources)
        self.sources = sources or []
        self.load_options = load_options or {}
        self._partial: list[dict[str, Any]] = []
        self._partial_errors = 0
        self._progress = (0, 0)
        self.view = view or FleetView()
        self.message = message
        self.shown: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Static(self._summary(), id="summary")
        models = sorted({h["model"] for h in self.fleet.hosts})
        topologies = [(f"{w} ({t}, {n} hosts)", t) for _, t, w, n in groups(self.fleet)]
        with Horizontal(id="filters"):
            model = {"value": self.view.model} if self.view.model in models else {}
            yield Select([(clean(m), m) for m in models], prompt="every GPU model", id="model", **model)
            topo = {"value": self.view.topology} if self.view.topology in {t for _, t in topologies} else {}
            yield Select([(clean(label), t) for label, t in topologies], prompt="every topology", id="topology", **topo)
        bar = ProgressBar(id="loading", show_eta=False)
        if not self.loading:
            bar.add_class("-done")
        yield bar
        table = DataTable(id="hosts", cursor_type="row", zebra_stripes=True)
        table.add_columns("host", "state", "problems", "warnings", "top KB entry", "GPU model", "topology")
        yield table
        with VerticalScroll(id="detail"):
            yield Static(id="detail_text")
        yield Footer()

    def _summary(self) -> Text:
        f = self.fleet
        t = Text()
        if self.loading:
            done, total = self._progress
            t.append(f"loading {done} of {total or '?'} snapshots", style="bold")
            t.append(f" from {clean(f.source)}; the worst {min(PARTIAL_ROWS, len(self._partial))} hosts so far below"
                     + (f"; {self._partial_errors} files not loaded" if self._partial_errors else ""))
            return t
        t.append(f"{len(f.hosts)} hosts", style="bold")
        t.append(f" from {clean(f.source)}")
        sim = sum(1 for h in f.hosts if h.get("simulated"))
        if sim:
            t.append(f"  {sim} SIMULATED (demos or generated snapshots)", style="bold yellow")
        bad = sum(1 for h in f.hosts if state_words(h) != "ok")
        t.append(f"  {bad} need a look", style="bold red" if bad else "green")
        if f.problems:
            t.append(f"  {len(f.problems)} files not loaded (see --text)", style="yellow")
        if self.message:
            t.append("\n" + clean(self.message), style="italic")
        return t

    def on_mount(self) -> None:
        if self.loading:
            self.run_worker(self._load, thread=True, name="fleet-load")
            self.set_interval(REFRESH_S, self._refresh_partial, name="fleet-partial")
        self._fill()
        table = self.query_one("#hosts", DataTable)
        if self.shown:
            table.move_cursor(row=min(self.view.row, len(self.shown) - 1))
        table.focus()

    # -- loading in a thread: results arrive in order, the table shows the worst so far --
    def _load(self) -> None:
        def progress(done: int, total: int) -> None:
            self._progress = (done, total)

        def result(r: dict[str, Any]) -> None:
            if "error" in r:
                self._partial_errors += 1
            else:
                self._partial.append(r)

        try:
            fleet = load_fleet(self.sources, progress=progress, on_result=result, **self.load_options)
        except Exception as e:  # noqa: BLE001 - say it on the screen, never end the app with a traceback
            fleet = Fleet(source=self.fleet.source, problems=[("(loading)", f"{type(e).__name__}: {e}")])
        self.call_from_thread(self._loaded, fleet)

    def _refresh_partial(self) -> None:
        if not self.loading:
            return
        done, total = self._progress
        bar = self.query_one("#loading", ProgressBar)
        bar.update(total=total or None, progress=done)
        self.query_one("#summary", Static).update(self._summary())
        worst = sorted(list(self._partial), key=rank_key)[:PARTIAL_ROWS]
        if [h["host"] for h in worst] != [h["host"] for h in self.shown]:
            self._show(worst)

    def _loaded(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.loading = False
        self.query_one("#loading", ProgressBar).add_class("-done")
        self.query_one("#summary", Static).update(self._summary())
        models = sorted({h["model"] for h in fleet.hosts})
        self.query_one("#model", Select).set_options([(clean(m), m) for m in models])
        self.query_one("#topology", Select).set_options([(clean(f"{w} ({t}, {n} hosts)"), t) for _, t, w, n in groups(fleet)])
        self._fill()

    def _fill(self) -> None:
        if self.loading:
            return
        model = None if self.view.model == ALL else self.view.model
        hosts = ranked(self.fleet, model=None)
        if model:
            hosts = [h for h in hosts if h["model"] == model]
        if self.view.topology != ALL:
            hosts = [h for h in hosts if h["topology"] == self.view.topology]
        self._show(hosts)

    def _show(self, hosts: list[dict[str, Any]]) -> None:
        self.shown = hosts
        table = self.query_one("#hosts", DataTable)
        row = table.cursor_row
        table.clear()
        for h in hosts:
            state = state_words(h)
            table.add_row(_cell(h["host"], "bold"), _cell(state, STATE_STYLE.get(state, "red" if h["problems"] or h["gpus_lost"] else "yellow")),
                          _cell(h["problems"]), _cell(h["warnings"]), _cell(h["kb_top"] or ""), _cell(h["model"]), _cell(h["topology_text"]))
        if hosts and row:
            table.move_cursor(row=min(row, len(hosts) - 1))
        self._show_detail(min(row or 0, len(hosts) - 1) if hosts else None)

    def _show_detail(self, row: Optional[int]) -> None:
        t = Text()
        if row is None or row >= len(self.shown):
            t.append("no host matches the filters")
        else:
            h = self.shown[row]
            t.append(clean(h["host"]), style="bold")
            t.append(f"  {h['gpus']} x {clean(h['model'])}, driver {clean(h.get('driver') or 'N/A')}, "
                     f"{clean(h['topology_text'])}" + (f"; {h['siblings']} identical hosts" if "siblings" in h else "; still loading"))
            if h.get("simulated"):
                t.append("  (simulated)", style="yellow")
            t.append("\n")
            for o in h.get("odd", [])[:5] + h.get("odd_links", [])[:5]:
                t.append("odd: ", style="bold magenta")
                t.append(clean(o["text"]) + "\n")
            for f in h["findings"]:
                t.append(clean(f) + "\n", style="red" if f.startswith("problem") else "yellow")
            if h.get("file"):
                t.append("Enter: open this host's dashboard\n", style="dim")
        self.query_one("#detail_text", Static).update(t)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.view.row = event.cursor_row
        self._show_detail(event.cursor_row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.view.row = event.cursor_row
        self.action_open_host()

    def on_select_changed(self, event: Select.Changed) -> None:
        value = str(event.value) if isinstance(event.value, str) else ALL  # the prompt ("every ...") is not a str
        key = "model" if event.select.id == "model" else "topology"
        if getattr(self.view, key) == value:
            return  # the value it was given on mount (coming back from a host): keep the row
        setattr(self.view, key, value)
        self.view.row = 0
        self._fill()

    def action_open_host(self) -> None:
        if not self.shown or self.loading:
            return
        h = self.shown[min(self.view.row, len(self.shown) - 1)]
        if not h.get("file"):
            self.notify("This host came from Prometheus: there is no snapshot to open. Run p2ptop on it.", severity="warning")
            return
        self.exit(h)

    def action_focus_model(self) -> None:
        self.query_one("#model", Select).focus()

    def action_focus_topology(self) -> None:
        self.query_one("#topology", Select).focus()

    def action_focus_hosts(self) -> None:
        self.query_one("#hosts", DataTable).focus()


def run_fleet_screen(fleet: Optional[Fleet], args: argparse.Namespace, sources: Optional[list[str]] = None,
                     load_options: Optional[dict] = None) -> int:
    """The fleet screen (loading ``sources`` itself when no ``fleet`` is given); a host opened with Enter shows
    its dashboard until Esc (or q), then the fleet again."""
    from .fleet_host import HostDashboard

    view = FleetView()
    message = None
    while True:
        app = FleetApp(fleet, view, message, sources=sources, load_options=load_options)
        host = app.run(mouse=not getattr(args, "no_mouse", False))
        fleet = app.fleet
        if not host:
            return 0
        dash = HostDashboard(replay=host["file"], kb_dirs=getattr(args, "kb", None) or ())
        dash.run(mouse=not getattr(args, "no_mouse", False))
        message = f"back from {host['host']}"
