"""The real H200 host, as p2ptop read it live (tests/fixtures/captures/h200x2-live): healthy.

Its NVLinks count corrected CRC errors (crc_data rises by a few per second on an idle link), as real
hosts do; neither that nor anything else on this host is a failure.
"""

import os

from p2ptop.diagnose import findings_for
from p2ptop.knowledge import load_kb, match
from p2ptop.sources import read_replay

from .conftest import FIXTURES

LIVE = os.path.join(FIXTURES, "captures", "h200x2-live")


def _snap(name):
    return read_replay(os.path.join(LIVE, name))


def test_crc_counts_alone_are_info_not_a_problem():
    snap = _snap("p2ptop-snapshot.json")
    assert any(v for g in snap.gpus for l in g.nvlinks for v in l.counters.values())  # the host did count some
    found = findings_for(snap)
    assert [f.id for f in found if f.id.startswith("nvlink")] and all(
        f.id == "nvlink.crc_counted" and f.severity == "info" for f in found if f.id.startswith("nvlink"))
    assert not [f for f in found if f.severity == "problem"]


def test_live_host_with_its_copy_tests_matches_no_failure_entry():
    snap = _snap("p2ptop-snapshot-bench.json")
    assert snap.bench and all(r.verdict == "healthy" and not r.simulated for r in snap.bench)
    assert match(load_kb(), findings=findings_for(snap)) == []


def test_replay_or_recovery_errors_are_a_warning():
    snap = _snap("p2ptop-snapshot.json")
    snap.gpus[1].nvlinks[3].counters["recovery"] = 2
    found = [f for f in findings_for(snap) if f.subject == "gpu:1" and f.id.startswith("nvlink")]
    assert [(f.id, f.severity) for f in found] == [("nvlink.errors", "warning")]
    assert found[0].summary.endswith("on link 3")
