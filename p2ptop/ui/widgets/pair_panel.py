"""The pair panel: everything about the highlighted pair, and the knowledge-base entries it matches.

All text here comes from NVML, the knowledge base or copy-test errors: it is built as rich Text,
never parsed as markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...findings import Finding
from ...fabric import gpu_node
from ...model import P2P_CAPS, P2P_STATUS_TEXT, BenchResult
from .. import look
from ..look import clean

if TYPE_CHECKING:  # imported by the read worker: the first frame does not wait for it (nor for diagnose)
    from ..state import DashboardState

LABEL_W = 10


def _row(rows: Table, label: str, value: Text | str, style: str = "") -> None:
    """One labelled row; a long value wraps within its column, under itself."""
    rows.add_row(label, value if isinstance(value, Text) else Text(clean(value), style=style))


def _gb(v: Optional[float]) -> str:
    return "N/A" if v is None else f"{v:g}"


def pair_text(state: DashboardState, a: int, b: int, result: Optional[BenchResult],
              progress: Optional[dict[str, Any]], findings: list[Finding]) -> RenderableType:
    """The body of the panel for one ordered pair."""
    from ...diagnose import nvlink_counters_na, nvlink_error_total  # loaded with the state, after the first frame

    snap, fab = state.snapshot, state.fabric
    t = Text()
    pstate = state.pair_state(a, b, result)
    head = Text(f"GPU{a} → GPU{b}  ", style="bold")
    head.append(f"{state.path.get((a, b)) or '?'}  ", style="bold")
    head.append_text(look.badge(pstate, words=True))
    unknown = state.pair_p2p_unknown(a, b) if a != b else None
    if pstate == "unknown" and unknown:
        head.append(f": P2P {clean(unknown)}", style="dim")
    if a != b and pstate in ("ok", "unknown"):
        # the link is fine, yet a finding of the pair is a problem (NCCL left P2P for SHM, a copy test's data): say so
        # beside the badge, so "healthy" is not read as "nothing wrong"
        problems = sum(1 for f in findings if f.is_problem and f.pair in ((a, b), (b, a)))
        if problems:
            head.append(f"  ✖ {problems} problem{'s' if problems > 1 else ''} in the findings", style="bold red")
    t.append_text(head)
    if a == b:
        return host_link_text(state, a, result, progress, findings, t)
    top = t
    rows = Table.grid(padding=(0, 1))
    rows.add_column(style="bold", no_wrap=True, width=LABEL_W - 1)
    rows.add_column(ratio=1)
    exp = state.expected(a, b)
    path = Text(f"{exp.basis}: ")
    path.append(f"{_gb(exp.gbps)} GB/s one way expected" if exp.gbps is not None else f"expected N/A ({clean(exp.reason)})")
    if exp.trained_gbps is not None and exp.gbps is not None and exp.trained_gbps < exp.gbps:
        path.append(f", {exp.trained_gbps:g} GB/s as trained now", style="yellow")
    _row(rows, "Path", path)
    for i in (a, b):
        gpu = snap.gpu(i)
        if gpu is None:
            _row(rows, f"GPU{i}", "not in this snapshot", "red")
            continue
        g = Text()
        gstate = state.gpu_state.get(i, "unknown")
        g.append_text(look.badge("ok" if gstate == "nop2p" else gstate))  # P2P is judged per pair, above
        g.append(f" {clean(gpu.name or 'name N/A')}  {clean(gpu.pci_bus_id or 'bus N/A')}")
        if gpu.numa_node is not None:
            g.append(f"  NUMA {gpu.numa_node}", style="dim")
        _row(rows, f"GPU{i}", g)

    # P2P capabilities with NVML's words
    pair = state.pairs.get((a, b))
    p2p = Text()
    if pair is None:
        p2p.append("not read for this pair", style="dim")
    not_read: dict[str, list[str]] = {}  # reason -> capabilities not read for it, shown once
    for cap in P2P_CAPS if pair else ():
        status = pair.p2p.get(cap)
        if status is None:
            not_read.setdefault(pair.na.get("p2p." + cap, "not read"), []).append(cap)
    for cap in P2P_CAPS if pair else ():
        status = pair.p2p.get(cap)
        if status == "OK":
            p2p.append(f"{cap} ✔", style="green")
        elif status is None:
            why = pair.na.get("p2p." + cap, "not read")
            if not_read.get(why, [None])[0] != cap:
                continue
            p2p.append(f"{' '.join(not_read[why])} ? N/A ({clean(why)})", style="dim")
        else:  # read and write decide P2P; the other capabilities missing is information
            p2p.append(f"{cap} ⊘ {P2P_STATUS_TEXT.get(status, clean(status))}", style="red" if cap in ("read", "write") else "dim")
        p2p.append("  ")
    _row(rows, "P2P", p2p)

    # links: NVLink bundles and the PCIe hops
    for i in (a, b):
        gpu = snap.gpu(i)
        if gpu is None or not gpu.nvlinks:
            continue
        active = len(gpu.active_links)
        errors = nvlink_error_total(gpu)  # None: no counter read (N/A, not 0)
        version = next((link.version_name for link in gpu.nvlinks if link.version_name), None)
        nv = Text(f"GPU{i}: {active}/{len(gpu.nvlinks)} active" + (f", NVLink {version}" if version else ""),
                  style="" if active == len(gpu.nvlinks) else "yellow")
        down = [str(link.link) for link in gpu.nvlinks if link.state == "inactive"]
        if down:
            nv.append(f", down: {', '.join(down)}", style="yellow")
        if errors is None:
            nv.append(f", error counters N/A ({clean(nvlink_counters_na(gpu))})", style="dim")
        else:
            nv.append(f", error counters {errors}", style="yellow" if errors else "dim")
        _row(rows, "NVLink", nv)
    route = fab.pcie_route(a, b)
    if route:
        hops = Text()
        for k, (u, v, d) in enumerate(route):
            if k == 0:
                hops.append(clean(fab.graph.nodes[u].get("label", u)))
            hops.append(f" ─{fab.link_label(u, v) or d['kind']}─ " if d["kind"] != "host" else " ── ", style="dim")
            hops.append(clean(fab.graph.nodes[v].get("label", v)))
        _row(rows, "PCIe", hops)
    else:
        _row(rows, "PCIe", "route not known (PCIe hierarchy not read)", "dim")
    for i in (a, b):
        gpu = snap.gpu(i)
        if gpu is not None:
            _row(rows, "Counters", _pcie_text(gpu, f"GPU{i}: "))
    t = _test_and_findings(state, "Copy test", "not run: Enter (or r) measures this pair, R measures every pair",
                           result, progress, findings, "this pair")
    return Group(top, rows, t)


def host_link_text(state: DashboardState, a: int, result: Optional[BenchResult], progress: Optional[dict[str, Any]],
                   findings: list[Finding], head: Text) -> RenderableType:
    """The diagonal (A = B): GPU a's own link to the host and its copy test."""
    from ...bench.judge import host_link_expected

    head = Text(f"GPU{a} ⇄ host memory  ", style="bold")
    head.append_text(look.badge(state.pair_state(a, a, result), words=True) if result is not None else Text("not measured", style="dim"))
    rows = Table.grid(padding=(0, 1))
    rows.add_column(style="bold", no_wrap=True, width=LABEL_W - 1)
    rows.add_column(ratio=1)
    gpu = state.snapshot.gpu(a)
    gbps, basis = host_link_expected(state.snapshot, a)
    _row(rows, "Path", f"GPU{a} ── host memory over {basis}: " + (f"{gbps:g} GB/s one way expected" if gbps else "expected N/A"))
    if gpu is not None:
        _row(rows, "PCIe", _pcie_text(gpu, idle_note=True))
    t = _test_and_findings(state, "Host-link copy test",
                           "not run: Enter (or r) measures this GPU's link to the host (pinned memory, both ways)",
                           result, progress, findings, "this GPU")
    return Group(head, rows, t)


