"""The entry screen: everything an entry says, en/zh, copying a command, related entries; entry text is never markup."""

import copy

from textual.app import App

from p2ptop.knowledge import Entry, KnowledgeBase, load_kb
from p2ptop.ui.entry_screen import EntryScreen, RelatedScreen, entry_body

KB = load_kb()
ENTRY = KB.get("cuda/peer-access-unsupported-by-hardware")


class Harness(App):
    def __init__(self, entry, kb):
        super().__init__()
        self.entry, self.kb, self.copied = entry, kb, []

    def on_mount(self):
        self.push_screen(EntryScreen(self.entry, self.kb))

    def copy_to_clipboard(self, text):
        self.copied.append(text)
        super().copy_to_clipboard(text)


def test_the_body_shows_root_cause_dead_ends_workarounds_sources_and_tier():
    text = entry_body(ENTRY, "en", 0, KB).plain
    assert ENTRY.root_cause in text
    assert "Dead ends" in text and "fails 90%" in text
    assert "Workarounds" in text and "works 90%" in text and "$ nvidia-smi topo -m" in text
    assert "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__PEER.html" in text
    assert "verified source_checked" in text and "Related entries (r)" in text
    zh = entry_body(ENTRY, "zh", 0, KB).plain
    assert ENTRY.data["root_cause_zh"] in zh and ENTRY.data["workarounds_zh"][1] in zh


def test_opened_from_a_match_it_says_why_and_what_would_decide():
    from p2ptop.knowledge import match

    m = match(KB, "RuntimeError: CUDA error: peer access is not supported between these two devices", top=1)[0]
    text = entry_body(m.entry, "en", 0, KB, m).plain
    # the 217 message alone is the line of several classes' entries (matcher._one_of_several): unsure, and the screen
    # says so and names the facts that would decide
    assert "matched: score 0.44 (unsure)" in text and "regex matched line 1" in text and "would decide: gpu.consumer" in text
    assert "several classes share" in text


def test_entry_text_is_never_markup():
    data = copy.deepcopy(ENTRY.data)
    data["root_cause"] = "[bold red]boom[/] [link=http://evil]x[/link] \x1b[2J"
    data["workarounds"][0]["command"] = "echo [b]hi[/b]"
    evil = Entry(data=data, file="evil.json")
    text = entry_body(evil, "en", 0, KB)
    assert "[bold red]boom[/] [link=http://evil]x[/link]" in text.plain
    assert "\x1b" not in text.plain
    assert all("link" not in str(span.style) for span in text.spans)


async def test_keys_toggle_language_copy_commands_and_open_related():
    app = Harness(ENTRY, KB)
    async with app.run_test() as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, EntryScreen)
        await pilot.press("l")
        assert screen.lang == "zh" and "中文" in screen._title().plain
        await pilot.press("l")
        assert screen.lang == "en"
        await pilot.press("c")
        assert app.copied == [ENTRY.workarounds[0]["command"]]
        await pilot.press("n")
        await pilot.press("c")
        assert app.copied[-1] == ENTRY.workarounds[1]["command"]
        await pilot.press("3", "c")
        assert app.copied[-1] == ENTRY.workarounds[2]["command"]
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, RelatedScreen)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, EntryScreen) and app.screen.entry.id == ENTRY.related_ids[0]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen


async def test_an_entry_without_commands_or_related_entries_says_so():
    data = copy.deepcopy(KB.get("cuda/too-many-peers").data)
    for w in data["workarounds"]:
        w.pop("command", None)
    data["transition_graph"] = {}
    bare = Entry(data=data, file="bare.json")
    app = Harness(bare, KnowledgeBase(entries=[bare]))
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("c", "r")
        await pilot.pause()
        assert app.copied == [] and isinstance(app.screen, EntryScreen)
