"""How states look on screen: one symbol and one colour per state, so the views read with and without colour."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

#: state -> (symbol, style, words). The symbol carries the meaning where colour is off (NO_COLOR).
STATES: dict[str, tuple[str, str, str]] = {
    "ok": ("✔", "green", "healthy"),
    "degraded": ("▲", "yellow", "degraded"),
    "nop2p": ("⊘", "red", "P2P not supported"),
    "failing": ("✖", "bold red", "copy test failing"),
    "lost": ("✖", "bold red", "GPU lost"),
    "unknown": ("?", "dim", "not known"),
    "self": ("X", "dim", "same GPU"),
    "contended": ("≈", "cyan", "measured while the GPUs were busy"),
}
#: the order the legend lists states in
LEGEND = ("ok", "degraded", "nop2p", "lost")
#: worst first, for picking one state out of several
SEVERITY_ORDER = ("lost", "failing", "nop2p", "degraded", "contended", "unknown", "ok", "self")

SEVERITY_STYLE = {"problem": "bold red", "warning": "yellow", "info": "cyan", "ok": "green"}
SEVERITY_SYMBOL = {"problem": "✖", "warning": "▲", "info": "·", "ok": "✔"}

CHANGED_SYMBOL = "⚡"
CHANGED_STYLE = "bold magenta"
RUNNING_SYMBOL = "▶"
RUNNING_STYLE = "bold cyan"


def symbol(state: str) -> str:
    return STATES[state][0]


def style(state: str) -> Style:
    return Style.parse(STATES[state][1])


def worst(states: list[str]) -> str:
    return min(states, key=SEVERITY_ORDER.index) if states else "ok"


def badge(state: str, words: bool = False) -> Text:
    sym, st, text = STATES[state]
    return Text(f"{sym} {text}" if words else sym, style=st)


#: the legend's words, kept short so it fits a narrow pane
LEGEND_WORDS = {"ok": "ok", "degraded": "degraded", "nop2p": "no P2P", "lost": "lost", "unknown": "P2P not known"}


def legend(unknown: bool = False) -> Text:
    """The states' symbols; with ``unknown``, also "?" (a pair whose P2P status was not read, e.g. a paste without -p2p)."""
    out = Text()
    for i, state in enumerate(LEGEND + (("unknown",) if unknown else ())):
        if i:
            out.append("  ")
        out.append(f"{STATES[state][0]} {LEGEND_WORDS[state]}", style=STATES[state][1])
    out.append("  ")
    out.append(f"{CHANGED_SYMBOL} changed", style=CHANGED_STYLE)
    return out


def clean(value: object) -> str:
    """Untrusted text (NVML strings, KB text, logs) made safe to show: control characters removed."""
    text = "" if value is None else str(value)
    return "".join(ch if ch.isprintable() or ch == " " else " " for ch in text)
