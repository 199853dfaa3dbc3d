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
from textual.widgets import DataTable, Footer, Select, Static

from ..fleet import Fleet, groups, ranked, state_words
from .look import clean

ALL = "__all__"
STATE_STYLE = {"ok": "green"}


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
    #detail { height: 1fr; border-top: solid $accent; padding: 0 1; }
    """
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("enter", "open_host", "Open host", priority=False),
        Binding("m", "focus_model", "Model filter"),
        Binding("t", "focus_topology", "Topology filter"),
        Binding("escape", "focus_hosts", "Hosts", show=False),
    ]

    def __init__(self, fleet: Fleet, view: Optional[FleetView] = None, message: Optional[str] = None) -> None:
        super().__init__()
        self.animation_level = "none"
        self.fleet = fleet
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
        table = DataTable(id="hosts", cursor_type="row", zebra_stripes=True)
        table.add_columns("host", "state", "problems", "warnings", "top KB entry", "GPU model", "topology")
        yield table
        with VerticalScroll(id="detail"):
            yield Static(id="detail_text")
        yield Footer()

    def _summary(self) -> Text:
        f = self.fleet
        t = Text()
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
        self._fill()
        table = self.query_one("#hosts", DataTable)
        if self.shown:
            table.move_cursor(row=min(self.view.row, len(self.shown) - 1))
        table.focus()

    def _fill(self) -> None:
        model = None if self.view.model == ALL else self.view.model
        hosts = ranked(self.fleet, model=None)
        if model:
            hosts = [h for h in hosts if h["model"] == model]
        if self.view.topology != ALL:
            hosts = [h for h in hosts if h["topology"] == self.view.topology]
        self.shown = hosts
        table = self.query_one("#hosts", DataTable)
        table.clear()
        for h in hosts:
            state = state_words(h)
            table.add_row(_cell(h["host"], "bold"), _cell(state, STATE_STYLE.get(state, "red" if h["problems"] or h["gpus_lost"] else "yellow")),
                          _cell(h["problems"]), _cell(h["warnings"]), _cell(h["kb_top"] or ""), _cell(h["model"]), _cell(h["topology_text"]))
        self._show_detail(0 if hosts else None)

    def _show_detail(self, row: Optional[int]) -> None:
        t = Text()
        if row is None or row >= len(self.shown):
            t.append("no host matches the filters")
        else:
            h = self.shown[row]
            t.append(clean(h["host"]), style="bold")
            t.append(f"  {h['gpus']} x {clean(h['model'])}, driver {clean(h.get('driver') or 'N/A')}, "
                     f"{clean(h['topology_text'])}; {h['siblings']} identical hosts")
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
        if not self.shown:
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


def run_fleet_screen(fleet: Fleet, args: argparse.Namespace) -> int:
    """The fleet screen; a host opened with Enter shows its dashboard until Esc (or q), then the fleet again."""
    from .fleet_host import HostDashboard

    view = FleetView()
    message = None
    while True:
        app = FleetApp(fleet, view, message)
        host = app.run(mouse=not getattr(args, "no_mouse", False))
        if not host:
            return 0
        dash = HostDashboard(replay=host["file"], kb_dirs=getattr(args, "kb", None) or ())
        dash.run(mouse=not getattr(args, "no_mouse", False))
        message = f"back from {host['host']}"
