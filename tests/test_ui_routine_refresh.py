"""A live refresh whose only changes are routine (corrected NVLink CRC errors rising at a harmless rate, as
the data CRC counters of every link did on the 2 x H200 host on 2026-11-27) redraws the pair panel with the
new counters, not the whole screen: no full render, no new knowledge-base match, no layout pass."""

import os

from p2ptop.sources.capture import Capture, FakeNvml

HERE = os.path.dirname(os.path.abspath(__file__))
H200 = os.path.join(HERE, "fixtures", "captures", "h200x2-nvswitch-vm")


async def poll(app, pilot, was) -> None:
    """A live refresh now, waited for until its state is shown."""
    app.action_poll_now()
    for _ in range(300):
        await pilot.pause(0.02)
        if app.state is not was:
            break
    await pilot.pause(0.2)


async def test_routine_counter_rises_redraw_the_pair_panel_only(tmp_path, monkeypatch):
    from p2ptop.ui import poller
    from p2ptop.ui.app import P2PTopApp
    from p2ptop.ui.poller import LiveReader
    from p2ptop.ui.state import routine_refresh

    cap = Capture.load(H200)
    fake = FakeNvml(cap, fields={"scoped": True})
    app = P2PTopApp(reader=LiveReader(nvml=fake, sysfs_root=str(tmp_path), host_facts=False, events=False),
                    interval=3600)
    async with app.run_test(size=(200, 50)) as pilot:
        for _ in range(300):
            await pilot.pause(0.02)
            if app.state is not None and app.pair is not None and app.kb is not None:
                break
        await pilot.pause(0.3)
        full, rematch, layouts = [], [], []
        render, request = app._render_state, app._request_matches
        app._render_state = lambda: (full.append(1), render())[1]
        app._request_matches = lambda a, b: (rematch.append((a, b)), request(a, b))[1]
        body = app.panel.body
        update = body.update
        body.update = lambda content="", layout=True: (layouts.append(layout), update(content, layout=layout))[1]
        was = app.state
        before = " ".join(app.export_text().split())
        monkeypatch.setattr(poller, "ROUTINE_REDRAW_SECONDS", 0.0)  # the panel's own cadence: every time here
        for link in range(18):  # +1 data CRC error on every link of GPU1: corrected, under the rate that matters
            cap.probe["gpus"][1]["links"][link]["crc_data_err"] += 1
        await poll(app, pilot, was)
        assert app.state is not was and not app.state.unchanged  # the counters did move
        assert all(c.severity == "info" for c in app.state.changes) and app.state.changes
        assert routine_refresh(was, app.state)
        assert full == [] and rematch == [] and layouts == [False]
        after = " ".join(app.export_text().split())
        assert after != before  # the panel shows the new total
        # within ROUTINE_REDRAW_SECONDS of that redraw, a routine refresh redraws the header only
        monkeypatch.setattr(poller, "ROUTINE_REDRAW_SECONDS", 3600.0)
        for link in range(18):
            cap.probe["gpus"][1]["links"][link]["crc_data_err"] += 1
        was = app.state
        await poll(app, pilot, was)
        assert routine_refresh(was, app.state) and layouts == [False] and full == []
        # a change that is not routine (a link going down) is drawn in full
        cap.probe["gpus"][0]["links"][3]["state"] = 0
        was = app.state
        await poll(app, pilot, was)
        assert full and not routine_refresh(was, app.state)
