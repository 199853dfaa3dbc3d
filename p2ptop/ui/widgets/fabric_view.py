"""The fabric view: the host drawn as a tree, CPU socket -> host bridge -> PCIe switch -> GPU, with each
GPU's NVLink bundle on its line and the NVSwitch plane summed up at the end.

One line per node keeps 2, 8 and 72 GPUs readable (72 scroll); a symbol and a colour give each GPU's
health. Drawn with the Line API. Clicking a GPU, then another, chooses that pair; so do the keys
(up/down move between GPUs, space or Enter marks one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...fabric import gpu_node
from .. import look
from ..look import clean
from ..messages import PairMessage

if TYPE_CHECKING:  # imported by the read worker: the first frame does not wait for it (nor for diagnose)
    from ..state import DashboardState


@dataclass
class Line:
    text: Text
    gpu: Optional[int] = None  # the GPU this line draws, if any
    parent: str = ""  # for a GPU line: the node above it, and the tree drawn before it (to redraw the line alone)
    prefix: str = ""


def _short_name(name: Optional[str]) -> str:
    return clean(name or "name N/A").replace("NVIDIA ", "")


class FabricView(ScrollView, can_focus=True):
    BINDINGS = [
        Binding("up", "move(-1)", "Previous GPU", show=False),
        Binding("down", "move(1)", "Next GPU", show=False),
        Binding("space,enter", "mark", "Mark GPU", show=False,
                tooltip="The first GPU marked is A, the next one B: that pair is selected"),
    ]

    gpu_cursor: reactive[int] = reactive(0, init=False)  # position in the list of GPU lines

    class PairChosen(PairMessage):
        """Two GPUs marked: the pair (A, B)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.state: Optional[DashboardState] = None
        self.lines: list[Line] = []
        self.gpu_lines: list[int] = []  # line numbers of GPU lines, in order
        self.pair: tuple[Optional[int], Optional[int]] = (None, None)  # the pair shown (A, B)
        self.pending: Optional[int] = None  # first GPU of a pair being chosen
        self._strips: dict[int, Strip] = {}  # line number -> its strip, drawn once

    # -- data in --
    def show(self, state: DashboardState, pair: Optional[tuple[int, int]] = None) -> None:
        self.state = state
        if pair is not None:
            self.pair, self.pending = pair, None
        self._layout()

    def show_pair(self, a: int, b: int) -> None:
        if self.pair != (a, b) or self.pending is not None:
            touched = {*self.pair, self.pending, a, b}
            self.pair = (a, b)
            self.pending = None
            self._redraw_gpus(touched)

    def _layout(self) -> None:
        self.lines = build_lines(self.state, self.pair, self.pending) if self.state else []
        self.gpu_lines = [i for i, line in enumerate(self.lines) if line.gpu is not None]
        self._strips: dict[int, Strip] = {}
        width = max((line.text.cell_len for line in self.lines), default=0)
        self.virtual_size = Size(width, len(self.lines))
        self.refresh()

    def _redraw_gpus(self, gpus: set) -> None:
        """Rebuild only the lines of some GPUs (their pair marks changed): cheap at 72 GPUs."""
        if not self.state:
            return
        for y in self.gpu_lines:
            line = self.lines[y]
            if line.gpu in gpus:
                self.lines[y] = _gpu_line(self.state, line.gpu, line.parent, line.prefix, self.pair, self.pending)
                self._strips.pop(y, None)
                self.refresh(Region(0, y - int(self.scroll_y), self.size.width, 1))

    # -- keys --
    def action_move(self, step: int) -> None:
        if self.gpu_lines:
            self.gpu_cursor = max(0, min(len(self.gpu_lines) - 1, self.gpu_cursor + step))

    def watch_gpu_cursor(self) -> None:
        if self.gpu_lines:
            y = self.gpu_lines[self.gpu_cursor]
            if y < self.scroll_y or y >= self.scroll_y + self.scrollable_content_region.height:
                self.scroll_to(y=max(0, y - 2), animate=False, immediate=True)
        self.refresh()

    def action_mark(self) -> None:
        if self.gpu_lines:
            self.mark(self.lines[self.gpu_lines[self.gpu_cursor]].gpu)

    def mark(self, gpu: int) -> None:
        """First GPU marked becomes A; the next different one completes the pair."""
        if self.pending is None or self.pending == gpu:
            touched = {self.pending, gpu}
            self.pending = gpu
            self._redraw_gpus(touched)
            return
        a, self.pending = self.pending, None
        self.post_message(self.PairChosen(a, gpu))

    # -- mouse --
    def gpu_at(self, y: int) -> Optional[int]:
        """The GPU drawn on a row of the view (a click anywhere on a GPU's line picks it)."""
        line_no = y + int(self.scroll_y)
        return self.lines[line_no].gpu if 0 <= line_no < len(self.lines) else None

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        gpu = self.gpu_at(offset.y)
        if gpu is not None:
            line_no = offset.y + int(self.scroll_y)
            self.gpu_cursor = self.gpu_lines.index(line_no)
            self.mark(gpu)

    # -- drawing --
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line_no = y + int(self.scroll_y)
        base = self.get_visual_style().rich_style
        if line_no >= len(self.lines):
            return Strip.blank(width, base)
        strip = self._strips.get(line_no)
        if strip is None:
            line = self.lines[line_no]
            strip = self._strips[line_no] = Strip(list(line.text.render(self.app.console)), line.text.cell_len)
        if self.has_focus and self.gpu_lines and line_no == self.gpu_lines[self.gpu_cursor]:
            strip = strip.apply_style(Style(underline=True))
        x = int(self.scroll_x)
        return strip.crop(x, x + width).apply_style(base).extend_cell_length(width, base)


