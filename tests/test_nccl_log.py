"""The NCCL log reader on real logs: the H200 capture (NCCL 2.28) and excerpts of public threads
(tests/fixtures/nccl_logs/index.json names each source)."""

import json
from pathlib import Path

import pytest

from p2ptop.nccl import read_nccl_log
from p2ptop.nccl.log import bus_id_from_nccl, normalise_transport

HERE = Path(__file__).parent
LOGS = HERE / "fixtures" / "nccl_logs"
H200 = HERE.parent.parent / "shared" / "captures" / "h200x2-nvswitch-vm" / "nccl-2.28-allreduce-default.log"


def read(name):
    return read_nccl_log((LOGS / name).read_text())


def test_index_names_every_fixture_and_a_source():
    index = json.loads((LOGS / "index.json").read_text())
    files = {p.name for p in LOGS.glob("*.log")}
    assert {e["file"] for e in index} == files
    assert all(e["source"].startswith("https://github.com/") for e in index)


@pytest.mark.skipif(not H200.exists(), reason="the shared H200 capture is not beside the repository")
def test_h200_nccl_2_28_healthy_cumem():
    log = read_nccl_log(H200.read_text())
    assert (log.version, log.cuda, log.cuda_driver) == ("2.28.9", "13.0", "13.0")
    assert log.hosts == ["vm"]
    assert sorted((r.rank, r.cuda_dev, r.nvml_dev, r.bus_id) for r in log.ranks) == [
        (0, 0, 0, "0000:00:06.0"), (1, 1, 1, "0000:00:07.0")]
    assert len(log.channels) == 48 and {c.transport for c in log.channels} == {"P2P/CUMEM"}
    assert log.worst_transports() == {(0, 1): "P2P/CUMEM"}
    assert [(e.name, e.value) for e in log.env] == [("NCCL_NVLS_ENABLE", "0")] * 2
    assert log.env[0].line == 40
    assert log.warnings == [] and not [m for m in log.messages if m.result]
    assert "network" in {d.kind for d in log.decisions}
    d = log.to_dict()
    assert d["worst_transports"] == {"0-1": "P2P/CUMEM"} and json.dumps(d)


def test_ipc_read_and_socket_across_two_nodes():
    log = read("nccl-952-ipc-socket-multinode.log")
    assert log.hosts == ["nodeA", "nodeB"]
    ch = log.channels[0]
    assert (ch.host, ch.channel, ch.conn, ch.src, ch.dst, ch.src_dev, ch.dst_dev) == ("nodeA", 1, 0, 8, 15, 0, 7)
    assert ch.transport == "P2P/IPC" and ch.read and ch.src_bus is None and ch.line == 1
    net = [c for c in log.channels if c.transport == "NET/Socket"]
    assert {c.direction for c in net} == {"send", "receive"} and net[0].via == "NET/Socket/3"
    worst = log.worst_transports()
    assert worst[(6, 15)] == "NET/Socket" and worst[(8, 15)] == "P2P/IPC"
    by_host = log.transports_by_host()
    assert by_host["nodeB"] == {(6, 15): {"NET/Socket"}}
    assert log.pair_transports("nodeA")[(9, 10)] == {"P2P/IPC"}


def test_shm_after_could_not_enable_p2p_and_old_bus_id_brackets():
    log = read("nccl-1516-shm-could-not-enable-p2p.log")
    shm = [c for c in log.channels if c.transport == "SHM"]
    assert len(shm) == 2 and shm[0].conn is None and shm[0].src_bus == "0000:81:00.0" and shm[0].src_dev is None
    assert log.worst_transports()[(0, 1)] == "SHM"
    assert log.worst_transports()[(1, 2)] == "NET/IB"
    dec = [d for d in log.decisions if d.kind == "p2p_not_enabled"]
    assert len(dec) == 3 and dec[0].devs == (1, 0) and dec[0].line == 1
    assert log.env_values() == {"NCCL_PROTO": "LL", "NCCL_ALGO": "Tree"}
    r = log.ranks[0]
    assert (r.rank, r.nranks, r.cuda_dev, r.nvml_dev, r.bus_id, r.comm_id) == (1, 4, 1, None, "0000:81:00.0", "0xecdec238786580e6")


