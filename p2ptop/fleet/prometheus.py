"""The fleet read back from Prometheus (``p2ptop fleet --prometheus URL``): the exporters' series -> host summaries.

A handful of instant queries through Prometheus's HTTP API (``/api/v1/query``); each host's summary has
the fields a snapshot's summary has, so ranking, the odd-one-out comparison and the reports are the same.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from typing import Any

from .load import Fleet

TIMEOUT_S = 30


class PrometheusError(RuntimeError):
    """Prometheus could not be asked, or answered with an error; the message says which."""


def _query(url: str, expr: str) -> list[dict[str, Any]]:
    full = url.rstrip("/") + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(full, timeout=TIMEOUT_S) as r:
            body = json.load(r)
    except urllib.error.HTTPError as e:
        raise PrometheusError(f"{url}: HTTP {e.code} for {expr!r}") from None
    except (urllib.error.URLError, OSError) as e:
        raise PrometheusError(f"{url}: cannot reach Prometheus ({getattr(e, 'reason', e)})") from None
    except ValueError:
        raise PrometheusError(f"{url}: the answer is not JSON (is this Prometheus's address?)") from None
    if body.get("status") != "success":
        raise PrometheusError(f"{url}: {body.get('errorType')}: {body.get('error')}")
    return body["data"]["result"]


def _v(sample: dict[str, Any]) -> float:
    return float(sample["value"][1])


def load_prometheus(url: str) -> Fleet:
    from .compare import compare

    hosts: dict[str, dict[str, Any]] = {}

    def host(name: str) -> dict[str, Any]:
        h = hosts.get(name)
        if h is None:
            h = hosts[name] = {"file": None, "host": name, "taken_at": None, "simulated": False, "source": "prometheus",
                               "model": "unknown GPU", "gpus": 0, "driver": None, "topology": "", "topology_text": "",
                               "gpus_lost": 0, "nvlinks_down": 0, "refused_pairs": 0, "pairs_below_expected": 0,
                               "problems": 0, "warnings": 0, "worst": "ok", "findings": [], "kb_top": None,
                               "pairs": {}, "links": {}, "data_age_s": None}
        return h

    models: dict[str, Counter] = defaultdict(Counter)
    for s in _query(url, "p2ptop_gpu_info"):
        m = s["metric"]
        h = host(m.get("Hostname", "?"))
        h["gpus"] += 1
        models[h["host"]][m.get("modelName") or "unknown GPU"] += 1
        h["driver"] = m.get("driver_version") or h["driver"]
    for name, c in models.items():
        hosts[name]["model"] = c.most_common(1)[0][0]
    for s in _query(url, "p2ptop_simulated == 1"):
        host(s["metric"].get("Hostname", "?"))["simulated"] = True
    for s in _query(url, "p2ptop_data_age_seconds"):
        host(s["metric"].get("Hostname", "?"))["data_age_s"] = _v(s)
    for s in _query(url, "p2ptop_gpu_lost == 1"):
        host(s["metric"].get("Hostname", "?"))["gpus_lost"] += 1
    for s in _query(url, "p2ptop_nvlink_active"):
        m = s["metric"]
        h = host(m.get("Hostname", "?"))
        l = h["links"].setdefault(m.get("gpu", "?"), {"n": 0, "down": [], "faults": {}})
        l["n"] = max(l["n"], int(m.get("link", 0)) + 1)
        if _v(s) == 0:
            l["down"].append(int(m.get("link", 0)))
            h["nvlinks_down"] += 1
    for s in _query(url, 'sum by (Hostname, gpu, link) (p2ptop_nvlink_errors_total{counter=~"replay|recovery"}) > 0'):
        m = s["metric"]
        l = host(m.get("Hostname", "?"))["links"].setdefault(m.get("gpu", "?"), {"n": 0, "down": [], "faults": {}})
        l["faults"][m.get("link", "0")] = int(_v(s))
    for s in _query(url, 'count by (Hostname, gpu, peer_gpu) (p2ptop_p2p_ok{capability=~"read|write"} == 0)'):
        host(s["metric"].get("Hostname", "?"))["refused_pairs"] += 1
    for s in _query(url, 'p2ptop_copy_test_result{verdict=~"slow|failing"}'):
        host(s["metric"].get("Hostname", "?"))["pairs_below_expected"] += 1
    for s in _query(url, "p2ptop_copy_test_gbps"):
        m = s["metric"]
        host(m.get("Hostname", "?"))["pairs"].setdefault(f"{m.get('gpu')}-{m.get('peer_gpu')}", {})[m.get("test", "?")] = _v(s)
    for s in _query(url, 'sum by (Hostname, severity) (p2ptop_findings{severity=~"warning|problem"})'):
        m = s["metric"]
        host(m.get("Hostname", "?"))[m["severity"] + "s"] = int(_v(s))
    for s in _query(url, "p2ptop_worst_severity"):
        host(s["metric"].get("Hostname", "?"))["worst"] = ("ok", "info", "warning", "problem")[min(3, max(0, int(_v(s))))]
    for s in _query(url, 'p2ptop_finding{severity=~"warning|problem"}'):
        m = s["metric"]
        h = host(m.get("Hostname", "?"))
        if len(h["findings"]) < 5:
            h["findings"].append(f"{m.get('severity')}: {m.get('id')} ({m.get('subject')})")
    best: dict[str, float] = {}
    for s in _query(url, "p2ptop_kb_match_score"):
        m = s["metric"]
        name = m.get("Hostname", "?")
        if _v(s) > best.get(name, -1):
            best[name] = _v(s)
            host(name)["kb_top"] = m.get("entry")
    paths: dict[str, dict[tuple[int, int], str]] = defaultdict(dict)
    for s in _query(url, "p2ptop_pair_path_info"):
        m = s["metric"]
        path = m.get("path", "?")
        paths[m.get("Hostname", "?")][(int(m.get("gpu", 0)), int(m.get("peer_gpu", 0)))] = "NV" if path.startswith("NV") else path
    for name, h in hosts.items():
        p = paths.get(name, {})
        idx = sorted({a for a, _ in p} | {b for _, b in p})
        rows = "|".join(",".join("X" if a == b else p.get((a, b), "?") for b in idx) for a in idx)
        links = ",".join(str(h["links"].get(str(i), {}).get("n", 0)) for i in idx)
        h["topology"] = f"{h['gpus']}x-" + hashlib.sha1((rows + "/" + links).encode()).hexdigest()[:8]
        common = Counter(v for v in p.values())
        h["topology_text"] = f"{h['gpus']} GPUs, " + (", ".join(c for c, _ in common.most_common(2)) or "no pairs")
    fleet = Fleet(hosts=list(hosts.values()), source=url)
    compare(fleet.hosts)
    return fleet
