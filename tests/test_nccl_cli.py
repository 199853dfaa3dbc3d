"""p2ptop nccl on a (pretend-)live host through fake rank workers (SIMULATED figures and logs)."""

import json
import pathlib
import sys

import pytest

from p2ptop.cli import main
from p2ptop.demos import load_demo
from p2ptop.model import load_snapshot

FAKES = pathlib.Path(__file__).parent / "fake_workers"


def live(n=2):
    snap = load_demo("h200x2-vm")
    snap.source.kind = "nvml"
    snap.source.simulated = False
    snap.gpus = snap.gpus[:n]
    return snap


@pytest.fixture
def fake_ranks(monkeypatch):
    monkeypatch.setenv("P2PTOP_NCCL_WORKER", f"{sys.executable} {FAKES / 'fake_nccl_worker.py'} ok")
    monkeypatch.setattr("p2ptop.commands.common.snapshot_from_args", lambda args: (live(), None))


def test_pair_run_prints_transports_and_nccl_tests_rows(fake_ranks, capsys):
    assert main(["nccl", "0", "1", "--max-bytes", "1048576"]) == 0
    out = capsys.readouterr().out
    assert "NCCL on GPUs 0, 1: ok, NCCL 2.28.9" in out
    assert "GPU0-GPU1" in out and "P2P/CUMEM x2" in out
    assert "sendrecv" in out and "all_reduce" in out and "nccl-tests' formulas" in out
    assert "nccl.transport" in out