def test_old_channel_form_direct_pointer_and_ib_gdrdma():
    log = read("nccl-429-direct-pointer-ib-gdrdma.log")
    assert log.hosts == ["machine-1", "machine-2"]
    assert {c.transport for c in log.channels} == {"P2P/direct pointer", "NET/IB"}
    ib = [c for c in log.channels if c.transport == "NET/IB"]
    assert ib[0].via == "NET/IB/0/GDRDMA" and ib[0].direction == "receive" and ib[0].src_bus == "0000:b2:00.0"
    log2 = read("nccl-629-direct-pointer-read-ib.log")
    assert log2.channels[0].transport == "P2P/direct pointer" and log2.channels[0].read


def test_warn_with_location_cuda_error_and_trace():
    log = read("ray-lightning-24-ipc-217.log")
    assert log.version == "2.7.8"
    warn = log.warnings[0]
    assert warn.location == "transport/p2p.cc:238" and warn.host == "z-pc" and warn.line == 7
    assert warn.cuda_number == 217 and warn.cuda_message == "peer access is not supported between these two devices"
    trace = [m for m in log.messages if m.location == "transport.cc:68"]
    assert trace and trace[0].result == "ncclUnhandledCudaError"
    torch_line = [m for m in log.messages if m.level == "TEXT"]
    assert torch_line and torch_line[0].result == "ncclUnhandledCudaError" and torch_line[0].line == 1
    assert log.channels[0].transport == "P2P/IPC" and not log.channels[0].read


def test_versions_driver_and_network_choice():
    log = read("nccl-1637-rtx5090-2.25.log")
    assert (log.version, log.cuda, log.cuda_driver, log.version_line, log.driver_line) == ("2.25.1", "12.2", "12.8", 3, 2)
    kinds = [d.kind for d in log.decisions]
    assert "net_ib_missing" in kinds and ("network", "Socket") in [(d.kind, d.detail) for d in log.decisions]
    log = read("nccl-2057-2.29-socket-only.log")
    assert log.version == "2.29.2" and log.env_values()["NCCL_COMM_ID"] == "172.17.16.64:23456"


def test_p2p_disabled_between_connected_gpus():
    log = read("pytorch-130113-p2p-disabled.log")
    assert [(d.kind, d.devs) for d in log.decisions] == [("p2p_disabled", (2, 1)), ("p2p_disabled", (0, 1))]


def test_nccl_2_4_ring_lines_and_system_error():
    log = read("nccl-290-ring-shm-old.log")
    assert {c.transport for c in log.channels} == {"SHM"}
    assert log.warnings[0].location == "include/shm.h:28"
    assert [m.result for m in log.messages if m.location == "include/shm.h:41"] == ["ncclSystemError"]


@pytest.mark.parametrize("via,norm", [
    ("P2P/CUMEM/read", "P2P/CUMEM"), ("P2P/IPC", "P2P/IPC"), ("P2P/direct pointer/read", "P2P/direct pointer"),
    ("SHM/direct/direct", "SHM"), ("NET/IB/0/GDRDMA", "NET/IB"), ("NET/Socket/0", "NET/Socket"),
    ("NET/AWS Libfabric/0/GDRDMA", "NET/AWS Libfabric"), ("direct shared memory", "SHM")])
def test_transport_names(via, norm):
    assert normalise_transport(via) == norm


def test_bus_ids():
    assert bus_id_from_nccl("1a000") == "0000:1a:00.0"
    assert bus_id_from_nccl("70") == "0000:00:07.0"
    assert bus_id_from_nccl("1901000") == "0019:01:00.0"  # a PCI domain 0x19, as on cloud VMs


def test_text_without_nccl_gives_an_empty_log():
    log = read_nccl_log("hello\nworld\n")
    assert not log.is_nccl and log.channels == [] and log.version is None and log.lines_total == 3


def test_prefixes_before_the_host_are_cut():
    text = ("[1,0]<stdout>:node7:4242:4300 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
            "[2025-03-18 21:25:51] job-0:1:1 [0] NCCL INFO NCCL version 2.26.2+cuda12.8\n"
            "(RayWorker pid=9) gpu-a:77:78 [1] NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n")
    log = read_nccl_log(text)
    assert log.hosts == ["node7", "job-0", "gpu-a"]
    assert log.env[0].host == "gpu-a" and log.version == "2.26.2"
