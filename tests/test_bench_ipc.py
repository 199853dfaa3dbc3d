"""The cross-process CUDA IPC test's runner against fake sides (tests/fake_workers/fake_ipc_worker.py: SIMULATED)."""

import json
import os
import sys
import time
import pathlib

import pytest

from p2ptop.bench.ipc import IpcOptions, ipc_available, ipc_findings, report, run_ipc, runtime_error_name
from p2ptop.cli import main
from p2ptop.demos import load_demo

FAKE = pathlib.Path(__file__).parent / "fake_workers" / "fake_ipc_worker.py"


@pytest.fixture
def live():
    snap = load_demo("h200x2-vm")
    snap.source.kind = "nvml"
    snap.source.simulated = False
    return snap


def opts(mode, timeout=10.0, **kw):
    return IpcOptions(worker=[sys.executable, str(FAKE), mode], timeout_s=timeout, **kw)


def test_both_handle_types_measured_against_the_in_process_copy(live):
    r = run_ipc(live, 0, 0, opts("ok"))
    assert r.status == "ok", r.problems
    assert set(r.measurements) == {"in_process", "ipc_legacy", "ipc_cumem"}
    assert r.shares == {"legacy": pytest.approx(1250 / 1300, abs=1e-3), "cumem": pytest.approx(1250 / 1300, abs=1e-3)}
    assert r.integrity["legacy"]["status"] == "ok" and r.integrity["cumem"]["status"] == "ok"
    assert r.sides["export"]["ipc_ns"] == r.sides["import"]["ipc_ns"]
    assert ipc_findings(r) == []
    assert "ipc_legacy" in report(r) and "96% of in-process" in report(r)


def test_a_failed_open_keeps_cudas_words_and_becomes_a_finding(live):
    r = run_ipc(live, 0, 0, opts("legacy_fails"))
    assert r.status == "failed"
    assert r.kind_ok("cumem") and not r.kind_ok("legacy")
    f = ipc_findings(r)
    assert len(f) == 1 and f[0].id == "bench.ipc_failed" and f[0].subject == "gpu:0" and f[0].severity == "problem"
    assert f[0].facts["error.cuda"] == "cudaErrorMapBufferObjectFailed" and f[0].facts["error.cuda_code"] == 205
    assert "mapping of buffer object failed" in f[0].facts["bench.error"]
    assert f[0].facts["ipc.namespace_differs"] is True
    assert any("IPC namespace ipc:[4026532999]" in e for e in f[0].evidence)


def test_a_wrapper_starts_one_side(live, tmp_path):
    wrap = tmp_path / "wrap.sh"
    wrap.write_text('#!/bin/sh\necho wrapped >> "$(dirname "$0")/wrapped"\nexec "$@"\n')
    wrap.chmod(0o755)
    r = run_ipc(live, 0, 1, opts("ok", wrap={"import": [str(wrap)]}))
    assert r.status == "ok" and r.sides["import"]["wrap"] == str(wrap) and not r.sides["export"]["wrap"]
    assert (tmp_path / "wrapped").read_text().split() == ["wrapped"]


def test_the_wrapper_can_come_from_the_environment(live, tmp_path, monkeypatch):
    wrap = tmp_path / "wrap.sh"
    wrap.write_text('#!/bin/sh\nexec "$@"\n')
    wrap.chmod(0o755)
    monkeypatch.setenv("P2PTOP_IPC_WRAP_IMPORT", str(wrap))
    assert run_ipc(live, 0, 0, opts("ok")).sides["import"]["wrap"] == str(wrap)


