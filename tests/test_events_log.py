"""A long events-log line wraps at the pane's width and loses no word (RichLog's default 78-column minimum had
rendered it wider than the pane, which then cropped each wrapped line)."""

import pytest


@pytest.mark.parametrize("size", [(200, 50), (100, 40)])
async def test_a_long_event_wraps_in_the_pane_without_losing_words(size):
    from p2ptop.ui.app import P2PTopApp

    app = P2PTopApp(demo="h200x2-vm")
    async with app.run_test(size=size) as pilot:
        for _ in range(200):
            await pilot.pause(0.02)
            if app.state is not None:
                break
        words = [f"word{i:02d}" for i in range(40)]
        app.events.add(" ".join(words), "info")
        await pilot.pause(0.3)
        assert app.events.display
        text = "\n".join(str(strip.text) for strip in app.events.lines)
        assert all(w in text for w in words), [w for w in words if w not in text]
        assert max(len(str(s.text).rstrip()) for s in app.events.lines) <= app.events.scrollable_content_region.width
