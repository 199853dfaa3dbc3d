"""The live path (p2ptop/live): static and dynamic reads apart, nothing lost, NVML events, calls counted.

Driven through the fake NVML answering from the H200 capture, and from the demos at 8 and 72 GPUs."""

import collections
import threading
import time

import pytest

from p2ptop.demos import load_demo
from p2ptop.live import LiveSource
from p2ptop.live.events import WAIT_MS, XID, DOUBLE_BIT_ECC, event_change
from p2ptop.sources.capture import Capture, CallLatency, FakeNvml
from p2ptop.sources.nvlink_fields import ROUND_REFRESHES

H100_EVENT_TYPES = 0xFF9F  # what the lent H100 reported (shared/captures/h100x1-vm/README.md)


def source(fake, **kw):
    kw.setdefault("host_facts", False)
    kw.setdefault("events", False)
    return LiveSource(fake, sysfs_root="/nonexistent", **kw)


def calls_of(fake, fn):
    n = len(fake.calls)
    result = fn()
    return result, collections.Counter(c for c in fake.calls[n:] if c != "nvmlEventSetWait_v2")


#: the field-value groups switched on for "batched fields answering" (field_values.json: not known on the H200 host)
BATCHED = {"scoped": True, "link_ids": True, "link_count": True}


def test_dynamic_refresh_reads_only_what_moves(h200_capture, monkeypatch):
    # what a refresh reads where the counters' budget holds: the budgets compare the full read's timed calls, which on a
    # loaded machine (a CI run beside other work) can take milliseconds on this fake too, so they are set out of reach
    # here (the budget paths have their own tests with modelled latencies, test_live_fields.py)
    import p2ptop.sources.nvlink_fields as nvlink_fields
    monkeypatch.setattr(nvlink_fields, "FIELDS_EVERY_REFRESH_S", 1.0)
    monkeypatch.setattr(nvlink_fields, "COUNTERS_EVERY_REFRESH_HOST_S", 1.0)
    fake = FakeNvml(h200_capture, fields=BATCHED)
    src = source(fake)
    first, full_calls = calls_of(fake, src.poll)
    second, dyn_calls = calls_of(fake, src.poll)
    assert first.full and first.why_full == "first read"
    assert not second.full and second.calls == sum(dyn_calls.values())
    # identity, topology, P2P status and each link's version/remote/capability are not asked again
    for static in ("nvmlDeviceGetName", "nvmlDeviceGetUUID", "nvmlDeviceGetP2PStatus", "nvmlDeviceGetTopologyCommonAncestor",
                   "nvmlDeviceGetNvLinkVersion", "nvmlDeviceGetNvLinkRemotePciInfo", "nvmlDeviceGetNvLinkCapability",
                   "nvmlDeviceGetNvLinkState"):
        assert dyn_calls[static] == 0, static
        # states and versions come in the full read's field-values call where the driver answers it
        assert full_calls[static] > 0 or static in ("nvmlDeviceGetNvLinkVersion", "nvmlDeviceGetNvLinkState"), static
    # 1 + 2 x (PCIe gen, width, utilisation, fabric, one field-values call) + the round's slice: one of links
    # 12-17 a GPU, its two CRC counters (no per-link id; field 163, the flit CRC on this host, not seen to
    # follow it while it reads 0, nor the data CRC)
    assert dyn_calls["nvmlDeviceGetFieldValues"] == 2 and dyn_calls["nvmlDeviceGetNvLinkErrorCounter"] == 4
    assert sum(dyn_calls.values()) == 1 + 2 * 5 + 4 < sum(full_calls.values()) / 10
    a, b = first.snapshot, second.snapshot
    assert [g.uuid for g in a.gpus] == [g.uuid for g in b.gpus] and a.pairs == b.pairs
    assert [[(l.link, l.state, l.version, l.counters) for l in g.nvlinks] for g in a.gpus] == \
           [[(l.link, l.state, l.version, l.counters) for l in g.nvlinks] for g in b.gpus]
    assert b.source.kind == "nvml" and b is not a and b.gpus[0] is not a.gpus[0]
    src.close()


