"""NCCL's own topology print (NCCL_DEBUG_SUBSYS=GRAPH) read by the one NCCL reader and turned into pair facts.

The lines below are written from NCCL's format strings, not copied from a thread: graph/paths.cc printNodePaths
("%s/%lx-%lx :" then "%s/%lx-%lx (%d/%.1f/%s) " per node, NCCL >= 2.19; "%s/%lX :" and "%s/%lX (%d/%f/%s) " in 2.7-2.18),
graph/topo.cc ncclTopoPrintRec ("+ %s[%2.1f] - " then "GPU/%lx-%lx (%d)" with the GPU's rank; "+ NVL[..] - NVS/.." for an
NVSwitch) and graph/topo.h (a GPU's local id is (rank index on the device << 40) | bus id from NCCL 2.27 on).
"""

from __future__ import annotations

from p2ptop.nccl.log import bus_id_from_topo, read_nccl_log
from p2ptop.nccl.table import table_from_text

from .kbtools import explained
from .kbtools import text_facts as _facts

P = "node7:2210:2230 [0] NCCL INFO "

NEW = "\n".join([
    P + "NCCL version 2.23.4+cuda12.6",
    P + "ncclCommInitRank comm 0x5581 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0x9a - Init START",
    "node7:2210:2231 [1] NCCL INFO ncclCommInitRank comm 0x5582 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2a000 commId 0x9a - Init START",
    P + "=== System : maxBw 240.0 totalBw 240.0 ===",
    P + "CPU/0-0 (1/2/-1)",
    P + "+ PCI[48.0] - GPU/0-18000 (0)",
    P + "              + NVL[240.0] - GPU/0-2a000",
    P + "+ PCI[48.0] - GPU/0-2a000 (1)",
    P + "==========================================",
    P + "GPU/0-18000 :GPU/0-18000 (0/5000.0/LOC) GPU/0-2a000 (1/240.0/NVL) CPU/0-0 (1/48.0/PHB) ",
    P + "GPU/0-2a000 :GPU/0-18000 (1/240.0/NVL) GPU/0-2a000 (0/5000.0/LOC) CPU/0-0 (1/48.0/PHB) ",
])


def test_reader_keeps_each_gpu_pair_path_and_the_tree_ranks():
    log = read_nccl_log(NEW)
    assert [(p.src_bus, p.dst_bus, p.type, p.bw, p.hops) for p in log.paths] == [
        ("0000:18:00.0", "0000:2a:00.0", "NVL", 240.0, 1), ("0000:2a:00.0", "0000:18:00.0", "NVL", 240.0, 1)]
    assert [(g.bus, g.rank) for g in log.topo_gpus] == [("0000:18:00.0", 0), ("0000:2a:00.0", 1)]
    index = log.paths_by_pair()  # (host, {bus id, bus id}) -> path
    host = log.paths[0].host
    assert index[(host, frozenset(("0000:2a:00.0", "0000:18:00.0")))].type == "NVL"
    assert index.get((host, frozenset(("0000:2a:00.0", "0000:99:00.0")))) is None
    # the CPU line and an NVLink line without a rank are no GPUs of the tree
    assert all(g.line != 7 for g in log.topo_gpus)


def test_topology_ids_old_new_and_with_the_rank_index_above_bit_40():
    assert bus_id_from_topo("1B000") == "0000:1b:00.0"  # NCCL 2.7-2.18: "%lX"
    assert bus_id_from_topo("0-1b000") == "0000:1b:00.0"  # NCCL >= 2.19: "%lx-%lx"
    assert bus_id_from_topo("0-" + format((1 << 40) | 0x1B000, "x")) == "0000:1b:00.0"  # NCCL >= 2.27, 2nd rank on the GPU
    assert bus_id_from_topo("0-11b000") == "0001:1b:00.0"  # PCI domain 1 (NCCL reads "0001:1b:00.0" as hex digits)


