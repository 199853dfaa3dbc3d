"""The pair matrix: every ordered pair (row = from, column = to), drawn line by line (Line API).

One widget for all cells: a 72 x 72 matrix is 5184 cells, drawn as at most a screen's worth of strips.
The header row and the row labels stay put while the cells scroll. Moving the cursor only highlights
(``Highlighted``); Enter, or a click on the highlighted cell, selects (``Selected``) and the app acts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from ...model import P2P_CAPS, P2P_CAP_LETTER
from .. import look
from ..messages import PairMessage

if TYPE_CHECKING:  # imported by the read worker: the first frame does not wait for it (nor for diagnose)
    from ..state import DashboardState

CELL_W = 6  # five characters and a space
GLANCE_W = 2  # the symbol and a space: 72 columns fit a 160-column terminal
LABEL_W = 7  # "GPU71 " + separator
#: what the cells show, in the order the cycle key walks them, with a title
MODES = {
    "path": "path class",
    "glance": "state symbol only (column header: last digit of the GPU)",
    "p2p": "P2P capabilities (r w n a p; · not supported)",
    "bw": "measured bandwidth, % of expected",
    "expected": "expected GB/s one way",
    "nccl": "NCCL's transport (N runs NCCL; a job's log opens from the palette)",
}


class PairMatrix(ScrollView, can_focus=True):
    BINDINGS = [
        Binding("up", "move(-1, 0)", "Up", show=False),
        Binding("down", "move(1, 0)", "Down", show=False),
        Binding("left", "move(0, -1)", "Left", show=False),
        Binding("right", "move(0, 1)", "Right", show=False),
        Binding("pageup", "move(-10, 0)", "Page up", show=False, tooltip="Ten rows up"),
        Binding("pagedown", "move(10, 0)", "Page down", show=False, tooltip="Ten rows down"),
        Binding("home", "jump('home')", "First pair", show=False, tooltip="GPU0 → GPU1"),
        Binding("end", "jump('end')", "Last pair", show=False, tooltip="The last pair"),
        Binding("t", "transpose", "Swap A/B", show=False, tooltip="The same pair the other way round"),
        Binding("enter", "select", "Test pair", tooltip="Copy test of the highlighted pair (a click on it does the same)"),
    ]

    cursor: reactive[tuple[int, int]] = reactive((0, 1), init=False)
    mode: reactive[str] = reactive("path", init=False)

    class Highlighted(PairMessage):
        """The cursor moved onto the pair (A, B)."""

    class Selected(PairMessage):
        """Enter, or a click on the highlighted cell: the app tests the pair."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.state: Optional[DashboardState] = None
        self.results: Callable[[int, int], object] = lambda a, b: None  # the app's copy-test results
        self.running: dict[tuple[int, int], float] = {}  # pair -> progress 0..1
        self.nccl: Callable[[int, int], tuple[str, str]] = lambda a, b: ("  ·", "dim")  # (text, style) of an "nccl" cell
        self._lines: dict[tuple, Strip] = {}  # drawn lines (see render_line)
        self._generation = 0  # bumped whenever what the cells show may have changed

    # -- data in --
    def refresh_cells(self) -> None:
        """The cells' content changed (new state, results, progress, change marks): draw again."""
        self._generation += 1
        self._lines.clear()
        self.refresh()

    def show(self, state: DashboardState, results: Callable[[int, int], object]) -> None:
        self.state = state
        self.results = results
        n = len(state.indices)
        self.virtual_size = Size(LABEL_W + n * self.cell_w, n + 1)
        self.styles.max_height = n + 4  # rows, header, border and a scrollbar: the rest goes to the events log
        r, c = self.cursor
        self.set_reactive(PairMatrix.cursor, (min(r, max(n - 1, 0)), min(c, max(n - 1, 0))))
        self.refresh_cells()

    def set_running(self, pair: tuple[int, int], fraction: Optional[float]) -> None:
        if fraction is None:
            self.running.pop(pair, None)
        else:
            self.running[pair] = fraction
        self.refresh_pair(*pair)

    def refresh_pair(self, a: int, b: int) -> None:
        if self.state and a in self.state.indices:
            row = self.state.indices.index(a)
            for key in [k for k in self._lines if k[0] == row]:
                del self._lines[key]
            self.refresh(Region(0, row + 1 - int(self.scroll_y), self.size.width, 1))

    def pair_at_cursor(self) -> Optional[tuple[int, int]]:
        if not self.state or not self.state.indices:
            return None
        r, c = self.cursor
        return self.state.indices[r], self.state.indices[c]

    def select_pair(self, a: int, b: int) -> None:
        """Move the cursor to a pair (from the fabric view); highlights, never acts."""
        if self.state and a in self.state.indices and b in self.state.indices:
            self.cursor = (self.state.indices.index(a), self.state.indices.index(b))

    # -- cursor --
    def watch_cursor(self, old: tuple[int, int], new: tuple[int, int]) -> None:
        before = self.scroll_offset
        self._scroll_to_cursor()
        if self.scroll_offset == before:  # no scrolling: only the header and the two rows change
            width = self.size.width
            for y in {0, old[0] + 1 - int(self.scroll_y), new[0] + 1 - int(self.scroll_y)}:
                self.refresh(Region(0, y, width, 1))
        else:
            self.refresh()
        pair = self.pair_at_cursor()
        if pair:
            self.post_message(self.Highlighted(*pair))

    @property
    def cell_w(self) -> int:
        return GLANCE_W if self.mode == "glance" else CELL_W

    def watch_mode(self) -> None:
        if self.state:
            self.virtual_size = Size(LABEL_W + len(self.state.indices) * self.cell_w, len(self.state.indices) + 1)
        self._scroll_to_cursor()
        self.refresh_cells()

    def _scroll_to_cursor(self) -> None:
        """Scroll so the cursor cell shows beside the fixed label column and under the fixed header row."""
        row, col = self.cursor
        width, height = self.scrollable_content_region.size
        x, y = int(self.scroll_x), int(self.scroll_y)
        cw = self.cell_w
        cells_w = max(width - LABEL_W, cw)
        cx = col * cw
        if cx < x:
            x = cx
        elif cx + cw > x + cells_w:
            x = cx + cw - cells_w
        rows_h = max(height - 1, 1)
        if row < y:
            y = row
        elif row >= y + rows_h:
            y = row - rows_h + 1
        self.scroll_to(x, y, animate=False, force=True, immediate=True)

    def action_move(self, dr: int, dc: int) -> None:
        if not self.state or not self.state.indices:
            return
        n = len(self.state.indices)
        r, c = self.cursor
        self.cursor = (max(0, min(n - 1, r + dr)), max(0, min(n - 1, c + dc)))

    def action_jump(self, where: str) -> None:
        if self.state and self.state.indices:
            n = len(self.state.indices)
            self.cursor = (0, min(1, n - 1)) if where == "home" else (n - 1, max(n - 2, 0))

    def action_transpose(self) -> None:
        r, c = self.cursor
        self.cursor = (c, r)

    def action_select(self) -> None:
        pair = self.pair_at_cursor()
        if pair:
            self.post_message(self.Selected(*pair))

    def cycle_mode(self) -> str:
        names = list(MODES)
        self.mode = names[(names.index(self.mode) + 1) % len(names)]
        return self.mode

    # -- mouse --
    def _cell_at(self, x: int, y: int) -> Optional[tuple[int, int]]:
        if not self.state or y < 1 or x < LABEL_W:
            return None
        col = (x - LABEL_W + int(self.scroll_x)) // self.cell_w
        row = y - 1 + int(self.scroll_y)
        n = len(self.state.indices)
        if 0 <= row < n and 0 <= col < n:
            return row, col
        return None

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        cell = self._cell_at(offset.x, offset.y)
        if cell is None:
            return
        if cell == self.cursor:
            self.action_select()  # a click on the highlighted cell acts, like Enter
        else:
            self.cursor = cell

    # -- drawing --
    def render_line(self, y: int) -> Strip:
        """One line, from a cache keyed on what it depends on: a cursor move redraws two rows and the header."""
        width = self.scrollable_content_region.width
        if not self.state:
            return Strip.blank(width, self.get_visual_style().rich_style)
        row = y - 1 + int(self.scroll_y) if y else -1
        cursor_part = self.cursor[1] if row in (-1, self.cursor[0]) else None
        key = (row, cursor_part, int(self.scroll_x), width, self.mode, self._generation, self.get_visual_style().rich_style)
        strip = self._lines.get(key)
        if strip is None:
            if len(self._lines) > 4096:
                self._lines.clear()
            strip = self._lines[key] = self._render_line(y, width)
        return strip

    def _render_line(self, y: int, width: int) -> Strip:
        base = self.get_visual_style().rich_style
        scroll_x, scroll_y = int(self.scroll_x), int(self.scroll_y)
        n, cw = len(self.state.indices), self.cell_w
        cells_w = max(width - LABEL_W, 0)
        # only the columns in view are drawn: at 72 GPUs that is a third of them or less
        first, last = scroll_x // cw, min(n, (scroll_x + cells_w) // cw + 1)
        columns = range(first, last)
        if y == 0:
            label = Segment(f"{'from↓':<{LABEL_W}}", base + Style(dim=True))
            cells = [self._header_cell(c, base) for c in columns]
        else:
            row = y - 1 + scroll_y
            if row >= n:
                return Strip.blank(width, base)
            a = self.state.indices[row]
            st = base + Style(bold=True, reverse=row == self.cursor[0])
            if self.state.recently_changed(a):  # a live change: marked on the row, as in the fabric
                label = Segment(f"GPU{a}{look.CHANGED_SYMBOL}"[:LABEL_W - 1].ljust(LABEL_W - 1) + "│",
                                st + Style.parse(look.CHANGED_STYLE))
            else:
                label = Segment(f"GPU{a:<{LABEL_W - 4}}"[:LABEL_W - 1] + "│", st)
            cells = [self._cell(row, c, base) for c in columns]
        offset = scroll_x - first * cw
        body = Strip(cells, len(columns) * cw).crop(offset, offset + cells_w)
        return Strip.join([Strip([label], LABEL_W), body]).crop(0, width).extend_cell_length(width, base)

    def _header_cell(self, col: int, base: Style) -> Segment:
        b = self.state.indices[col]
        if self.mode == "glance":
            return Segment(f"{b % 10} ", base + Style(bold=b % 10 == 0, dim=b % 10 != 0, reverse=col == self.cursor[1]))
        text = f"GPU{b}".center(CELL_W - 1)[: CELL_W - 1] + " "
        return Segment(text, base + Style(bold=True, reverse=col == self.cursor[1]))

    def _cell(self, row: int, col: int, base: Style) -> Segment:
        state = self.state
        a, b = state.indices[row], state.indices[col]
        result = self.results(a, b)
        pair_state = state.pair_state(a, b, result)
        text, st = self._cell_content(a, b, pair_state, result)
        style = base + look.style(pair_state) + st
        if (row, col) == self.cursor:
            style += Style(reverse=True, bold=True)
        w = self.cell_w - 1
        return Segment(f"{text:<{w}}"[:w] + " ", style)

    def _cell_content(self, a: int, b: int, pair_state: str, result) -> tuple[str, Style]:
        state = self.state
        glance = self.mode == "glance"
        if (a, b) in self.running:
            text = look.RUNNING_SYMBOL if glance else f"{look.RUNNING_SYMBOL}{int(self.running[(a, b)] * 100):>3}%"
            return text, Style.parse(look.RUNNING_STYLE)
        sym = look.symbol(pair_state)
        if a == b:  # the diagonal: GPU a's host link (X until it is measured)
            if result is None:
                return "X" if glance else "  X", Style(dim=True)
            if glance or self.mode not in ("bw",):
                return sym if glance else f"{sym}host", Style()
            share = result.params.get("share")
            return (f"{sym}{min(share * 100, 999):>3.0f}%" if isinstance(share, (int, float)) else f"{sym}{result.status[:4]}"), Style()
        if glance:
            return sym, Style()
        if self.mode == "path":
            return f"{sym}{state.path.get((a, b)) or '?'}", Style()
        if self.mode == "p2p":
            pair = state.pairs.get((a, b))
            if pair is None:
                return f"{sym}?", Style()
            letters = "".join(
                P2P_CAP_LETTER[cap] if pair.p2p.get(cap) == "OK" else ("?" if pair.p2p.get(cap) is None else "·")
                for cap in P2P_CAPS
            )
            return letters, Style()
        if self.mode == "nccl":
            text, style = self.nccl(a, b)
            return text, Style.parse(style)
        if self.mode == "bw":
            share = state.share(result)
            if share is not None:
                return f"{sym}{min(share * 100, 999):>3.0f}%", Style()
            if result is not None:
                return f"{sym}{result.status[:4]}", Style()
            return "  ·", Style(dim=True)
        expected = state.expected(a, b).gbps
        return (f"{expected:>5.0f}" if expected is not None else "  ?"), Style()
