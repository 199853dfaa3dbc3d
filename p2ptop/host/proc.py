"""Facts of another running process, from /proc: its NCCL_*/CUDA_* variables, container and cgroup,
the size of its /dev/shm and whether it shares our IPC and PID namespaces (``doctor --pid PID``).

Everything is read without root where the process belongs to the user: ``/proc/PID/environ``,
``/proc/PID/root`` and ``/proc/PID/ns/*`` are open to the process's owner (ptrace read access);
for another user's process the kernel says EACCES and the fact is N/A "needs root". The facts have
the host facts' shape (``{"value", "how", "na"}``) and names, so the diagnosis and the knowledge base
read the job's own environment as they read ours: ``env.NCCL_P2P_DISABLE`` is that process's.
"""

from __future__ import annotations

import os
import pwd
from typing import Any, Optional

from .env import P2P_VARIABLES
from .facts import NEEDS_ROOT, clean
from .virt import CGROUP_RUNTIMES

PREFIXES = ("NCCL_", "CUDA_", "NVIDIA_", "TORCH_NCCL_", "NCCL")
#: the facts this module adds besides env.*, in the order doctor shows them
FACTS = ("proc.command", "proc.user", "proc.cgroup", "host.container", "host.shm_mb", "proc.ipc_ns", "proc.ipc_ns_shared",
         "proc.pid_ns", "proc.pid_ns_shared")


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(1 << 20)


def _why(e: OSError) -> str:
    if isinstance(e, PermissionError):
        if os.geteuid() == 0:
            return "permission denied even to root (ptrace restrictions, or a process outside our namespaces)"
        return f"{NEEDS_ROOT} (the process belongs to another user)"
    if isinstance(e, FileNotFoundError):
        return "the process is gone"
    return f"cannot be read ({e.strerror or e})"


