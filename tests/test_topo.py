"""p2ptop topo against what nvidia-smi prints."""

import os
import re

import pytest

from p2ptop.demos import DEMOS, load_demo
from p2ptop.fabric import Fabric
from p2ptop.model import ANCESTOR_PATH_CLASS, P2P_STATUS_SHORT
from p2ptop.sources.capture import FakeNvml
from p2ptop.sources.nvml import read_snapshot
from p2ptop.topo_text import p2p_matrix, path_matrix

from .conftest import H200_CAPTURE


def _norm(text):
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def parse_p2p_capture(path):
    """The capture's topo -p2p file: {'r': [rows], ...}."""
    out, cur = {}, None
    for line in open(path, encoding="utf-8").read().splitlines():
        m = re.match(r"## (\w) ", line)
        if m:
            cur = out.setdefault(m.group(1), [])
        elif cur is not None and line.strip():
            cur.append(line.rstrip())
    return out


def test_capture_path_matrix_equals_nvidia_smi(h200_capture):
    snap = read_snapshot(FakeNvml(h200_capture), sysfs_root="/nonexistent")
    ours = _norm(path_matrix(snap))
    theirs = _norm(open(os.path.join(H200_CAPTURE, "nvidia-smi-topo-m.txt"), encoding="utf-8").read())
    assert ours == theirs


def test_capture_p2p_matrices_equal_nvidia_smi(h200_capture):
    snap = read_snapshot(FakeNvml(h200_capture), sysfs_root="/nonexistent")
    theirs = parse_p2p_capture(os.path.join(H200_CAPTURE, "nvidia-smi-topo-p2p.txt"))
    for letter, cap in zip("rwnap", ["read", "write", "nvlink", "atomics", "pci"]):
        assert _norm(p2p_matrix(snap, cap, legend=False)) == theirs[letter], cap


@pytest.mark.parametrize("name", list(DEMOS))
def test_demo_matrices_are_what_nvidia_smi_would_print(name):
    """nvidia-smi prints NV# for NVLink pairs, else the NVML ancestor's class; P2P cells are NVML's codes."""
    snap = load_demo(name)
    fabric = Fabric(snap)
    rows = path_matrix(snap, fabric, legend=False).splitlines()[1:]
    for a, row in zip(snap.gpu_indices, rows):
        cells = row.split("\t")[1 : 1 + len(snap.gpus)]
        for b, cell in zip(snap.gpu_indices, cells):
            if a == b:
                assert cell == " X "
                continue
            links = fabric.nvlink_count(a, b)
            want = f"NV{links}" if links else ANCESTOR_PATH_CLASS[snap.pair(a, b).ancestor]
            assert cell == want
            # and the graph's own structure agrees with NVML's answer
            assert fabric.graph_path_class(a, b) == want
    for cap in ("read", "write", "nvlink", "atomics", "pci"):
        rows = p2p_matrix(snap, cap, legend=False).splitlines()[1:]
        for a, row in zip(snap.gpu_indices, rows):
            cells = row.split("\t")[1:]
            for b, cell in zip(snap.gpu_indices, cells):
                want = "X" if a == b else P2P_STATUS_SHORT[snap.pair(a, b).p2p[cap]]
                assert cell == want


def test_nvlink_degraded_shows_links_down():
    snap = load_demo("nvlink-degraded")
    f = Fabric(snap)
    assert f.path_class(0, 1) == "NV12"
    assert f.path_class(0, 3) == "NV10"  # GPU3 has two links down


LIVE = os.path.join(os.path.dirname(H200_CAPTURE), "h200x2-live")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _smi_p2p_sections(path):
    """nvidia-smi topo -p2p output collected as '## r' ... sections, ANSI codes removed."""
    out, cur = {}, None
    for line in ANSI.sub("", open(path, encoding="utf-8").read()).splitlines():
        if line.startswith("## "):
            cur = out.setdefault(line[3:].strip(), [])
        elif cur is not None:
            cur.append(line)
    return {k: "\n".join(v).strip("\n") for k, v in out.items()}


def test_live_h200_snapshot_replays_to_exactly_what_nvidia_smi_printed():
    from p2ptop.sources import read_replay

    snap = read_replay(os.path.join(LIVE, "p2ptop-snapshot.json"))
    assert snap.source.origin_kind == "nvml" and not snap.source.simulated
    smi_m = ANSI.sub("", open(os.path.join(LIVE, "nvidia-smi-topo-m.txt"), encoding="utf-8").read())
    assert path_matrix(snap) == smi_m
    sections = _smi_p2p_sections(os.path.join(LIVE, "nvidia-smi-topo-p2p.txt"))
    for letter, cap in zip("rwnap", ["read", "write", "nvlink", "atomics", "pci"]):
        assert p2p_matrix(snap, cap).strip("\n") == sections[letter], cap
