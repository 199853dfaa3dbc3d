"""NVLink counters and states by field values (p2ptop/sources/nvlink_fields.py), through the capture fake.

The fake answers as the 2 x H200 host did when measured on 2026-11-27 (tests/fixtures/captures/
h200x2-nvswitch-vm/field_values.json: states 165, PCIe replays 94, the scoped counters 161-163, version 166
and the link count 91 answer, 163 counting the flit CRC; the counter totals 38/45/52/59 and the per-link ids
do not); other drivers' answers are switched per test. Each way of reading counters must show a link going
down and a counter rising within one refresh where its fields are cheap; what no batched field covers, or
what its fields cost too much to ask every refresh (benchmarks/data/nvml-latency-h200x2-measured.json), is
read in a round and must show within it."""

import collections
import datetime as dt
import os

import pytest

from p2ptop.changes import diff
from p2ptop.live import LiveSource
from p2ptop.model import GPU, NvLink, Snapshot, Source
from p2ptop.sources.capture import Capture, FakeNvml
from p2ptop.sources.nvlink_fields import ROUND_REFRESHES, dl_crc_follows

HERE = os.path.dirname(os.path.abspath(__file__))
H200 = os.path.join(HERE, "fixtures", "captures", "h200x2-nvswitch-vm")

#: a driver that answers no batched counter field (link states and PCIe replays only)
NOTHING_BATCHED = {"scoped": False, "link_ids": False, "link_count": False}
WAYS = {
    "totals": {**NOTHING_BATCHED, "totals": True},  # 38/45/52/59 answer (not on the H200 host)
    "scoped": {"scoped": True, "link_ids": False},  # 161/162/163 (+166) with scope = link (the H200 host)
    "link_ids": {**NOTHING_BATCHED, "link_ids": True},  # the per-link ids of links 0..11
}


def source(fake):
    return LiveSource(fake, "/nonexistent", host_facts=False, events=False)


def counted(fake, fn):
    n = len(fake.calls)
    out = fn()
    return out, collections.Counter(fake.calls[n:])


def test_the_fake_answers_field_values_as_the_h200_host_did():
    cap = Capture.load(H200)
    assert "x2-live-screens.log" in cap.fields["origin"]
    fake = FakeNvml(cap)
    fake.nvmlInit()
    got = {v.fieldId: v.nvmlReturn for v in fake.nvmlDeviceGetFieldValues(0, [38, 45, 52, 59, 94, (165, 0), (161, 0), 32, 91])}
    assert got == {38: 3, 45: 3, 52: 3, 59: 3, 94: 0, 165: 0, 161: 0, 32: 3, 91: 0}
    assert fake.nvmlDeviceGetFieldValues(1, [(163, 17)])[0].value.ullVal == 0  # 163: the flit CRC (0), not data (15)
    # every link's four counters answer one by one (what the 155 calls of a refresh were)
    assert [fake.nvmlDeviceGetNvLinkErrorCounter(1, 17, c) for c in range(4)] == [0, 0, 0, 15]
    # a link scope past the GPU's links fails the whole call (seen on one H200 without NVLink)
    with pytest.raises(Exception, match="Invalid Argument"):
        fake.nvmlDeviceGetFieldValues(0, [(165, 18)])
    on = FakeNvml(cap, fields={"scoped": True, "link_ids": True, "link_count": True, "dl_crc": "sum"})  # another driver
    on.nvmlInit()
    vals = {(v.fieldId, v.scopeId): (v.nvmlReturn, v.value.ullVal)
            for v in on.nvmlDeviceGetFieldValues(1, [(161, 17), (163, 17), (166, 3), 107, 91])}
    assert vals == {(161, 17): (0, 0), (163, 17): (0, 15), (166, 3): (0, 6), (107, 0): (0, 6), (91, 0): (0, 18)}


