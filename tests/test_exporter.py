"""The Prometheus exporter: what a scrape holds, read health, a scrape that never waits for a read, copy tests."""

import json
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

pytest.importorskip("prometheus_client")
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from p2ptop.commands.exporter import parse_duration  # noqa: E402
from p2ptop.exporter import METRICS, Exporter, make_reader, make_server, parse_listen, serve_in_thread  # noqa: E402
from p2ptop.model import save_snapshot  # noqa: E402
from p2ptop.sources import SourceUnavailable, open_snapshot  # noqa: E402


def samples(text):
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, []).append(s)
    return out


def scrape_of(demo, bench=False):
    e = Exporter(make_reader(demo=demo))
    e.read_once()
    if bench:
        e.bench_if_idle()
        e.read_once()
    return e, samples(e.scrape().decode())


def test_demo_scrape_has_dcgm_labels_and_is_labelled_simulated():
    e, s = scrape_of("nvlink-degraded")
    info = s["p2ptop_gpu_info"]
    assert len(info) == 8
    assert set(info[0].labels) >= {"gpu", "UUID", "pci_bus_id", "modelName", "Hostname"}
    assert info[0].labels["modelName"] == "NVIDIA A100-SXM4-80GB"
    assert info[0].labels["Hostname"] == "dgx-a100-demo"
    assert s["p2ptop_simulated"][0].value == 1
    assert s["p2ptop_source_info"][0].labels["simulated"] == "true"
    # ordered pairs x capabilities
    assert len(s["p2ptop_p2p_ok"]) == 56 * 5
    # GPU3's links 4 and 5 are down in this demo
    down = {(x.labels["gpu"], x.labels["link"]) for x in s["p2ptop_nvlink_active"] if x.value == 0}
    assert ("3", "4") in down and ("3", "5") in down
    gpu3 = [x for x in s["p2ptop_nvlinks_down"] if x.labels["gpu"] == "3"][0]
    assert gpu3.value == 2
    replay = [x for x in s["p2ptop_nvlink_errors_total"] if x.labels["gpu"] == "3" and x.labels["link"] == "6" and x.labels["counter"] == "replay"]
    assert replay[0].value == 41
    assert {x.labels["path"] for x in s["p2ptop_pair_path_info"]} <= {"NV12", "NV10", "NV11", "NV8", "NV6", "PIX", "PXB", "PHB", "NODE", "SYS"} | {f"NV{i}" for i in range(1, 19)}
    assert s["p2ptop_worst_severity"][0].value == 3
    ids = {x.labels["id"] for x in s["p2ptop_findings"]}
    assert "nvlink.down" in ids
    assert {x.labels["entry"] for x in s["p2ptop_kb_match_score"]} >= {"nvlink/links-inactive"}
    assert s["p2ptop_read_ok"][0].value == 1
    assert s["p2ptop_data_age_seconds"][0].value >= 0
    widths = {x.labels["gpu"]: x.value for x in s["p2ptop_pcie_link_width_current"]}
    assert min(widths.values()) == 8  # the GPU at PCIe x8


def test_refused_pairs_are_zero_with_their_nvml_code():
    e, s = scrape_of("pcie-4gpu-iommu")
    refused = [x for x in s["p2ptop_p2p_ok"] if x.value == 0]
    assert refused, "this demo refuses P2P across sockets"
    codes = {(x.labels["gpu"], x.labels["peer_gpu"], x.labels["capability"]): x.value for x in s["p2ptop_p2p_status_code"]}
    for x in refused:
        assert codes[(x.labels["gpu"], x.labels["peer_gpu"], x.labels["capability"])] != 0


def test_every_emitted_metric_is_declared_and_typed():
    e, s = scrape_of("nvlink-degraded", bench=True)
    text = e.scrape().decode()
    for fam in text_string_to_metric_families(text):
        name = fam.name + ("_total" if fam.type == "counter" else "")
        assert name in METRICS, name
        assert fam.type == METRICS[name][0]


def test_copy_tests_with_share_and_age():
    e, s = scrape_of("nvlink-degraded", bench=True)
    share = {(x.labels["gpu"], x.labels["peer_gpu"], x.labels["test"]): x.value for x in s["p2ptop_copy_test_expected_share"]}
    assert share[("0", "1", "ce_one_way")] > 0.7
    # bench --all tests each unordered pair once (its job measures both directions): 28 pairs of 8 GPUs,
    # the reverse direction exported as the pair's ce_reverse
    assert len(s["p2ptop_copy_test_age_seconds"]) == 28
    assert ("0", "1", "ce_reverse") in share
    assert all(x.labels["simulated"] == "true" for x in s["p2ptop_copy_test_result"])
    assert all(x.value >= 0 for x in s["p2ptop_copy_test_age_seconds"])


def test_failing_read_is_a_value_and_the_last_good_read_is_kept():
    calls = {"n": 0}

    def read():
        calls["n"] += 1
        if calls["n"] == 1:
            return open_snapshot(demo="dgx-h100")
        raise SourceUnavailable("NVML Shared Library Not Found")

    now = [1000.0]
    e = Exporter(read, clock=lambda: now[0])
    e.read_once()
    now[0] += 30
    e.read_once()
    s = samples(e.scrape().decode())
    assert s["p2ptop_read_ok"][0].value == 0
    assert "NVML Shared Library Not Found" in s["p2ptop_read_error_info"][0].labels["error"]
    assert s["p2ptop_read_failures_total"][0].value == 1
    assert s["p2ptop_reads_total"][0].value == 2
    assert s["p2ptop_data_age_seconds"][0].value == 30
    assert len(s["p2ptop_gpu_info"]) == 8  # still served


