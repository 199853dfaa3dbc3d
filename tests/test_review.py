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
    assert [i.workaround for i in items] == [0, 1, 0]
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
    assert "120.0 GB/s → 121.0 GB/s" in md and "120.0 GB/s → 392.0 GB/s" in md
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
