"""NCCL's transports per GPU pair, from what :func:`p2ptop.nccl.log.read_nccl_log` read.

``table_from_log(log, bus_to_gpu)`` turns ranks into GPUs and channels into a per-pair table:

- a rank is mapped to a GPU by its PCI bus id where the host's GPUs are known (``bus_to_gpu``: NVML bus
  id -> NVML index; the live host or a snapshot), else by the NVML device index NCCL prints (2.19+:
  ``nvmlDev``), else by its CUDA device index (``how`` says which);
- ranks of different hosts are kept apart: a pair is inside one node (``host``) or across nodes;
- every channel and direction is counted by normalised transport (P2P/CUMEM, P2P/IPC, P2P/direct
  pointer, SHM, NET/IB, NET/Socket, ...), with read mode, and the pair's worst transport (P2P < SHM < NET);
- the variables NCCL says were set, its warnings and errors, its P2P decisions are carried along.

The result is plain JSON-safe data (it is saved with ``--save`` and shown by the CLI and dashboard).
"""

from __future__ import annotations

from typing import Any, Optional

from .log import NcclLog, read_nccl_log, transport_rank

MAX_MESSAGES = 50


def _bus_key(bus: Optional[str]) -> Optional[str]:
    """'00000000:3A:00.0' / '0000:3a:00.0' -> '0000:3a:00.0' (NVML pads the domain to 8 digits)."""
    if not bus:
        return None
    try:
        dom, b, rest = bus.strip().lower().split(":")
        return f"{int(dom, 16):04x}:{b[-2:].rjust(2, '0')}:{rest}"
    except ValueError:
        return None


def table_from_text(text: str, bus_to_gpu: Optional[dict[str, int]] = None, rank_to_gpu: Optional[dict[int, int]] = None) -> dict[str, Any]:
    return table_from_log(read_nccl_log(text), bus_to_gpu, rank_to_gpu)


