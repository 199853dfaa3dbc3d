"""Rules of the twenty-seventh session.

NCCL's own WARN messages, as its source (NVIDIA/nccl at v2.30.7, src/) formats them with the values a user's run would
print, each read as one WARN line of a log: the class its knowledge-base entry gives must be among the first three.
This is a table from the source, not from pastes: it keeps the readers of these messages honest when rules change.
And a WARN that names no failure p2ptop knows ("Trying to send to self without a matching recv", enqueue.cc) is named
in the answer that finds no P2P trouble, so that answer never says "no error" where NCCL printed one."""

import json

import pytest

from p2ptop.commands.explain import answer, explain, _as_text
from p2ptop.knowledge import load_kb


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def log_of(location, message):
    return ("node1:2001:2050 [0] NCCL INFO NCCL version 2.27.3+cuda12.9\n"
            f"node1:2001:2050 [0] {location} NCCL WARN {message}\n")


# (class, NCCL source file:line of the WARN (line numbers of v2.30.7, or of the release that printed it), message)
NCCL_WARNS = [
    ('shm_exhausted', 'os/linux.cc:780',
     'Error: failed to create shared memory file /dev/shm/nccl-XXXXXX, error No space left on device (28)'),
    ('shm_exhausted', 'os/linux.cc:795',
     'Error: failed to extend /dev/shm/nccl-a8Bc2D to 9637892 bytes, error: No space left on device (28)'),
    ('shm_exhausted', 'os/linux.cc:806',
     'Error: Could not map /dev/shm/nccl-a8Bc2D size 9637892, error: Bus error (7)'),
    ('shm_exhausted', 'os/linux.cc:842',
     'Error while creating shared memory segment /dev/shm/nccl-a8Bc2D (size 9637888), error: No space left on device (28)'),
    ('shm_exhausted', 'shmutils.cc:62',
     'Call to posix_fallocate failed : No space left on device'),
    ('p2p_unsupported_topology', 'transport/p2p.cc:355',
     'failed to peer with device 1(=41000): 217 peer access is not supported between these two devices'),
    ('cuda_ipc_cross_boundary', 'transport/p2p.cc:250',
     'cudaIpcGetMemHandle failed : invalid argument'),
    ('cuda_ipc_cross_boundary', 'transport/p2p.cc:280',
     'failed to open CUDA IPC handle : 201 invalid device context'),
    ('cuda_ipc_cross_boundary', 'transport/p2p.cc:280',
     'failed to open CUDA IPC handle : 400 invalid resource handle'),
    ('nvls_multicast_failure', 'transport/nvls.cc:376',
     "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 801 'operation not supported'. This is usually caused by a system or configuration error in the Fabric Manager or NVLink Fabric."),
    ('vm_p2p_unavailable', 'os/linux.cc:637',
     'Could not find real path of /sys/class/pci_bus/0000:21/../../0000:21:00.0'),
    ('driver_too_old_for_cuda', 'misc/cudawrap.cc:292',
     'CUDA some PFN functions not found in the library'),
    ('nccl_version_bug', 'init.cc:1043',
     'Mismatched NCCL version detected : rank 1 version 22703 rank 0 version 22105'),
    ('device_not_visible', 'init.cc:1057',
     'Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration'),
    ('device_not_visible', 'init.cc:2607',
     'Invalid device 3 (totalnDev=2)'),
    ('device_not_visible', 'os/linux.cc:615',
     'Failed to open libnvidia-ml.so.1: libnvidia-ml.so.1: cannot open shared object file: No such file or directory'),
    ('nvlink_link_failure', 'graph/paths.cc:396',
     'P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case given their connectivity, and is probably due to a hardware issue. If you still want to proceed, you can set NCCL_IGNORE_DISABLED_P2P=1.'),
    ('fabric_manager_not_running', 'mnnvl.cc:74',
     'MNNVL (cliqueSize 4) is available but not working on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.'),
    ('nccl_env_misconfig', 'transport.cc:39',
     'No transport found for rank 0[1b000] -> rank 1[1c000]'),
    ('nccl_env_misconfig', 'graph/xml.cc:1257',
     'Could not open XML graph file /opt/topo.xml : No such file or directory'),
    ('nccl_env_misconfig', 'bootstrap.cc:126',
     'Bootstrap : no socket interface found'),
    ('device_not_visible', 'misc/nvmlwrap.cc:166',
     'nvmlDeviceGetHandleByIndex(1) failed: Unknown Error'),
    ('driver_too_old_for_cuda', 'misc/nvmlwrap.cc:142',
     'nvmlInit_v2() failed: Driver/library version mismatch'),
    ('cuda_ipc_cross_boundary', 'proxy.cc:1299',
     'ncclProxyClientGetFd call to tpRank 1 handle 0x7f2a00000000 failed : 2'),
    ('cuda_ipc_cross_boundary', 'transport/p2p.cc:300',
     "Cuda failure 'operation not permitted' cuMemImportFromShareableHandle"),
    ('nccl_version_bug', 'misc/strongstream.cc:91',
     "NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 or if the installed CUDA driver < R465."),
    ('peer_access_already_enabled', 'transport/p2p.cc:340',
     "Cuda failure 'peer access is already enabled'"),
    ('too_many_peers', 'transport/p2p.cc:355',
     'failed to peer with device 9(=c1000): 711 peer mapping resources exhausted'),
    ('nvlink_peer_memory_error', 'include/checks.h:18',
     "Cuda failure 'Invalid access of peer GPU memory over nvlink or a hardware error'"),
    ('bar1_too_small', 'include/checks.h:18',
     "Cuda failure 'mapping of buffer object failed'"),
    ('mig_p2p_unsupported', 'init.cc:1057',
     'Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration'),
    ('device_not_visible', 'include/checks.h:18',
     "Cuda failure 'invalid device ordinal'"),
    ('driver_too_old_for_cuda', 'include/checks.h:18',
     "Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'"),
    ('fabric_manager_not_running', 'include/checks.h:18',
     "Cuda failure 'system not yet initialized'"),
    ('device_not_visible', 'include/checks.h:18',
     "Cuda failure 'no CUDA-capable device is detected'"),
    ('nccl_version_bug', 'include/checks.h:18',
     "Cuda failure 'named symbol not found'"),
]