# --- the tree, as lines of text ----------------------------------------------------------------------


def build_lines(state: DashboardState, pair: tuple[Optional[int], Optional[int]], pending: Optional[int]) -> list[Line]:
    fab = state.fabric
    g = fab.graph
    snap = state.snapshot
    lines: list[Line] = []
    counts = {k: len(fab.nodes_of(k)) for k in ("gpu", "nvswitch", "pcie_switch", "host_bridge", "cpu")}
    by_state: dict[str, int] = {}
    for s in state.gpu_state.values():
        by_state[s] = by_state.get(s, 0) + 1
    head = Text(f"{counts['gpu']} GPUs · {counts['nvswitch']} NVSwitch · {counts['pcie_switch']} PCIe switch · "
                f"{counts['cpu']} CPU socket{'s' if counts['cpu'] != 1 else ''}   ", style="bold")
    for s in look.LEGEND:
        if by_state.get(s):
            head.append_text(look.badge(s))
            head.append(f" {by_state[s]}  ")
    lines.append(Line(head))
    lines.append(Line(look.legend(unknown=any(state.pair_p2p_unknown(p.a, p.b) for p in snap.pairs))))
    lines.append(Line(Text("")))

    cpus = sorted(fab.nodes_of("cpu"), key=lambda n: g.nodes[n].get("socket", 0))
    for ci, cpu in enumerate(cpus):
        socket = g.nodes[cpu].get("socket")
        numa = next((s.numa_nodes for s in snap.sockets if s.id == socket), None)
        t = Text(f"■ {g.nodes[cpu]['label']}", style="bold")
        if numa:
            t.append(f"  NUMA {', '.join(map(str, numa))}", style="dim")
        if ci + 1 < len(cpus):
            t.append("   ═ CPU interconnect ═ ", style="dim")
            t.append(g.nodes[cpus[ci + 1]]["label"], style="dim")
        lines.append(Line(t))
        bridges = sorted(v for v in g.neighbors(cpu) if g.nodes[v]["kind"] == "host_bridge")
        for bi, hb in enumerate(bridges):
            _subtree(state, hb, cpu, "", bi == len(bridges) - 1, lines, pair, pending)
    switches = fab.nodes_of("nvswitch")
    if switches:
        lines.append(Line(Text("")))
        hidden = any(g.nodes[s].get("hidden") for s in switches)
        t = Text("◆ NVLink plane: ", style="bold")
        t.append(f"{len(switches)} NVSwitch" + (" (hidden from this host; seen through the GPUs' links)" if hidden else ""))
        lines.append(Line(t))
        bundles: dict[str, list[int]] = {}
        for gpu in snap.gpus:
            label = _nvlink_summary(state, gpu.index, to_switch_only=True)
            if label:
                bundles.setdefault(label, []).append(gpu.index)
        for label, gpus in bundles.items():
            t = Text("  ")
            t.append(_ranges(gpus))
            t.append(f" {label}")
            lines.append(Line(t))
    if any(g.nodes[n].get("known") is False for n in fab.nodes_of("host_bridge")):
        lines.append(Line(Text("PCIe hierarchy not read on this host (sysfs unavailable): GPUs shown under their NUMA node",
                               style="dim")))
    return lines


