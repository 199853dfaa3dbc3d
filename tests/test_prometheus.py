"""The exporter against a real Prometheus (Debian's package, installed by .ci/run), the alert rules
through promtool, and the Grafana dashboard's queries against the metrics the exporter emits.

Without the binaries these tests skip, saying so, except under CI (CI=true), where they fail: CI
installs them, so their absence there is a broken set-up, not a reason to pass.
"""

import json
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

pytest.importorskip("prometheus_client")
from p2ptop.bench.judge import HEALTHY_SHARE  # noqa: E402
from p2ptop.exporter import METRICS  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
RULES = ROOT / "deploy" / "prometheus" / "p2ptop-alerts.yml"
RULE_TESTS = ROOT / "deploy" / "prometheus" / "p2ptop-alerts.test.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "p2ptop-fleet.json"


def binary(name):
    path = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
    if path:
        return path
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"{name} is not installed, and CI is set: .ci/run installs Debian's prometheus package (apt-get install prometheus)")
    pytest.skip(f"{name} is not installed here (apt-get install prometheus); under CI=true this fails instead")


def test_promtool_checks_the_rules():
    promtool = binary("promtool")
    r = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS: 6 rules found" in r.stdout


def test_promtool_unit_tests_of_the_rules():
    promtool = binary("promtool")
    r = subprocess.run([promtool, "test", "rules", RULE_TESTS.name], cwd=RULE_TESTS.parent, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout


def test_rule_threshold_is_the_judges():
    assert f"< {HEALTHY_SHARE:g})" in RULES.read_text()


# --- the dashboard ----------------------------------------------------------------------------

KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "offset", "bool", "inf", "nan"}


