"""`p2ptop kb lint|list|show` and `p2ptop explain`."""

import io
import json
import os
import sys

import pytest

from p2ptop import cli

from .conftest import FIXTURES

BROKEN = os.path.join(FIXTURES, "kb", "broken")
LOGS = os.path.join(FIXTURES, "kb", "logs")


def run(argv, capsys):
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(autouse=True)
def no_live_host(monkeypatch):
    """Tests never read this machine's GPUs: live reads fail as they do without a driver."""
    from p2ptop.sources import nvml

    def no_driver(*a, **k):
        raise nvml.NvmlUnavailable("NVML could not be initialised: NVML Shared Library Not Found")

    monkeypatch.setattr(nvml, "read_snapshot", no_driver)


def test_kb_lint_of_the_built_in_kb_is_clean(capsys):
    code, out, _ = run(["kb", "lint"], capsys)
    assert code == 0 and out.strip().endswith("kb") and out.startswith("0 problem(s)")


def test_kb_lint_reports_file_field_and_message_and_exits_1(capsys):
    code, out, _ = run(["kb", "lint", BROKEN], capsys)
    assert code == 1
    assert "unknown_class.json: failure_class: unknown failure class 'gpu_on_fire'" in out
    code, out, _ = run(["kb", "lint", "--json", os.path.join(BROKEN, "bad_regex.json")], capsys)
    (p,) = json.loads(out)
    assert p["field"] == "regex" and p["file"].endswith("bad_regex.json") and p["message"].startswith("invalid regex")


def test_kb_list_and_show(capsys):
    code, out, _ = run(["kb", "list"], capsys)
    assert code == 0 and "cuda/too-many-peers" in out and out.splitlines()[-1].endswith(" entries")
    code, out, _ = run(["kb", "show", "cuda/too-many-peers"], capsys)
    assert code == 0 and "Root cause:" in out and "$ export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7" in out and "[works 85%]" in out
    code, out, _ = run(["kb", "show", "cuda/too-many-peers", "--lang", "zh"], capsys)
    assert "对等映射资源耗尽" in out
    code, out, err = run(["kb", "show", "no/such-entry"], capsys)
    assert code == 2 and "no knowledge-base entry" in err


def test_kb_list_with_an_extra_dir(tmp_path, capsys):
    src = json.load(open(os.path.join(BROKEN, "good.json"), encoding="utf-8"))
    (tmp_path / "x.json").write_text(json.dumps(src), encoding="utf-8")
    code, out, _ = run(["kb", "list", "--kb", str(tmp_path)], capsys)
    assert "test/good-entry" in out


def test_explain_a_file_with_text_only(capsys):
    code, out, _ = run(["explain", os.path.join(LOGS, "tensorflow-30887-too-many-peers.log"), "--top", "1"], capsys)
    assert code == 0
    # the message TensorFlow logged, cut after "failed to enable", is joined on its first line since its record prefix
    # comes off (the fortieth session); before, the hit was on the cut line's remainder, line 2
    assert "1. cuda/too-many-peers" in out and "regex matched line 1: Unable to enable peer access" in out
    assert "Note: live host not read" in out
    assert "\n2. " not in out


def test_explain_reads_stdin_and_prints_json(monkeypatch, capsys):
    data = "NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    code, out, _ = run(["explain", "-", "--json", "--top", "2"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["kind"] == "p2ptop-explain" and len(doc["matches"]) == 2
    top = doc["matches"][0]
    assert top["reasons"] and top["deciding_facts"] and top["workarounds"] and top["sources"]


def test_explain_joins_the_text_with_a_host(capsys):
    e217 = os.path.join(FIXTURES, "kb", "logs", "easyr1-579-shm-217.log")
    code, out, _ = run(["explain", e217, "--demo", "rtx4090-2gpu", "--top", "3"], capsys)
    assert code == 0 and "DEMO rtx4090-2gpu (simulated)" in out and "on: GPU0->GPU1" in out


def test_explain_a_healthy_demo_finds_nothing(capsys):
    code, out, _ = run(["explain", "--demo", "h200x2-vm"], capsys)
    assert code == 0 and "No sign of P2P trouble" in out and "\n1. " not in out


def test_explain_needs_something_and_reports_unreadable_files(capsys):
    code, _, err = run(["explain"], capsys)
    assert code == 2 and "nothing to explain" in err
    code, _, err = run(["explain", "/nonexistent/log"], capsys)
    assert code == 2 and "cannot read /nonexistent/log" in err


def test_explain_never_prints_terminal_codes_from_a_log(tmp_path, capsys):
    log = tmp_path / "evil.log"
    log.write_text("\x1b]0;owned\x07\x1b[2J" + "CUDA error: peer access is not supported between these two devices\x1b[0m\n")
    code, out, _ = run(["explain", str(log)], capsys)
    assert code == 0 and "\x1b" not in out and "\x07" not in out
