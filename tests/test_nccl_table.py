"""The per-pair transport table and NCCL findings, on the real H200 NCCL 2.28 log and the public-log fixtures.

Logs marked DERIVED are the real H200 log with its channel lines' transport replaced and one
"set by environment" line added, as NCCL prints them (what the issue saw on that host under
NCCL_P2P_LEVEL=LOC and with SHM off as well); they are labelled so wherever used."""

import json
import pathlib

import pytest

from p2ptop.cli import main
from p2ptop.demos import load_demo
from p2ptop.nccl.findings import table_findings
from p2ptop.nccl.table import pair_row, table_from_text

HERE = pathlib.Path(__file__).resolve().parent
H200 = HERE.parent.parent / "shared" / "captures" / "h200x2-nvswitch-vm" / "nccl-2.28-allreduce-default.log"
FIX = HERE / "fixtures" / "nccl_logs"
needs_h200 = pytest.mark.skipif(not H200.exists(), reason="the shared H200 capture is not beside the repository")


def derived(via: str, env: dict) -> str:
    """DERIVED from the real H200 log: every channel 'via P2P/CUMEM' -> via ``via``, env lines added."""
    lines = H200.read_text().replace("via P2P/CUMEM", f"via {via}").splitlines()
    extra = [f"vm:1637:1637 [0] NCCL INFO {k} set by environment to {v}." for k, v in env.items()]
    return "\n".join(lines[:40] + extra + lines[40:]) + "\n"


@needs_h200
def test_the_healthy_h200_log_is_p2p_cumem_both_ways():
    t = table_from_text(H200.read_text())
    assert t["version"] == "2.28.9" and t["hosts"] == ["vm"]
    p = pair_row(t, 1, 0)
    assert p["worst"] == "P2P/CUMEM" and p["forward"] == {"P2P/CUMEM": 24} and p["reverse"] == {"P2P/CUMEM": 24}
    assert t["env"] == {"NCCL_NVLS_ENABLE": "0"}
    f = table_findings(t, load_demo("h200x2-vm"))
    assert [(x.id, x.severity, x.facts["nccl.transport"]) for x in f] == [("nccl.transport", "ok", "P2P/CUMEM")]
    assert f[0].facts["pair.path"] == "NV18"


@needs_h200
def test_ranks_map_to_gpus_by_bus_id_when_the_host_is_known():
    t = table_from_text(H200.read_text(), bus_to_gpu={"00000000:00:06.0": 1, "00000000:00:07.0": 0})
    assert [(r["rank"], r["gpu"], r["how"]) for r in t["ranks"]] == [(0, 1, "PCI bus id"), (1, 0, "PCI bus id")]
    p = t["pairs"][0]
    assert p["gpus"] == [0, 1] and p["ranks"] == [0, 1]


@needs_h200
def test_shm_under_p2p_level_loc_on_nv18_is_a_fallback_problem_with_the_variable():
    t = table_from_text(derived("SHM/direct/direct", {"NCCL_P2P_LEVEL": "LOC"}))  # DERIVED
    f = [x for x in table_findings(t, load_demo("h200x2-vm")) if x.id == "nccl.transport_fallback"]
    assert len(f) == 1 and f[0].severity == "problem" and f[0].subject == "pair:0-1"
    assert f[0].facts["nccl.p2p_fallback"] is True and f[0].facts["nccl.transport"] == "SHM"
    assert f[0].facts["env.NCCL_P2P_LEVEL"] == "LOC"
    assert any("NCCL_P2P_LEVEL=LOC is below this pair's path NV18 (NVL" in e for e in f[0].evidence)


