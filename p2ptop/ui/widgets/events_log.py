"""The events log: changes seen between live snapshots, source switches and errors, with their time."""

from __future__ import annotations

import datetime as _dt

from rich.text import Text
from textual.widgets import RichLog

from .. import look
from ..look import clean


class EventsLog(RichLog):
    def __init__(self, **kwargs) -> None:
        # min_width: RichLog renders at 78 columns at least by default, and a narrower pane then crops each wrapped line
        super().__init__(max_lines=2000, wrap=True, min_width=16, markup=False, highlight=False, **kwargs)
        self.count = 0

    def add(self, text: str, severity: str = "info", at: str | None = None) -> None:
        """One line: local time, a severity symbol, the text (shown as text, never markup)."""
        when = at or _dt.datetime.now().strftime("%H:%M:%S")
        line = Text(f"{when} ", style="dim")
        line.append(f"{look.SEVERITY_SYMBOL.get(severity, '·')} ", style=look.SEVERITY_STYLE.get(severity, ""))
        line.append(clean(text))
        self.write(line)
        self.count += 1