def _ranges(indices: list[int]) -> str:
    """GPU0-7, GPU9 style."""
    out, start, prev = [], None, None
    for i in sorted(indices):
        if start is None:
            start = prev = i
        elif i == prev + 1:
            prev = i
        else:
            out.append(f"GPU{start}" + (f"-{prev}" if prev != start else ""))
            start = prev = i
    if start is not None:
        out.append(f"GPU{start}" + (f"-{prev}" if prev != start else ""))
    return ", ".join(out)


def _subtree(state, node, parent, prefix, last, lines, pair, pending) -> None:
    g = state.fabric.graph
    branch = "└─ " if last else "├─ "
    kind = g.nodes[node]["kind"]
    if kind == "gpu":
        lines.append(_gpu_line(state, g.nodes[node]["index"], parent, prefix + branch, pair, pending))
        return
    t = Text(prefix + branch, style="dim")
    t.append(clean(g.nodes[node]["label"]), style="bold" if kind == "host_bridge" else "")
    if kind == "pcie_switch" and g.has_edge(node, parent):
        t.append(f"  {state.fabric.link_label(node, parent)}", style="dim")
    lines.append(Line(t))
    children = sorted(
        (v for v in g.neighbors(node) if v != parent and g.edges[node, v]["kind"] == "pcie"),
        key=lambda v: (g.nodes[v]["kind"] != "pcie_switch", g.nodes[v].get("index", 0), v),
    )
    for i, child in enumerate(children):
        _subtree(state, child, node, prefix + ("   " if last else "│  "), i == len(children) - 1, lines, pair, pending)


def _nvlink_summary(state: DashboardState, index: int, to_switch_only: bool = False) -> str:
    g = state.fabric.graph
    parts = []
    switch_links = switch_active = 0
    for _, v, d in g.edges(gpu_node(index), data=True):
        if d["kind"] != "nvlink":
            continue
        if g.nodes[v]["kind"] == "nvswitch":
            switch_links += d["links"]
            switch_active += d["active"]
        elif not to_switch_only:
            parts.append(f"NV{d['active']}" + (f"/{d['links']}" if d["down"] else "") + f"→GPU{g.nodes[v]['index']}")
    if switch_links:
        parts.insert(0, f"NV{switch_active}" + (f"/{switch_links}" if switch_active != switch_links else "") + "⇄NVSwitch")
    return "  ".join(parts)


def _gpu_line(state, index, parent, prefix, pair, pending) -> Line:
    gpu = state.snapshot.gpu(index)
    gstate = state.gpu_state.get(index, "unknown")
    t = Text(prefix, style="dim")
    t.append_text(look.badge(gstate))
    label = f" GPU{index}"
    marker = ""
    if pending == index:
        marker = " [A?]"
    elif pair[0] == index:
        marker = " [A]"
    elif pair[1] == index:
        marker = " [B]"
    sel = index in pair or pending == index
    t.append(label, style=Style(bold=True, reverse=sel))
    t.append(marker, style="bold cyan")
    if state.recently_changed(index):
        t.append(f" {look.CHANGED_SYMBOL}", style=look.CHANGED_STYLE)
    nv = _nvlink_summary(state, index)
    if nv:
        down = gpu is not None and any(link.state == "inactive" for link in gpu.nvlinks)
        t.append(f"  {nv}", style="yellow" if down else "")
    if state.fabric.graph.has_edge(gpu_node(index), parent):
        pcie = state.fabric.link_label(gpu_node(index), parent).replace("PCIe ", "")
        t.append(f"  {pcie}", style="yellow" if gpu and gpu.pcie_degraded else "dim")
    t.append(f"  {_short_name(gpu.name if gpu else None)}", style="dim")
    if gstate == "nop2p":
        refused = [b for b in state.indices if b != index and (state.pair_p2p_refused(index, b) or state.pair_p2p_refused(b, index))]
        t.append(f"  no P2P with {_ranges(refused)}", style=look.STATES[gstate][1])
    elif gstate != "ok":
        t.append(f"  {look.STATES[gstate][2]}", style=look.STATES[gstate][1])
    return Line(t, gpu=index, parent=parent, prefix=prefix)
