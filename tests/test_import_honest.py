"""What a paste (or NVML) does not say stays unknown: a P2P status not read is never "healthy" nor a finding
that assumes P2P works, NVLink counters not read read N/A, and the pair panel matches the knowledge base on
the same facts as explain and doctor. End to end on the real pastes in tests/fixtures."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from p2ptop.cli import main
from p2ptop.demos import load_demo
from p2ptop.diagnose import findings_for, gpu_facts, pair_fact_findings, p2p_unknown
from p2ptop.evidence.snapshot import NA, snapshot_from_text
from p2ptop.fabric import Fabric
from p2ptop.model import load_snapshot, save_snapshot

HERE = Path(__file__).parent
H200 = HERE / "fixtures" / "captures" / "h200x2-nvswitch-vm"
H100 = HERE / "fixtures" / "captures" / "h100x1-vm"
PASTES = HERE / "fixtures" / "pastes"


def read(*paths: Path) -> str:
    return "\n".join(p.read_text() for p in paths)


#: name -> (paste text, does it hold the -p2p matrices)
CASES = {
    "h200-topo-m": (lambda: read(H200 / "nvidia-smi-topo-m.txt"), False),
    "h200-topo-m-p2p": (lambda: read(H200 / "nvidia-smi-topo-m.txt", H200 / "nvidia-smi-topo-p2p.txt", H200 / "nvidia-smi-q.xml"), True),
    "h100-topo-m-p2p": (lambda: read(H100 / "nvidia-smi-topo-m.txt", H100 / "nvidia-smi-topo-p2p.txt", H100 / "nvidia-smi-q.xml"), True),
    "dgx2-16gpu": (lambda: read(PASTES / "topo-m-dgx2-16gpu.txt"), False),
    "4090x8-nics": (lambda: read(PASTES / "topo-m-4090x8-tabs-nics.txt"), False),
}


# ---- 1. a P2P status not in the paste is unknown --------------------------------------------------

def test_imported_pair_without_p2p_is_unknown_not_through_cpu_nor_healthy():
    snap = snapshot_from_text(read(PASTES / "topo-m-4090x8-tabs-nics.txt"), "x")
    fab = Fabric(snap)
    assert fab.path_class(0, 7) == "SYS"
    ids = {f.id for f in findings_for(snap, fab) if f.subject == "pair:0-7"}
    assert "p2p.through_cpu" not in ids, "a paste without -p2p says nothing of P2P working"
    assert ids == {"p2p.unknown"}
    f = next(f for f in findings_for(snap, fab) if f.subject == "pair:0-7")
    assert f.severity == "info" and "not known" in f.summary and NA in f.summary and "SYS" in f.summary
    assert "p2p.read" not in f.facts and f.facts["pair.path"] == "SYS"
    assert p2p_unknown(snap.pair(0, 7)) == f"read and write {NA}"


def test_nv18_pair_without_p2p_gets_an_unknown_finding_and_with_p2p_none():
    no_p2p = snapshot_from_text(read(H200 / "nvidia-smi-topo-m.txt"), "h200")
    assert [f.id for f in findings_for(no_p2p) if f.subject == "pair:0-1"] == ["p2p.unknown"]
    with_p2p = snapshot_from_text(CASES["h200-topo-m-p2p"][0](), "h200")
    assert [f.id for f in findings_for(with_p2p) if f.subject.startswith("pair:")] == []
    assert p2p_unknown(with_p2p.pair(0, 1)) is None


def test_live_pair_where_nvml_could_not_read_p2p_is_unknown():
    snap = copy.deepcopy(load_demo("pcie-4gpu-iommu"))
    pair = snap.pair(0, 1)
    pair.p2p["read"] = pair.p2p["write"] = None
    pair.na["p2p.read"] = pair.na["p2p.write"] = "NVML: Unknown Error"
    ids = {f.id for f in findings_for(snap) if f.subject == "pair:0-1"}
    assert "p2p.unknown" in ids and "p2p.through_cpu" not in ids
    from p2ptop.ui.state import DashboardState

    state = DashboardState(snap)
    assert state.pair_state(0, 1) == "unknown"
    assert state.pair_state(1, 0) != "unknown"  # the other direction was read


def test_dashboard_state_pair_unknown_never_healthy():
    from p2ptop.ui.state import DashboardState

    state = DashboardState(snapshot_from_text(read(H200 / "nvidia-smi-topo-m.txt"), "h200"))
    assert state.pair_state(0, 1) == "unknown" and state.path[(0, 1)] == "NV18"
    assert state.pair_p2p_unknown(0, 1) == f"read and write {NA}"
    healthy = DashboardState(snapshot_from_text(CASES["h200-topo-m-p2p"][0](), "h200"))
    assert healthy.pair_state(0, 1) == "ok"
    assert DashboardState(load_demo("dgx-h100")).pair_state(0, 1) == "ok"


# ---- 2. NVLink counters not in the paste read N/A ---------------------------------------------------

def test_nvlink_counters_not_in_the_paste_are_na_not_zero(capsys, tmp_path):
    snap = snapshot_from_text(read(H200 / "nvidia-smi-topo-m.txt"), "h200")
    facts = gpu_facts(snap.gpus[0])
    assert "gpu.nvlink_errors" not in facts and "gpu.nvlink_replay_recovery" not in facts
    assert gpu_facts(load_demo("dgx-h100").gpus[0])["gpu.nvlink_errors"] == 0  # read, and zero
    out = tmp_path / "s.json"
    save_snapshot(snap, str(out))
    assert main(["doctor", "--replay", str(out)]) == 0
    text = capsys.readouterr().out
    assert "0 errors" not in text and f"errors N/A ({NA})" in text
    assert main(["doctor", "--replay", str(out), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["gpus"]
    assert rows[0]["nvlink_errors"] is None and rows[0]["nvlink_errors_na"] == NA


def test_pair_panel_says_unknown_and_counters_na():
    from rich.console import Console

    from p2ptop.ui.state import DashboardState
    from p2ptop.ui.widgets.pair_panel import pair_text

    def render(snap, a, b) -> str:
        state = DashboardState(snap)
        console = Console(width=140, record=True, color_system=None)
        console.print(pair_text(state, a, b, None, None, state.pair_findings(a, b)))
        return console.export_text()

    text = render(snapshot_from_text(read(H200 / "nvidia-smi-topo-m.txt"), "h200"), 0, 1)
    assert "healthy" not in text and "✔ nothing wrong" not in text
    assert f"? not known: P2P read and write {NA}" in text and "NV18" in text
    assert f"error counters N/A ({NA})" in text and "error counters 0" not in text
    demo = render(load_demo("dgx-h100"), 0, 1)
    assert "✔ healthy" in demo and "error counters 0" in demo


# ---- 3. the pair panel matches on the pair's facts, as explain does ----------------------------------

def _test_entry_dir(tmp_path: Path) -> Path:
    """An entry that needs a pair fact (path NV12) and a host symptom (Xid 74): it can match only where the
    pair's facts are known to the matcher."""
    entry = json.loads((HERE.parent / "kb" / "nvlink__uncorrectable-nvlink-error.json").read_text())
    entry["id"] = "test/xid-74-on-a-twelve-link-pair"
    entry["regex"], entry["regexes"], entry["examples"] = "", [], []
    entry["match"] = {"require": [{"fact": "pair.path", "equals": "NV12", "reason": "twelve NVLinks join the pair"}],
                      "trigger": [{"fact": "host.xid_codes", "regex": "(^|[, ])74([, ]|$)", "reason": "Xid 74 in the kernel log"}]}
    d = tmp_path / "kb"
    d.mkdir()
    (d / "test__xid-74-twelve-links.json").write_text(json.dumps(entry))
    return d