def test_never_read_successfully_still_scrapes():
    def read():
        raise RuntimeError("GPU is lost")

    e = Exporter(read)
    e.read_once()
    s = samples(e.scrape().decode())
    assert s["p2ptop_read_ok"][0].value == 0
    assert "p2ptop_gpu_info" not in s
    assert s["p2ptop_data_age_seconds"][0].value != s["p2ptop_data_age_seconds"][0].value  # NaN


def test_a_scrape_does_not_wait_for_a_read_in_progress():
    release = threading.Event()
    entered = threading.Event()
    first = {"done": False}

    def read():
        if first["done"]:
            entered.set()
            release.wait(30)
        first["done"] = True
        return open_snapshot(demo="dgx-h100")

    e = Exporter(read)
    e.read_once()
    t = threading.Thread(target=e.read_once)
    t.start()
    assert entered.wait(10)
    body = e.scrape().decode()  # the read is blocked: this must still return
    assert not release.is_set()
    assert "p2ptop_gpu_info" in body
    release.set()
    t.join(10)


def test_label_values_from_the_snapshot_are_escaped():
    snap = open_snapshot(demo="dgx-h100")
    snap.source.hostname = 'evil"host\nname{x="1"}'
    snap.gpus[0].name = 'H100 "SXM"\\'
    e = Exporter(lambda: snap)
    e.read_once()
    s = samples(e.scrape().decode())
    assert s["p2ptop_gpu_info"][0].labels["Hostname"] == 'evil"host\nname{x="1"}'
    assert s["p2ptop_gpu_info"][0].labels["modelName"] == 'H100 "SXM"\\'


def test_scheduled_copy_tests_skip_busy_gpus():
    def read():
        snap = open_snapshot(demo="nvlink-degraded")
        snap.source.kind, snap.source.simulated = "nvml", False  # as if live: GPUs are 35-97 % busy
        return snap

    e = Exporter(read, bench_every=60)
    e.read_once()
    assert e.bench_if_idle() is False
    s = samples(e.scrape().decode())
    assert s["p2ptop_copy_tests_skipped_total"][0].value == 1
    assert "p2ptop_copy_test_gbps" not in s


def test_watched_bench_save_files_are_exported(tmp_path):
    out = tmp_path / "bench.json"
    r = subprocess.run([sys.executable, "-m", "p2ptop", "bench", "--demo", "dgx-h100", "0", "1", "--tests", "ce", "--save", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert out.exists(), r.stderr
    e = Exporter(make_reader(demo="dgx-h100"), bench_files=str(tmp_path / "*.json"))
    e.read_once()
    s = samples(e.scrape().decode())
    got = {(x.labels["gpu"], x.labels["peer_gpu"], x.labels["test"]) for x in s["p2ptop_copy_test_gbps"]}
    assert got == {("0", "1", "ce_one_way"), ("0", "1", "ce_reverse")}
    # a file of another host (other UUIDs) is not taken
    other = open_snapshot(demo="nvlink-degraded")
    other.bench = json.loads("[]")
    save_snapshot(other, str(tmp_path / "other.json"))
    e.read_once()
    assert len(samples(e.scrape().decode())["p2ptop_copy_test_result"]) == 1


def test_parse_listen_and_duration():
    assert parse_listen("127.0.0.1:9469") == ("127.0.0.1", 9469)
    assert parse_listen(":9469") == ("0.0.0.0", 9469)
    assert parse_listen("[::1]:9") == ("::1", 9)
    with pytest.raises(ValueError):
        parse_listen("host:port")
    assert parse_duration("90") == 90 and parse_duration("30m") == 1800 and parse_duration("1h30m") == 5400
    for bad in ("", "abc", "1x", "0", "-5m"):
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_http_server_serves_metrics():
    e = Exporter(make_reader(demo="h200x2-vm"))
    e.read_once()
    server = make_server(e, "127.0.0.1", 0)
    serve_in_thread(server)
    try:
        port = server.server_address[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
            assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            s = samples(resp.read().decode())
        assert len(s["p2ptop_gpu_info"]) == 2
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/nope", timeout=10)
    finally:
        server.shutdown()


def test_command_once_and_bad_options():
    r = subprocess.run([sys.executable, "-m", "p2ptop", "exporter", "--demo", "rtx4090-2gpu", "--once"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    s = samples(r.stdout)
    assert all(x.value == 0 for x in s["p2ptop_p2p_ok"] if x.labels["capability"] == "read")
    r = subprocess.run([sys.executable, "-m", "p2ptop", "exporter", "--demo", "dgx-h100", "--bench-every", "soon"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "duration" in r.stderr and "Traceback" not in r.stderr


def test_live_reader_goes_through_the_live_path():
    """The exporter's live reads use p2ptop.live (as the dashboard does); a device run found the old reader
    importing a class the live path had removed, which no test read through."""
    from p2ptop.sources.capture import Capture, FakeNvml

    reader = make_reader(nvml=FakeNvml(Capture.load("tests/fixtures/captures/h100x1-vm")))
    first, second = reader(), reader()
    assert first.source.kind == second.source.kind == "nvml" and len(second.gpus) == 1
    e = Exporter(reader)
    e.read_once()
    text = e.scrape().decode()
    assert "p2ptop_read_ok" in text and 'modelName="NVIDIA H100 80GB HBM3"' in text
