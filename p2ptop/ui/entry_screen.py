"""One knowledge-base entry, full screen: root cause, dead ends with how often they fail,
workarounds with how often they work and when, sources, verification tier; en/zh toggle; a
workaround's command copied to the clipboard (OSC 52, so it works over SSH); related entries
(transition_graph) one key away.

Every string from the entry is appended to rich Text as plain text (control characters removed),
never parsed as markup: KB files, including users' own, are data.
"""

from __future__ import annotations

from typing import Optional

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from ..knowledge import FAILURE_CLASSES, VERIFICATION_TIERS, Entry, KnowledgeBase, Match
from ..knowledge.render import fact_help, percent
from ..review.outcomes import load_site_outcomes, outcome_text
from .look import clean

LANG_NAMES = {"en": "English", "zh": "中文"}
HEAD = "bold underline"
RATE_BAD, RATE_GOOD, DIM = "red", "green", "dim"


def commands(entry: Entry) -> list[int]:
    """Indexes of the workarounds that carry a copyable command."""
    return [i for i, w in enumerate(entry.workarounds) if isinstance(w.get("command"), str) and w["command"].strip()]


def entry_body(entry: Entry, lang: str = "en", selected: Optional[int] = None, kb: Optional[KnowledgeBase] = None,
               match: Optional[Match] = None) -> Text:
    """The entry as rich Text; ``selected`` is the workaround whose command 'c' copies; ``match``, when
    the entry was opened from a match, adds why it matched and which missing facts would decide."""
    t = Text()
    t.append(clean(entry.text("signature", lang)) + "\n", style="bold")
    if match is not None:
        t.append(f"matched: score {match.score:.2f} ({match.confidence})\n", style="bold cyan")
        for r in match.reasons:
            t.append("  · " + clean(r) + "\n", style=DIM)
        if match.deciding_facts:
            t.append("  would decide: " + ", ".join(fact_help(f) for f in match.deciding_facts) + "\n", style="italic")
    cls = entry.failure_class
    t.append("class ", style=DIM)
    t.append(clean(cls or "none given"))
    if cls in FAILURE_CLASSES:
        t.append(f"  {FAILURE_CLASSES[cls]}", style=DIM)
    t.append("\nverified ", style=DIM)
    tier = entry.verification_tier
    t.append(clean(tier), style="bold yellow" if tier == "ai_generated" else "bold")
    if tier in VERIFICATION_TIERS:
        t.append(f"  {VERIFICATION_TIERS[tier]}", style=DIM)
    note = entry.data.get("verification_note")
    if isinstance(note, str) and note:
        t.append("\n" + clean(note), style="italic dim")
    t.append("\n\nRoot cause\n", style=HEAD)
    t.append(clean(entry.text("root_cause", lang)) + "\n")

    if entry.dead_ends:
        t.append("\nDead ends: what does not help\n", style=HEAD)
        for i, d in enumerate(entry.dead_ends):
            t.append("  ✖ ", style=RATE_BAD)
            t.append(clean(entry.dead_end_text(i, lang) or d.get("why_fails", "")))
            t.append(f"  fails {percent(d.get('fail_rate'))}\n", style=RATE_BAD)
            if lang != "zh" and entry.dead_end_text(i, lang) and d.get("why_fails"):
                t.append("    why: " + clean(d["why_fails"]) + "\n", style=DIM)
            _sources(t, d.get("sources"), "    ")

    if entry.workarounds:
        site = load_site_outcomes()
        t.append("\nWorkarounds\n", style=HEAD)
        for i, w in enumerate(entry.workarounds):
            mark = "▶" if i == selected else " "
            t.append(f"{mark} {i + 1}. ", style="bold cyan" if i == selected else "bold")
            t.append(clean(entry.workaround_text(i, lang)))
            t.append(f"  works {percent(w.get('success_rate'))}", style=RATE_GOOD)
            here = outcome_text(site.get((entry.id, i)))
            t.append((f"; {here}" if here else "") + "\n", style="bold green" if here else RATE_GOOD)
            if w.get("condition"):
                t.append("    when: " + clean(w["condition"]) + "\n", style="italic")
            if w.get("command"):
                t.append("    $ ", style=DIM)
                t.append(clean(w["command"]) + "\n", style="reverse" if i == selected else "bold")
            _sources(t, w.get("sources"), "    ")

    if entry.sources:
        t.append("\nSources\n", style=HEAD)
        _sources(t, entry.sources, "  ", label=False)
    related = entry.related_ids
    if related:
        t.append("\nRelated entries (r)\n", style=HEAD)
        for rid in related:
            other = kb.get(rid) if kb is not None else None
            t.append("  " + clean(rid), style="bold" if other else DIM)
            t.append(("  " + clean(other.text("signature", lang))[:80]) if other else "  (not in this knowledge base)", style=DIM)
            t.append("\n")
    t.append(f"\nfile {clean(entry.file)}", style=DIM)
    return t


