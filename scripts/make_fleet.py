#!/usr/bin/env python3
"""Make N snapshots of a simulated fleet from a demo, with faults planted on a known few.

    python scripts/make_fleet.py OUT --hosts 1000 [--demo dgx-h100] [--faults 5] [--seed 1]

Every host is the demo under its own name (node0001, ...) with its own GPU UUIDs and serials, and copy
tests of every pair: the demo's simulated figures with a small per-host spread (+-2 %). The faults are
planted on ``--faults`` hosts chosen by the seed, one kind each in turn:

- ``link_down``: an NVLink of a GPU inactive (its pairs' figures drop by that link's share)
- ``slow_pair``: one ordered pair's copy figures at 61 % of the others'
- ``p2p_refused``: NVML P2P read/write of one pair CHIPSET_NOT_SUPPORTED
- ``replay_errors``: replay and recovery counts on one link
- ``gpu_lost``: NVML answers "GPU is lost" for one GPU

OUT/planted.txt (JSON) lists them (host, kind, detail). Everything written is labelled simulated.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from p2ptop.bench.runner import BenchOptions, all_pairs, run_all  # noqa: E402
from p2ptop.demos import load_demo  # noqa: E402
from p2ptop.model import Snapshot  # noqa: E402

FAULTS = ("link_down", "slow_pair", "p2p_refused", "replay_errors", "gpu_lost")
SLOW_SHARE = 0.61


def base_document(demo: str) -> dict:
    snap = load_demo(demo)
    if len(snap.gpus) <= 16:
        snap.bench = run_all(snap, all_pairs(snap), BenchOptions(tests={"ce", "bidirectional", "sm"}, simulated_pair_s=0.0))
    snap.source.detail = f"generated from demo {demo} by scripts/make_fleet.py"
    return snap.to_dict()


def plant(doc: dict, kind: str, rng: random.Random) -> str:
    gpus = doc["gpus"]
    g = rng.choice([x for x in gpus if x["nvlinks"]] or gpus)
    if kind == "link_down" and g["nvlinks"]:
        link = rng.choice(g["nvlinks"])
        link["state"] = "inactive"
        share = 1 - 1 / len(g["nvlinks"])
        for r in doc["bench"]:
            if g["index"] in (r["a"], r["b"]):
                for m in r["measurements"]:
                    if m["value"] is not None and m["unit"] == "GB/s":
                        m["value"] = round(m["value"] * share, 2)
        return f"GPU{g['index']} NVLink {link['link']} down"
    if kind == "slow_pair" and doc["bench"]:
        r = rng.choice(doc["bench"])
        for m in r["measurements"]:
            if m["value"] is not None and m["unit"] == "GB/s":
                m["value"] = round(m["value"] * SLOW_SHARE, 2)
        return f"GPU{r['a']}->GPU{r['b']} at {SLOW_SHARE:.0%}"
    if kind == "p2p_refused" and doc["pairs"]:
        p = rng.choice(doc["pairs"])
        p["p2p"]["read"] = p["p2p"]["write"] = "CHIPSET_NOT_SUPPORTED"
        return f"GPU{p['a']}->GPU{p['b']} P2P refused"
    if kind == "replay_errors" and g["nvlinks"]:
        link = rng.choice(g["nvlinks"])
        link["counters"]["replay"] = rng.randrange(200, 5000)
        link["counters"]["recovery"] = rng.randrange(1, 20)
        return f"GPU{g['index']} NVLink {link['link']} replay errors"
    g["na"]["pcie_gen_cur"] = "GPU is lost"
    g["pcie_gen_cur"] = None
    return f"GPU{g['index']} lost"


def _write_hosts(out: str, base: dict, seed: int, prefix: str, width: int, indices: list[int], faulty: dict[int, str]) -> list[dict]:
    planted = []
    for i in indices:
        rng = random.Random(seed * 1_000_003 + i)  # per host: the same files whatever the number of workers
        doc = copy.deepcopy(base)
        name = f"{prefix}{i + 1:0{width}d}"
        doc["source"]["hostname"] = name
        for g in doc["gpus"]:
            g["uuid"] = f"GPU-{seed:08x}-{i:04x}-4000-8000-{g['index']:012x}"
            g["serial"] = f"SIM{seed:04d}{i:06d}{g['index']:02d}"
        for r in doc["bench"]:
            for m in r["measurements"]:
                if m["value"] is not None:
                    m["value"] = round(m["value"] * rng.uniform(0.98, 1.02), 2)
        if i in faulty:
            planted.append({"host": name, "kind": faulty[i], "detail": plant(doc, faulty[i], rng)})
            Snapshot.from_dict(doc, where=name)  # what is planted must still load
        with open(os.path.join(out, f"{name}.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, separators=(",", ":"))
    return planted


def make(out: str, hosts: int, demo: str = "dgx-h100", faults: int = 5, seed: int = 1, prefix: str = "node",
         workers: int = 1) -> list[dict]:
    os.makedirs(out, exist_ok=True)
    rng = random.Random(seed)
    base = base_document(demo)
    Snapshot.from_dict(base, where=demo)
    width = max(4, len(str(hosts)))
    faulty = dict(zip(rng.sample(range(hosts), min(faults, hosts)), (FAULTS[i % len(FAULTS)] for i in range(faults))))
    chunks = [list(range(hosts))[k::workers] for k in range(max(1, workers))]
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers) as pool:
            parts = list(pool.map(_write_hosts, *zip(*[(out, base, seed, prefix, width, c, faulty) for c in chunks])))
    else:
        parts = [_write_hosts(out, base, seed, prefix, width, chunks[0], faulty)]
    planted = sorted((p for part in parts for p in part), key=lambda p: p["host"])
    with open(os.path.join(out, "planted.txt"), "w", encoding="utf-8") as f:  # not *.json: a fleet loads *.json
        json.dump({"kind": "p2ptop-fleet-planted", "demo": demo, "seed": seed, "hosts": hosts, "planted": planted}, f, indent=1)
    return planted


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--hosts", type=int, default=100)
    p.add_argument("--demo", default="dgx-h100")
    p.add_argument("--faults", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = p.parse_args()
    planted = make(args.out, args.hosts, args.demo, args.faults, args.seed, workers=args.workers)
    print(f"{args.hosts} snapshots in {args.out}; faults planted on: " + ", ".join(f"{p['host']} ({p['detail']})" for p in planted))
    return 0


if __name__ == "__main__":
    sys.exit(main())
