"""A running process's own environment in the dashboard (the palette's "Host: a process's environment…"):
what ``p2ptop doctor --pid PID`` reads (p2ptop/host/proc.py), shown in a modal. It only shows."""

from __future__ import annotations

from functools import partial
from typing import Any, Optional

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from .look import clean


def process_text(pid: int, snapshot: Any) -> Text:
    """The process's facts and the findings they lead to (the host's diagnosis with its env.* in place of ours)."""
    import copy

    from ..diagnose import findings_for
    from ..host.proc import apply_to_host, process_exists, process_findings, read_process

    t = Text()
    if not process_exists(pid):
        t.append(f"No process {pid}.", style="bold red")
        return t
    proc = read_process(pid)
    t.append(f"Process {pid}\n", style="bold")
    for name, fact in proc["facts"].items():
        v = fact.get("value")
        if v is None and not fact.get("na"):
            continue  # a variable it does not set
        shown = f"N/A ({fact['na']})" if v is None else str(v)
        t.append(f"  {name:<28} ")
        t.append(clean(shown), style="yellow" if v is None else "")
        t.append(f"   [{clean(str(fact.get('how', '')))}]\n", style="dim")
    snap = copy.copy(snapshot)
    snap.host = apply_to_host(snapshot.host or {}, proc)
    try:
        findings = [f for f in findings_for(snap) if f.subject == "host" and f.id.startswith(("env.", "host.shm"))]
    except Exception as e:  # noqa: BLE001 - the facts above stand on their own
        findings = []
        t.append(f"\n(diagnosis failed: {clean(str(e))})\n", style="red")
    findings += process_findings(snap.host)
    t.append("\nFindings for this process\n", style="bold")
    if not findings:
        t.append("  none\n", style="green")
    for f in findings:
        t.append(f"  {f.severity.upper():<8} {clean(f.summary)}\n", style="bold red" if f.is_problem else "yellow" if f.severity == "warning" else "")
    return t


class ProcessScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q", "dismiss", "Close")]

    def __init__(self, body: Text) -> None:
        super().__init__()
        self.body = body

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(self.body)

    def action_dismiss(self) -> None:
        self.dismiss(None)


def ask_pid(app: Any) -> None:
    """Ask for a PID, read it in a thread worker, show the result."""
    from .screens.open_file import OpenFileScreen

    def chosen(value: Optional[str]) -> None:
        if not value:
            return
        try:
            pid = int(value.strip())
        except ValueError:
            app.notify(f"Not a process id: {clean(value)[:40]}", severity="error", timeout=5)
            return
        if app.state is None:
            return
        app.run_worker(partial(_read, app, pid, app.state.snapshot), thread=True, group="process", name="process facts")

    app.push_screen(OpenFileScreen("Process id whose NCCL/CUDA environment, container, /dev/shm and namespaces to read:", "PID"), chosen)


def _read(app: Any, pid: int, snapshot: Any) -> None:
    body = process_text(pid, snapshot)
    app.call_from_thread(app.push_screen, ProcessScreen(body))
