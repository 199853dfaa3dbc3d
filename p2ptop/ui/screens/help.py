"""The help screen: every key, read from the bindings themselves so the list cannot drift from them."""

from __future__ import annotations

import dataclasses
from typing import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..widgets.fabric_view import FabricView
from ..widgets.pair_matrix import MODES, PairMatrix
from .. import look

MOUSE = (
    ("click a GPU, then another", "fabric: choose that pair"),
    ("click a cell", "matrix: highlight it; click it again to test the pair"),
    ("click a knowledge-base entry", "pair panel: open it"),
)


def _keys(binding: Binding, key_display: Callable[[Binding], str]) -> str:
    return ", ".join(key_display(dataclasses.replace(binding, key=k.strip())) for k in binding.key.split(","))


def _section(t: Text, title: str, bindings, key_display: Callable[[Binding], str]) -> None:
    t.append(f"\n{title}\n", style="bold underline")
    if any(isinstance(b, Binding) and b.action.startswith("move(") for b in bindings):
        moves = [b for b in bindings if isinstance(b, Binding) and b.action.startswith("move(")]
        t.append(f"  {', '.join(key_display(b) for b in moves):<24}", style="bold cyan")
        t.append("Move", style="bold")
        t.append(": " + ", ".join(b.description.lower() for b in moves) + " (moving only highlights; it never starts work)\n")
    for b in bindings:
        if isinstance(b, tuple):
            b = Binding(*b)
        if b.action.startswith("move("):
            continue  # the arrows are listed once, as "Move"
        t.append(f"  {_keys(b, key_display):<24}", style="bold cyan")
        t.append(f"{b.description}", style="bold")
        if b.tooltip:
            t.append(f": {b.tooltip}")
        t.append("\n")


def help_text(app_bindings, key_display: Callable[[Binding], str]) -> Text:
    t = Text("p2ptop keys", style="bold")
    t.append("   (Esc, q or ? closes this screen)\n", style="dim")
    _section(t, "Everywhere", app_bindings, key_display)
    _section(t, "Pair matrix", PairMatrix.BINDINGS, key_display)
    _section(t, "Fabric view", FabricView.BINDINGS, key_display)
    t.append("\nMouse\n", style="bold underline")
    for what, does in MOUSE:
        t.append(f"  {what:<30}", style="bold cyan")
        t.append(f"{does}\n")
    t.append("\nMatrix cells (c cycles)\n", style="bold underline")
    for name, title in MODES.items():
        t.append(f"  {name:<10}", style="bold")
        t.append(f"{title}\n")
    t.append("\nSymbols\n", style="bold underline")
    t.append("  ")
    t.append_text(look.legend())
    t.append("\n  ")
    t.append(f"{look.RUNNING_SYMBOL} copy test running", style=look.RUNNING_STYLE)
    t.append("\n\nThe command palette (ctrl+p) holds every action: copy tests, export, cell modes, sources.\n", style="dim")
    return t


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close help")]

    def __init__(self, app_bindings) -> None:
        super().__init__()
        self._bindings_list = app_bindings

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(help_text(self._bindings_list, self.app.get_key_display), id="help-text")

    def action_dismiss(self) -> None:
        self.dismiss(None)
