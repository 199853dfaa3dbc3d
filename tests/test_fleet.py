"""p2ptop fleet: generated fleets with planted faults, broken files, the odd one out, reports, redaction."""

import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

from p2ptop.demos import demo_path
from p2ptop.export.redact import Redactor
from p2ptop.fleet import load_fleet, ranked, state_words, to_markdown
from p2ptop.model import SCHEMA_VERSION

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("make_fleet", ROOT / "scripts" / "make_fleet.py")
make_fleet = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_fleet)


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("fleet")
    planted = make_fleet.make(str(d), 24, "dgx-h100", faults=5, seed=3)
    return d, planted


def test_planted_faults_rank_first(fleet_dir):
    d, planted = fleet_dir
    fleet = load_fleet([str(d)], workers=2)
    assert len(fleet.hosts) == 24 and fleet.problems == []
    hosts = ranked(fleet)
    assert {h["host"] for h in hosts[:5]} == {p["host"] for p in planted}
    assert all(state_words(h) == "ok" for h in hosts[5:])
    assert all(h["simulated"] for h in hosts)


def test_the_odd_one_out(fleet_dir):
    d, planted = fleet_dir
    fleet = load_fleet([str(d)], workers=1)
    by = {h["host"]: h for h in fleet.hosts}
    slow = next(p for p in planted if p["kind"] == "slow_pair")
    odd = by[slow["host"]]["odd"]
    pair = slow["detail"].split(" ")[0].replace("GPU", "").replace("->", "-")
    assert any(o["pair"] == pair and 0.55 < o["share"] < 0.66 for o in odd), odd
    assert any("reaches 6" in o["text"] and "on 23 identical nodes" in o["text"] for o in odd)
    down = next(p for p in planted if p["kind"] == "link_down")
    assert any(o["what"] == "down" and "up on 23 of 23 identical nodes" in o["text"] for o in by[down["host"]]["odd_links"])
    replay = next(p for p in planted if p["kind"] == "replay_errors")
    assert any(o["what"] == "faults" for o in by[replay["host"]]["odd_links"])
    healthy = [h for h in fleet.hosts if h["host"] not in {p["host"] for p in planted}]
    assert not any(h["odd"] or h["odd_links"] for h in healthy)


def test_broken_files_are_listed_and_the_rest_load(fleet_dir, tmp_path):
    d, _ = fleet_dir
    good = json.loads((d / "node0001.json").read_text())
    text = json.dumps(good)
    (tmp_path / "truncated.json").write_text(text[:1000])
    (tmp_path / "deep.json").write_text(text.replace('"host": {', '"host": {"x": ' + "[" * 50000 + "]" * 50000 + ",", 1))
    future = dict(good, schema_version=SCHEMA_VERSION + 1)
    (tmp_path / "future.json").write_text(json.dumps(future))
    bad_pair = json.loads(text)
    bad_pair["pairs"][3]["a"] = 42
    (tmp_path / "badpair.json").write_text(json.dumps(bad_pair))
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    (tmp_path / "ok.json").write_text(text)
    fleet = load_fleet([str(tmp_path / "*.json"), str(tmp_path / "missing-dir")], workers=2)
    assert [h["file"].rsplit("/", 1)[1] for h in fleet.hosts] == ["ok.json"]
    why = {f.rsplit("/", 1)[-1]: w for f, w in fleet.problems}
    assert "truncated?" in why["truncated.json"]
    assert "nested too deeply" in why["deep.json"]
    assert "newer than this p2ptop understands" in why["future.json"]
    assert "GPU42 does not exist" in why["badpair.json"]
    assert "empty file" in why["empty.json"]
    assert "not a text file" in why["binary.json"]
    assert "no such file or directory" in why["missing-dir"]


_CACHE_HOME = __import__("tempfile").mkdtemp(prefix="p2ptop-test-cache-")  # the CLI's summary cache, not the user's