def test_link_down_shows_within_one_refresh_and_rereads_static(h200_capture):
    fake = FakeNvml(h200_capture, fields=BATCHED)
    src = source(fake)
    src.poll(), src.poll()
    h200_capture.probe["gpus"][1]["links"][3]["state"] = 0
    p = src.poll()
    assert [c.text for c in p.changes] == ["GPU1 NVLink 3 went down"]
    assert p.full and "nvlink.down" in p.why_full  # the link's remote and version are read again
    assert p.snapshot.gpus[1].nvlinks[3].state == "inactive"
    assert not src.poll().full
    src.close()


def test_rising_counters_show_within_one_refresh_with_their_link(h200_capture):
    # the totals way (not what the H200 host answered): no scoped field, no per-link id
    fake = FakeNvml(h200_capture, fields={"totals": True, "scoped": False, "link_ids": False, "link_count": False})
    src = source(fake)
    src.poll(), src.poll()
    h200_capture.probe["gpus"][0]["links"][5]["replay_err"] = 7
    p, calls = calls_of(fake, src.poll)
    assert not p.full
    assert [c.text for c in p.changes] == ["GPU0 NVLink 5 replay errors +7 (now 7)"]
    assert p.snapshot.gpus[0].nvlinks[5].counters["replay"] == 7
    assert calls["nvmlDeviceGetNvLinkErrorCounter"] == 18  # the moved total's links, on that GPU only
    _, calls = calls_of(fake, src.poll)
    assert calls["nvmlDeviceGetNvLinkErrorCounter"] == 0
    src.close()


def test_gpu_lost_and_back_show_within_one_refresh(h200_capture):
    fake = FakeNvml(h200_capture)
    src = source(fake)
    src.poll(), src.poll()
    fake.lost_gpus.add(1)
    p = src.poll()
    assert [c.kind for c in p.changes] == ["gpu.lost"] and "GPU1 lost: GPU is lost" in p.changes[0].text
    assert src.poll().full  # while a GPU is lost every poll reads in full: to see it come back
    fake.lost_gpus.clear()
    p = src.poll()
    assert "gpu.back" in [c.kind for c in p.changes]
    assert not src.poll().full
    src.close()


def test_gpu_count_failing_reads_in_full(h200_capture):
    fake = FakeNvml(h200_capture)
    src = source(fake)
    src.poll(), src.poll()
    fake.faults["nvmlDeviceGetCount"] = "UNKNOWN"
    p = src.poll()
    assert p.full and p.snapshot.gpus == [] and "NVML gpus failing" in p.changes[0].text


def test_pcie_retrain_rereads_static(h200_capture):
    fake = FakeNvml(h200_capture)
    src = source(fake)
    src.poll(), src.poll()
    h200_capture.smi[0]["pcie_width_cur"] = 8
    p = src.poll()
    assert p.full and [c.kind for c in p.changes] == ["pcie.retrain"]


def test_static_parts_are_read_again_every_few_minutes(h200_capture):
    now = [0.0]
    src = source(FakeNvml(h200_capture), static_every=300.0, clock=lambda: now[0])
    src.poll()
    now[0] = 299.0
    assert not src.poll().full
    now[0] = 300.0
    p = src.poll()
    assert p.full and p.why_full == "every 300 s"