@pytest.mark.parametrize("want,location,message", NCCL_WARNS, ids=[f"{w}:{l}" for w, l, _ in NCCL_WARNS])
def test_nccl_source_warns_are_read_as_their_class(kb, want, location, message):
    got = [m.entry.failure_class for m, _ in explain(kb, log_of(location, message), [], 3)]
    assert want in got, got


def test_a_warn_naming_no_known_failure_is_named_not_denied(kb):
    text = log_of("enqueue.cc:1160", "Trying to send to self without a matching recv")
    got = answer(kb, text, [], 3)
    assert got["kind"] == "healthy"
    assert got["warnings_unread"] == [{"line": 2, "location": "enqueue.cc:1160",
                                       "message": "Trying to send to self without a matching recv"}]
    out = _as_text(got, text, None, None, kb, "en")
    assert "no error," not in out and "NCCL warned on line 2 (enqueue.cc:1160)" in out
    assert "'Trying to send to self without a matching recv'" in out


def test_benign_warns_and_healthy_logs_name_no_warning(kb):
    text = log_of("misc/ibvwrap.cc:98", "Failed to open libibverbs.so[.1]")
    assert answer(kb, text, [], 3)["warnings_unread"] == []
    healthy = ("node1:1:2 [0] NCCL INFO NCCL version 2.27.3+cuda12.9\n"
               "node1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n")
    got = answer(kb, healthy, [], 3)
    assert got["kind"] == "healthy" and got["warnings_unread"] == []


# --- NCCL's bootstrap words without the word NCCL, Gloo's words for the same mistake ------------------------------------

def test_nccl_bootstrap_words_alone_open_the_gate_and_name_the_interface_variable(kb):
    from p2ptop.evidence import read_text
    text = "- no socket interface found\n- Unable to find address for: eth0\n"
    assert read_text(text).gpu_related
    got = answer(kb, text, [], 3)
    assert got["results"][0][0].entry.id == "nccl/socket-ifname-matches-no-interface"
    assert got["results"][0][0].confidence in ("likely", "possible")
    # NCCL's subsystem tags are NCCL's
    assert read_text("NET/IB : No device found.").gpu_related
    assert read_text("NET/Plugin : Plugin load returned 2").gpu_related
    # Gloo's words alone name no GPU: the gate stays shut on a CPU job's error
    assert not read_text("Unable to find address for: eth0\n").gpu_related


# --- the NVIDIA driver's own packages updated: the trouble began with another driver ----------------------------------