def _sources(t: Text, sources, indent: str, label: bool = True) -> None:
    for s in sources or []:
        t.append(indent + ("source: " if label else "") + clean(s) + "\n", style="dim underline" if str(s).startswith("http") else DIM)


class EntryScreen(Screen[None]):
    """One entry. Push it with ``app.push_screen(EntryScreen(entry, kb))``; pass ``match=`` to show why it matched."""

    DEFAULT_CSS = """
    EntryScreen #entry-title { height: 1; background: $panel; padding: 0 1; text-style: bold; }
    EntryScreen #entry-scroll { padding: 0 1; }
    """
    BINDINGS = [
        Binding("escape,q", "close", "Back"),
        Binding("l", "toggle_lang", "English/中文"),
        Binding("c", "copy_command", "Copy command"),
        Binding("n", "next_command", "Next command"),
        Binding("r", "related", "Related entries"),
    ] + [Binding(str(d), f"select({d - 1})", f"Workaround {d}", show=False) for d in range(1, 10)]

    def __init__(self, entry: Entry, kb: Optional[KnowledgeBase] = None, lang: str = "en", match: Optional[Match] = None) -> None:
        super().__init__()
        self.entry = entry
        self.kb = kb
        self.lang = lang
        self.match = match
        cmds = commands(entry)
        self.selected: Optional[int] = cmds[0] if cmds else None

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="entry-title")
        with VerticalScroll(id="entry-scroll"):
            yield Static(self.body(), id="entry-body")
        yield Footer()

    def _title(self) -> Text:
        t = Text("Knowledge base · ", style="dim")
        t.append(clean(self.entry.id), style="bold")
        t.append(f"   [{LANG_NAMES[self.lang]}]", style="dim")
        return t

    def body(self) -> Text:
        return entry_body(self.entry, self.lang, self.selected, self.kb, self.match)

    def refresh_body(self) -> None:
        self.query_one("#entry-title", Static).update(self._title())
        self.query_one("#entry-body", Static).update(self.body())

    def action_close(self) -> None:
        self.dismiss(None)

    def action_toggle_lang(self) -> None:
        self.lang = "zh" if self.lang == "en" else "en"
        self.refresh_body()

    def action_select(self, index: int) -> None:
        if 0 <= index < len(self.entry.workarounds):
            self.selected = index
            self.refresh_body()

    def action_next_command(self) -> None:
        cmds = commands(self.entry)
        if not cmds:
            self.notify("No workaround of this entry has a command to copy.", timeout=3)
            return
        later = [i for i in cmds if self.selected is None or i > self.selected]
        self.selected = (later or cmds)[0]
        self.refresh_body()

    def action_copy_command(self) -> None:
        w = self.entry.workarounds[self.selected] if self.selected is not None and self.selected < len(self.entry.workarounds) else {}
        command = w.get("command")
        if not isinstance(command, str) or not command.strip():
            self.notify("This workaround has no command to copy; n selects the next one that has.", timeout=4)
            return
        text = clean(command)
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied to the clipboard (OSC 52): {text[:60]}", timeout=4)

    def action_related(self) -> None:
        related = [r for r in self.entry.related_ids]
        if not related:
            self.notify("This entry names no related entries.", timeout=3)
            return
        self.app.push_screen(RelatedScreen(related, self.kb, self.lang), self._open_related)

    def _open_related(self, entry_id: Optional[str]) -> None:
        other = self.kb.get(entry_id) if (entry_id and self.kb is not None) else None
        if other is None:
            if entry_id:
                self.notify(f"{clean(entry_id)} is not in this knowledge base.", severity="warning", timeout=4)
            return
        self.app.push_screen(EntryScreen(other, self.kb, self.lang))


class RelatedScreen(ModalScreen[Optional[str]]):
    """Pick one of an entry's related entries (transition_graph)."""

    DEFAULT_CSS = """
    RelatedScreen { align: center middle; }
    RelatedScreen OptionList { width: 90; max-width: 100%; height: auto; max-height: 80%; border: round $accent; }
    """
    BINDINGS = [Binding("escape,q", "cancel", "Cancel")]

    def __init__(self, ids: list[str], kb: Optional[KnowledgeBase], lang: str) -> None:
        super().__init__()
        self.ids = ids
        self.kb = kb
        self.lang = lang

    def compose(self) -> ComposeResult:
        options = []
        for rid in self.ids:
            other = self.kb.get(rid) if self.kb is not None else None
            label = Text(clean(rid), style="bold")
            label.append("\n  " + (clean(other.text("signature", self.lang))[:84] if other else "(not in this knowledge base)"), style="dim")
            options.append(Option(label, id=None))
        yield OptionList(*options)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.ids[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
