"""The header stays one line at 80 columns, and keeps what must show: the source badge (simulated where
it is), the GPU count."""

import copy

import pytest

from p2ptop.demos import DEMOS, load_demo
from p2ptop.ui.widgets.header import header_text


def forms(demo):
    snap = load_demo(demo)
    yield snap, None
    live = copy.deepcopy(snap)
    live.source.kind, live.source.hostname = "nvml", "gpu-node-017.a-rather-long-cluster-domain.example.com"
    yield live, "12:34:56"
    replay = copy.deepcopy(snap)
    replay.source.kind, replay.source.detail, replay.source.simulated = "replay", "snapshot-2026-11-23-h200x2.json", True
    replay.source.taken_at = "2026-11-23T10:00:00+00:00"
    yield replay, None


@pytest.mark.parametrize("demo", list(DEMOS))
def test_header_fits_80_columns(demo):
    for snap, updated in forms(demo):
        text = header_text(snap, updated, 80).plain
        assert len(text) <= 80, text
        n = len(snap.gpus)
        assert text.endswith(f"{n} GPU{'s' if n != 1 else ''}"), text
        if snap.source.kind == "demo" or snap.source.simulated:
            assert "simulated" in text
        assert ("LIVE" in text) == (snap.source.kind == "nvml")


def test_header_full_where_there_is_room():
    snap = load_demo("nvl72")
    assert header_text(snap, None, 200).plain == header_text(snap).plain
    assert "driver 580.159.04  CUDA 13.0  72 GPUs" in header_text(snap, None, 200).plain