@pytest.mark.parametrize("text,said", [
    ("After Ubuntu host got an automatical update of linux-modules-nvidia-440-5.4.0-45-generic:amd64 driver, the DDP "
     "training in docker container will get stuck at loss.backward().", True),
    ("Since unattended-upgrades updated nvidia-driver-535 the DDP job hangs at the first all_reduce.", True),
    ("Following a routine upgrade of libnvidia-compute-550 our NCCL tests hang.", True),
    ("After the host got an automatic update of the nvidia driver, training hangs on 2 GPUs.", True),
    # packages of their own, not the driver
    ("After an update of nvidia-container-toolkit the NCCL job hangs.", False),
    ("After updating nvidia-fabricmanager the job hangs.", False),
    ("After I reinstalled nvidia-docker2, NCCL hangs.", False),
])
def test_a_driver_package_update_is_the_change_that_broke_it(text, said):
    from p2ptop.evidence import read_text
    got = [f.facts["text.broken_by"] for f in read_text(text).findings if "text.broken_by" in f.facts]
    assert got == (["driver"] if said else [])


def test_an_automatic_driver_update_before_a_hang_offers_the_driver_entry(kb):
    text = ("After Ubuntu host got an automatical update of linux-modules-nvidia-440-5.4.0-45-generic:amd64 driver, the "
            "Pytorch DDP trainning in docker container will get stuck at loss.backward(), with cpu 100% and GPU 100% usage.")
    got = explain(kb, text, [], 3)
    assert got[0][0].entry.failure_class == "p2p_driver_regression" and got[0][0].confidence == "possible"


# --- each rank given only its own GPU: NCCL cannot see the peer, runs the slow path -------------------------------------

ONE_EACH = "nccl/ranks-see-one-gpu-each-slow"


@pytest.mark.parametrize("text", [
    "With srun --gpus-per-task=1 our DDP all_reduce is very slow, much slower than on the same node with --gpus 2.",
    "We run one GPU per container; the NVLink is not used at all between the pods on the same DGX.",
])
def test_one_gpu_per_rank_with_a_slow_path_offers_the_visibility_entry(kb, text):
    got = explain(kb, text, [], 3)
    assert got[0][0].entry.id == ONE_EACH and got[0][0].confidence == "possible"


@pytest.mark.parametrize("text", [
    # the setup alone is no symptom (rule 3)
    "We launch with srun --gpus-per-task=1 on our 8-GPU nodes.",
    # a slow path without one GPU per rank is another cause's
    "Our DDP all_reduce between the two A100s is very slow, NCCL goes via SHM.",
    # GeForce cards have no P2P to lose
    "With srun --gpus-per-task=1 on two RTX 4090s the all_reduce is slow.",
])
def test_the_visibility_entry_needs_both_one_gpu_per_rank_and_a_slow_path(kb, text):
    got = [(m.entry.id, m.confidence) for m, _ in explain(kb, text, [], 5)]
    assert not any(e == ONE_EACH and c in ("likely", "possible") for e, c in got), got


def test_an_nvlink_bridge_not_detected_with_the_cards_named_between(kb):
    from p2ptop.evidence import read_text
    for text in ("The NVLink bridge between the two 3090s is not detected; nvidia-smi nvlink --status shows nothing.",
                 "The NVLink bridge on my 3090 pair isn't showing up in nvidia-smi, and NCCL goes via SHM."):
        assert any(f.facts.get("gpu.nvlink_down") == 1 for f in read_text(text).findings), text
    # an NVLink said to be absent by design is no link down
    assert not any("gpu.nvlink_down" in f.facts for f in read_text("Our RTX 4090s have no NVLink bridge.").findings)


def test_an_nccl_log_from_a_windows_default_host_name_is_wsl_not_native_windows():
    from p2ptop.evidence import read_text
    log = ("#  Rank  0 Group  0 Pid   8347 on DESKTOP-VMBL43V device  0 [0x01] NVIDIA GeForce RTX 3090 Ti\n"
           "DESKTOP-VMBL43V:8347:8347 [0] NCCL INFO Bootstrap : Using eth0:172.23.125.43<0>\n"
           "DESKTOP-VMBL43V:8347:8347 [1] NCCL INFO cudaDriverVersion 12010\n"
           "NCCL version 2.18.3+cuda12.1\n")
    facts = {k: v for f in read_text(log).findings for k, v in f.facts.items()}
    assert facts.get("host.hypervisor") == "Hyper-V (WSL2)" and "host.windows" not in facts
    # the same name in a native Windows traceback (no NCCL line) stays native Windows
    tb = ("tensorflow.python.framework.errors_impl.InvalidArgumentError: Op type not registered 'NcclAllReduce' in binary "
          "running on DESKTOP-K1BEKCL.")
    facts = {k: v for f in read_text(tb).findings for k, v in f.facts.items()}
    assert facts.get("host.windows") is True and "host.hypervisor" not in facts