def test_fallback_under_a_variable_is_a_problem(fake_ranks, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_NCCL_VIA", "SHM/direct/direct")
    monkeypatch.setenv("FAKE_NCCL_ENV", "NCCL_P2P_LEVEL=LOC")
    assert main(["nccl", "0", "1", "--max-bytes", "1024", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    f = [x for x in data["findings"] if x["id"] == "nccl.transport_fallback"]
    assert f and f[0]["severity"] == "problem" and f[0]["facts"]["env.NCCL_P2P_LEVEL"] == "LOC"
    assert data["runs"][0]["table"]["env"] == {"NCCL_P2P_LEVEL": "LOC"}


def test_save_then_replay_keeps_the_runs(fake_ranks, capsys, tmp_path):
    path = tmp_path / "s.json"
    assert main(["nccl", "--all", "--max-bytes", "1024", "--save", str(path)]) == 0
    snap = load_snapshot(str(path))
    assert snap.nccl["runs"][0]["gpus"] == [0, 1] and snap.nccl["runs"][0]["rows"]
    assert "log_text" not in snap.nccl["runs"][0]


def test_one_gpu_says_plainly_and_runs_the_ipc_test(monkeypatch, capsys):
    monkeypatch.setattr("p2ptop.commands.common.snapshot_from_args", lambda args: (live(1), None))
    monkeypatch.setenv("P2PTOP_IPC_WORKER", f"{sys.executable} {FAKES / 'fake_ipc_worker.py'} ok")
    assert main(["nccl", "--all"]) == 2
    cap = capsys.readouterr()
    assert "NCCL needs a distinct GPU per rank" in cap.err
    assert "ipc_legacy" in cap.out and "ipc_cumem" in cap.out and "in_process" in cap.out


def test_bad_arguments(capsys):
    assert main(["nccl"]) == 2
    assert main(["nccl", "0", "1", "--all"]) == 2
    assert main(["nccl", "0", "1", "--min-bytes", "64", "--max-bytes", "8"]) == 2
    assert "give two GPUs" in capsys.readouterr().err


def test_same_gpu_twice_is_refused(fake_ranks, capsys):
    assert main(["nccl", "1", "1"]) == 2
    assert "distinct GPU per rank" in capsys.readouterr().err


def test_demo_cannot_run_nccl(capsys):
    assert main(["nccl", "0", "1", "--demo", "h200x2-vm"]) == 2
    assert "not this machine" in capsys.readouterr().err


def test_one_gpu_runs_a_one_rank_communicator(monkeypatch, capsys):
    """`p2ptop nccl 0` on a one-GPU host: NCCL with nranks=1 through the rank worker (fake here, real on the device)."""
    monkeypatch.setattr("p2ptop.commands.common.snapshot_from_args", lambda args: (live(1), None))
    monkeypatch.setenv("P2PTOP_NCCL_WORKER", f"{sys.executable} {FAKES / 'fake_nccl_worker.py'} ok")
    assert main(["nccl", "0", "--max-bytes", "1048576", "--factor", "1024"]) == 0
    out = capsys.readouterr().out
    assert "NCCL on GPUs 0: ok, NCCL 2.28.9" in out and "one rank:" in out and "busbw is 0" in out
    assert "rank 0 (GPU0) to itself" in out
    rows = [x.split() for x in out.splitlines() if x.strip().startswith(("sendrecv", "all_reduce"))]
    assert [r[0] for r in rows] == ["sendrecv", "sendrecv", "all_reduce", "all_reduce"]
    assert all(float(r[-1]) == 0.0 for r in rows if r[0] == "all_reduce") and float(rows[-1][-2]) > 0
    assert all(r[-1] == r[-2] for r in rows if r[0] == "sendrecv")
    assert main(["nccl", "3"]) == 2 and "no GPU3 here" in capsys.readouterr().err


def test_one_gpu_all_points_to_the_one_rank_run(monkeypatch, capsys):
    monkeypatch.setattr("p2ptop.commands.common.snapshot_from_args", lambda args: (live(1), None))
    monkeypatch.setenv("P2PTOP_IPC_WORKER", f"{sys.executable} {FAKES / 'fake_ipc_worker.py'} ok")
    assert main(["nccl", "--all"]) == 2
    assert "p2ptop nccl 0 runs a one-rank communicator" in capsys.readouterr().err


def test_log_of_other_hosts_does_not_read_nvml(monkeypatch, capsys, tmp_path):
    """A log from other hosts is not judged against this host, so NVML and the host facts are not read
    (they take seconds on a GPU host); a log naming no host, or this one, still is."""
    import socket

    calls = []
    monkeypatch.setattr("p2ptop.commands.nccl._host_snapshot", lambda args: (calls.append(1), (None, "a host without NVML"))[1])
    other = tmp_path / "other.log"
    other.write_text("far-away-node:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n")
    main(["nccl", "--log", str(other)])
    out = capsys.readouterr().out
    assert calls == [] and "NVML not read" in out and "far-away-node" in out
    mine = tmp_path / "mine.log"
    mine.write_text(f"{socket.gethostname()}:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n")
    main(["nccl", "--log", str(mine)])
    assert calls == [1]


X2 = pathlib.Path(__file__).parent / "fixtures" / "device" / "h100x2-nccl"


@pytest.mark.parametrize("name, entry", [
    ("p2p-disable", "nccl/p2p-disabled-by-env"),
    ("p2p-level-loc", "nccl/p2p-level-loc-disables-p2p"),
    ("loc-shm-off", "nccl/p2p-level-loc-disables-p2p"),
    ("shm-64k", "nccl/shm-dev-shm-full"),
])
def test_nccl_log_names_the_entry_explain_names(capsys, name, entry):
    """`nccl --log` reads the log's lines for the knowledge base as explain does (one reader): on real logs
    of a 2 x H100 host, the entry explain puts first is first here too, likely (it was "unsure" or absent
    when only the table's findings were matched: the entries' conditions on the log's text never held)."""
    import json

    main(["nccl", "--log", str(X2 / f"{name}.log"), "--demo", "dgx-h100", "--json"])
    first = json.loads(capsys.readouterr().out)["knowledge"]["matches"][0]
    assert first["id"] == entry and first["confidence"] == "likely"
    # the facts the log gave are cited as the log's lines, not as the host's (here the demo's)
    if name != "shm-64k":
        assert any("of the NCCL log)" in r for r in first["reasons"]) and not any("nccl.transport" in r and ", demo)" in r for r in first["reasons"])
    main(["explain", str(X2 / f"{name}.log"), "--json"])
    assert entry in capsys.readouterr().out


def test_nccl_log_of_a_healthy_job_offers_no_entry(capsys):
    import json

    main(["nccl", "--log", str(X2 / "healthy.log"), "--demo", "dgx-h100", "--json"])
    assert json.loads(capsys.readouterr().out)["knowledge"]["matches"] == []


def test_digest_keeps_line_numbers_and_drops_repeats():
    from p2ptop.nccl.log import read_nccl_log

    text = (X2 / "p2p-level-loc.log").read_text()
    log = read_nccl_log(text)
    digest = log.digest(text)
    lines, kept = text.split("\n"), digest.split("\n")
    assert len(kept) == len(lines)  # line numbers are the log's
    assert kept[39] == lines[39] and "NCCL_P2P_LEVEL set by environment" in kept[39]  # line 40
    assert kept[73] == lines[73] and " via SHM" in kept[73]  # the first line of its channel route
    info = [n for n, line in enumerate(lines) if " NCCL INFO " in line]
    assert sum(1 for n in info if kept[n]) < len(info)  # repeats of what the log already holds are blanked
    assert all(kept[n] == lines[n] for n, line in enumerate(lines) if " NCCL INFO " not in line)


def test_a_log_over_the_digest_limit_is_matched_on_its_findings_and_says_so(monkeypatch, capsys):
    monkeypatch.setattr("p2ptop.nccl.log.DIGEST_LIMIT", 1000)
    main(["nccl", "--log", str(X2 / "p2p-level-loc.log"), "--demo", "dgx-h100"])
    out = capsys.readouterr().out
    assert "not read for the knowledge base" in out and "p2p-level-loc-disables-p2p" in out