def metric_names(expr):
    """The metric names a PromQL expression reads (Grafana variables treated as values)."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", "", e)
    e = re.sub(r"\[[^\]]*\]", "", e)
    e = re.sub(r"\$\{?\w+\}?", "0", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        rest = e[m.end():].lstrip()
        if rest.startswith("(") or m.group(0).lower() in KEYWORDS:
            continue
        names.add(m.group(0))
    return names


def dashboard_queries():
    dash = json.loads(DASHBOARD.read_text())
    out = []

    def walk(panels):
        for p in panels:
            out.extend((p["title"], t["expr"]) for t in p.get("targets", []))
            walk(p.get("panels", []))

    walk(dash["panels"])
    for var in dash["templating"]["list"]:
        q = var.get("query")
        if isinstance(q, dict):
            m = re.match(r"label_values\((\w+)", q["query"])
            out.append((var["name"], m.group(1)))
    return dash, out


def test_fleet_says_when_prometheus_cannot_be_reached():
    from p2ptop.fleet.prometheus import PrometheusError, load_prometheus

    with pytest.raises(PrometheusError, match="cannot reach Prometheus"):
        load_prometheus(f"http://127.0.0.1:{free_port()}")


def test_metric_name_extraction_can_fail():
    assert metric_names('sum by (Hostname) (rate(p2ptop_nvlink_errors_total{counter="replay"}[5m])) > 0') == {"p2ptop_nvlink_errors_total"}
    assert metric_names("DCGM_FI_DEV_GPU_UTIL and on (UUID) p2ptop_gpu_info") == {"DCGM_FI_DEV_GPU_UTIL", "p2ptop_gpu_info"}


def test_dashboard_queries_name_only_exported_metrics():
    dash, queries = dashboard_queries()
    titles = {p["title"] for p in dash["panels"]}
    assert {"Hosts by worst state", "Pairs below expected", "Hosts reporting"} <= titles
    assert any("Link errors rising" == p["title"] for p in dash["panels"] if p["type"] == "row")
    assert len(queries) >= 15
    for title, expr in queries:
        names = metric_names(expr)
        assert names, (title, expr)
        unknown = names - set(METRICS)
        assert not unknown, f"panel {title!r} queries {unknown}, which the exporter does not emit"


def test_alert_rules_name_only_exported_metrics():
    exprs = re.findall(r"expr: \|\n((?:\s{10}.*\n)+)|expr: (.*)", RULES.read_text())
    assert len(exprs) == 6
    for block, line in exprs:
        assert metric_names(block or line) <= set(METRICS)


# --- a real Prometheus scraping a real exporter ----------------------------------------------


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(port, path, **params):
    url = f"http://127.0.0.1:{port}/api/v1/{path}" + ("?" + urllib.parse.urlencode(params) if params else "")
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]


def wait_for(check, timeout, what):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except OSError as e:
            last = e
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


@pytest.fixture
def exporter_process():
    p = subprocess.Popen([sys.executable, "-m", "p2ptop", "exporter", "--demo", "nvlink-degraded", "--listen", "127.0.0.1:0",
                          "--interval", "1", "--bench-every", "1h"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         cwd=ROOT)
    try:
        line = p.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", line)
        assert m, (line, p.stderr.read() if p.poll() is not None else "")
        yield int(m.group(1))
    finally:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)


def test_real_prometheus_scrapes_the_exporter(tmp_path, exporter_process):
    prometheus = binary("prometheus")
    port = free_port()
    rules = tmp_path / "p2ptop-alerts.yml"
    shutil.copy(RULES, rules)
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        f"rule_files:\n  - {rules}\n"
        "scrape_configs:\n  - job_name: p2ptop\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{exporter_process}']\n")
    log = open(tmp_path / "prometheus.log", "w")
    prom = subprocess.Popen([prometheus, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'data'}",
                             f"--web.listen-address=127.0.0.1:{port}", "--web.enable-lifecycle"], stdout=log, stderr=log)
    try:
        def scraped():
            res = api(port, "query", query='up{job="p2ptop"}')["result"]
            return res and res[0]["value"][1] == "1" and api(port, "query", query="p2ptop_copy_test_expected_share")["result"]

        wait_for(scraped, 90, "Prometheus to scrape the exporter")
        links = api(port, "query", query='p2ptop_nvlink_active{gpu="3"}')["result"]
        down = {r["metric"]["link"]: r["value"][1] for r in links}
        assert down["4"] == "0" and down["5"] == "0" and down["0"] == "1"
        labels = links[0]["metric"]
        assert labels["Hostname"] == "dgx-a100-demo" and labels["modelName"] == "NVIDIA A100-SXM4-80GB"
        assert labels["UUID"].startswith("GPU-") and labels["pci_bus_id"] and labels["job"] == "p2ptop"
        assert api(port, "query", query="p2ptop_simulated")["result"][0]["value"][1] == "1"
        assert len(api(port, "query", query="p2ptop_p2p_ok")["result"]) == 56 * 5
        assert api(port, "query", query="p2ptop_read_ok")["result"][0]["value"][1] == "1"
        replay = api(port, "query", query='p2ptop_nvlink_errors_total{gpu="3",link="6",counter="replay"}')["result"]
        assert replay[0]["value"][1] == "41"
        shares = api(port, "query", query='p2ptop_copy_test_expected_share{test="ce_one_way"}')["result"]
        assert len(shares) == 28 and all(0 < float(r["value"][1]) < 1.2 for r in shares)  # bench --all: each unordered pair once
        # the rules loaded into Prometheus; the demo is simulated, so none of them fires
        groups = api(port, "rules")["groups"]
        assert {r["name"] for g in groups for r in g["rules"]} >= {"P2PCapabilityLost", "NVLinkDown", "GPUPairBelowExpected", "NVLinkReplayErrorsRising"}
        assert all(r["health"] == "ok" for g in groups for r in g["rules"]), groups
        assert api(port, "alerts")["alerts"] == []
        # every dashboard query is valid PromQL to a real Prometheus and the main panels have data
        _, queries = dashboard_queries()
        for title, expr in queries:
            res = api(port, "query", query=expr.replace("$host", ".*").replace("$share", "1.0"))  # simulated figures are all < 100 %
            if title in ("Hosts by worst state", "Hosts reporting", "NVLinks down", "Pairs below expected"):
                assert res["result"], (title, expr)
        # the fleet read back through Prometheus's API
        from p2ptop.fleet import load_prometheus, state_words

        fleet = load_prometheus(f"http://127.0.0.1:{port}")
        (h,) = fleet.hosts
        assert h["host"] == "dgx-a100-demo" and h["gpus"] == 8 and h["model"] == "NVIDIA A100-SXM4-80GB"
        assert h["nvlinks_down"] == 2 and h["simulated"] and h["kb_top"] and h["problems"] >= 1
        assert len(h["pairs"]) == 28 and h["links"]["3"]["down"] == [4, 5] and h["links"]["3"]["faults"]["6"] == 41
        assert "NVLink down" in state_words(h)
    finally:
        prom.terminate()
        try:
            prom.wait(20)
        except subprocess.TimeoutExpired:
            prom.kill()
            prom.wait(10)
        log.close()


def test_readme_names_only_exported_metrics():
    import itertools

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    names = set()
    for token in re.findall(r"p2ptop_[a-z0-9_{},]+", readme):
        token = re.split(r"(?<=[a-z])\{", token)[0]  # labels: a brace right after the name; `_{a,b}` expands
        parts = re.split(r"\{([a-z_,]+)\}", token)
        options = [p.split(",") if i % 2 else [p] for i, p in enumerate(parts)]
        for combo in itertools.product(*options):
            names.add("".join(combo).rstrip("_"))
    assert len(names) >= 30
    assert not names - set(METRICS), names - set(METRICS)
