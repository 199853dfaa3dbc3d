"""doctor as a node health check, run the way LBNL NHC and Kubernetes node-problem-detector run it.

NHC's check_cmd_status (scripts/lbnl_cmd.nhc in github.com/mej/nhc) runs the command with stdin and
output on /dev/null and compares its exit status with -r (default 0). Its check_cmd_output also reads
the output lines against -m expressions. node-problem-detector's custom plugin monitor runs a rule's
path with its args, reads the exit status (0 OK, 1 NonOK, 2 Unknown) and takes stdout, trimmed and cut
at max_output_length, as the condition's message. The configs tested are the ones in deploy/ that the
README copies; `p2ptop` on PATH is a shim that runs this checkout on a demo (or live, with no GPU here).
"""

import json
import os
import pathlib
import shlex
import stat
import subprocess
import sys

import pytest

from p2ptop.diagnose import findings_for
from p2ptop.demos import DEMOS
from p2ptop.health import ADVICE, DEFAULT, NPD_MAX_OUTPUT, advice, oneline
from p2ptop.sources import open_snapshot

ROOT = pathlib.Path(__file__).resolve().parent.parent
NHC_CONF = ROOT / "deploy" / "nhc" / "nhc.conf"
NHC_SCRIPT = ROOT / "deploy" / "nhc" / "p2ptop.nhc"
NPD_CONF = ROOT / "deploy" / "kubernetes" / "npd-p2ptop.json"


@pytest.fixture
def shim(tmp_path):
    """A `p2ptop` on PATH that runs this checkout, on the demo named by $P2PTOP_SHIM_DEMO (live when unset)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    p = bindir / "p2ptop"
    p.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m p2ptop "$@" ${{P2PTOP_SHIM_DEMO:+--demo "$P2PTOP_SHIM_DEMO"}}\n')
    p.chmod(p.stat().st_mode | stat.S_IEXEC)

    def env(demo=None):
        e = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", PYTHONPATH=str(ROOT))
        e.pop("P2PTOP_SHIM_DEMO", None)
        if demo:
            e["P2PTOP_SHIM_DEMO"] = demo
        return e

    env.path = str(p)
    return env


def nhc_check_cmd_status(line, env):
    """check_cmd_status as lbnl_cmd.nhc does it: (passed, the message NHC would die with)."""
    words = shlex.split(line.split("||", 1)[1])
    assert words[0] == "check_cmd_status"
    timeout, retval, i = 5, 0, 1
    while words[i].startswith("-"):
        if words[i] == "-t":
            timeout = int(words[i + 1])
        elif words[i] == "-r":
            retval = int(words[i + 1])
        i += 2
    cmd = words[i:]
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout, env=env, cwd=ROOT)
    if r.returncode != retval:
        return False, f"check_cmd_status:  {r.returncode} (expected {retval}) returned by \"{' '.join(cmd)}\"."
    return True, ""


def nhc_lines():
    return [l for l in NHC_CONF.read_text().splitlines() if l.strip() and not l.lstrip().startswith("#")]


def test_nhc_check_cmd_status_passes_a_healthy_node_and_fails_a_broken_one(shim):
    (line,) = nhc_lines()
    ok, msg = nhc_check_cmd_status(line, shim("dgx-h100"))
    assert ok, msg
    ok, msg = nhc_check_cmd_status(line, shim("nvlink-degraded"))
    assert not ok and "1 (expected 0)" in msg
    ok, msg = nhc_check_cmd_status(line, shim("pcie-4gpu-iommu"))
    assert not ok


def run_nhc_function(env):
    """deploy/nhc/p2ptop.nhc in bash, with NHC's die and nhc_cmd_with_timeout standing in."""
    script = (f"source {shlex.quote(str(NHC_SCRIPT))}\n"
              'die() { echo "DIE $1 $2"; }\n'
              'nhc_cmd_with_timeout() { local t=$1; shift; timeout "$t" "$@"; }\n'
              "check_p2ptop 60; echo \"RC $?\"\n")
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, env=env, cwd=ROOT).stdout


def test_nhc_check_function_puts_the_finding_in_the_reason(shim):
    out = run_nhc_function(shim("nvlink-degraded"))
    assert "DIE 1 check_p2ptop: PROBLEM (simulated): GPU3: 2 of 12 NVLinks down (links 4, 5)" in out
    assert "operator can act" in out and out.strip().endswith("RC 1")
    out = run_nhc_function(shim("dgx-h100"))
    assert out.strip() == "RC 0"


def npd_run(env, conf):
    """One invocation of each rule as node-problem-detector's custom plugin does it: (status, message)."""
    out = []
    for rule in conf["rules"]:
        assert os.path.basename(rule["path"]) == "p2ptop"
        timeout = int(rule["timeout"].rstrip("s"))
        r = subprocess.run([env.path if hasattr(env, "path") else rule["path"]] + rule["args"], capture_output=True, text=True,
                           timeout=timeout, env=env)
        status = {0: "OK", 1: "NonOK", 2: "Unknown"}.get(r.returncode, "Unknown")
        message = r.stdout.strip()[: conf["pluginConfig"]["max_output_length"]]
        out.append((status, message, r.stdout))
    return out