def _cli(*args):
    env = dict(__import__("os").environ, XDG_CACHE_HOME=_CACHE_HOME)
    return subprocess.run([sys.executable, "-m", "p2ptop", "fleet", *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)


def test_cli_json_markdown_and_filters(fleet_dir):
    d, planted = fleet_dir
    r = _cli(str(d), "--json", "--workers", "2")
    assert r.returncode == 1, r.stderr
    data = json.loads(r.stdout)
    assert data["hosts_loaded"] == 24 and data["simulated_hosts"] == 24
    assert data["hosts"][0]["state"] != "ok" and data["groups"][0]["hosts"] == 24
    r = _cli(str(d), "--markdown")
    assert "## The odd ones out" in r.stdout and "identical nodes" in r.stdout and "**24 of them simulated**" in r.stdout
    r = _cli(str(d), "--json", "--model", "A100")
    assert json.loads(r.stdout)["hosts"] == []
    r = _cli(str(d), "--text", "--topology", json.loads(_cli(str(d), "--json").stdout)["groups"][0]["topology"])
    assert r.stdout.count("node00") >= 24
    r = _cli()
    assert r.returncode == 2 and "--prometheus" in r.stderr
    r = _cli(str(d / "nothing-*.json"))
    assert r.returncode == 2 and "no host could be read" in r.stderr


def test_markdown_escapes_text_from_files(fleet_dir, tmp_path):
    d, _ = fleet_dir
    doc = json.loads((d / "node0002.json").read_text())
    doc["source"]["hostname"] = "evil|host*[x](http://e)"
    for g in doc["gpus"]:
        g["name"] = "H100 `rm -rf` <script>"
    doc["pairs"][0]["p2p"]["read"] = "NOT_SUPPORTED"
    (tmp_path / "evil.json").write_text(json.dumps(doc))
    fleet = load_fleet([str(tmp_path)], workers=1)
    md = to_markdown(fleet, ranked(fleet))
    assert "evil\\|host\\*\\[x\\](http://e)" in md and "<script>" not in md


def test_fleet_redaction_is_consistent_across_hosts(fleet_dir):
    d, planted = fleet_dir
    r = _cli(str(d), "--json", "--redact")
    out = r.stdout
    assert "node00" not in out
    data = json.loads(out)
    for h in data["hosts"]:
        assert h["host"].startswith("host-")
        assert h["file"].endswith(f"/{h['host']}.json")  # the same placeholder in the path and the name
    md = _cli(str(d), "--markdown", "--redact").stdout
    first = data["hosts"][0]["host"]
    assert f"| {first} |" in md  # the same host, the same placeholder in another export


def test_redaction_of_user_names_and_mac_addresses(tmp_path):
    r = Redactor()
    text = "NCCL_TOPO_FILE=/home/alice/topo.xml eth0 00:1b:21:3a:4f:5e bus 00000000:3A:00.0 at 10:25:00 by alice"
    out = r.text(text)
    assert "alice" not in out and "00:1b:21:3a:4f:5e" not in out
    assert "00000000:3A:00.0" in out and "10:25:00" in out
    assert r.leaks(out) == [] and set(r.leaks(text)) == {"mac", "user"}
    doc = json.loads(pathlib.Path(demo_path("pcie-4gpu-iommu")).read_text())
    doc["host"]["facts"]["env.NCCL_TOPO_FILE"] = {"value": "/home/bob/nccl-topo.xml", "how": "environment", "na": None}
    doc["host"]["facts"]["host.kernel_cmdline"]["value"] += " ip=::::eth0:dhcp hwaddr=52:54:00:12:34:56"
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps(doc))
    rep = subprocess.run([sys.executable, "-m", "p2ptop", "report", "--replay", str(snap), "--redact"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert rep.returncode in (0, 1), rep.stderr
    assert "bob" not in rep.stdout and "52:54:00:12:34:56" not in rep.stdout
    assert "/home/user-1/nccl-topo.xml" in rep.stdout


def test_summary_cache_reuses_unchanged_files_only(fleet_dir, tmp_path, monkeypatch):
    import os
    import shutil

    from p2ptop.fleet import load as fleet_load
    from p2ptop.fleet.cache import SummaryCache

    d, planted = fleet_dir
    src = tmp_path / "src"
    src.mkdir()
    for name in ("node0001.json", "node0002.json", "node0003.json", "node0004.json"):
        shutil.copy(d / name, src / name)
    calls = []
    real = fleet_load.summarize_file
    monkeypatch.setattr(fleet_load, "summarize_file", lambda p: calls.append(p) or real(p))
    cache = SummaryCache(tmp_path / "cache.sqlite")
    first = load_fleet([str(src)], workers=1, cache=cache)
    assert len(calls) == 4
    calls.clear()
    second = load_fleet([str(src)], workers=1, cache=cache)
    assert calls == [] and [h["host"] for h in second.hosts] == [h["host"] for h in first.hosts]
    assert second.hosts[0]["siblings"] == 3  # the comparison is made again, not cached
    doc = json.loads((src / "node0002.json").read_text())
    doc["source"]["hostname"] = "renamed"
    (src / "node0002.json").write_text(json.dumps(doc))
    os.utime(src / "node0002.json", ns=(1, 10**18))
    third = load_fleet([str(src)], workers=1, cache=cache)
    assert [c.rsplit("/", 1)[1] for c in calls] == ["node0002.json"]
    assert "renamed" in {h["host"] for h in third.hosts}
    calls.clear()
    other_kb = SummaryCache(tmp_path / "cache.sqlite", kb_dirs=[str(ROOT / "tests" / "fixtures" / "kb" / "broken")])
    load_fleet([str(src)], workers=1, cache=other_kb)
    assert len(calls) == 4  # another knowledge base: every summary is made again
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    calls.clear()
    load_fleet([str(src)], workers=1, cache=True)
    load_fleet([str(src)], workers=1, cache=True)
    assert len(calls) == 4 and (tmp_path / "xdg" / "p2ptop" / "fleet.sqlite").exists()


def test_an_unwritable_cache_is_skipped(fleet_dir, tmp_path):
    from p2ptop.fleet.cache import SummaryCache

    d, _ = fleet_dir
    (tmp_path / "file").write_text("x")
    cache = SummaryCache(tmp_path / "file" / "cache.sqlite")  # its directory is a file
    assert not cache
    assert len(load_fleet([str(d / "node0001.json")], workers=1, cache=cache).hosts) == 1