def test_old_capitals_format_with_an_nvswitch_and_a_number_type_not_read():
    old = "\n".join([
        "h:1:2 [0] NCCL INFO GPU/4B000 :GPU/4B000 (0/5000.000000/LOC) GPU/51000 (2/160.000000/NVL) NVS/0 (1/160.000000/NVL) "
        "CPU/0 (3/24.000000/PHB) NET/0 (4/12.500000/PXB) ",
        # NCCL 2.5 printed the type as a link-type number, which is no path class: not read
        "h:1:2 [0] NCCL INFO GPU/1000 :GPU/1000 (0/5000/0) GPU/2000 (1/21/1) ",
    ])
    log = read_nccl_log(old)
    assert [(p.src_bus, p.dst_bus, p.type) for p in log.paths] == [("0000:4b:00.0", "0000:51:00.0", "NVL")]
    assert [d.kind for d in log.decisions] == ["nvswitch"]


def test_the_paths_become_pair_facts_and_an_nvlink_pair_via_shm_is_a_fallback():
    text = NEW + "\n" + P + "Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n"
    f = _facts(text)
    assert f["pair:0-1"]["pair.path"] == "NV"
    assert f["pair:0-1"]["nccl.transport"] == "SHM"
    assert f["pair:0-1"]["nccl.p2p_fallback"] is True
    # the same log without the topology print says nothing of the pair's path: no fallback read from it
    bare = "\n".join(x for x in text.split("\n") if "GPU/" not in x and "NVL[" not in x)
    assert "pair.path" not in _facts(bare).get("pair:0-1", {})
    assert "nccl.p2p_fallback" not in _facts(bare).get("pair:0-1", {})


def test_a_cross_socket_path_and_nvidia_smi_winning_over_nccl():
    sys_log = "\n".join([
        P + "ncclCommInitRank comm 0x1 rank 0 nranks 2 cudaDev 0 busId 3b000 commId 0x2 - Init START",
        "node7:2210:2231 [1] NCCL INFO ncclCommInitRank comm 0x2 rank 1 nranks 2 cudaDev 1 busId d8000 commId 0x2 - Init START",
        P + "GPU/0-3b000 :GPU/0-3b000 (0/5000.0/LOC) GPU/0-d8000 (4/10.0/SYS) CPU/0-0 (1/24.0/PHB) CPU/0-1 (2/10.0/SYS) ",
    ])
    f = _facts(sys_log)["pair:0-1"]
    assert f["pair.path"] == "SYS" and f["pair.cross_socket"] is True
    smi = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
           "GPU0\t X \tNODE\t0-23\t0\n"
           "GPU1\tNODE\t X \t0-23\t0\n\nLegend:\n\n  X    = Self\n")
    assert _facts(smi + "\n" + sys_log)["pair:0-1"]["pair.path"] == "NODE"


def test_nvb_and_unknown_ranks_give_no_path():
    text = "\n".join([
        P + "GPU/0-18000 :GPU/0-18000 (0/5000.0/LOC) GPU/0-2a000 (2/40.0/NVB) ",
    ])
    assert not any("pair.path" in v for v in _facts(text).values())


def test_nccl_log_table_carries_nccls_path_for_the_pair():
    table = table_from_text(NEW + "\n" + P + "Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n")
    (pair,) = table["pairs"]
    assert pair["nccl_path"] == "NVL" and pair["nccl_path_line"] == 10


def test_explain_names_the_p2p_level_entry_on_the_topology_and_shm():
    text = NEW.replace(P + "=== System", P + "NCCL_P2P_LEVEL set by environment to LOC\n" + P + "=== System") + \
        "\n" + P + "Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n"
    assert explained(text)[0][0] == "nccl_env_misconfig"


def test_nccl_log_command_shows_nccls_path_column_only_when_the_log_has_it():
    from p2ptop.commands.nccl import table_lines

    with_print = table_lines(table_from_text(NEW + "\n" + P + "Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n"))
    head = next(x for x in with_print if "lower->higher" in x)
    row = next(x for x in with_print if x.strip().startswith("GPU0-GPU1"))
    assert head.rstrip().endswith("path (NCCL's)") and row.rstrip().endswith("NVL")
    assert head.index("path") == row.index("NVL")
    bare = "\n".join(x for x in NEW.split("\n") if "GPU/" not in x and "NVL[" not in x)
    without = table_lines(table_from_text(bare + "\n" + P + "Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n"))
    assert not any("path (NCCL's)" in x for x in without)