def test_no_batched_field_refresh_reads_states_every_time_and_counters_in_a_round():
    """Nothing batched answers for counters (the measured worst case): 1 + 2 x (4 + 1 field-values call
    + the four counters of 18 / ROUND_REFRESHES links, rounded up), not the 155 of every counter every refresh;
    a link's four counters are read at the same refresh, every link within ROUND_REFRESHES refreshes."""
    cap = Capture.load(H200)
    fake = FakeNvml(cap, fields=NOTHING_BATCHED)
    src = source(fake)
    first = src.poll()
    # the device run counted 386; the common ancestor is asked once per unordered pair (- 1); the confidential-computing
    # state is one call more since the twelfth session (+ 1)
    assert first.calls == 386 - 1 + 1
    polls = [counted(fake, src.poll) for _ in range(ROUND_REFRESHES)]
    assert all(c["nvmlDeviceGetNvLinkState"] == 0 and c["nvmlDeviceGetFieldValues"] == 2 for _, c in polls)
    per = -(-18 // ROUND_REFRESHES)  # links a refresh
    assert [p.calls for p, _ in polls] == [1 + 2 * (5 + 4 * per)] * ROUND_REFRESHES
    rounds = -(-18 // per)  # refreshes until every link was read
    assert rounds <= ROUND_REFRESHES
    assert sum(c["nvmlDeviceGetNvLinkErrorCounter"] for _, c in polls[:rounds]) == 144  # every counter once
    assert f"each link once every {ROUND_REFRESHES} refreshes (about" in src.counter_note and "144 of 144" in src.counter_note
    assert list(src.log)[-1].kind == "nvml.counters"  # said in the events log
    # a rise shows within the round, a link going down within one refresh
    cap.probe["gpus"][1]["links"][9]["crc_data_err"] += 5
    cap.probe["gpus"][0]["links"][2]["state"] = 0
    p = src.poll()
    assert [c.text for c in p.changes] == ["GPU0 NVLink 2 went down"]
    texts = [c.text for c in p.changes]
    for _ in range(ROUND_REFRESHES):
        texts += [c.text for c in src.poll().changes]
    assert any(t.startswith("GPU1 NVLink 9 crc_data errors +5") for t in texts), texts
    src.close()


@pytest.mark.parametrize("way", list(WAYS))
def test_each_way_shows_a_link_down_and_a_rising_counter_within_one_refresh(way):
    cap = Capture.load(H200)
    fake = FakeNvml(cap, fields=WAYS[way])
    src = source(fake)
    src.poll(), src.poll()
    link = 3  # a link with a per-link id (0..11)
    cap.probe["gpus"][1]["links"][link]["replay_err"] = 4
    cap.probe["gpus"][1]["links"][link]["crc_data_err"] += 7
    cap.probe["gpus"][0]["links"][11]["state"] = 0
    p, calls = counted(fake, src.poll)
    texts = [c.text for c in p.changes]
    assert "GPU0 NVLink 11 went down" in texts
    assert f"GPU1 NVLink {link} replay errors +4 (now 4)" in texts
    assert any(t.startswith(f"GPU1 NVLink {link} crc_data errors +7") for t in texts), texts
    if way == "totals":  # the moved totals' links are read, on that GPU only
        assert calls["nvmlDeviceGetNvLinkErrorCounter"] >= 36
    src.close()


def test_scoped_way_covers_links_past_11_and_field_163_only_for_what_it_follows(monkeypatch):
    # the plan's make-up, not its timing: the budgets compare the fake's calls as timed on this machine, which on a loaded
    # CI machine put the per-link fields in the round once (the budget paths have their own modelled-latency tests)
    from p2ptop.sources import nvlink_fields
    monkeypatch.setattr(nvlink_fields, "FIELDS_EVERY_REFRESH_S", 1.0)
    monkeypatch.setattr(nvlink_fields, "COUNTERS_EVERY_REFRESH_HOST_S", 1.0)
    cap = Capture.load(H200)
    fake = FakeNvml(cap, fields={**WAYS["scoped"], "dl_crc": "sum"})  # a driver whose 163 counts flit + data
    src = source(fake)
    src.poll()
    plan = src._reader.plans[1]
    # replay/recovery per link in the batch; data CRC through 163 (seen to follow it: data counted, flit all 0);
    # flit CRC is not proven to be in 163 while it reads 0: the round
    assert {k for _, k in plan.direct.values()} == {"replay", "recovery"}
    assert set(plan.dl_crc[15]) == {"crc_data"} and {k for _, k in plan.round} == {"crc_flit"}
    src.poll()
    cap.probe["gpus"][1]["links"][15]["crc_data_err"] += 2
    cap.probe["gpus"][1]["links"][16]["recovery_err"] = 1
    p, calls = counted(fake, src.poll)
    texts = [c.text for c in p.changes]
    assert any(t.startswith("GPU1 NVLink 15 crc_data errors +2") for t in texts)
    assert "GPU1 NVLink 16 recovery errors +1 (now 1)" in texts
    src.close()


def test_field_163_counting_only_flit_crc_is_not_taken_for_data_crc():
    cap = Capture.load(H200)
    cap.probe["gpus"][0]["links"][2]["crc_err"] = 5  # a flit CRC count, so that 163 can be seen to follow it
    fake = FakeNvml(cap, fields={"scoped": True, "dl_crc": "flit"})
    src = source(fake)
    src.poll()
    plan = src._reader.plans[0]
    assert plan.dl_crc[2] == ("crc_flit",) and (2, "crc_data") in plan.round
    src.poll()
    cap.probe["gpus"][0]["links"][2]["crc_err"] = 8
    p = src.poll()
    assert any(c.text.startswith("GPU0 NVLink 2 crc_flit errors +3") for c in p.changes)
    src.close()


def test_dl_crc_follows_only_what_the_values_prove():
    assert dl_crc_follows({0: (5, 2, 3), 1: (0, 0, 0)}) == ("crc_flit", "crc_data")
    assert dl_crc_follows({0: (3, 0, 3), 1: (1, 0, 1)}) == ("crc_data",)  # flit never counted: not proven
    assert dl_crc_follows({0: (2, 2, 3)}) == ("crc_flit",)
    assert dl_crc_follows({0: (0, 0, 0), 1: (0, 0, 0)}) == ()  # all zero proves nothing
    assert dl_crc_follows({0: (9, 2, 3)}) == ()  # follows neither
    assert dl_crc_follows({0: (None, 2, 3)}) == ()


def test_a_full_read_after_the_first_carries_the_counters_over():
    cap = Capture.load(H200)
    fake = FakeNvml(cap)
    src = source(fake)
    src.poll(), src.poll()
    cap.probe["gpus"][0]["links"][4]["state"] = 0
    p, calls = counted(fake, src.poll)  # a link went down: static parts read again, counters not
    assert p.full and "nvlink.down" in p.why_full
    assert calls["nvmlDeviceGetNvLinkErrorCounter"] <= 2 * 4 * -(-18 // ROUND_REFRESHES)  # one refresh's slice
    assert p.snapshot.gpus[1].nvlinks[17].counters["crc_data"] == 15
    src.close()


def test_a_crc_rise_read_by_the_round_is_a_rate_over_the_time_since_that_link_was_read():
    def snap(at, value):
        g = GPU(index=0, nvlinks=[NvLink(link=0, state="active", counters={"crc_data": value})])
        return Snapshot(source=Source(kind="nvml", taken_at=at.isoformat()), gpus=[g])

    t = dt.datetime(2026, 11, 24, tzinfo=dt.timezone.utc)
    a, b = snap(t, 0), snap(t + dt.timedelta(seconds=2), 1000)
    assert diff(a, b)[0].kind == "nvlink.crc_fast"  # 500/s over the 2 s between the snapshots
    slow = diff(a, b, {(0, 0): 16.0})[0]  # read by the round: the rise covers 16 s
    assert slow.kind == "nvlink.crc" and "62.5/s" in slow.text


def test_topo_reads_only_what_the_matrices_need_and_prints_the_same():
    from p2ptop.sources.nvml import NvmlReader
    from p2ptop.topo_text import topo_report

    def read(what):
        fake = FakeNvml(Capture.load(H200))
        r = NvmlReader(fake, sysfs_root="/nonexistent", hostname="h")
        r.open()
        snap = r.read_open(what=what)
        r.close()
        return snap, collections.Counter(fake.calls)

    full, fc = read("all")
    topo, tc = read("topo")
    assert topo_report(topo).replace(topo.source.taken_at, "T") == topo_report(full).replace(full.source.taken_at, "T")
    for fn in ("nvmlDeviceGetNvLinkErrorCounter", "nvmlDeviceGetNvLinkCapability", "nvmlDeviceGetNvLinkVersion",
               "nvmlDeviceGetName", "nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetNvLinkRemoteDeviceType"):
        assert tc[fn] == 0, fn
    assert sum(tc.values()) < sum(fc.values()) / 3
    assert topo.gpus[0].na["name"] == "not read for topo"


@pytest.mark.parametrize("demo", ["dgx-h100", "pcie-4gpu-iommu", "nvlink-degraded", "rtx4090-2gpu"])
def test_topo_read_prints_what_a_full_read_prints_on_the_demos(demo):
    """Links down, direct GPU links and PCIe-only hosts: the topo read's matrices equal the full read's."""
    from p2ptop.demos import load_demo
    from p2ptop.sources.nvml import NvmlReader
    from p2ptop.topo_text import topo_report

    cap = Capture.from_snapshot(load_demo(demo))
    out = []
    for what in ("all", "topo"):
        r = NvmlReader(FakeNvml(cap), sysfs_root="/nonexistent", hostname="h")
        r.open()
        snap = r.read_open(what=what)
        r.close()
        out.append(topo_report(snap).replace(snap.source.taken_at, "T"))
    assert out[0] == out[1]


async def test_the_dashboard_says_in_its_events_log_how_counters_are_read(tmp_path):
    """Where the driver gives no batched counters, the events log says they are read in a round, and why."""
    from p2ptop.ui.app import P2PTopApp
    from p2ptop.ui.poller import LiveReader

    fake = FakeNvml(Capture.load(H200))
    app = P2PTopApp(reader=LiveReader(nvml=fake, sysfs_root=str(tmp_path), host_facts=False, events=False),
                    interval=0.2)
    async with app.run_test(size=(200, 50)) as pilot:
        def logged():  # the events log's lines, as wrapped in its pane, joined
            return " ".join(" ".join(str(strip.text) for strip in app.events.lines).split())

        for _ in range(300):
            await pilot.pause(0.02)
            if "NVLink error counters" in logged():
                break
        text = logged()
        # said from the second poll on, with the seconds the round takes at the refresh measured between polls
        assert "NVLink error counters" in text and "once every" in text and "s at this" in text


def test_the_topo_command_reads_the_topo_way_and_prints_what_nvidia_smi_printed(monkeypatch, capsys):
    from p2ptop.cli import main
    from p2ptop.sources import nvml as nvml_mod

    fakes = []
    real_init = nvml_mod.NvmlReader.__init__

    def init(self, nvml=None, sysfs_root="/", hostname=None):
        fakes.append(FakeNvml(Capture.load(H200)))
        real_init(self, fakes[-1], sysfs_root="/nonexistent", hostname=hostname)

    monkeypatch.setattr(nvml_mod.NvmlReader, "__init__", init)
    assert main(["topo"]) == 0
    out = capsys.readouterr().out
    assert fakes and "nvmlDeviceGetNvLinkErrorCounter" not in fakes[-1].calls and "nvmlDeviceGetName" not in fakes[-1].calls
    smi = open(os.path.join(H200, "nvidia-smi-topo-m.txt"), encoding="utf-8").read().splitlines()
    ours = out.splitlines()[2:2 + len(smi)]
    norm = lambda lines: [" ".join(l.replace("\x1b[4m", "").replace("\x1b[0m", "").split()) for l in lines]  # noqa: E731
    assert norm(ours)[:3] == norm(smi)[:3]  # header and both GPU rows: NV18, CPU/NUMA affinity, GPU NUMA ID


def test_a_field_that_disagrees_with_its_call_is_not_used():
    """Field values are used for a link's version or counter only where they say what the call says."""

    class Skewed(FakeNvml):
        def _field(self, h, field_id, scope):
            ret, value = super()._field(h, field_id, scope)
            if ret == 0 and field_id in (161, 166):
                return ret, value + 2  # e.g. another encoding of the version, another counter
            return ret, value

    cap = Capture.load(H200)
    fake = Skewed(cap, fields={"scoped": True})
    src = source(fake)
    snap = src.poll().snapshot
    assert {nl.version for g in snap.gpus for nl in g.nvlinks} == {6}  # what nvmlDeviceGetNvLinkVersion says
    assert [nl.counters["replay"] for nl in snap.gpus[0].nvlinks] == [0] * 18
    plan = src._reader.plans[0]
    assert not any(f[0] == 161 for f in plan.direct) and any(f[0] == 162 for f in plan.direct)
    assert {k for _, k in plan.round} >= {"replay"}  # read by calls instead
    src.close()


def test_read_every_refresh_the_fake_predicts_the_155_calls_measured_on_the_h200s(monkeypatch):
    """What p2ptop did on the real host (every counter of every link each refresh) costs, through the fake,
    the 155 calls the device run counted: 1 + 2 x (4 + 1 field-values call + 4 counters x 18 links)."""
    from p2ptop.sources import nvlink_fields

    monkeypatch.setattr(nvlink_fields, "ROUND_REFRESHES", 1)
    fake = FakeNvml(Capture.load(H200), fields=NOTHING_BATCHED)  # what the 2026-11-24 run's reader asked
    src = source(fake)
    src.poll()
    assert src.poll().calls == 155
    src.close()


def test_per_link_fields_that_cost_a_query_a_link_are_read_in_the_round_with_their_links_other_counters():
    """On the 2 x H200 host as measured on 2026-11-27 the scoped counter fields answer but cost one ~0.8 ms query
    a link (benchmarks/data/nvml-latency-h200x2-measured.json, its field_values model): asking them every refresh
    would cost as much as reading every counter by call. The plan times them at the full read and reads them in
    the round; each refresh asks the link states and the PCIe replays, and all the counters of a few links; every
    link's counters are read at one refresh, so a rise is a rate over the time since that link was last read."""
    from p2ptop.sources.capture import CallLatency

    table = CallLatency.load(os.path.join(HERE, "..", "benchmarks", "data", "nvml-latency-h200x2-measured.json"))
    assert table.field_values["per_link_s"]["161"] > 0.0005  # what the plan reacts to
    cap = Capture.load(H200)
    fake = FakeNvml(cap, latency=table)
    src = source(fake)
    src.poll()
    plan = src._reader.plans[0]
    assert plan.fields_in_round and plan.field_cost_s > 0.002
    assert {k for _, k in plan.round} == {"replay", "recovery", "crc_flit", "crc_data"} and len(plan.round) == 72
    per = -(-18 // ROUND_REFRESHES)
    f0 = len(fake.field_counts)
    seen: dict[int, list[int]] = collections.defaultdict(list)  # link -> refreshes its counters were read at
    for r in range(ROUND_REFRESHES):
        n0 = len(fake.calls)
        src.poll()
        links = src._reader.counter_seconds  # links read in the round this refresh (after the first time)
        calls = collections.Counter(fake.calls[n0:])
        assert calls["nvmlDeviceGetNvLinkErrorCounter"] == 2 * 2 * per  # crc flit and data of `per` links a GPU
        for link in {l for (g, l) in links if g == 0}:
            seen[link].append(r)
    assert sorted(seen) == list(range(18))  # every link within the round
    # each refresh's field-values call: 18 states + the PCIe replays + replay/recovery (161/162) of `per` links
    assert fake.field_counts[f0:] == [18 + 1 + 2 * per] * (2 * ROUND_REFRESHES)
    # a rise of a counter read through a field shows within the round, as a rise over that link's time
    cap.probe["gpus"][1]["links"][16]["replay_err"] = 3
    texts = []
    for _ in range(ROUND_REFRESHES):
        texts += [c.text for c in src.poll().changes]
    assert "GPU1 NVLink 16 replay errors +3 (now 3)" in texts
    assert "a query a link" in src.counter_note and "each link once every" in src.counter_note
    src.close()


def test_many_gpus_whose_totals_together_cost_too_much_read_them_in_turn():
    """Where all GPUs' counter totals asked every refresh would cost more than the host's budget
    (COUNTERS_EVERY_REFRESH_HOST_S, timed at the full read), each GPU's totals are asked once every ROUND_REFRESHES
    refreshes, link states still every refresh; a rise is still found (within the round), with the time since that
    GPU's totals were last read, and the events log says why. Under budget, every refresh asks them."""
    from p2ptop.demos import load_demo
    from p2ptop.live import LiveSource
    from p2ptop.sources.capture import CallLatency
    from p2ptop.sources.nvlink_fields import COUNTERS_EVERY_REFRESH_HOST_S

    cap = Capture.from_snapshot(load_demo("dgx-h100"))  # 8 GPUs, 18 links each, totals answered
    # each answered field of a field-values call costs 2 ms: 8 GPUs x 4 totals = 64 ms a refresh, over 20 ms
    dear = CallLatency(1e-6, origin="test", field_values={"group_s": {"165": 1e-5}, "each_s": {"94": 1e-5},
                                                          "unanswered_s": 1e-6, "default_field_s": 0.002})
    src = LiveSource(FakeNvml(cap, latency=dear), "/nonexistent", host_facts=False, events=False, static_every=1e9)
    src.poll()
    reader = src._reader
    assert all(p.totals_in_round for p in reader.plans.values())
    assert sum(p.totals_cost_s for p in reader.plans.values()) > COUNTERS_EVERY_REFRESH_HOST_S
    asked = []
    for _ in range(ROUND_REFRESHES):
        f0 = len(src._reader.nvml.field_counts)
        src.poll()
        asked.append(len(src._reader.nvml.field_counts) - f0)
    assert all(n == 8 for n in asked)  # one field-values call a GPU every refresh (link states), the totals in turn
    cap.probe["gpus"][3]["links"][5]["replay_err"] = 7
    seen = []
    for _ in range(ROUND_REFRESHES):
        p = src.poll()
        seen.append(p.snapshot.gpus[3].nvlinks[5].counters["replay"])
        if seen[-1] == 7:
            assert any(c.kind == "nvlink.counter" and c.subject == "gpu:3" for c in p.changes)
            assert reader.counter_seconds.get((3, 5), 0) > 0
            break
    assert seen[-1] == 7 and len(seen) <= ROUND_REFRESHES
    assert "each GPU's totals once every" in src.counter_note and "budget is 20 ms" in src.counter_note
    src.close()
    cheap = CallLatency(1e-6, origin="test")
    src = LiveSource(FakeNvml(Capture.from_snapshot(load_demo("dgx-h100")), latency=cheap), "/nonexistent",
                     host_facts=False, events=False, static_every=1e9)
    src.poll()
    assert not any(p.totals_in_round for p in src._reader.plans.values())
    src.close()


def test_the_round_of_totals_follows_round_refreshes_as_set_at_the_call(monkeypatch):
    """The reader reads nvlink_fields' tunables when it uses them, not as they were when nvml.py was imported
    (a benchmark that set ROUND_REFRESHES to 1 while the module was first imported once left every GPU's totals
    asked every refresh): with the round set to 4, each GPU's totals are asked at one refresh in 4."""
    from p2ptop.demos import load_demo
    from p2ptop.live import LiveSource
    from p2ptop.sources import nvlink_fields
    from p2ptop.sources import nvml  # noqa: F401  imported before the tunable is set, as in a long-running process
    from p2ptop.sources.capture import CallLatency

    monkeypatch.setattr(nvlink_fields, "ROUND_REFRESHES", 4)
    cap = Capture.from_snapshot(load_demo("dgx-h100"))
    dear = CallLatency(1e-6, origin="test", field_values={"group_s": {"165": 1e-5}, "each_s": {"94": 1e-5},
                                                          "unanswered_s": 1e-6, "default_field_s": 0.002})
    fake = FakeNvml(cap, latency=dear)
    src = LiveSource(fake, "/nonexistent", host_facts=False, events=False, static_every=1e9)
    src.poll()
    assert all(p.totals_in_round for p in src._reader.plans.values())
    with_totals = []
    for _ in range(8):
        f0 = len(fake.field_counts)
        src.poll()
        base = min(fake.field_counts[f0:])
        with_totals.append(sum(1 for n in fake.field_counts[f0:] if n >= base + 4))
    src.close()
    assert sum(with_totals) == 2 * 8  # each of the 8 GPUs twice in 8 refreshes
    assert all(n in (2,) for n in with_totals)  # 8 GPUs spread over a round of 4: two a refresh
