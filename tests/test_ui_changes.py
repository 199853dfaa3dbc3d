"""p2ptop.changes: what changed between two snapshots of a host (the dashboard's live events)."""

from __future__ import annotations

import copy

from p2ptop.changes import diff
from p2ptop.demos import load_demo


def _pair():
    old = load_demo("dgx-h100")
    return old, copy.deepcopy(old)


def kinds(changes):
    return [c.kind for c in changes]


def test_no_previous_and_no_change_give_nothing():
    old, new = _pair()
    assert diff(None, new) == []
    new.source.taken_at = "2026-11-23T10:00:00+00:00"
    assert diff(old, new) == []


def test_link_down_and_up():
    old, new = _pair()
    new.gpus[3].nvlinks[4].state = "inactive"
    (c,) = diff(old, new)
    assert c.kind == "nvlink.down" and c.subject == "gpu:3" and c.gpus == (3,)
    assert c.text == "GPU3 NVLink 4 went down" and c.severity == "problem"
    assert kinds(diff(new, old)) == ["nvlink.up"]


def test_counter_rising_but_not_falling():
    old, new = _pair()
    new.gpus[1].nvlinks[2].counters["replay"] = 5
    new.gpus[1].pcie_replay_counter = (old.gpus[1].pcie_replay_counter or 0) + 3
    changes = diff(old, new)
    assert kinds(changes) == ["nvlink.counter", "pcie.replay"]
    assert "NVLink 2 replay errors +5 (now 5)" in changes[0].text and "+3" in changes[1].text
    assert changes[0].severity == "warning"
    assert diff(new, old) == []  # a counter reset is not an error


def test_crc_rises_are_one_event_per_gpu_judged_by_rate():
    """Real H200 links count a few corrected CRC errors a second: one info line, not one per link."""
    old, new = _pair()
    old.source.taken_at, new.source.taken_at = "2026-11-23T09:24:24+00:00", "2026-11-23T09:24:26+00:00"
    for link, rise in ((1, 1), (2, 2), (5, 4)):
        new.gpus[0].nvlinks[link].counters["crc_data"] = (old.gpus[0].nvlinks[link].counters.get("crc_data") or 0) + rise
    (c,) = diff(old, new)
    assert c.kind == "nvlink.crc" and c.severity == "info"
    assert "3 NVLinks (1, 2, 5) crc_data errors +7" in c.text and "at most 2.0/s on a link" in c.text
    new.gpus[0].nvlinks[5].counters["crc_data"] += 400  # 202/s on one link: past DCGM's 100/s
    (c,) = diff(old, new)
    assert c.kind == "nvlink.crc_fast" and c.severity == "warning"


def test_pcie_retrain():
    old, new = _pair()
    new.gpus[5].pcie_width_cur = 8
    (c,) = diff(old, new)
    assert c.kind == "pcie.retrain" and "Gen5 x16 -> Gen5 x8" in c.text


def test_gpu_lost_gone_and_back():
    old, new = _pair()
    new.gpus[2].na["name"] = "GPU is lost"
    assert kinds(diff(old, new)) == ["gpu.lost"]
    assert kinds(diff(new, old)) == ["gpu.back"]
    gone = copy.deepcopy(old)
    del gone.gpus[7]
    assert kinds(diff(old, gone)) == ["gpu.lost"]


def test_nvml_failing_and_recovering():
    old, new = _pair()
    new.na["gpus"] = "Unknown Error"
    new.gpus[0].na["pcie_gen_cur"] = "Unknown Error"
    changes = diff(old, new)
    assert kinds(changes) == ["nvml.failing", "nvml.failing"]
    assert changes[0].subject == "host" and "Unknown Error" in changes[0].text
    assert kinds(diff(new, old)) == ["nvml.recovered"]


def test_p2p_status_change():
    old, new = _pair()
    new.pair(0, 1).p2p["read"] = "TOPOLOGY_NOT_SUPPORTED"
    (c,) = diff(old, new)
    assert c.kind == "p2p.status" and c.gpus == (0, 1)
    assert c.text == "GPU0->GPU1 P2P read: OK -> topology not supported"


def test_idle_refresh_reuses_the_analysis_unless_something_that_matters_moved():
    from p2ptop.ui.state import DashboardState

    old, new = _pair()
    first = DashboardState(old)
    new.gpus[0].utilization_gpu = 77  # load moves all the time: the analysis still holds
    assert DashboardState(new, first).findings is first.findings
    degraded = load_demo("nvlink-degraded")  # GPU5 trained at x8: busy or idle changes its finding
    moved = copy.deepcopy(degraded)
    moved.gpus[5].utilization_gpu = 0
    base = DashboardState(degraded)
    again = DashboardState(moved, base)
    assert again.findings is not base.findings
    assert any(f.id == "pcie.degraded" and "0% busy" in f.summary for f in again.findings)