def test_a_long_full_read_comes_back_less_often_and_says_so(h200_capture, monkeypatch):
    """At most STATIC_SHARE (1 %) of a core goes to reading the static parts again only because time passed: a full
    read of 20 s (P2P status at 72 GPUs may take ~48 s on the H200's driver) repeats every 2000 s, not 300 s, and the
    events log says so once; a change that may move the static parts still reads them at once."""
    import types

    from p2ptop.live import poll as poll_mod

    ticks = [0.0]

    def perf_counter():
        ticks[0] += 10.0  # every reading of the wall clock 10 s later: a full read (two readings) takes 10-20 s
        return ticks[0]

    monkeypatch.setattr(poll_mod, "time", types.SimpleNamespace(perf_counter=perf_counter))
    now = [0.0]
    src = source(FakeNvml(h200_capture), static_every=300.0, clock=lambda: now[0])
    first = src.poll()
    assert first.full and src.full_seconds == 10.0 and src.static_interval() == 1000.0
    notes = [c for c in src.log if c.kind == "nvml.static"]
    assert len(notes) == 1 and "every 17 min rather than every 5 min" in notes[0].text
    now[0] = 300.0
    assert not src.poll().full
    now[0] = 1000.0
    p = src.poll()
    assert p.full and p.why_full.startswith("every 1000 s (a full read takes 10.0 s here")
    assert len([c for c in src.log if c.kind == "nvml.static"]) == 1  # said once
    h200_capture.smi[0]["pcie_width_cur"] = 8  # a retrain: read in full at once, whatever the interval
    now[0] = 1001.0
    assert src.poll().full


def test_without_field_values_links_are_read_one_by_one(h200_capture):
    fake = FakeNvml(h200_capture, faults={"nvmlDeviceGetFieldValues": "MISSING"})
    src = source(fake)
    src.poll()
    _, calls = calls_of(fake, src.poll)
    assert calls["nvmlDeviceGetNvLinkState"] == 36 and calls["nvmlDeviceGetPcieReplayCounter"] == 2
    h200_capture.probe["gpus"][0]["links"][0]["state"] = 0
    p = src.poll()
    assert {c.kind for c in p.changes} >= {"nvlink.down"}
    assert p.snapshot.gpus[0].nvlinks[0].state == "inactive"
    h200_capture.probe["gpus"][0]["links"][1]["crc_err"] = 3  # read in the round: within ROUND_REFRESHES refreshes
    seen = [src.poll().snapshot.gpus[0].nvlinks[1].counters["crc_flit"] for _ in range(ROUND_REFRESHES)]
    assert 3 in seen


def test_xid_event_is_logged_within_one_wait(h200_capture):
    fake = FakeNvml(h200_capture, event_types=H100_EVENT_TYPES)
    got, arrived = [], threading.Event()
    src = source(fake, events=True, on_change=lambda c: c.kind != "nvml.counters" and (got.append(c), arrived.set()))
    src.poll()
    # Xid, single- and double-bit ECC; clock changes are not asked for (they say nothing about P2P)
    assert src.event_status[0] == {"supported": H100_EVENT_TYPES, "registered": XID | DOUBLE_BIT_ECC | 0x1}
    time.sleep(0.05)  # the thread is inside a (long) wait now
    t0 = time.monotonic()
    assert fake.inject_event(1, XID, 79) == 1
    assert arrived.wait(1.0)
    assert time.monotonic() - t0 < 1.0  # a wait returns the moment an event arrives, however long its timeout
    assert got[0].kind == "gpu.xid" and got[0].text == "GPU1 Xid 79: GPU has fallen off the bus"
    assert got[0].severity == "problem" and list(src.log)[-1] == got[0]
    p = src.poll()  # a driver event: the static parts are read again
    assert p.full and "Xid 79" in p.why_full
    src.close()
    t0 = time.monotonic()
    while fake.inject_event(1, XID, 79) != 0:  # the event set is freed (by the thread, once its wait returns)
        assert time.monotonic() - t0 < WAIT_MS / 1000 + 1
        time.sleep(0.01)


def test_close_does_not_wait_for_the_event_thread_and_nvml_is_shut_down_after_it(h200_capture):
    from p2ptop.live.events import EventWatcher, STOP_JOIN_S

    fake = FakeNvml(h200_capture, event_types=H100_EVENT_TYPES)
    real_wait = fake._nvmlEventSetWait_v2
    # NVML cannot cut a wait short: a fake wait that ignores the set being freed, as the driver's would
    fake._nvmlEventSetWait_v2 = lambda es, ms: (time.sleep(0.4), real_wait(es, 0))[1]
    src = source(fake, events=True)
    src.poll()
    assert isinstance(src.events, EventWatcher)
    time.sleep(0.1)  # the thread is now inside one of those waits
    t0 = time.monotonic()
    src.close()
    assert time.monotonic() - t0 < STOP_JOIN_S + 0.2  # quitting does not wait for the wait
    assert fake._open  # not yet shut down: the thread still waits in NVML
    t0 = time.monotonic()
    while fake._open or fake._event_sets:
        assert time.monotonic() - t0 < 2.0
        time.sleep(0.01)
    src2 = source(fake)  # a reader opened again works (init and shutdown are reference-counted)
    assert src2.poll().snapshot.gpus
    src2.close()