async def test_pair_panel_matches_what_explain_matches_for_the_same_pair(tmp_path, capsys):
    pytest.importorskip("p2ptop.knowledge")
    from p2ptop.knowledge import load_kb, match
    from p2ptop.knowledge.matcher import finding_groups
    from p2ptop.ui.app import P2PTopApp

    kb_dir = _test_entry_dir(tmp_path)
    assert main(["explain", "--demo", "nvlink-degraded", "--kb", str(kb_dir), "--top", "100", "--json"]) == 0
    explained = {m["id"]: m for m in json.loads(capsys.readouterr().out)["matches"]}
    assert explained["test/xid-74-on-a-twelve-link-pair"]["confidence"] in ("likely", "possible")
    assert explained["test/xid-74-on-a-twelve-link-pair"]["where"].startswith("GPU0->GPU1")

    snap = load_demo("nvlink-degraded")
    kb = load_kb(extra_dirs=[str(kb_dir)])
    group = finding_groups(findings_for(snap) + pair_fact_findings(snap))["GPU0->GPU1"]
    want = [(m.entry.id, m.confidence) for m in match(kb, findings=group, origin="demo")]
    assert ("test/xid-74-on-a-twelve-link-pair", explained["test/xid-74-on-a-twelve-link-pair"]["confidence"]) in want

    app = P2PTopApp(demo="nvlink-degraded", kb_dirs=[str(kb_dir)])
    async with app.run_test(size=(200, 50)) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        app.kb_loaded.wait(10)
        app.matrix.select_pair(0, 1)
        got = None
        for _ in range(50):
            await app.workers.wait_for_complete()
            await pilot.pause()
            if app.pair == (0, 1) and app.matches:
                got = [(m.entry.id, m.confidence) for m in app.matches]
                break
        assert got == want