# --- tool outputs pasted indented (a literal block after a sentence) read as they do at the margin ----------------------

OLD_TABLE = """Inter-GPU performance was tested on all 4x V100 devices (no NVLINK). Results: ::

   # nThread 1 nGpus 4 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
   #
   # Using devices
   #   Rank  0 Pid 201685 on node026 device  0 [0x3d] Tesla V100-PCIE-32GB
   #   Rank  1 Pid 201685 on node026 device  1 [0x3e] Tesla V100-PCIE-32GB
   #
   #       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error
   #        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
      33554432       8388608     float     sum   5349.2    6.27    9.41  2e-07   5351.0    6.27    9.41  2e-07
      67108864      16777216     float     sum    10712    6.26    9.40  2e-07    10711    6.27    9.40  2e-07
     134217728      33554432     float     sum    21410    6.27    9.40  2e-07    21407    6.27    9.40  2e-07
   # Out of bounds values : 0 OK
"""


def test_an_indented_older_nccl_tests_table_with_whole_microsecond_times_is_no_wrong_data():
    from p2ptop.evidence import read_text
    for text in (OLD_TABLE, "\n".join(l.strip() for l in OLD_TABLE.splitlines())):
        facts = {k for f in read_text(text).findings for k in f.facts}
        assert "tool.verification_error" not in facts and "symptom.wrong_results" not in facts, text[:40]
        assert "nccl.status" in facts  # the table was read: a run that checked its data
    # a difference over float's tolerance in the same layout is wrong data
    bad = OLD_TABLE.replace("2e-07   5351.0", "4e-02   5351.0")
    assert any("tool.verification_error" in f.facts for f in read_text(bad).findings)


def test_an_indented_lspci_block_keeps_its_device():
    from p2ptop.evidence import read_text
    block = ("52:00.0 VGA compatible controller: NVIDIA Corporation Device 2684 (rev a1) (prog-if 00 [VGA controller])\n"
             "    Subsystem: NVIDIA Corporation Device 167c\n"
             "    Memory at b8000000 (32-bit, non-prefetchable) [size=16M]\n"
             "    Memory at 10ffc0000000 (64-bit, prefetchable) [size=256M]\n")
    for text in (block, "lspci -v says:\n\n" + "\n".join("   " + l for l in block.splitlines())):
        got = [f.facts.get("gpu.bar1_mb") for f in read_text(text).findings if "gpu.bar1_mb" in f.facts]
        assert got == [256], text[:20]


@pytest.mark.parametrize("text,one", [
    ("srun -n 2 --tres-per-task=gres/gpu:1 --tres-bind=gres/gpu:per_task:1 ./all_reduce_perf -g 1", True),
    ("srun -n 2 --gpus-per-task=1 ./all_reduce_perf -g 1", True),
    ("srun -n 2 --tres-bind=gres/gpu:none ./all_reduce_perf -g 1", False),
])
def test_slurm_binding_one_gpu_to_each_task_in_its_newer_form(text, one):
    from p2ptop.evidence import read_text
    assert any(f.facts.get("host.one_gpu_per_process") for f in read_text(text).findings) is one


def test_the_visibility_entry_is_in_doubt_where_a_current_nccl_reaches_a_hidden_peer(kb):
    """Measured on two H200s (benchmarks/results/h200x2-2026-11-30-own-gpu): NCCL 2.28.9 with each rank given only its own
    GPU by CUDA_VISIBLE_DEVICES went via P2P/CUMEM, and via P2P/IPC with NCCL_CUMEM_ENABLE=0, at the bus bandwidth of the
    all-visible run: a text naming NCCL 2.19 or later puts the entry in doubt (unsure at most)."""
    words = "Each rank only sees its own GPU (CUDA_VISIBLE_DEVICES=<rank>), and the all_reduce is much slower than with both GPUs visible.\n"
    new = words + "vm:670:670 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
    got = [m for m, _ in explain(kb, new, [], 5) if m.entry.id == ONE_EACH]
    assert all(m.confidence == "unsure" and any(r.startswith("in doubt") for r in m.reasons) for m in got)
    old = words + "vm:670:670 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n"
    got = explain(kb, old, [], 3)
    assert got[0][0].entry.id == ONE_EACH and got[0][0].confidence == "possible"