def one_line(text: str, limit: int = 200) -> str:
    """A command line or a variable as one line: newlines shown as ⏎, control characters dropped, cut at ``limit``."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    text = " ⏎ ".join(part.strip() for part in text.split("\n") if part.strip())
    text = clean(text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _exists(path: str) -> Optional[bool]:
    """Whether ``path`` exists; None when the kernel will not say (another user's /proc/PID/root)."""
    try:
        os.stat(path)
        return True
    except PermissionError:
        return None
    except OSError:
        return False


def _fact(value: Any, how: str, na: Optional[str] = None) -> dict[str, Any]:
    return {"value": value, "how": how, "na": na if value is None else None}


def process_exists(pid: int, proc: str = "/proc") -> bool:
    return os.path.isdir(os.path.join(proc, str(pid)))


def read_process(pid: int, proc: str = "/proc") -> dict[str, Any]:
    """{"pid", "facts": {name: fact}} of process ``pid``; never raises for a process that went away."""
    base = os.path.join(proc, str(pid))
    facts: dict[str, dict] = {}
    try:
        cmd = _read_bytes(f"{base}/cmdline").replace(b"\0", b" ").decode("utf-8", errors="replace").strip()
        facts["proc.command"] = _fact(one_line(cmd) or None, f"read /proc/{pid}/cmdline", "empty (a kernel thread?)")
    except OSError as e:
        facts["proc.command"] = _fact(None, f"read /proc/{pid}/cmdline", _why(e))
    try:
        uid = int(next(line.split()[1] for line in _read_bytes(f"{base}/status").decode().splitlines() if line.startswith("Uid:")))
        try:
            name = pwd.getpwuid(uid).pw_name
        except KeyError:
            name = str(uid)
        facts["proc.user"] = _fact(f"{name} (uid {uid})", f"read /proc/{pid}/status")
    except (OSError, StopIteration, ValueError, IndexError) as e:
        facts["proc.user"] = _fact(None, f"read /proc/{pid}/status", _why(e) if isinstance(e, OSError) else "no Uid line")
    # the environment
    how_env = f"environment of process {pid} (/proc/{pid}/environ)"
    env: Optional[dict[str, str]] = None
    env_error: Optional[OSError] = None
    try:
        env = {}
        for item in _read_bytes(f"{base}/environ").split(b"\0"):
            k, sep, v = item.decode("utf-8", errors="replace").partition("=")
            if sep:
                env[k] = v
    except OSError as e:
        env, env_error = None, e
        for name in P2P_VARIABLES:
            facts[f"env.{name}"] = _fact(None, how_env, _why(e))
    if env is not None:
        names = set(P2P_VARIABLES) | {k for k in env if k.startswith(PREFIXES)}
        for name in sorted(names, key=lambda n: (n not in P2P_VARIABLES, n)):
            facts[f"env.{name}"] = _fact(one_line(env[name], 300) if name in env else None, how_env + ("" if name in env else " (not set)"))
    # container and cgroup
    cgroup = None
    try:
        cgroup = _read_bytes(f"{base}/cgroup").decode("utf-8", errors="replace")
        first = cgroup.strip().splitlines()[0] if cgroup.strip() else ""
        facts["proc.cgroup"] = _fact(clean(first.split(":", 2)[-1])[:200] or "/", f"read /proc/{pid}/cgroup")
    except OSError as e:
        facts["proc.cgroup"] = _fact(None, f"read /proc/{pid}/cgroup", _why(e))
    runtime, how = None, "no container variables, markers or container cgroups"
    markers = {}
    if env is not None and env.get("KUBERNETES_SERVICE_HOST"):
        runtime, how = "kubernetes", "KUBERNETES_SERVICE_HOST is set in its environment"
    elif env is not None and env.get("container"):
        runtime, how = env["container"], "the container variable is set in its environment"
    else:
        markers = {rt: _exists(f"{base}/root/{marker}") for rt, marker in (("docker", ".dockerenv"), ("podman", "run/.containerenv"))}
        found = [rt for rt, there in markers.items() if there]
        if found:
            runtime, how = found[0], f"/proc/{pid}/root/{'.dockerenv' if found[0] == 'docker' else 'run/.containerenv'} exists"
        elif cgroup:
            for word, rt in CGROUP_RUNTIMES:
                if word in cgroup:
                    runtime, how = rt, f"'{word}' in /proc/{pid}/cgroup"
                    break
    na = None
    if runtime is None and (env is None or None in markers.values()):
        # "none" would be a guess: its environment or its root could not be read
        na = _why(env_error if env_error is not None and None not in markers.values() else PermissionError(13, "Permission denied"))
        how = f"its environment and /proc/{pid}/root (container markers) could not be read; /proc/{pid}/cgroup names no runtime"
    facts["host.container"] = _fact(runtime, how, na)
    # /dev/shm as the process sees it (its mount namespace, through its root)
    try:
        st = os.statvfs(f"{base}/root/dev/shm")
        facts["host.shm_mb"] = _fact(st.f_blocks * st.f_frsize // (1 << 20), f"statvfs /proc/{pid}/root/dev/shm")
    except OSError as e:
        facts["host.shm_mb"] = _fact(None, f"statvfs /proc/{pid}/root/dev/shm", _why(e))
    # namespaces against ours
    for ns in ("ipc", "pid"):
        how = f"readlink /proc/{pid}/ns/{ns} against /proc/self/ns/{ns}"
        try:
            theirs = os.readlink(f"{base}/ns/{ns}")
            ours = os.readlink(f"{proc}/self/ns/{ns}") if os.path.exists(f"{proc}/self") else os.readlink(f"/proc/self/ns/{ns}")
            facts[f"proc.{ns}_ns"] = _fact(theirs, how)
            facts[f"proc.{ns}_ns_shared"] = _fact(theirs == ours, how)
        except OSError as e:
            facts[f"proc.{ns}_ns"] = _fact(None, how, _why(e))
            facts[f"proc.{ns}_ns_shared"] = _fact(None, how, _why(e))
    return {"pid": pid, "facts": facts}


def apply_to_host(host: dict[str, Any], process: dict[str, Any]) -> dict[str, Any]:
    """Host facts with the process's own in place of ours: its env.* (ours removed), container, /dev/shm."""
    facts = {k: v for k, v in (host.get("facts") or {}).items() if not k.startswith("env.")}
    facts.update(process["facts"])
    out = dict(host)
    out["facts"] = facts
    out["process"] = {"pid": process["pid"], "command": (process["facts"].get("proc.command") or {}).get("value")}
    return out


def process_findings(host: dict[str, Any]) -> list:
    """What the process's own facts say beyond the host findings: another IPC or PID namespace."""
    from ..findings import Finding

    proc = host.get("process") or {}
    facts = host.get("facts") or {}
    out = []
    for ns, what in (("ipc", "CUDA IPC handles (legacy) and NCCL's shared-memory transport need the processes that share "
                             "GPU memory in one IPC namespace (docker: --ipc=host or a shared --ipc)"),
                     ("pid", "NCCL's cuMem handle exchange and pidfd_getfd need the peers' PIDs to be visible (docker: --pid=host)")):
        shared = (facts.get(f"proc.{ns}_ns_shared") or {}).get("value")
        if shared is False:
            out.append(Finding(f"process.{ns}_namespace", "host", "warning",
                               f"Process {proc.get('pid')} is in another {ns.upper()} namespace than p2ptop ({facts[f'proc.{ns}_ns']['value']})",
                               [what, facts[f"proc.{ns}_ns"]["how"]], {f"proc.{ns}_ns_shared": False}))
    return out