def test_events_unsupported_leave_polling_working(h200_capture):
    fake = FakeNvml(h200_capture)  # the capture did not record the supported event types
    src = source(fake, events=True)
    assert src.poll().snapshot.gpus
    assert src.events is None and "not recorded" in src.event_status[0]["error"]
    assert not src.poll().full


def test_event_texts():
    assert event_change(0, DOUBLE_BIT_ECC, 0).kind == "gpu.ecc_dbe"
    assert event_change(3, XID, 31).text == "GPU3 Xid 31: GPU memory page fault"
    assert event_change(None, XID, 999).text == "A GPU Xid 999"


def test_latency_replay_spends_the_recorded_time(h200_capture):
    fake = FakeNvml(h200_capture, latency=CallLatency(0.002, {"nvmlDeviceGetCount": 0.02}, origin="test"))
    fake.nvmlInit()
    c0, t0 = time.thread_time(), time.perf_counter()
    fake.nvmlDeviceGetCount()
    assert time.perf_counter() - t0 >= 0.02
    assert time.thread_time() - c0 >= 0.02  # spent as CPU (spinning, not sleeping), as the driver's ioctl is
    t0 = time.perf_counter()
    fake.nvmlDeviceGetName(0)
    assert time.perf_counter() - t0 >= 0.002


@pytest.mark.parametrize("demo", ["dgx-h100", "nvl72"])
def test_demos_through_the_fake_count_calls(demo):
    snap = load_demo(demo)
    fake = FakeNvml(Capture.from_snapshot(snap))
    src = source(fake)
    first = src.poll()
    assert len(first.snapshot.gpus) == len(snap.gpus)
    assert [len(g.nvlinks) for g in first.snapshot.gpus] == [len(g.nvlinks) for g in snap.gpus]
    assert [(p.a, p.b, p.p2p) for p in first.snapshot.pairs] == [(p.a, p.b, p.p2p) for p in snap.pairs]
    second = src.poll()
    assert not second.full and second.calls <= 6 * len(snap.gpus) + 1
    assert first.calls > 10 * second.calls


def test_a_reopened_source_says_it_compared_nothing(h200_capture):
    fake = FakeNvml(h200_capture)
    src = source(fake)
    assert not src.poll().compared
    assert src.poll().compared
    fake.faults["nvmlDeviceGetCount"] = "UNKNOWN"
    fake.faults["nvmlDeviceGetHandleByIndex"] = "UNKNOWN"
    src.poll()
    src.close()  # as after a read that raised
    fake.faults.clear()
    p = src.poll()
    assert not p.compared and p.changes == []  # the dashboard then diffs against what it showed


def test_a_gpu_without_nvlink_is_not_reported_failing_between_full_and_dynamic_reads():
    """Seen on the lent H100 (NVLink Not Supported): a dynamic refresh dropped na['nvlinks'], so the next
    full read logged 'GPU0 NVML calls now failing: nvlinks: Not Supported' as a change."""
    from p2ptop.changes import diff
    from p2ptop.live.poll import LiveSource
    from p2ptop.sources.capture import Capture, FakeNvml

    cap = Capture.load("tests/fixtures/captures/h100x1-vm")
    src = LiveSource(FakeNvml(cap), host_facts=False, events=False)
    try:
        full = src.poll()
        dyn = src.poll()
        assert full.full and not dyn.full
        assert dyn.snapshot.gpus[0].na.get("nvlinks") == full.snapshot.gpus[0].na.get("nvlinks") == "Not Supported"
        again = src.read()
        assert not [c for c in diff(dyn.snapshot, again) if c.kind == "nvml.failing"]
    finally:
        src.close()