def _pcie_text(gpu, label: str = "", idle_note: bool = False) -> Text:
    """'Gen4 x16 of Gen5 x16, replays 0, 3% busy': the GPU's PCIe link now and at best, its replays and load."""
    c = Text(f"{label}Gen{gpu.pcie_gen_cur or '?'} x{gpu.pcie_width_cur or '?'} of Gen{gpu.pcie_gen_max or '?'} "
             f"x{gpu.pcie_width_max or '?'}", style="yellow" if gpu.pcie_degraded else "")
    if idle_note and gpu.pcie_degraded and (gpu.utilization_gpu or 0) < 20:
        c.append(" (idle: a GPU lowers its link to save power; the copy test reads it under load)", style="dim")
    c.append(f", replays {gpu.pcie_replay_counter if gpu.pcie_replay_counter is not None else 'N/A'}", style="dim")
    if gpu.utilization_gpu is not None:
        c.append(f", {gpu.utilization_gpu}% busy", style="dim")
    return c


def _test_and_findings(state: DashboardState, title: str, not_run: str, result: Optional[BenchResult],
                       progress: Optional[dict[str, Any]], findings: list[Finding], subject: str) -> Text:
    """The copy test (running, not run, or its result) and the findings, under their headings."""
    t = Text("\n")
    t.append(title, style="bold underline")
    t.append("\n")
    if progress is not None:
        frac = progress.get("fraction")
        t.append(f"{look.RUNNING_SYMBOL} running", style=look.RUNNING_STYLE)
        if isinstance(frac, (int, float)):
            t.append(f" {frac * 100:.0f}%", style=look.RUNNING_STYLE)
        if progress.get("step"):
            t.append(f"  {clean(progress.get('step'))}")
        if progress.get("message"):
            t.append(f"  {clean(progress.get('message'))}", style="dim")
        t.append("   (Esc cancels)\n", style="dim")
    if result is None:
        if progress is None:
            t.append(not_run + "\n", style="dim")
    else:
        t.append_text(bench_text(state, result))
    t.append("\n")
    t.append("Findings", style="bold underline")
    t.append("\n")
    shown = [f for f in findings if f.subject != "host" or f.severity in ("warning", "problem")]
    if not shown:
        t.append(f"✔ nothing wrong found for {subject}\n", style="green")
    for f in shown:
        t.append(f"{look.SEVERITY_SYMBOL.get(f.severity, '·')} ", style=look.SEVERITY_STYLE.get(f.severity, ""))
        t.append(clean(f.summary))
        t.append("\n")
        for ev in f.evidence[:3]:
            t.append(f"    {clean(ev)}\n", style="dim")
    return t


