"""The dashboard's knowledge base: loading it once the first picture is up, matching the selected pair's
findings against it (in a worker), listing the matches in the pair panel and opening an entry."""

from __future__ import annotations

from functools import partial

from rich.text import Text

from .look import clean
from .messages import KbLoaded, MatchesReady
from .widgets.pair_panel import PairPanel


class KnowledgeMatches:
    """Mixed into P2PTopApp: its knowledge-base workers, handlers and actions."""

    def _kb_worker(self) -> None:
        try:
            from ..knowledge import load_kb
        except ImportError as e:
            self.post_message(KbLoaded(None, f"knowledge base not available in this p2ptop ({e})"))
            return
        try:
            kb = load_kb(extra_dirs=self.kb_dirs)
        except Exception as e:  # noqa: BLE001
            self.post_message(KbLoaded(None, f"knowledge base could not be loaded: {type(e).__name__}: {e}"))
            return
        self.post_message(KbLoaded(kb))

    def on_kb_loaded(self, message: KbLoaded) -> None:
        self.kb, self.kb_error = message.kb, message.error
        self.kb_loaded.set()
        if message.error:
            self.events.add(message.error, "warning")
        if self.pair:
            self._request_matches(*self.pair)

    def _request_matches(self, a: int, b: int) -> None:
        if self.kb is None:
            status = Text(self.kb_error or "loading…", style="dim" if not self.kb_error else "yellow")
            self.panel.show_matches(status, [])
            return
        from ..commands.explain import host_origin  # reasons name the host as explain's do ("demo", "replay", ...)

        from ..diagnose import pair_fact_finding  # loaded with the state, after the first frame

        # the pair's own facts (path, NVLinks, P2P status) join its findings, as in explain and doctor
        findings = self.pair_findings(a, b) + pair_fact_finding(self.state.snapshot, self.state.fabric, a, b)
        origin = host_origin(self.state.snapshot)
        self.run_worker(partial(self._match_worker, (a, b), findings, origin), thread=True, group="match", exclusive=True,
                        name="match knowledge base")

    def _match_worker(self, pair: tuple[int, int], findings: list, origin: str = "host") -> None:
        from ..knowledge import match

        try:
            text = self.nccl.log_for_matching(*pair)  # an opened NCCL log's lines, as explain reads them
            matches = list(match(self.kb, text=text, findings=findings, origin=origin))
        except Exception as e:  # noqa: BLE001
            self.post_message(MatchesReady(pair, [], f"matching failed: {type(e).__name__}: {e}"))
            return
        self.post_message(MatchesReady(pair, matches))

    def on_matches_ready(self, message: MatchesReady) -> None:
        if message.pair != self.pair:
            return
        self.matches = message.matches
        if message.error:
            self.panel.show_matches(Text(message.error, style="yellow"), [])
            return
        if not message.matches:
            unknown = self.state is not None and self.pair[0] != self.pair[1] and self.state.pair_p2p_unknown(*self.pair)
            self.panel.show_matches(Text("no entry matches what is known of this pair (its P2P status is not known)", style="dim")
                                    if unknown else Text("✔ no known problem matches this pair", style="green"), [])
            return
        items = []
        for m in message.matches:
            entry = m.entry
            t = Text(f"{clean(getattr(m, 'confidence', '')):<8} ", style="bold")
            t.append(clean(getattr(entry, "title", None) or getattr(entry, "id", "entry")))
            cls = getattr(entry, "failure_class", None)
            if cls:
                t.append(f"  [{clean(cls)}]", style="dim")
            reasons = list(getattr(m, "reasons", []) or [])[:2]
            if reasons:
                t.append("\n     " + "; ".join(clean(r) for r in reasons), style="dim")
            missing = getattr(m, "deciding_facts", None)
            if missing:
                t.append("\n     would decide: " + ", ".join(clean(f) for f in list(missing)[:3]), style="italic dim")
            items.append(t)
        self.panel.show_matches(Text(f"{len(items)} matching entr{'y' if len(items) == 1 else 'ies'}: Enter or click opens, "
                                     "k opens the first", style="dim"), items)

    def on_pair_panel_open_entry(self, message: PairPanel.OpenEntry) -> None:
        self._open_entry(message.index)

    def action_open_entry(self) -> None:
        self._open_entry(0)

    def _open_entry(self, index: int) -> None:
        if not (0 <= index < len(self.matches)):
            self.notify("No knowledge-base entry matches this pair.", timeout=3)
            return
        try:
            from .entry_screen import EntryScreen
        except ImportError as e:
            self.notify(f"Knowledge-base entry view not available ({e}).", severity="error", timeout=6)
            return
        match = self.matches[index]
        self.push_screen(EntryScreen(match.entry, self.kb, match=match))
