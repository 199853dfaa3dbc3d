"""doctor --pid: a running process's own variables, container, /dev/shm and namespaces, from /proc."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from p2ptop.cli import main
from p2ptop.host import proc as procmod
from p2ptop.host.proc import apply_to_host, process_findings, read_process


@pytest.fixture
def job():
    env = {"PATH": os.environ.get("PATH", ""), "NCCL_P2P_DISABLE": "1", "NCCL_SOCKET_IFNAME": "eth0", "CUDA_VISIBLE_DEVICES": "1,0"}
    p = subprocess.Popen([sys.executable, "-c", "import sys, time; sys.stdout.write('up\\n'); sys.stdout.flush(); time.sleep(60)"],
                         env=env, stdout=subprocess.PIPE)
    assert p.stdout.readline() == b"up\n"
    yield p
    p.kill()
    p.wait()


def test_the_process_environment_not_ours(job, monkeypatch):
    monkeypatch.setenv("NCCL_P2P_LEVEL", "SYS")  # ours: must not show
    facts = read_process(job.pid)["facts"]
    assert facts["env.NCCL_P2P_DISABLE"]["value"] == "1"
    assert facts["env.CUDA_VISIBLE_DEVICES"]["value"] == "1,0"
    assert facts["env.NCCL_SOCKET_IFNAME"]["value"] == "eth0"  # any NCCL_* variable, not only the known ones
    assert facts["env.NCCL_P2P_LEVEL"]["value"] is None and "not set" in facts["env.NCCL_P2P_LEVEL"]["how"]
    assert f"/proc/{job.pid}/environ" in facts["env.NCCL_P2P_DISABLE"]["how"]
    assert facts["proc.ipc_ns_shared"]["value"] is True and facts["proc.pid_ns_shared"]["value"] is True
    assert isinstance(facts["host.shm_mb"]["value"], int) and facts["host.shm_mb"]["value"] > 0
    assert "-c import sys" in facts["proc.command"]["value"]


def test_doctor_pid_judges_that_process(job, capsys, monkeypatch):
    monkeypatch.delenv("NCCL_P2P_DISABLE", raising=False)
    main(["doctor", "--pid", str(job.pid), "--demo", "h200x2-vm", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["host"]["process"]["pid"] == job.pid
    assert data["host"]["facts"]["env.NCCL_P2P_DISABLE"]["value"] == "1"
    p2p = [f for f in data["findings"] if f["id"] == "env.p2p_disabled"]
    assert p2p and p2p[0]["facts"]["env.NCCL_P2P_DISABLE"] == "1"  # the matcher gets that process's env.* facts
    main(["doctor", "--pid", str(job.pid), "--demo", "h200x2-vm"])
    out = capsys.readouterr().out
    assert f"Host facts: Process {job.pid}" in out and "that process's" in out


def test_no_such_process(capsys):
    assert main(["doctor", "--pid", "999999999"]) == 2
    assert "no process 999999999" in capsys.readouterr().err


def test_another_users_process_says_needs_root(job, monkeypatch):
    """The kernel answers EACCES for another user's environ, root and namespaces: N/A 'needs root'."""
    real = procmod._read_bytes

    def refused(path):
        if path.endswith("/environ"):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(procmod, "_read_bytes", refused)
    monkeypatch.setattr(procmod.os, "geteuid", lambda: 1000)
    facts = read_process(job.pid)["facts"]
    assert facts["env.NCCL_P2P_DISABLE"]["value"] is None
    assert facts["env.NCCL_P2P_DISABLE"]["na"].startswith("needs root")
    from p2ptop.host import needs_root

    assert "env.NCCL_P2P_DISABLE" in needs_root({"facts": facts})


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv to become another user")
def test_for_real_as_nobody_reading_a_root_process(job):
    """Run the reader as user nobody against the root-owned test job: the kernel refuses, we say needs root."""
    code = ("import json, sys; from p2ptop.host.proc import read_process; "
            f"f = read_process({job.pid})['facts']; print(json.dumps({{k: f[k]['na'] for k in ('env.NCCL_P2P_DISABLE', 'proc.ipc_ns', 'host.shm_mb')}}))")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c"]
    env = {**os.environ, "PYTHONPATH": root}
    if subprocess.run(nobody + ["import p2ptop.host.proc"], capture_output=True, env=env, timeout=30).returncode != 0:
        pytest.skip("user nobody cannot read this checkout (or its Python)")
    out = subprocess.run(nobody + [code], capture_output=True, text=True, env=env, timeout=30)
    assert out.returncode == 0, out.stderr
    na = json.loads(out.stdout)
    assert all(v and v.startswith("needs root") for v in na.values()), na


def test_another_ipc_namespace_is_a_warning():
    host = apply_to_host({"facts": {"env.NCCL_DEBUG": {"value": "INFO"}}}, {"pid": 42, "facts": {
        "proc.ipc_ns": {"value": "ipc:[1]", "how": "readlink"}, "proc.ipc_ns_shared": {"value": False, "how": "readlink"}}})
    assert "env.NCCL_DEBUG" not in host["facts"]  # our own variables are replaced by the process's
    f = process_findings(host)
    assert [x.id for x in f] == ["process.ipc_namespace"] and f[0].facts == {"proc.ipc_ns_shared": False}
