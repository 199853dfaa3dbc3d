import json
import subprocess
import sys

import pytest

from p2ptop import cli
from p2ptop.demos import DEMOS


def run(argv, capsys):
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_demo_lists_every_demo(capsys):
    code, out, _ = run(["demo"], capsys)
    assert code == 0
    for name in DEMOS:
        assert name in out


def test_topo_demo_text_and_json(capsys):
    code, out, _ = run(["topo", "--demo", "pcie-4gpu-iommu"], capsys)
    assert code == 0 and "DEMO pcie-4gpu-iommu (simulated)" in out and "\tPIX\tSYS\tSYS\t" in out
    code, out, _ = run(["topo", "--demo", "pcie-4gpu-iommu", "--json"], capsys)
    data = json.loads(out)
    assert data["source"]["simulated"] is True
    pair = next(p for p in data["pairs"] if p["a"] == 0 and p["b"] == 2)
    assert pair["path"] == "SYS" and pair["p2p"]["read"] == "CHIPSET_NOT_SUPPORTED"


def test_live_without_driver_exits_2_with_one_line(monkeypatch, capsys):
    from p2ptop.sources import nvml

    def no_driver(*a, **k):
        raise nvml.NvmlUnavailable("NVML could not be initialised: NVML Shared Library Not Found")

    monkeypatch.setattr(nvml, "read_snapshot", no_driver)
    for argv in (["topo"], ["snapshot"]):
        code, out, err = run(argv, capsys)
        assert code == 2 and out == ""
        assert len(err.strip().splitlines()) == 1
        assert "--demo" in err and "--replay" in err and "Traceback" not in err


def test_snapshot_round_trip_through_replay(tmp_path, capsys):
    path = tmp_path / "snap.json"
    code, _, err = run(["snapshot", "--demo", "dgx-h100", "-o", str(path)], capsys)
    assert code == 0 and path.exists()
    code, replayed, _ = run(["topo", "--replay", str(path)], capsys)
    code2, original, _ = run(["topo", "--demo", "dgx-h100"], capsys)
    assert code == code2 == 0
    assert replayed.splitlines()[1:] == original.splitlines()[1:]  # same matrices; the header says REPLAY
    assert "REPLAY simulated" in replayed.splitlines()[0]


@pytest.mark.parametrize("content, message", [("nope", "not valid JSON"), ('{"kind": "x", "schema_version": 1}', "not a p2ptop snapshot")])
def test_broken_replay_is_one_clear_line(tmp_path, capsys, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    code, out, err = run(["topo", "--replay", str(path)], capsys)
    assert code == 2 and message in err and str(path) in err


def test_console_script_runs_as_a_module():
    proc = subprocess.run([sys.executable, "-m", "p2ptop", "topo", "--demo", "rtx4090-2gpu"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "GNS" in proc.stdout


def test_a_command_with_a_missing_dependency_fails_alone(monkeypatch, capsys):
    import importlib

    real = importlib.import_module

    def fake_import(name, *a, **k):
        if name == "p2ptop.commands.explain":
            err = ModuleNotFoundError("No module named 'jsonschema'")
            err.name = "jsonschema"
            raise err
        return real(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", fake_import)
    code, out, _ = run(["topo", "--demo", "rtx4090-2gpu"], capsys)
    assert code == 0 and "GNS" in out
    code, _, err = run(["explain", "-"], capsys)
    assert code == 2 and "jsonschema" in err and "pip install jsonschema" in err


def test_source_before_the_command_applies_to_it(capsys):
    code, out, _ = run(["--demo", "rtx4090-2gpu", "topo"], capsys)
    assert code == 0 and "DEMO rtx4090-2gpu (simulated)" in out
