"""Reviews of fixes: the store (restarts and reboots), before/after and the suggested outcome, the
checklist's caveats, the trail in tickets, the CLI, and the review screen driven with the keyboard."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from p2ptop.model import BenchResult, Measurement
from p2ptop.demos import load_demo
from p2ptop.review import ReviewStore, compare, plan_items, problem_from_result, site_outcomes, suggest, trail_markdown
from p2ptop.review import store as store_mod
from p2ptop.review.outcomes import order_workarounds, outcome_text, rank_key
from p2ptop.review.plan import PlanItem


def result(a=0, b=1, verdict="slow", value=120.0, status="ok", simulated=True):
    return BenchResult(a=a, b=b, status=status, verdict=verdict, simulated=simulated,
                       measurements=[Measurement("ce_one_way", value, expected=450.0, verdict=verdict),
                                     Measurement("latency_copy", 2.2, unit="us", verdict="info")])


def as_state(r, snap):
    import dataclasses
    return {"result": dataclasses.asdict(r), "snapshot": snap.to_dict()}


class FakeEntry:
    def __init__(self, id, workarounds):
        self.id, self.workarounds, self.signature = id, workarounds, f"sig of {id}"


ENTRIES = [FakeEntry("nvlink/links-inactive", [
    {"action": "Reset the GPU and check the links come back", "command": "nvidia-smi -r -i 0", "success_rate": 0.6},
    {"action": "Update the driver and reboot", "success_rate": 0.5}]),
    FakeEntry("nccl/p2p-disabled-by-env", [
        {"action": "Remove the variable", "command": "unset NCCL_P2P_DISABLE; NCCL_DEBUG=INFO ./app", "success_rate": 0.9}])]


@pytest.fixture
def store(tmp_path):
    s = ReviewStore(tmp_path / "reviews.sqlite3")
    yield s
    s.close()


def new_review(store, snap=None, r=None):
    snap = snap or load_demo("nvlink-degraded")
    p = problem_from_result(r or result(), snap)
    return store.create(host=p["host"], subject=p["subject"], test=p["test"], problem=p["problem"],
                        before=p["before"], items=[i.to_dict() for i in plan_items(ENTRIES)])


def test_plan_items_caveats():
    items = plan_items(ENTRIES)
    assert [i.workaround for i in items] == [0, 1, 0, -1]
    assert items[-1].entry_id is None and "note" in items[-1].action  # a fix of the user's own, always last
    assert items[1].needs_reboot and not items[0].needs_reboot
    assert items[2].env == {"NCCL_P2P_DISABLE": "", "NCCL_DEBUG": "INFO"}
    assert any("reboot" in c for c in items[1].caveats("copy"))
    assert any("NCCL test is re-run with" in c for c in items[2].caveats("nccl"))
    assert any("copy test does not see them" in c for c in items[2].caveats("copy"))
    assert PlanItem.from_dict(items[2].to_dict()) == items[2]


def test_store_survives_restart_and_reboot(tmp_path, monkeypatch):
    path = tmp_path / "r.sqlite3"
    monkeypatch.setattr(store_mod, "boot_id", lambda: "boot-1")
    s = ReviewStore(path)
    review = new_review(s)
    attempt = s.try_item(review, 1)
    assert attempt.state == "trying" and attempt.boot_id == "boot-1"
    s.close()
    # the machine reboots (a BIOS/driver fix), p2ptop starts again on the same store
    monkeypatch.setattr(store_mod, "boot_id", lambda: "boot-2")
    s2 = ReviewStore(path)
    again = s2.find_open(review.host, review.subject, review.test)
    assert again is not None and again.id == review.id
    assert again.open_attempt is not None and again.open_attempt.rebooted_since
    assert again.item_state(1) == "trying" and again.item_state(0) == "not_tried"
    s2.close()


def test_compare_and_suggest():
    snap = load_demo("nvlink-degraded")
    before = as_state(result(verdict="slow", value=120.0), snap)
    healed = as_state(result(verdict="healthy", value=390.0), snap)
    same = as_state(result(verdict="slow", value=122.0), snap)
    interrupted = as_state(result(verdict="interrupted", value=None, status="interrupted"), snap)
    c = compare(before, healed)
    assert (c.verdict_before, c.verdict_after) == ("slow", "healthy")
    row = next(r for r in c.rows if r.name == "ce_one_way")
    assert row.before == 120.0 and row.after == 390.0 and row.ratio == pytest.approx(3.25)
    assert c.p2p_before and c.p2p_before == c.p2p_after
    assert suggest(c) == "helped"
    assert suggest(compare(before, same)) == "did_not_help"
    assert suggest(compare(before, interrupted)) is None  # not comparable: run it again


def test_snapshot_changes_are_listed():
    snap = load_demo("nvlink-degraded")  # GPU3 has two NVLinks down
    fixed = load_demo("nvlink-degraded")
    for g in fixed.gpus:
        for link in g.nvlinks:
            link.state = "active"
    c = compare(as_state(result(a=3, b=0), snap), as_state(result(a=3, b=0, verdict="healthy", value=390.0), fixed))
    assert "GPU3 NVLink 4 came up" in c.changes and "GPU3 NVLink 5 came up" in c.changes


def test_outcomes_rank_and_order(store):
    review = new_review(store)
    a = store.try_item(review, 0)
    store.set_outcome(a, "did_not_help")
    b = store.try_item(store.get(review.id), 2)
    store.set_outcome(b, "helped")
    c = store.try_item(store.get(review.id), 2)
    store.set_outcome(c, "helped")
    out = site_outcomes(store.all_attempts())
    assert outcome_text(out[("nccl/p2p-disabled-by-env", 0)]) == "helped here 2 of 2 times"
    assert outcome_text(out[("nvlink/links-inactive", 0)]) == "helped here 0 of 1 time"
    assert rank_key("nccl/p2p-disabled-by-env", out) > rank_key("unknown/entry", out) > rank_key("nvlink/links-inactive", out)
    assert order_workarounds("nvlink/links-inactive", 2, out) == [1, 0]  # did not help here: last
    assert site_outcomes(store.all_attempts(), host="another-host") == {}


def test_trail_markdown_complete_and_redacted(store):
    snap = load_demo("nvlink-degraded")
    review = new_review(store, snap)
    a = store.try_item(review, 0)
    after = as_state(result(verdict="slow", value=121.0), snap)
    c = compare(review.before, after)
    a = store.record_after(a, after, c.to_dict(), suggest(c))
    store.set_outcome(a, "did_not_help", "reset did nothing")
    b = store.try_item(store.get(review.id), 1)
    after2 = as_state(result(verdict="healthy", value=392.0), snap)
    b = store.record_after(b, after2, compare(review.before, after2).to_dict(), "helped")
    store.set_outcome(b, "helped", "driver 580 fixed it")
    md = trail_markdown([store.get(review.id)])
    assert "## Fixes tried" in md and "did not help" in md and "helped" in md
    assert "CE A->B 120.0 GB/s → 121.0 GB/s" in md and "CE A->B 120.0 GB/s → 392.0 GB/s" in md
    assert "reset did nothing" in md and "driver 580 fixed it" in md and "(simulated)" in md
    host = snap.source.hostname
    red = trail_markdown([store.get(review.id)], redact=lambda s: s.replace(host, "host-1"))
    assert host not in red


def test_bad_store_is_a_clear_error(tmp_path):
    bad = tmp_path / "r.sqlite3"
    bad.write_text("this is not a database")
    from p2ptop.review import StoreError
    with pytest.raises(StoreError, match="r.sqlite3"):
        ReviewStore(bad)


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "p2ptop", *args], capture_output=True, text=True, env=env, timeout=60)


def test_cli_list_show_export(tmp_path, monkeypatch):
    import os
    db = tmp_path / "reviews.sqlite3"
    s = ReviewStore(db)
    review = new_review(s)
    a = s.try_item(review, 0)
    s.set_outcome(a, "did_not_help", "no change")
    s.close()
    env = dict(os.environ, P2PTOP_DATA_DIR=str(tmp_path))
    out = run_cli("review", "list", env=env)
    assert out.returncode == 0 and f"{review.id:>4}  open" in out.stdout and "1 tried, 1 confirmed" in out.stdout
    out = run_cli("review", "show", str(review.id), env=env)
    assert out.returncode == 0 and "did not help" in out.stdout and "no change" in out.stdout
    out = run_cli("review", "export", str(review.id), "--json", env=env)
    data = json.loads(out.stdout)
    assert data[0]["attempts"][0]["state"] == "did_not_help" and "snapshot" not in data[0]["before"]
    out = run_cli("review", "show", "99", env=env)
    assert out.returncode == 2 and "no review 99" in out.stderr
    empty = run_cli("review", "list", "--db", str(tmp_path / "none.sqlite3"))
    assert empty.returncode == 0 and "No reviews yet" in empty.stdout


# ---- the review screen, driven as a person would (pilot) ------------------------------------------

from p2ptop.ui.app import P2PTopApp  # noqa: E402
from p2ptop.ui import review_screen  # noqa: E402
from p2ptop.ui.review_screen import ReviewScreen  # noqa: E402


async def settle(app, pilot):
    from textual.worker import WorkerCancelled
    for _ in range(4):
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            pass
        await pilot.pause()


def healed_retest(review, item, read, cancel=None, **_):
    import dataclasses
    snap = read()
    a, b = (int(x) for x in review.subject[5:].split("-"))
    r = BenchResult(a=a, b=b, status="ok", verdict="healthy", simulated=True,
                    measurements=[Measurement("ce_one_way", 391.0, expected=450.0, verdict="healthy")])
    return {"result": dataclasses.asdict(r), "snapshot": snap.to_dict()}


async def failing_pair_to_review(app, pilot):
    await settle(app, pilot)
    await pilot.press("enter")  # copy test of the pair the dashboard opened on (the worst)
    await settle(app, pilot)
    assert app.bench_results, "the copy test ran"
    await pilot.press("v")
    await settle(app, pilot)
    assert isinstance(app.screen, ReviewScreen)
    return app.screen


async def test_review_helped_in_four_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("P2PTOP_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(review_screen, "retest", healed_retest)
    app = P2PTopApp(demo="nvlink-degraded")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await failing_pair_to_review(app, pilot)
        assert screen.review.items, "the matched entries' workarounds are the checklist"
        await pilot.press("t")  # try: before recorded, what to do shown
        await pilot.press("enter")  # re-test, started by one key
        await settle(app, pilot)
        assert "Suggested outcome: helped" in screen.text
        await pilot.press("y")  # confirm
        await settle(app, pilot)
    store = ReviewStore(tmp_path / "reviews.sqlite3")
    [review] = store.list()
    assert review.status == "closed"
    [attempt] = review.attempts
    assert attempt.state == "helped" and attempt.confirmed and attempt.suggested == "helped"
    assert attempt.after["result"]["verdict"] == "healthy" and attempt.before["result"]["verdict"] in ("slow", "failing")


async def test_review_did_not_help_then_reboot_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("P2PTOP_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(store_mod, "boot_id", lambda: "boot-A")
    app = P2PTopApp(demo="nvlink-degraded")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await failing_pair_to_review(app, pilot)
        await pilot.press("t", "enter")  # the simulated re-test measures the same slow pair
        await settle(app, pilot)
        assert "Suggested outcome: did not help" in screen.text
        await pilot.press("y")
        await pilot.press("down", "t")  # the next fix needs a reboot: tried, then the machine goes down
        await settle(app, pilot)
        tried = screen.index
    # reboot: a new boot id, p2ptop started again on the same store
    monkeypatch.setattr(store_mod, "boot_id", lambda: "boot-B")
    app2 = P2PTopApp(demo="nvlink-degraded")
    async with app2.run_test(size=(80, 24)) as pilot:
        await settle(app2, pilot)
        await pilot.press("v")
        await settle(app2, pilot)
        screen = app2.screen
        assert isinstance(screen, ReviewScreen) and screen.index == tried
        assert "rebooted since this fix was tried" in screen.text
    review = ReviewStore(tmp_path / "reviews.sqlite3").list()[0]
    assert [a.state for a in review.attempts] == ["did_not_help", "trying"]


def test_review_screen_snapshots(snap_compare, tmp_path, monkeypatch):
    monkeypatch.setenv("P2PTOP_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(store_mod, "now", lambda: "2026-11-24T06:00:00+00:00")
    monkeypatch.setattr(review_screen, "retest", healed_retest)

    async def flow(pilot):
        await failing_pair_to_review(pilot.app, pilot)
        await pilot.press("t", "enter")
        await settle(pilot.app, pilot)

    for size in ((80, 24), (200, 50)):
        for f in tmp_path.glob("*.sqlite3"):
            f.unlink()
        assert snap_compare(P2PTopApp(demo="nvlink-degraded"), terminal_size=size, run_before=flow)


def test_report_and_bundle_hold_the_trail(tmp_path, monkeypatch):
    from p2ptop.export.bundle import report_markdown, write_bundle
    monkeypatch.setenv("P2PTOP_DATA_DIR", str(tmp_path / "data"))
    snap = load_demo("nvlink-degraded")
    s = ReviewStore()
    review = new_review(s, snap)
    a = s.try_item(review, 0)
    after = as_state(result(verdict="slow", value=119.0), snap)
    a = s.record_after(a, after, compare(review.before, after).to_dict(), "did_not_help")
    s.set_outcome(a, "did_not_help", f"tried on {snap.source.hostname}, no change")
    s.close()
    md = report_markdown(snap)
    assert "## Fixes tried" in md and "did not help" in md and "CE A->B 120.0 GB/s → 119.0 GB/s" in md
    red = report_markdown(snap, redact=True)
    assert "## Fixes tried" in red and snap.source.hostname not in red
    path = write_bundle(snap, tmp_path / "out", svg=None, text=None, redact=True)
    trail = json.loads((path / "reviews.json").read_text())
    assert trail[0]["attempts"][0]["state"] == "did_not_help" and snap.source.hostname not in (path / "reviews.json").read_text()
    assert "## Fixes tried" in (path / "report.md").read_text()
    other = load_demo("dgx-h100")  # another host's report holds none of this host's reviews
    assert "## Fixes tried" not in report_markdown(other)


def test_outcomes_reorder_checklist_and_read_from_bundles(tmp_path, store):
    review = new_review(store)
    a = store.try_item(review, 0)
    store.set_outcome(a, "did_not_help")
    host = site_outcomes(store.all_attempts(), review.host)
    items = plan_items(ENTRIES, host)
    assert [(i.entry_id, i.workaround) for i in items][:2] == [("nvlink/links-inactive", 1), ("nvlink/links-inactive", 0)]
    from p2ptop.review import outcomes_from_bundles, trail_dict
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "reviews.json").write_text(json.dumps(trail_dict(store.list())))
    (tmp_path / "broken.json").write_text("{")
    out = outcomes_from_bundles([bundle, tmp_path / "broken.json", tmp_path / "missing"])
    assert out[("nvlink/links-inactive", 0)].did_not_help == 1


def test_entry_screen_shows_site_outcome(tmp_path, monkeypatch):
    monkeypatch.setenv("P2PTOP_DATA_DIR", str(tmp_path))
    from p2ptop.knowledge import load_kb
    from p2ptop.ui.entry_screen import entry_body
    kb = load_kb()
    entry = kb.get("nvlink/links-inactive")
    s = ReviewStore()
    review = s.create(host="h", subject="pair:0-1", test="copy", problem="p", before={},
                      items=[i.to_dict() for i in plan_items([entry])])
    s.set_outcome(s.try_item(review, 0), "helped")
    s.close()
    assert "helped here 1 of 1 time" in entry_body(entry).plain


def test_cli_try_retest_outcome_on_a_demo(tmp_path):
    import os
    env = dict(os.environ, P2PTOP_DATA_DIR=str(tmp_path))
    s = ReviewStore(tmp_path / "reviews.sqlite3")
    snap = load_demo("nvlink-degraded")
    review = new_review(s, snap, result(a=3, b=0))
    s.close()
    out = run_cli("review", "retest", str(review.id), "--demo", "nvlink-degraded", env=env)
    assert out.returncode == 2 and "no fix under way" in out.stderr
    out = run_cli("review", "try", str(review.id), "2", env=env)
    assert out.returncode == 0 and "reboot" in out.stdout and f"review retest {review.id}" in out.stdout
    out = run_cli("review", "retest", str(review.id), "--demo", "nvlink-degraded", env=env)
    assert out.returncode == 0, out.stderr
    assert "suggested outcome" in out.stdout  # the simulated re-test of the same demo
    out = run_cli("review", "outcome", str(review.id), "2", "did_not_help", "--note", "BIOS update, no change", env=env)
    assert out.returncode == 0
    r = ReviewStore(tmp_path / "reviews.sqlite3").get(review.id)
    [a] = r.attempts
    assert a.state == "did_not_help" and a.note == "BIOS update, no change" and a.after["result"]["simulated"]