def table_from_log(log: NcclLog, bus_to_gpu: Optional[dict[str, int]] = None, rank_to_gpu: Optional[dict[int, int]] = None) -> dict[str, Any]:
    """The per-pair table. ``rank_to_gpu`` (our own runs) wins over bus ids; bus ids over NCCL's indices."""
    bus = {_bus_key(k): v for k, v in (bus_to_gpu or {}).items() if _bus_key(k)}
    comms = {r.comm_id for r in log.ranks if r.comm_id}
    ranks: dict[int, dict] = {}
    for r in log.ranks:  # the first communicator that names a rank defines it
        if r.rank in ranks:
            continue
        if rank_to_gpu and r.rank in rank_to_gpu:
            gpu, how = rank_to_gpu[r.rank], "the GPU p2ptop gave this rank"
        elif _bus_key(r.bus_id) in bus:
            gpu, how = bus[_bus_key(r.bus_id)], "PCI bus id"
        elif r.nvml_dev is not None:
            gpu, how = r.nvml_dev, "NVML device index NCCL printed"
        else:
            gpu, how = r.cuda_dev, "CUDA device index NCCL printed"
        ranks[r.rank] = {"rank": r.rank, "host": r.host, "gpu": gpu, "how": how, "bus_id": r.bus_id,
                         "cuda_dev": r.cuda_dev, "nvml_dev": r.nvml_dev, "line": r.line}
    if rank_to_gpu:
        for rk, g in rank_to_gpu.items():
            ranks.setdefault(rk, {"rank": rk, "host": None, "gpu": g, "how": "the GPU p2ptop gave this rank", "bus_id": None,
                                  "cuda_dev": None, "nvml_dev": None, "line": None})
    # a log repeats the same channel line shapes: count them first, then place each shape once
    shapes: dict[tuple, list] = {}
    for c in log.channels:
        k = (c.src, c.dst, c.host, c.direction, c.src_dev, c.dst_dev, c.src_bus, c.dst_bus, c.transport, c.read)
        hit = shapes.get(k)
        if hit is None:
            shapes[k] = [1, c]
        else:
            hit[0] += 1
    pairs: dict[tuple, dict] = {}
    selfs: dict[tuple, dict] = {}  # a rank's channels to itself (a one-rank communicator's send/recv): no pair
    for n_seen, c in shapes.values():
        ra, rb = ranks.get(c.src), ranks.get(c.dst)
        if c.src == c.dst and c.direction is None:
            r = ra or {}
            me = selfs.setdefault((r.get("host") or c.host, c.src), {"rank": c.src, "host": r.get("host") or c.host,
                                                                     "gpu": r.get("gpu", _channel_gpu(c.src_dev, c.src_bus, bus)),
                                                                     "transports": {}, "channels": 0, "first_line": c.line})
            me["transports"][c.transport] = me["transports"].get(c.transport, 0) + n_seen
            me["channels"] += n_seen
            me["first_line"] = min(me["first_line"], c.line)
            continue
        if ra is not None and rb is not None:
            same = ra["host"] == rb["host"]
        else:  # a rank the log never introduced: NET channels ([send]/[receive]) are taken to cross nodes
            same = c.direction is None
        ha = ra["host"] if ra else (c.host if same or c.direction == "send" else None)
        hb = rb["host"] if rb else (c.host if same or c.direction == "receive" else None)
        ga = ra["gpu"] if ra else _channel_gpu(c.src_dev, c.src_bus, bus)
        gb = rb["gpu"] if rb else _channel_gpu(c.dst_dev, c.dst_bus, bus)
        if same and ga is not None and gb is not None and ga != gb:
            key = (ha, min(ga, gb), max(ga, gb))
            lo_first = ga < gb
        else:  # across nodes, or GPUs not known: by rank
            key = (ha, "ranks", min(c.src, c.dst), max(c.src, c.dst)) if same else ("across", min(c.src, c.dst), max(c.src, c.dst))
            lo_first = c.src < c.dst
        p = pairs.get(key)
        if p is None:
            p = pairs[key] = {"host": ha if same else None, "hosts": [ha] if same else [ha if lo_first else hb, hb if lo_first else ha],
                              "gpus": [key[1], key[2]] if same and isinstance(key[1], int) else None,
                              "ranks": sorted((c.src, c.dst)), "cross_node": not same,
                              "forward": {}, "reverse": {}, "channels": 0, "read": False, "worst": None, "first_line": c.line}
        if not same:  # a [receive] line names the other end's host: fill in what the [send] line could not
            lo_host, hi_host = (ha, hb) if lo_first else (hb, ha)
            p["hosts"] = [p["hosts"][0] or lo_host, p["hosts"][1] or hi_host]
        side = "forward" if lo_first else "reverse"
        p[side][c.transport] = p[side].get(c.transport, 0) + n_seen
        p["channels"] += n_seen
        p["first_line"] = min(p["first_line"], c.line)
        p["read"] = p["read"] or c.read
        if p["worst"] is None or transport_rank(c.transport) > transport_rank(p["worst"]) or (
                c.transport == p["worst"] and c.line < p["worst_line"]):
            p["worst"], p["worst_line"], p["worst_via"] = c.transport, c.line, c.via
    out_pairs = sorted(pairs.values(), key=lambda p: (p["cross_node"], str(p["host"]), p["gpus"] or [1 << 30], p["ranks"]))
    if log.paths:  # NCCL's own path for the pair (its topology print, NCCL_DEBUG_SUBSYS=GRAPH), by the ranks' bus ids
        index = log.paths_by_pair()  # once: a 72-GPU log prints 5,112 paths for its 2,556 pairs
        for p in out_pairs:
            ra, rb = (ranks.get(r) for r in p["ranks"])
            hit = index.get((p["host"], frozenset((ra["bus_id"], rb["bus_id"])))) if ra and rb and not p["cross_node"] else None
            if hit is not None:
                p["nccl_path"], p["nccl_path_bw"], p["nccl_path_line"] = hit.type, hit.bw, hit.line
    several = len({p["host"] for p in out_pairs if not p["cross_node"]}) > 1
    for p in out_pairs:
        who = f"GPU{p['gpus'][0]}-GPU{p['gpus'][1]}" if p["gpus"] else f"rank {p['ranks'][0]}-rank {p['ranks'][1]}"
        if p["cross_node"]:
            who += f" ({' <-> '.join(h or '?' for h in p['hosts'])})"
        elif several or not p["gpus"]:
            who = f"{p['host'] or '?'}: {who}"
        p["label"] = who
    messages = [{"line": m.line, "host": m.host, "level": m.level, "location": m.location, "message": m.message[:400],
                 "result": m.result, "cuda_message": m.cuda_message, "cuda_number": m.cuda_number}
                for m in log.messages[:MAX_MESSAGES]]
    return {
        "version": log.version, "versions": list(log.versions), "cuda": log.cuda, "cuda_driver": log.cuda_driver,
        "hosts": list(log.hosts), "communicators": len(comms),
        "ranks": [ranks[k] for k in sorted(ranks)],
        "pairs": out_pairs,
        "self": [selfs[k] for k in sorted(selfs, key=lambda k: (str(k[0]), k[1]))],
        "env": {e.name: e.value for e in log.env},
        "env_lines": {e.name: e.line for e in log.env},
        "messages": messages, "messages_total": len(log.messages),
        "decisions": [{"kind": d.kind, "detail": d.detail[:300], "devs": list(d.devs) if d.devs else None, "host": d.host, "line": d.line}
                      for d in log.decisions[:MAX_MESSAGES]],
        "lines": log.lines_total, "nccl_lines": log.nccl_lines,
    }


def _channel_gpu(dev: Optional[int], bus_id: Optional[str], bus: dict) -> Optional[int]:
    """The GPU of a channel end whose rank the log never introduced: by bus id where the bracket held one
    (NCCL < 2.19) and the host's GPUs are known, else the device index of the bracket (2.19+)."""
    if bus_id is not None:
        return bus.get(_bus_key(bus_id))
    return dev


def pair_row(table: dict, a: int, b: int, host: Optional[str] = ...) -> Optional[dict]:  # type: ignore[assignment]
    """The table's row for GPUs a and b (any order), on ``host`` where given."""
    lo, hi = min(a, b), max(a, b)
    for p in table.get("pairs", []):
        if p.get("gpus") == [lo, hi] and (host is ... or p.get("host") == host):
            return p
    return None


def transport_text(p: dict) -> str:
    """'P2P/CUMEM (read) 24+24 ch' / 'SHM 2 ch' — a short cell."""
    kinds = sorted(set(p["forward"]) | set(p["reverse"]), key=transport_rank)
    return "+".join(kinds) + (" read" if p.get("read") else "")