class _Env(dict):
    pass


def test_npd_custom_plugin_protocol(shim):
    conf = json.loads(NPD_CONF.read_text())
    assert conf["plugin"] == "custom" and conf["pluginConfig"]["max_output_length"] == NPD_MAX_OUTPUT
    for demo, want, word in (("dgx-h100", "OK", "OK (simulated):"), ("nvlink-degraded", "NonOK", "PROBLEM (simulated): [drain; operator] GPU3"),
                             ("rtx4090-2gpu", "NonOK", "PROBLEM (simulated):")):
        env = _Env(shim(demo))
        env.path = shim.path
        ((status, message, raw),) = npd_run(env, conf)
        assert status == want, (demo, raw)
        assert message.startswith(word), message
        assert raw.count("\n") == 1 and len(raw.strip()) <= NPD_MAX_OUTPUT  # one line, not cut by NPD


def test_npd_unknown_when_the_gpus_cannot_be_read(shim, tmp_path):
    conf = json.loads(NPD_CONF.read_text())
    env = _Env(shim())
    env.path = shim.path
    conf["rules"][0]["args"] = conf["rules"][0]["args"] + ["--replay", str(tmp_path / "missing.json")]
    ((status, message, raw),) = npd_run(env, conf)
    assert status == "Unknown" and message.startswith("UNKNOWN: p2ptop could not read the GPUs")


def test_every_warning_or_problem_in_the_demos_has_its_own_advice():
    from p2ptop.bench.runner import BenchOptions, all_pairs, run_all

    seen = set()
    for demo in DEMOS:
        snap = open_snapshot(demo=demo)
        if len(snap.gpus) <= 8:
            snap.bench = run_all(snap, all_pairs(snap), BenchOptions(tests={"ce"}, simulated_pair_s=0.0))
        for f in findings_for(snap):
            if f.severity in ("warning", "problem"):
                assert advice(f) is not DEFAULT, f.id
                seen.add(f.id)
    assert {"nvlink.down", "pcie.degraded", "p2p.not_supported", "xid.recent"} <= seen
    for a in ADVICE.values():
        assert a.who in ("tenant", "operator") and a.actions and a.threshold


def test_oneline_is_one_plain_line():
    snap = open_snapshot(demo="nvlink-degraded")
    fs = findings_for(snap)
    fs[0].summary = "GPU3:\x1b[31m evil\nsecond line"
    fs[0].severity = "problem"
    line = oneline(1, fs, gpus=8, simulated=False)
    assert "\n" not in line and "\x1b" not in line
    assert len(oneline(1, fs, gpus=8, simulated=True, limit=80)) <= 80


def test_doctor_json_carries_advice():
    r = subprocess.run([sys.executable, "-m", "p2ptop", "doctor", "--demo", "nvlink-degraded", "--json"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    data = json.loads(r.stdout)
    down = [f for f in data["findings"] if f["id"] == "nvlink.down"][0]
    assert down["advice"]["who"] == "operator" and down["advice"]["tenant_can_act"] is False
    assert "drain" in down["advice"]["actions"]


def test_doctor_bench_budget_adds_copy_tests():
    def ids(*extra):
        r = subprocess.run([sys.executable, "-m", "p2ptop", "doctor", "--demo", "pcie-4gpu-iommu", "--json", *extra],
                           capture_output=True, text=True, timeout=120, cwd=ROOT)
        return {f["id"] for f in json.loads(r.stdout)["findings"]}

    assert not {i for i in ids() if i.startswith("bench.")}
    assert {i for i in ids("--bench-budget", "30") if i.startswith("bench.")}  # refused pairs fail their copy tests
    r2 = subprocess.run([sys.executable, "-m", "p2ptop", "doctor", "--demo", "nvlink-degraded", "--bench-budget", "0"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r2.returncode == 2 and "--bench-budget" in r2.stderr


def test_bench_budget_lists_the_pairs_it_did_not_reach():
    r = subprocess.run([sys.executable, "-m", "p2ptop", "bench", "--demo", "dgx-h100", "--all", "--tests", "ce", "--budget", "0.6"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 0, r.stderr  # the pairs tested are healthy
    assert "not tested within the 0.6 s budget: " in r.stdout
    tested = r.stdout.count("status ok")
    untested = r.stdout.split("budget: ")[1].count("GPU") // 2
    assert tested >= 1 and untested >= 1 and tested + untested == 28  # each unordered pair of 8 GPUs once
    r = subprocess.run([sys.executable, "-m", "p2ptop", "bench", "--demo", "dgx-h100", "--all", "--budget", "-1"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 2 and "--budget" in r.stderr


def test_the_readme_shows_the_configs_that_are_tested():
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for line in nhc_lines():
        assert line in readme
    block = re.search(r"```json\n(\{\"plugin\": \"custom\".*?)\n```", readme, re.S).group(1)
    shown = json.loads(block)
    conf = json.loads(NPD_CONF.read_text())
    assert shown["rules"] == conf["rules"] and shown["conditions"] == conf["conditions"]
    assert all(shown["pluginConfig"][k] == conf["pluginConfig"][k] for k in shown["pluginConfig"])