def _gone(pidfile):
    pids = [int(x) for x in pidfile.read_text().split()]
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        left = []
        for p in pids:
            try:
                with open(f"/proc/{p}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                        left.append(p)
            except FileNotFoundError:
                pass
        if not left:
            return True
        time.sleep(0.05)
    return False


def test_a_hang_times_out_and_both_sides_are_killed(live, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_PIDFILE", str(tmp_path / "pids"))
    t0 = time.monotonic()
    r = run_ipc(live, 0, 0, opts("hang", timeout=1.0))
    assert time.monotonic() - t0 < 8 and r.status == "timeout"
    assert _gone(tmp_path / "pids")
    assert any(f.facts.get("bench.status") == "timeout" for f in ipc_findings(r))


def test_a_crash_is_named(live, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_PIDFILE", str(tmp_path / "pids"))
    r = run_ipc(live, 0, 0, opts("crash"))
    assert r.status == "crashed" and any("import side was killed by SIGSEGV" in p for p in r.problems)
    assert _gone(tmp_path / "pids")


def test_garbage_and_fatal(live):
    r = run_ipc(live, 0, 0, opts("garbage"))
    assert r.status == "ok" and any("garbage line" in p for p in r.problems)
    r = run_ipc(live, 0, 0, opts("fatal"))
    assert r.status == "unavailable" and any("CuPy cannot be imported" in p for p in r.problems)


def test_not_this_machine_and_unknown_gpu():
    ok, why = ipc_available(load_demo("h200x2-vm"))
    assert not ok and "not this machine" in why
    snap = load_demo("h200x2-vm")
    snap.source.kind = "nvml"
    assert run_ipc(snap, 0, 5, opts("ok")).status == "failed"


def test_driver_error_names_become_runtime_names():
    assert runtime_error_name("CUDA_ERROR_INVALID_VALUE") == "cudaErrorInvalidValue"
    assert runtime_error_name("CUDA_ERROR_PEER_ACCESS_UNSUPPORTED") == "cudaErrorPeerAccessUnsupported"
    assert runtime_error_name("CUDA_ERROR_OUT_OF_MEMORY") == "cudaErrorMemoryAllocation"
    assert runtime_error_name("fd passing failed") is None


def test_cli_bench_ipc(live, monkeypatch, capsys):
    monkeypatch.setenv("P2PTOP_IPC_WORKER", f"{sys.executable} {FAKE} legacy_fails")
    monkeypatch.setattr("p2ptop.commands.bench.snapshot_from_args", lambda args: (live, None))
    assert main(["bench", "0", "0", "--ipc"]) == 1
    out = capsys.readouterr().out
    assert "cudaErrorMapBufferObjectFailed (205)" in out and "bench.ipc_failed" in out
    assert main(["bench", "0", "0", "--ipc", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ipc"]["status"] == "failed" and data["findings"][0]["facts"]["error.cuda"] == "cudaErrorMapBufferObjectFailed"
    assert main(["bench", "--all", "--ipc"]) == 2


def test_one_failure_is_one_finding_its_consequences_are_notes(live):
    """Device run (H100, import side under `unshare -p -f`): CUDA said 304 at setup, the import side exited 3, and
    p2ptop then killed the waiting export side; that is one problem, not three."""
    r = run_ipc(live, 0, 0, opts("setup_fails", timeout=10.0))
    assert r.status == "failed"
    assert r.problems == []
    assert any("import side exited with status 3 after its error" in n for n in r.notes)
    assert any("export side was stopped by p2ptop (SIGKILL)" in n for n in r.notes)
    f = ipc_findings(r)
    assert [x.id for x in f] == ["bench.ipc_failed"]
    assert f[0].facts["error.cuda"] == "cudaErrorOperatingSystem" and f[0].facts["error.cuda_code"] == 304
    assert f[0].facts["ipc.pid_namespace_differs"] is True and f[0].facts["ipc.namespace_differs"] is False
    assert any("PID namespace pid:[4026532777]" in e for e in f[0].evidence)
    text = report(r)
    assert "note: the export side was stopped by p2ptop" in text and "problem:" not in text
    assert "separate PID namespaces" in text and "did not work across them" in text


def test_a_crash_after_no_word_is_still_a_crash_and_the_stopped_side_a_note(live):
    r = run_ipc(live, 0, 0, opts("crash"))
    assert r.status == "crashed"
    assert len(r.problems) == 1 and "import side was killed by SIGSEGV" in r.problems[0]
    assert any("export side was stopped by p2ptop" in n for n in r.notes)
    assert len([x for x in ipc_findings(r) if x.severity == "problem"]) == 1


def test_separate_ipc_namespaces_that_did_not_stop_cuda_ipc_are_said_plainly(live):
    r = run_ipc(live, 0, 0, opts("other_ns"))
    assert r.status == "ok"
    text = report(r)
    assert "separate IPC namespaces did not stop CUDA IPC on this host" in text
    f = ipc_findings(r)
    assert [(x.id, x.severity) for x in f] == [("bench.ipc_across_namespaces", "info")]
    assert f[0].facts["ipc.namespace_differs"] is True and f[0].facts["ipc.kind"] == "legacy,cumem"
    same = run_ipc(live, 0, 0, opts("ok"))
    assert "namespaces:" not in report(same) and ipc_findings(same) == []
