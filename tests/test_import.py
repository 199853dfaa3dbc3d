"""`p2ptop import`: a pasted topo -m (with -p2p and nvidia-smi -q) becomes a snapshot marked imported, and
--replay, doctor, report and the dashboard run on it (H200 and H100 captures, a 16-GPU paste)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p2ptop.cli import main
from p2ptop.evidence.snapshot import NA, ImportError_, snapshot_from_text
from p2ptop.fabric import Fabric
from p2ptop.model import load_snapshot

HERE = Path(__file__).parent
H200 = HERE / "fixtures" / "captures" / "h200x2-nvswitch-vm"
PASTES = HERE / "fixtures" / "pastes"
H100 = HERE.parent.parent / "shared" / "captures" / "h100x1-vm"


def h200_paste() -> str:
    return "\n".join((H200 / n).read_text() for n in ("nvidia-smi-topo-m.txt", "nvidia-smi-topo-p2p.txt", "nvidia-smi-q.xml"))


def test_h200_paste_becomes_an_imported_snapshot_with_na_reasons():
    snap = snapshot_from_text(h200_paste(), "h200.txt")
    assert snap.source.kind == "import" and not snap.source.simulated
    assert snap.source.label.startswith("IMPORTED h200.txt (from a paste")
    assert [g.name for g in snap.gpus] == ["NVIDIA H200", "NVIDIA H200"]
    g = snap.gpus[1]
    assert g.pci_bus_id == "00000000:00:07.0" and g.pcie_gen_max == 5 and g.virtualization_mode == "PASSTHROUGH"
    assert g.cpu_affinity == "0-31" and g.numa_node == 0 and g.mig_mode == "Disabled"
    assert g.na["serial"] == NA and g.na["utilization_gpu"] == NA and g.na["pcie_path"] == NA
    assert snap.na["nvml_version"] == NA
    assert Fabric(snap).path_class(0, 1) == "NV18"
    p = snap.pair(0, 1)
    assert p.p2p["read"] == "OK" and p.p2p["pci"] == "NOT_SUPPORTED" and "ancestor" in p.na
    assert snap.host["facts"]["host.driver_version"]["how"].startswith("line ")
    assert snap.driver_version == "580.159.04"


def test_pcie_classes_become_ancestors_and_p2p_missing_is_na():
    snap = snapshot_from_text((PASTES / "topo-m-4090x8-tabs-nics.txt").read_text(), "x")
    f = Fabric(snap)
    assert f.path_class(0, 7) == "SYS" and snap.pair(0, 7).ancestor == "SYSTEM"
    assert snap.pair(0, 1).na["p2p.read"] == NA and snap.gpus[4].numa_node == 1
    assert snap.gpus[0].na["gpu_numa_id"] == "N/A in the paste"


def test_16_gpu_paste_and_old_driver_columns():
    snap = snapshot_from_text((PASTES / "topo-m-dgx2-16gpu.txt").read_text(), "dgx2")
    assert len(snap.gpus) == 16 and len(snap.pairs) == 240
    f = Fabric(snap)
    assert all(f.path_class(a, b) == "NV6" for a in range(16) for b in range(16) if a != b)
    assert snap.gpus[0].na["numa_node"].startswith("not in the paste (no NUMA Affinity column")


def test_mixed_nvlink_without_bus_ids_is_placed_by_the_gpu_numbers_and_says_so():
    """An NV# pair in a paste without nvidia-smi -q (no bus ids): the links' peer is the matrix's GPU number
    (model.paste_peer), so replay, doctor and the dashboard show NV2 where the paste does, and a note says how they
    were placed (the eighteenth session; before, such pairs were N/A)."""
    text = "\tGPU0\tGPU1\tGPU2\tCPU Affinity\nGPU0\t X \tNV2\tSYS\t0-9\nGPU1\tNV2\t X \tSYS\t0-9\nGPU2\tSYS\tSYS\t X \t10-19\n"
    snap = snapshot_from_text(text, "mixed")
    assert any("placed by the matrix's GPU numbers" in n for n in snap.notes)
    assert Fabric(snap).path_class(0, 1) == "NV2" and Fabric(snap).path_class(1, 0) == "NV2"
    assert Fabric(snap).path_class(0, 2) == "SYS"
    from p2ptop.fabric import PathClasses
    assert PathClasses(snap).of(0, 1) == "NV2"
    link = snap.gpu(0).nvlinks[0]
    assert link.remote_pci_bus_id == "GPU1" and "not in the paste" in link.na["remote_pci_bus_id"]
    assert snap.gpu(2).na["nvlinks"] == "none in the paste"


def test_a_paste_without_a_gpu_list_is_refused():
    with pytest.raises(ImportError_, match="needs `nvidia-smi topo -m`"):
        snapshot_from_text("RuntimeError: CUDA error: invalid device ordinal", "e")


def test_cli_import_writes_a_file_that_replay_doctor_report_open(tmp_path, capsys):
    src = tmp_path / "paste.txt"
    src.write_text(h200_paste())
    out = tmp_path / "snap.json"
    assert main(["import", str(src), "-o", str(out)]) == 0
    snap = load_snapshot(str(out))
    assert snap.source.kind == "import"
    capsys.readouterr()
    assert main(["topo", "--replay", str(out)]) == 0
    text = capsys.readouterr().out
    assert "IMPORTED" in text and "NV18" in text
    assert main(["doctor", "--replay", str(out)]) in (0, 1)
    assert "IMPORTED" in capsys.readouterr().out
    assert main(["report", "--replay", str(out)]) == 0
    assert "IMPORTED" in capsys.readouterr().out


def test_cli_import_from_stdin_and_bad_input(tmp_path, capsys, monkeypatch):
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO((PASTES / "topo-m-5070x2-prompt-on-header.txt").read_text()))
    assert main(["import", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["source"]["kind"] == "import" and data["source"]["detail"] == "stdin"
    assert main(["import", str(tmp_path / "missing.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err
    empty = tmp_path / "e.txt"
    empty.write_text("nothing here\n")
    assert main(["import", str(empty)]) == 2
    assert "no GPU list found" in capsys.readouterr().err


@pytest.mark.skipif(not H100.exists(), reason="shared H100 capture not beside the repo")
def test_h100_single_gpu_capture_imports_and_doctor_finds_nothing_wrong(tmp_path, capsys):
    text = "\n".join((H100 / n).read_text() for n in ("nvidia-smi-topo-m.txt", "nvidia-smi-topo-p2p.txt", "nvidia-smi-q.xml"))
    src = tmp_path / "h100.txt"
    src.write_text(text)
    out = tmp_path / "h100.json"
    assert main(["import", str(src), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["doctor", "--replay", str(out)]) == 0
    assert "nothing wrong found" in capsys.readouterr().out


async def test_dashboard_opens_an_imported_snapshot(tmp_path):
    from p2ptop.model import save_snapshot
    from p2ptop.ui.app import P2PTopApp

    path = tmp_path / "imp.json"
    save_snapshot(snapshot_from_text(h200_paste(), "h200.txt"), str(path))
    app = P2PTopApp(replay=str(path))
    async with app.run_test(size=(200, 50)) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        text = app.export_text()
        assert "IMPORTED" in text and "2 GPUs" in text and "NV18" in text


FIELDS = ("name", "pci_bus_id", "uuid", "pcie_gen_max", "pcie_width_max", "virtualization_mode", "mig_mode",
          "cpu_affinity", "numa_node")


def _same_as_live(imported, live):
    assert imported.driver_version == live.driver_version and imported.cuda_driver_version == live.cuda_driver_version
    assert len(imported.gpus) == len(live.gpus)
    for gi, gl in zip(imported.gpus, live.gpus):
        assert [getattr(gi, f) for f in FIELDS] == [getattr(gl, f) for f in FIELDS]
        assert gi.fabric.state == gl.fabric.state
    fi, fl = Fabric(imported), Fabric(live)
    for p in live.pairs:
        assert fi.path_class(p.a, p.b) == fl.path_class(p.a, p.b)
        assert imported.pair(p.a, p.b).p2p == {k: v for k, v in p.p2p.items() if v}


def test_imported_h200_paste_equals_what_nvml_read_on_that_host():
    """The h200x2-vm demo is the same host read through the real NVML reader (p2ptop/demos/README.md)."""
    from p2ptop.demos import load_demo

    _same_as_live(snapshot_from_text(h200_paste(), "h200"), load_demo("h200x2-vm"))


@pytest.mark.skipif(not H100.exists(), reason="shared H100 capture not beside the repo")
def test_imported_h100_paste_equals_p2ptops_live_snapshot_of_that_host():
    text = "\n".join((H100 / n).read_text() for n in ("nvidia-smi-topo-m.txt", "nvidia-smi-topo-p2p.txt", "nvidia-smi-q.xml"))
    _same_as_live(snapshot_from_text(text, "h100"), load_snapshot(str(H100 / "p2ptop-snapshot.json")))