# ---- 4. end to end on the real pastes: IMPORTED, and unknown where the paste is silent -----------------

@pytest.mark.parametrize("name", sorted(CASES))
def test_import_end_to_end_topo_doctor_report(name, tmp_path, capsys):
    text, has_p2p = CASES[name][0](), CASES[name][1]
    src = tmp_path / f"{name}.txt"
    src.write_text(text)
    out = tmp_path / f"{name}.json"
    assert main(["import", str(src), "-o", str(out)]) == 0
    capsys.readouterr()
    snap = load_snapshot(str(out))
    assert snap.source.kind == "import"
    assert main(["topo", "--replay", str(out)]) == 0
    topo = capsys.readouterr().out
    assert "IMPORTED" in topo
    if len(snap.gpus) > 1 and not has_p2p:
        assert "N/A" in topo.split("## r (read)")[1]  # the -p2p matrices are N/A, not OK
    assert main(["doctor", "--replay", str(out)]) == 0  # nothing known to be wrong on any of these hosts
    doctor = capsys.readouterr().out
    assert "IMPORTED" in doctor and "P2P works" not in doctor
    assert main(["report", "--replay", str(out)]) == 0
    report = capsys.readouterr().out
    assert "IMPORTED" in report and "P2P works" not in report
    if len(snap.gpus) > 1 and not has_p2p:
        assert "P2P status not known" in doctor and "P2P status not known" in report
        n = len(snap.gpus) * (len(snap.gpus) - 1)
        assert f"Result: nothing wrong found in what is known (P2P status not known for {n} pairs) (exit 0)" in doctor
    else:
        assert "P2P status not known" not in doctor
    if any(g.nvlinks for g in snap.gpus) and not has_p2p:
        assert "0 errors" not in doctor and "errors N/A" in doctor


@pytest.mark.parametrize("name", ["h200-topo-m", "dgx2-16gpu", "h200-topo-m-p2p", "h100-topo-m-p2p"])
async def test_dashboard_on_an_import_says_imported_and_unknown(name, tmp_path):
    from p2ptop.ui.app import P2PTopApp

    text, has_p2p = CASES[name][0](), CASES[name][1]
    path = tmp_path / "imp.json"
    save_snapshot(snapshot_from_text(text, f"{name}.txt"), str(path))
    app = P2PTopApp(replay=str(path))
    async with app.run_test(size=(200, 50)) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        app.matrix.select_pair(0, 1)
        await pilot.pause()
        screen = app.export_text()
        assert "IMPORTED" in screen
        if len(app.state.indices) == 1:  # one GPU: no pair, nothing to call healthy or not
            assert "1 GPU" in screen and "P2P not known" not in screen and "✔ healthy" not in screen
        elif has_p2p:
            assert "✔ healthy" in screen and "P2P not known" not in screen
        else:
            assert "✔ healthy" not in screen and "P2P works" not in screen
            assert "? not known: P2P read and write not in the" in screen  # wrapped in the panel
            assert "? P2P not known" in screen  # the legend names the mark
            assert "error counters N/A (not in the" in screen