def _busy_text(r: BenchResult) -> Text:
    """Why a result is contended or interrupted, and what a host link's PCIe readings said."""
    from ...bench.judge import link_faults, link_notes

    t = Text()
    c = r.contention
    if r.verdict == "contended" and c is not None:
        t.append(f"  {look.symbol('contended')} contended: ", style="cyan")
        t.append("measured while the GPUs were busy: not judged, not comparable\n" if r.status != "busy" else
                 "not measured: the GPUs are busy (p2ptop bench --allow-busy measures anyway)\n")
        for reason in c.reasons[:4]:
            t.append(f"    {clean(reason)}\n", style="cyan")
    if r.verdict == "interrupted":
        sig = r.params.get("signal")
        t.append(f"  interrupted{' by ' + clean(sig) if sig else ''}: not a fault of the link; figures above were measured before it\n", style="yellow")
    for _, text in link_faults(r):
        t.append(f"  link fault: {clean(text)}\n", style="red")
    for text in link_notes(r):
        t.append(f"  {clean(text)}\n", style="dim")
    return t


def bench_text(state: DashboardState, r: BenchResult) -> Text:
    t = Text()
    pst = state.pair_state(r.a, r.b, r)
    st = "failing" if pst == "failing" else ("degraded" if r.verdict == "slow" else "contended" if r.verdict == "contended" else "ok")
    t.append_text(look.badge(st))
    t.append(f" {clean(r.status)}" + (f", {clean(r.verdict)}" if r.verdict else ""))
    if r.simulated:
        t.append("  SIMULATED (demo/replay figures, not a measurement)", style="bold magenta")
    if r.duration_s is not None:
        t.append(f"  {r.duration_s:.1f} s", style="dim")
    t.append("\n")
    share = state.share(r)
    if share is not None:
        t.append(f"  one-way copy: {share * 100:.0f}% of expected\n")
    for m in r.measurements:
        line = Text(f"  {clean(m.name):<17}")
        if m.value is not None:
            line.append(f"{m.value:>7.1f} {clean(m.unit):<4}")
            if m.min is not None and m.max is not None:
                line.append(f" {m.min:.1f}–{m.max:.1f}", style="dim")
            if m.expected:
                line.append(f" /{m.expected:g}", style="dim")
        else:
            line.append("    N/A", style="dim")
        if m.verdict:
            line.append(f" {clean(m.verdict)}", style={"healthy": "green", "slow": "yellow", "failing": "red"}.get(m.verdict, "dim"))
        if m.error:
            line.append(f"  {clean(m.error)}", style="red")
        t.append_text(line)
        t.append("\n")
    if r.integrity:
        t.append(f"  integrity: {clean(r.integrity)}", style="red" if r.integrity == "corrupt" else "")
        if r.first_bad_offset is not None:
            t.append(f" (first bad offset {r.first_bad_offset})", style="red")
        t.append("\n")
    for e in r.errors[:5]:
        t.append(f"  {clean(e)}\n", style="red")
    t.append_text(_busy_text(r))
    return t


class PairPanel(VerticalScroll, can_focus=False):
    """Pair details on top, matched knowledge-base entries below (Enter or click opens one)."""

    class OpenEntry(Message):
        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.body = Static(Text("Choose a pair in the matrix or the fabric.", style="dim"), id="pair-body")
        self.kb_status = Static(Text("loading…", style="dim"), id="kb-status")
        self.kb_list = OptionList(id="kb-list")

    def compose(self) -> ComposeResult:
        yield self.body
        yield Static(Text("Knowledge base", style="bold underline"), id="kb-title")
        yield self.kb_status
        yield self.kb_list

    def show(self, body: RenderableType, routine: bool = False) -> None:
        """The pair's details. ``routine`` (a live refresh that only moved a counter): a body as tall as the one
        laid out (its lines as rendered at this width) is drawn without a layout pass, so the panel is redrawn,
        not the screen; other shows lay out as usual and measure nothing."""
        layout = True
        region = self.body.content_region
        if routine and region.width > 0:
            console = self.app.console
            layout = len(console.render_lines(body, console.options.update_width(region.width), pad=False)) != region.height
        self.body.update(body, layout=layout)

    def show_matches(self, status: Text, items: list[Text]) -> None:
        self.kb_status.update(status)
        self.kb_list.clear_options()
        self.kb_list.add_options([Option(item) for item in items])
        self.kb_list.display = bool(items)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.OpenEntry(event.option_index))
