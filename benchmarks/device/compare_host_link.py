"""p2ptop's host-link figures beside nvbandwidth's, round by round (used by benchmarks/device/busy.sh).

    python compare_host_link.py P2PTOP_1.json NVBANDWIDTH_1.json [P2PTOP_2.json NVBANDWIDTH_2.json ...]

Each P2PTOP file is ``p2ptop bench GPU --json``; each NVBANDWIDTH file is ``nvbandwidth -j`` with the host tests
(a missing or empty one: p2ptop's figures are printed alone). Prints, per round: the verdict (healthy expected on a
healthy link), the method's CPU binding and warm-up rates, each figure beside its nvbandwidth test with the ratio
(H->D and D->H against the target >= 0.98; both ways at once shown, not judged), and the time the test waited for
the contention check (target <= 0.2 s); then the median ratio over the rounds.
"""

from __future__ import annotations

import json
import statistics
import sys

TARGET = 0.98  # issue 18: >= 0.98 x nvbandwidth's host_to_device_memcpy_ce and device_to_host_memcpy_ce
ADDED = 0.2  # issue 18: the contention check adds <= 0.2 s to a test
PAIRS = (("h2d", "host_to_device_memcpy_ce"), ("d2h", "device_to_host_memcpy_ce"),
         ("h2d_bidir", "host_to_device_bidirectional_memcpy_ce"), ("d2h_bidir", "device_to_host_bidirectional_memcpy_ce"))
JUDGED = ("h2d", "d2h")


def load(path: str):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"  {path}: no JSON ({e})")
        return None


def nvbandwidth_sums(path: str) -> dict:
    d = load(path)
    try:
        return {t["name"]: t.get("sum") for t in d["nvbandwidth"]["testcases"] if t.get("status", "Passed") == "Passed"}
    except (TypeError, KeyError):
        return {}


def main(argv: list[str]) -> int:
    ratios: dict[str, list[float]] = {n: [] for n, _ in PAIRS}
    for k in range(0, len(argv) - 1, 2):
        ours, ref = load(argv[k]), nvbandwidth_sums(argv[k + 1])
        if not ours or not ours.get("results"):
            continue
        r = ours["results"][0]
        print(f"round {k // 2 + 1}: p2ptop verdict {r['verdict']} (status {r['status']}); healthy expected on a healthy link: "
              f"{'OK' if r['verdict'] == 'healthy' else 'NOT OK'}")
        p = r.get("params") or {}
        print(f"  CPUs {p.get('cpu_affinity')}; warm-up batches H->D {p.get('warm_h2d_gbps')}; D->H {p.get('warm_d2h_gbps')} GB/s")
        ms = {m["name"]: m for m in r["measurements"]}
        for name, test in PAIRS:
            m, want = ms.get(name), ref.get(test)
            if not m or m.get("value") is None:
                print(f"  {name:<10} p2ptop gave no figure")
                continue
            head = (f"  {name:<10} p2ptop {m['value']:6.2f} GB/s (min {m['min']:.2f}, max {m['max']:.2f}, "
                    f"{len(m.get('samples') or [])} samples, {m['verdict']})")
            if not want:
                print(head + f"; nvbandwidth {test}: none")
                continue
            ratio = m["value"] / want
            ratios[name].append(ratio)
            print(head + f"; nvbandwidth {test} {want:6.2f}: ratio {ratio:.3f}"
                  + (f" (target >= {TARGET}: {'met' if ratio >= TARGET else 'NOT met'})" if name in JUDGED else " (shown, not judged)"))
        c = r.get("contention") or {}
        a = c.get("added_s")
        print(f"  contention check: took {c.get('check_s')} s beside the worker's start; the test waited {a} s for it"
              + (f" (target <= {ADDED} s: {'met' if a <= ADDED else 'NOT met'})" if isinstance(a, (int, float)) else ""))
    for name, _ in PAIRS:
        if ratios[name]:
            med = statistics.median(ratios[name])
            print(f"{name:<10} ratio to nvbandwidth over {len(ratios[name])} rounds: median {med:.3f}, min {min(ratios[name]):.3f}, "
                  f"max {max(ratios[name]):.3f}"
                  + (f" (target >= {TARGET}: {'met' if med >= TARGET else 'NOT met'})" if name in JUDGED else " (shown, not judged)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
