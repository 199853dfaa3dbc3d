"""``p2ptop bench``: demo results are simulated and say so; bad arguments and missing CuPy exit 2."""

import json

import pytest

from p2ptop.cli import main
from p2ptop.commands import bench as bench_cmd
from p2ptop.demos import load_demo
from p2ptop.model import load_snapshot


def test_pair_on_a_demo_is_simulated_and_labelled(capsys):
    assert main(["bench", "0", "1", "--demo", "h200x2-vm"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SIMULATED results")
    assert "GPU0 -> GPU1  NV18" in out and "[simulated]" in out and "healthy" in out


def test_all_json_on_a_demo_with_refused_pairs(capsys):
    assert main(["bench", "--all", "--demo", "pcie-4gpu-iommu", "--json", "--tests", "ce,sm"]) == 1
    data = json.loads(capsys.readouterr().out)
    rs = data["results"]
    assert len(rs) == 6 and all(r["simulated"] for r in rs)  # 4 GPUs: each unordered pair once
    assert [(r["a"], r["b"]) for r in rs] == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert {m["name"] for m in rs[0]["measurements"]} == {"ce_one_way", "ce_reverse", "sm_read", "sm_write"}
    failing = [r for r in rs if r["verdict"] == "failing"]
    assert failing and all(r["params"]["peer_access"] == "cudaErrorPeerAccessUnsupported" for r in failing)


def test_save_then_replay(tmp_path, capsys):
    path = tmp_path / "snap.json"
    assert main(["bench", "0", "1", "--demo", "h200x2-vm", "--save", str(path)]) == 0
    snap = load_snapshot(str(path))
    assert [(r.a, r.b, r.simulated) for r in snap.bench] == [(0, 1, True)]
    capsys.readouterr()
    assert main(["bench", "1", "0", "--replay", str(path), "--json"]) == 0  # a replay is simulated too
    assert json.loads(capsys.readouterr().out)["results"][0]["simulated"] is True


@pytest.mark.parametrize("argv, text", [
    (["bench", "--demo", "h200x2-vm"], "give two GPUs"),
    (["bench", "0", "1", "--all", "--demo", "h200x2-vm"], "give two GPUs"),
    (["bench", "0", "5", "--demo", "h200x2-vm"], "no GPU5"),
    (["bench", "1", "1", "--demo", "h200x2-vm"], "two different GPUs"),
    (["bench", "0", "1", "--demo", "h200x2-vm", "--tests", "ce,warp"], "unknown test(s) warp"),
    (["bench", "0", "1", "--demo", "h200x2-vm", "--size", "0"], "size_mib must be at least 1"),
    (["bench", "0", "1", "--demo", "h200x2-vm", "--timeout", "0"], "timeout must be a positive"),
])
def test_bad_arguments_exit_2_with_one_line(argv, text, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert text in err and err.count("\n") == 1


def test_live_without_cupy_names_the_extras(monkeypatch, capsys):
    snap = load_demo("h200x2-vm")
    snap.source.kind = "nvml"
    monkeypatch.setattr(bench_cmd, "snapshot_from_args", lambda args: (snap, None))
    monkeypatch.delenv("P2PTOP_BENCH_WORKER", raising=False)
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None if name == "cupy" else object())
    assert main(["bench", "0", "1"]) == 2
    err = capsys.readouterr().err
    assert 'pip install "p2ptop[cuda12]"' in err and 'pip install "p2ptop[cuda13]"' in err