@needs_h200
def test_net_socket_with_p2p_and_shm_off_names_both_variables():
    t = table_from_text(derived("NET/Socket/0", {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1"}))  # DERIVED
    f = [x for x in table_findings(t, load_demo("h200x2-vm")) if x.id == "nccl.transport_fallback"][0]
    assert f.facts["nccl.transport"] == "NET/Socket"
    text = " ".join(f.evidence)
    assert "NCCL_P2P_DISABLE set by environment to 1" in text and "NCCL_SHM_DISABLE set by environment to 1" in text
    assert f.facts["env.NCCL_P2P_DISABLE"] == "1" and f.facts["env.NCCL_SHM_DISABLE"] == "1"


@needs_h200
def test_without_nvml_for_the_logs_host_it_is_a_warning_not_a_problem():
    t = table_from_text(derived("SHM/direct/direct", {"NCCL_P2P_DISABLE": "1"}))  # DERIVED
    f = [x for x in table_findings(t, None) if x.id == "nccl.transport_fallback"][0]
    assert f.severity == "warning" and "nccl.p2p_fallback" not in f.facts and "not known" in f.summary


def test_where_nvml_says_no_p2p_shm_is_expected():
    snap = load_demo("pcie-4gpu-iommu")
    refused = [(p.a, p.b) for p in snap.pairs if p.status("read") not in ("OK", None)]
    assert refused
    a, b = refused[0]
    text = "\n".join([f"h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev {a} nvmlDev {a} busId 1000 commId 0x5 - Init START",
                      f"h:2:2 [1] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev {b} nvmlDev {b} busId 2000 commId 0x5 - Init START",
                      f"h:1:1 [0] NCCL INFO Channel 00/0 : 0[{a}] -> 1[{b}] via SHM/direct/direct"])
    f = table_findings(table_from_text(text), snap)
    assert [(x.id, x.severity) for x in f] == [("nccl.transport", "info")]


def test_public_log_with_could_not_enable_p2p_gives_nccls_reason():
    t = table_from_text((FIX / "nccl-1516-shm-could-not-enable-p2p.log").read_text())
    f = [x for x in table_findings(t, None) if x.id == "nccl.transport_fallback"]
    assert f and any("Could not enable P2P between dev 1(=81000) and dev 0(=41000)" in e for e in f[0].evidence)


def test_nodes_are_kept_apart_by_hostname():
    t = table_from_text((FIX / "nccl-952-ipc-socket-multinode.log").read_text())
    cross = [p for p in t["pairs"] if p["cross_node"]]
    assert len(cross) == 1 and cross[0]["worst"] == "NET/Socket" and sorted(cross[0]["hosts"]) == ["nodeA", "nodeB"]
    inside = [p for p in t["pairs"] if not p["cross_node"]]
    assert inside and all(p["host"] == "nodeA" and p["worst"] == "P2P/IPC" for p in inside)
    assert not [x for x in table_findings(t, None) if x.id == "nccl.transport_fallback"]


def test_nccl_errors_become_findings_with_the_result_name():
    t = table_from_text((FIX / "ray-lightning-24-ipc-217.log").read_text())
    errs = [x for x in table_findings(t, None) if x.id == "nccl.error"]
    assert errs and any(x.facts.get("error.nccl") == "ncclUnhandledCudaError" for x in errs)


# --- the command ----------------------------------------------------------------------------


@needs_h200
def test_cli_log_judged_against_a_snapshot(capsys, tmp_path):
    path = tmp_path / "job.log"
    path.write_text(derived("SHM/direct/direct", {"NCCL_P2P_LEVEL": "LOC"}))  # DERIVED
    assert main(["nccl", "--log", str(path), "--demo", "h200x2-vm"]) == 1
    out = capsys.readouterr().out
    assert "GPU0-GPU1" in out and "SHM x24" in out and "nccl.transport_fallback" in out and "NCCL_P2P_LEVEL=LOC" in out
    assert main(["nccl", "--log", str(path), "--demo", "h200x2-vm", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["table"]["pairs"][0]["worst"] == "SHM"
    assert any(f["id"] == "nccl.transport_fallback" and f["severity"] == "problem" for f in data["findings"])


@needs_h200
def test_cli_log_from_stdin(capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(H200.read_bytes())))
    assert main(["nccl", "--log", "-", "--demo", "h200x2-vm"]) == 0
    assert "P2P/CUMEM x24" in capsys.readouterr().out


def test_cli_log_bad_input_is_a_clear_error(capsys, tmp_path):
    assert main(["nccl", "--log", str(tmp_path / "missing.log")]) == 2
    assert "no such file" in capsys.readouterr().err
    junk = tmp_path / "junk.log"
    junk.write_bytes(b"\xff\xfe not a log\n")
    assert main(["nccl", "--log", str(junk)]) == 2
    assert "no NCCL lines" in capsys.readouterr().err
    assert main(["nccl", "0", "1", "--log", str(junk)]) == 2


def test_cli_log_text_is_data_not_terminal_codes(capsys, tmp_path):
    path = tmp_path / "evil.log"
    path.write_text("h:1:1 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to \x1b[31mLOC\x1b[0m.\n"
                    "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n")
    main(["nccl", "--log", str(path)])
    assert "\x1b" not in capsys.readouterr().out


def test_a_ranks_channels_to_itself_are_not_a_pair():
    """A one-rank communicator's send to itself (SYNTHETIC lines in NCCL 2.28's format): 'rank 0 to itself', no GPU pair."""
    text = "\n".join([
        "h1:10:10 [0] NCCL INFO NCCL version 2.28.9+cuda13.0",
        "h1:10:10 [0] NCCL INFO ncclCommInitRankConfig comm 0x1 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 6000 commId 0x2 - Init START",
        "h1:10:10 [0] NCCL INFO Channel 00/0 : 0[0] -> 0[0] via P2P/CUMEM",
        "h1:10:10 [0] NCCL INFO Channel 01/0 : 0[0] -> 0[0] via P2P/CUMEM",
    ])
    t = table_from_text(text, rank_to_gpu={0: 0})
    assert t["pairs"] == []
    assert t["self"] == [{"rank": 0, "host": "h1", "gpu": 0, "transports": {"P2P/CUMEM": 2}, "channels": 2, "first_line": 3}]
    assert table_findings(t, None) == []
