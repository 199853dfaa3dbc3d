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
            f"f = read_process({job.pid})['facts']; print(json.dumps({{k: f[k]['na'] for k in ('env.NCCL_P2P_DISABLE', 'proc.ipc_ns', 'host.shm_mb', 'host.container') if f[k]['value'] is None}}))")
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


def test_command_with_newlines_is_one_line_and_cut():
    """Device run: a `python3 -c` script's newlines came out raw in doctor's process line and facts."""
    from p2ptop.host.proc import one_line

    script = "python3 -c \nimport sys, time, torch\nx = torch.ones(1 << 20, device='cuda')\r\ntime.sleep(150)\n /tmp/x"
    line = one_line(script)
    assert "\n" not in line and "\r" not in line
    assert line == "python3 -c ⏎ import sys, time, torch ⏎ x = torch.ones(1 << 20, device='cuda') ⏎ time.sleep(150) ⏎ /tmp/x"
    long = one_line("python3 -c " + "x = 1\n" * 200)
    assert 190 <= len(long) <= 200 and long.endswith("…")
    assert one_line("a\x1b[31mred") == "a[31mred"  # terminal codes are data


def test_a_script_job_shows_its_command_on_one_line(capsys):
    p = subprocess.Popen([sys.executable, "-c", "import sys, time\nsys.stdout.write('up\\n')\nsys.stdout.flush()\ntime.sleep(60)"],
                         stdout=subprocess.PIPE)
    try:
        assert p.stdout.readline() == b"up\n"
        assert read_process(p.pid)["facts"]["proc.command"]["value"].count("⏎") == 3
        main(["doctor", "--pid", str(p.pid), "--demo", "h200x2-vm"])
        out = capsys.readouterr().out
        lines = [x for x in out.splitlines() if "proc.command" in x or f"process {p.pid}:" in x]
        assert len(lines) == 2 and all("import sys, time ⏎ sys.stdout.write" in x for x in lines), lines
        assert not any(x.strip().startswith("sys.stdout.flush()") for x in out.splitlines())
    finally:
        p.kill()
        p.wait()


def test_container_unknown_when_root_and_environment_cannot_be_read(job, monkeypatch):
    """Device run: non-root on root's job said host.container 'none'; it could not look. N/A needs root."""
    real = procmod._read_bytes

    def refused(path):
        if path.endswith("/environ"):
            raise PermissionError(13, "Permission denied")
        if path.endswith("/cgroup"):
            return b"0::/user.slice/session-1.scope\n"
        return real(path)

    monkeypatch.setattr(procmod, "_read_bytes", refused)
    monkeypatch.setattr(procmod, "_exists", lambda path: None if "/root/" in path else os.path.exists(path))
    monkeypatch.setattr(procmod.os, "geteuid", lambda: 1000)
    c = read_process(job.pid)["facts"]["host.container"]
    assert c["value"] is None and c["na"].startswith("needs root")
    from p2ptop.host import needs_root

    assert "host.container" in needs_root({"facts": read_process(job.pid)["facts"]})


def test_container_from_the_cgroup_even_without_root(job, monkeypatch):
    real = procmod._read_bytes

    def refused(path):
        if path.endswith("/environ"):
            raise PermissionError(13, "Permission denied")
        if path.endswith("/cgroup"):
            return b"0::/system.slice/docker-0123abcd.scope\n"
        return real(path)

    monkeypatch.setattr(procmod, "_read_bytes", refused)
    monkeypatch.setattr(procmod, "_exists", lambda path: None)
    c = read_process(job.pid)["facts"]["host.container"]
    assert c["value"] == "docker" and c["na"] is None and "cgroup" in c["how"]


def test_container_none_is_said_only_when_we_could_look(job, monkeypatch):
    monkeypatch.setattr(procmod, "_exists", lambda path: False)
    real = procmod._read_bytes
    monkeypatch.setattr(procmod, "_read_bytes", lambda path: b"0::/user.slice\n" if path.endswith("/cgroup") else real(path))
    c = read_process(job.pid)["facts"]["host.container"]
    assert c["value"] is None and c["na"] is None and "no container" in c["how"]


def test_only_transport_variables_are_called_p2p_variables(capsys):
    """Device run: 'Variables that change P2P are set' listed CUDA_HOME, NCCL_VERSION, NCCL_DEBUG, NVIDIA_REQUIRE_CUDA...;
    those go under Other, and the finding names only what changes P2P/transport choice (NCCL's env docs)."""
    env = {"PATH": os.environ.get("PATH", ""), "NCCL_DEBUG": "WARN", "CUDA_HOME": "/usr/local/cuda", "NCCL_VERSION": "2.28.3-1",
           "NVIDIA_REQUIRE_CUDA": "cuda>=13.0", "NCCL_SOCKET_IFNAME": "lo", "NCCL_NVLS_ENABLE": "0", "NCCL_IB_HCA": "mlx5_0",
           "NCCL_NET_GDR_LEVEL": "PHB", "NCCL_PROTO": "Simple", "CUDA_VISIBLE_DEVICES": "0"}
    p = subprocess.Popen([sys.executable, "-c", "import sys, time; sys.stdout.write('up\\n'); sys.stdout.flush(); time.sleep(60)"],
                         env=env, stdout=subprocess.PIPE)
    try:
        assert p.stdout.readline() == b"up\n"
        main(["doctor", "--pid", str(p.pid), "--demo", "h200x2-vm", "--json"])
        data = json.loads(capsys.readouterr().out)
        f = [x for x in data["findings"] if x["id"] == "env.set"][0]
        for name in ("NCCL_NVLS_ENABLE=0", "NCCL_IB_HCA=mlx5_0", "NCCL_NET_GDR_LEVEL=PHB", "NCCL_PROTO=Simple", "CUDA_VISIBLE_DEVICES=0"):
            assert name in f["summary"]
        for name in ("NCCL_DEBUG", "CUDA_HOME", "NCCL_VERSION", "NVIDIA_REQUIRE_CUDA", "NCCL_SOCKET_IFNAME"):
            assert name not in f["summary"] and not any(f"env.{name} " in e for e in f["evidence"])
        main(["doctor", "--pid", str(p.pid), "--demo", "h200x2-vm"])
        out = capsys.readouterr().out
        variables = out.split("Host facts: NCCL and CUDA variables")[1].split("Host facts:")[0]
        other = out.split("Host facts: Other")[1].split("Findings")[0]
        assert "env.NCCL_IB_HCA" in variables and "env.NCCL_NET_GDR_LEVEL" in variables and "env.NCCL_PROTO" in variables
        assert "env.NCCL_DEBUG" in other and "env.CUDA_HOME" in other and "env.NCCL_SOCKET_IFNAME" in other
        assert "env.NCCL_DEBUG" not in variables
    finally:
        p.kill()
        p.wait()
