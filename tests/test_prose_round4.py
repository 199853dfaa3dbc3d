"""The prose reader's fourth round: a larger /dev/shm said to have been needed (shm_exhausted's resolution), a PCIe
link said to TRAIN at a lower generation than it advertises (a training outcome, not the idle down-clock), a failure
ASKED about ("whether NCCL does not support VMs?") rather than reported, and the negation reading that took
"volumeMount" for "n't".

The positive sentences are from the public threads named beside them (benchmarks/corpus cases where marked); the
negatives are healthy or unrelated sentences that must not fire."""

from __future__ import annotations

import pytest

from p2ptop.knowledge.matcher import match

from .kbtools import bundled_kb, host_facts

KB = bundled_kb()


@pytest.mark.parametrize("text, source", [
    # corpus case fresh/gh-vllm-project-production-stack-44 (the backticks and "volumeMount" kept)
    ("I had difficulty launching this stack successfully out of the box, and had to manually increase the Docker "
     "`/dev/shm` with an additional volumeMount as:", "https://github.com/vllm-project/production-stack/issues/44"),
    ("NCCL error: unhandled system error. Running the container with --shm-size=16g fixed it.",
     "NCCL troubleshooting, Docker section: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html"),
    ("多卡训练报错，把容器的共享内存调大之后就正常了", "the Chinese wording of the same resolution"),
    ("Solved by mounting a bigger /dev/shm into the pod.", "Kubernetes emptyDir medium: Memory at /dev/shm"),
])
def test_shm_increase_read(text, source):
    assert host_facts(text).get("symptom.fixed_by_shm_increase") is True, source


@pytest.mark.parametrize("text", [
    "increasing /dev/shm didn't help, NCCL still hangs",
    "The container has /dev/shm of 64MB.",
    "We increased the batch size after the shm check.",
    "set shm_size: 8gb in the compose file after reading the docs",
])
def test_shm_increase_not_read(text):
    assert host_facts(text).get("symptom.fixed_by_shm_increase") is None


def test_shm_increase_offers_the_shm_entry_on_a_gpu_text():
    text = "NCCL all_reduce between the 4 GPUs failed in docker; had to increase the container's /dev/shm and it works now."
    top = match(KB, text)[0]
    assert top.entry.failure_class == "shm_exhausted" and top.confidence in ("likely", "possible")


def test_volumemount_is_no_negation():
    # "volumeMount" ends in "nt": the old n'?t reading took it for "didn't" and dropped the resolution
    text = "NCCL_P2P_DISABLE=1 fixes it, set through a volumeMount of the env file"
    assert host_facts(text).get("symptom.fixed_by_p2p_disable") is True
    assert host_facts("NCCL_P2P_DISABLE=1 doesn't fix it").get("symptom.fixed_by_p2p_disable") is None


@pytest.mark.parametrize("text, source", [
    # corpus case holdout/gh-amoghmunikote-cmpunlocker-19
    ("The card advertises Gen2 (5GT/s) in its Link Capabilities but the link trains at Gen1 until a retrain is driven "
     "from the **upstream root port**.", "https://github.com/amoghmunikote/cmpunlocker/issues/19"),
    ("The link negotiated Gen3 instead of Gen4 on slot 2.", "the same reading, negotiated"),
])
def test_link_trained_low_is_degraded(text, source):
    assert host_facts(text).get("gpu.pcie_degraded_under_load") is True, source


@pytest.mark.parametrize("text", [
    "lspci shows the link at Gen1 instead of Gen4 while idle",  # the idle down-clock: no load, no training said
    "GPU runs at gen1 although it supports gen4 when idle.",
    "We trained at Gen4 speeds on all eight GPUs.",
])
def test_idle_or_healthy_link_not_degraded(text):
    assert host_facts(text).get("gpu.pcie_degraded_under_load") is None


@pytest.mark.parametrize("text", [
    # corpus case fresh2/gh-nvidia-nccl-575: a question, not a report
    "I want to know that whether nccl do not support such virsual machines?",
    "请问 NCCL 是否不支持虚拟机？",
])
def test_failure_asked_about_is_not_reported(text):
    assert host_facts(text).get("symptom.fails") is None


@pytest.mark.parametrize("text", [
    "P2P does not work in my VM. I wonder if NCCL supports it.",
    "NCCL does not work in the VM",
    "P2P 在虚拟机里不支持",
])
def test_failure_reported_still_read(text):
    assert host_facts(text).get("symptom.fails") is True


def test_nccl_fix_release_needs_nccls_own_version():
    # corpus case fresh3/gh-project-hami-hami-2641: HAMi's "v2.9.0" beside "hangs" is no NCCL release
    # (https://github.com/Project-HAMi/HAMi/issues/2641); NCCL's own versions still count
    ids = lambda t: [(m.entry.id, m.confidence) for m in match(KB, t)]
    hami = ("vLLM with tensor-parallel-size=4 on 4x NVIDIA RTX PRO 6000 Blackwell under HAMi v2.9.0 hangs at NCCL "
            "communicator init.\n(Worker pid=960) INFO [pynccl.py:113] vLLM is using nccl==2.28.9")
    assert ("nccl/hang-fixed-in-later-release", "possible") not in ids(hami)
    ok = "Training hangs in all_reduce with NCCL 2.18.1; upgrading to NCCL v2.19.3 fixed it."
    assert any(i == "nccl/hang-fixed-in-later-release" and c in ("likely", "possible") for i, c in ids(ok))


@pytest.mark.parametrize("text, source", [
    # corpus case fresh/gh-ride-lab-sage-185 (a container's GPU "dropped": 掉gpu)
    ("当前服务器运行一段时间后，会出现掉gpu的情况，具体体现如下\nroot@239f910629d5:/workspace# nvidia-smi\n"
     "Failed to initialize NVML: Unknown Error\n可能是installation的容器配置问题", "https://github.com/RIDE-LAB/SAGE/issues/185"),
    ("Nvidia-smi is not working after few hours inside docker(NVML error). After few hours, nvidia-smi gives "
     "failed to initialize nvml unknown error", "https://github.com/alibaba/BladeDISC/issues/1248"),
])
def test_container_nvml_unknown_error_first(text, source):
    top = match(KB, text)[0]
    assert top.entry.id == "container/nvml-unknown-error-gpu-detached" and top.confidence in ("likely", "possible"), source


@pytest.mark.parametrize("text", [
    "Failed to initialize NVML: Driver/library version mismatch",  # a driver upgraded under a running module
    "Failed to initialize NVML: Insufficient Permissions",
    "We run nvidia-smi inside the docker container every minute to collect metrics.",
])
def test_container_nvml_entry_not_on_other_nvml_failures(text):
    # not offered on its signs (its words may make it an unsure candidate beside a symptom, never more)
    assert all(m.entry.id != "container/nvml-unknown-error-gpu-detached" or (m.confidence == "unsure" and m.basis == "retrieval")
               for m in match(KB, text))


@pytest.mark.parametrize("text", [
    "Failed to initialize NVML: Driver/library version mismatch",
    # corpus case fresh3/gh-nanoporetech-dorado-1214
    "both ended up with a mismatched Fabric Manager version to the NVIDIA Driver version I installed.",
    "RuntimeError: Error(s) in loading state_dict: size mismatch for weight",
])
def test_version_or_shape_mismatch_is_no_wrong_result(text):
    assert host_facts(text).get("symptom.wrong_results") is None


@pytest.mark.parametrize("text", ["nvbandwidth reports 12 mismatches in the copy", "checksum mismatch after P2P copy",
                                  "the all_reduce result has a mismatch on rank 3"])
def test_data_mismatch_is_wrong_result(text):
    assert host_facts(text).get("symptom.wrong_results") is True


@pytest.mark.parametrize("text, want, source", [
    # corpus case fresh3/gh-nanoporetech-dorado-1214 (both sentences)
    ("Yep, it wasn't initialized, and as #1184 mentioned Fabric Manager wasn't running.", "not running",
     "https://github.com/nanoporetech/dorado/issues/1214"),
    ("both ended up with a mismatched Fabric Manager version to the NVIDIA Driver version I installed.", "version mismatch",
     "https://github.com/nanoporetech/dorado/issues/1214"),
])
def test_fabric_manager_contracted_and_preposed_words(text, want, source):
    assert host_facts(text).get("host.fabric_manager") == want, source


@pytest.mark.parametrize("text, want", [("the fabric manager is running fine", "running"),  # no failure (read as running since r51)
                                        ("We have mismatched GPUs; fabric manager version 535 matches the driver.", None)])
def test_fabric_manager_healthy_words(text, want):
    assert host_facts(text).get("host.fabric_manager") == want


@pytest.mark.parametrize("text, key, want, source", [
    # corpus case fresh3/gh-nvidia-nccl-945
    ("How to enable nvlink P2P across container in the same node? only SHM can work across container in same node",
     "host.container", "container", "https://github.com/NVIDIA/nccl/issues/945"),
    ("How to enable nvlink P2P across container in the same node? only SHM can work across container in same node",
     "nccl.transport", "SHM", "https://github.com/NVIDIA/nccl/issues/945"),
    # corpus case fresh2/gh-nvidia-nccl-tests-250
    ("I tried to disable the nvlink with `RMNvLinkEnable=0x0`. Then the NCCL all_reduce_perf will always leverage the SHM "
     "to communicate.", "nccl.transport", "SHM", "https://github.com/NVIDIA/nccl-tests/issues/250"),
    # corpus case fresh/gh-nvidia-gpu-operator-1043 (non-native "stucking", Kubernetes' CrashLoopBackOff)
    ("Stucking into init or crashbackoff status on some pods (nvidia-cuda-validator and nvidia-operator-validator)",
     "symptom.hang", True, "https://github.com/NVIDIA/gpu-operator/issues/1043"),
    ("Stucking into init or crashbackoff status on some pods (nvidia-cuda-validator and nvidia-operator-validator)",
     "symptom.crash", True, "https://github.com/NVIDIA/gpu-operator/issues/1043"),
])
def test_container_transport_and_hang_words(text, key, want, source):
    got = host_facts(text).get(key)
    assert got == want, (source, got)


@pytest.mark.parametrize("text, key", [
    ("NCCL uses P2P/IPC for all pairs", "nccl.transport"),
    ("The build is not stuck, it just takes a while.", "symptom.hang"),
    ("The job runs on bare metal across two nodes.", "host.container"),
])
def test_container_transport_and_hang_words_negatives(text, key):
    assert host_facts(text).get(key) is None


@pytest.mark.parametrize("text, want, source", [
    # corpus case fresh3/pugetsystems-dual-nvlink-windows-10
    ("the latest NVIDIA drivers just would not cooperate at all. We got it working on an older driver revision, but then "
     "found that Windows would immediately update the driver", "driver",
     "https://www.pugetsystems.com/labs/articles/Unsupported-How-to-Make-Dual-NVLink-Work-on-Windows-10-1688/"),
    ("It works fine with the previous NCCL release.", "nccl", "the same reading for NCCL"),
    ("旧版驱动正常，新驱动卡住", "driver", "the Chinese wording"),
])
def test_older_release_works_is_fixed_by(text, want, source):
    assert host_facts(text).get("text.fixed_by") == want, source


@pytest.mark.parametrize("text", ["It works on an older GPU.", "We tested the older driver and it did not work either.",
                                  "older drivers did not work"])
def test_older_release_not_working_is_no_fix(text):
    assert host_facts(text).get("text.fixed_by") is None


def test_peer_pointer_without_enable_entry_on_cupys_message():
    # CuPy's own message (cupy/_core/_kernel.pyx, _check_peer_access), https://github.com/cupy/cupy/pull/5496
    text = ("ValueError: The device where the array resides (0) is different from the current device (1). "
            "Peer access could not be activated automatically.")
    top = match(KB, text)[0]
    assert top.entry.id == "cuda/peer-pointer-without-enable-peer-access" and top.confidence in ("likely", "possible")


def test_peer_pointer_entry_not_on_healthy_peer_text():
    text = "cudaDeviceEnablePeerAccess succeeded on both GPUs and simpleP2P reports Test passed"
    assert all(m.entry.id != "cuda/peer-pointer-without-enable-peer-access" or m.confidence == "unsure" for m in match(KB, text))


def test_regex_line_said_absent_is_no_hit():
    # corpus case fresh3/gh-local-inference-lab-rtx6kpro-15-2: a checklist of what the kernel log did NOT show
    from p2ptop.knowledge.matcher import _said_absent
    from p2ptop.knowledge.regex_safety import compile_pattern
    rx = compile_pattern(r"GPU has fallen off the bus")
    assert _said_absent("* No `GPU has fallen off the bus`", rx)
    assert _said_absent("without any 'GPU has fallen off the bus' in dmesg", rx)
    assert not _said_absent("[ 12.3] NVRM: GPU 0000:41:00.0: GPU has fallen off the bus.", rx)
    assert not _said_absent("No idea why, but then: GPU has fallen off the bus", rx)
    text = "No related errors were observed in the kernel log:\n\n* No `NVRM: Xid`\n* No AER PCIe errors\n* No `GPU has fallen off the bus`"
    assert all(not r.startswith("regex matched") for m in match(KB, text) if m.entry.id == "xid/79-gpu-fallen-off-bus" for r in m.reasons)
    # a real line after a negated one still counts
    text2 = "* No `GPU has fallen off the bus` yesterday\n[ 12.3] NVRM: GPU 0000:41:00.0: GPU has fallen off the bus."
    assert any(r.startswith("regex matched line 2") for m in match(KB, text2) if m.entry.id == "xid/79-gpu-fallen-off-bus" for r in m.reasons)


def test_quoted_message_said_absent_in_prose():
    assert host_facts("We saw no `P2P is hanging` message, it just works.").get("symptom.hang") is None


@pytest.mark.parametrize("text, key", [
    ("PCIe 链路降速到 Gen1 x8，正常应该是 Gen4 x16", "gpu.pcie_degraded_under_load"),
    ("It runs at x8 instead of Gen4 x16", "gpu.pcie_degraded_under_load"),
    ("设置 NCCL_P2P_DISABLE=1 之后就不卡了", "symptom.fixed_by_p2p_disable"),
    ("程序运行一段时间后 GPU 从总线上掉了", "gpu.lost"),
    ("NVLink 链路断开了", "gpu.nvlink_down"),
])
def test_chinese_and_gen_width_vocabulary(text, key):
    # the families' Chinese wordings (降速/应该是, 不卡了, 从总线上掉, 断开), written after the English ones of this module
    assert host_facts(text).get(key) not in (None, False)


@pytest.mark.parametrize("text, key", [
    ("x16 instead of gen4 x8", "gpu.pcie_degraded_under_load"),
    ("设置 NCCL_P2P_DISABLE=1 还是卡住", "symptom.fixed_by_p2p_disable"),
    ("nvlink 正常，链路都是 active", "gpu.nvlink_down"),
    ("把显卡插到总线最近的槽位上", "gpu.lost"),
])
def test_chinese_and_gen_width_vocabulary_negatives(text, key):
    assert host_facts(text).get(key) is None


@pytest.mark.parametrize("text, key, source", [
    ("cudaDeviceEnablePeerAccess returns an error", "symptom.fails", "CUDA runtime API, cudaDeviceEnablePeerAccess"),
    ("lspci shows the link running at 2.5GT/s under load", "gpu.pcie_degraded_under_load", "lspci LnkSta while busy"),
    ("the link width is x4 while the slot is x16", "gpu.pcie_degraded_under_load", "a width below the slot's"),
    # corpus case holdout/gh-local-inference-lab-rtx6kpro-88
    ("On the reference system that mistake left GPU `e3:00.0` at **Gen2 ×16 for three and a half hours of production "
     "training** — roughly 8 GB/s instead of 64 GB/s", "gpu.pcie_degraded_under_load",
     "https://github.com/local-inference-lab/rtx6kpro/issues/88"),
])
def test_error_return_and_busy_link_words(text, key, source):
    assert host_facts(text).get(key) not in (None, False), source


@pytest.mark.parametrize("text, key", [
    ("cudaDeviceEnablePeerAccess returns no error", "symptom.fails"),
    ("LnkSta: Speed 2.5GT/s at idle, 16GT/s during training", "gpu.pcie_degraded_under_load"),
    ("the link is at 2.5GT/s when idle", "gpu.pcie_degraded_under_load"),
])
def test_error_return_and_busy_link_negatives(text, key):
    assert host_facts(text).get(key) is None


@pytest.mark.parametrize("text, key", [
    ("our cloud VM (Lambda) with 8 H100", "host.virtualized"),
    ("the guest sees the GPUs but P2P is disabled", "host.virtualized"),
    ("阿里云 GPU 实例上两张卡不能 P2P", "host.virtualized"),
    ("container cannot open IPC handle from another container", "symptom.fails"),
    ("failed to open the CUDA IPC memory handle", "symptom.fails"),
])
def test_vm_and_ipc_words(text, key):
    assert host_facts(text).get(key) not in (None, False)


@pytest.mark.parametrize("text, key", [
    ("阿里云弹性裸金属实例", "host.virtualized"),  # bare metal: no hypervisor between the GPUs
    ("the guest user cannot log in", "host.virtualized"),
    ("we can open the handle fine", "symptom.fails"),
])
def test_vm_and_ipc_words_negatives(text, key):
    assert host_facts(text).get(key) is None


@pytest.mark.parametrize("text, key", [
    ("速度只有单卡的一半", "symptom.slow"),
    ("双卡比单卡还慢", "symptom.slow"),
    ("显存数据被破坏", "symptom.wrong_results"),
])
def test_chinese_slow_and_wrong_words(text, key):
    assert host_facts(text).get(key) is True


@pytest.mark.parametrize("text", ["速度很正常", "数据校验通过"])
def test_chinese_slow_and_wrong_negatives(text):
    facts = host_facts(text)
    assert facts.get("symptom.slow") is None and facts.get("symptom.wrong_results") is None


def test_retrieval_chinese_hang_and_lost_concepts():
    from p2ptop.knowledge.retrieval import tokens
    assert "_hang" in tokens("4 GPU 时程序会出现卡顿") and "_hang" in tokens("初始化完成后就停滞不前")
    assert "_lost" in tokens("GPU 掉线了") and "_lost" in tokens("one GPU disappeared")


@pytest.mark.parametrize("text, key, want", [
    ("Disabling ACS in the BIOS fixed the hang", "host.acs_redirect", True),
    ("setpci to clear ACS on the PLX switch solved it", "host.acs_redirect", True),
    ("在BIOS里关闭ACS后P2P正常了", "host.acs_redirect", True),
    ("Reseating the NVLink bridge fixed it", "gpu.nvlink_down", 1),
    ("after restarting the fabric manager service everything works", "host.fabric_manager", "not running"),
])
def test_fixed_by_action_says_what_was_wrong(text, key, want):
    # NCCL troubleshooting (ACS), nvidia-smi nvlink (bridges), the Fabric Manager user guide
    assert host_facts(text).get(key) == want


@pytest.mark.parametrize("text, key", [
    ("Disabling ACS did not help", "host.acs_redirect"),
    ("I installed fabric manager yesterday.", "host.fabric_manager"),
    ("We plan to replace the PSU next week.", "gpu.nvlink_down"),
])
def test_fixed_by_action_negatives(text, key):
    assert host_facts(text).get(key) is None


def test_fixed_by_acs_off_offers_the_acs_entry():
    top = match(KB, "Disabling ACS in the BIOS fixed the NCCL hang between the 4 GPUs")[0]
    assert top.entry.id == "pcie/acs-redirect-blocks-p2p" and top.confidence in ("likely", "possible")


@pytest.mark.parametrize("text, want", [
    ("p2pBandwidthLatencyTest shows P2P disabled bandwidth higher than enabled", True),
    ("P2P=Enabled is much slower than P2P=Disabled", True),
    ("关闭 P2P 后带宽反而更高，禁用 P2P 更快", True),
    ("P2P enabled is faster than disabled", None),
])
def test_p2p_slower_than_without_said(text, want):
    assert host_facts(text).get("tool.p2p_slower_than_no_p2p") is want


@pytest.mark.parametrize("text, want", [
    ("The two GPUs hang off different CPUs (dual socket EPYC)", None),  # attached to, not stuck
    ("GPUs hanging off the same switch", None),
    ("the job hangs off and on", True),
])
def test_hang_off_is_attachment(text, want):
    assert host_facts(text).get("symptom.hang") is want


@pytest.mark.parametrize("text, want", [
    # corpus case fresh3/gh-nvidia-nccl-1423
    ("Only 6 and 7 can communicate normally, and the communication data between other gpus is all incorrect.", True),
    ("the result was wrong on rank 1", True),
    ("the results are correct", None),
    ("the data is valid", None),
])
def test_data_said_incorrect(text, want):
    assert host_facts(text).get("symptom.wrong_results") is want


@pytest.mark.parametrize("text, want", [
    # corpus case fresh3/gh-azure-azhpc-images-443 (an Azure VM size as the title names it)
    ("NC80adis_H100_v5 + ubuntu-hpc:2204: NV links inactive", True),
    ("Standard_ND96asr_v4 with 8 A100", True),
    ("the NV4 link between GPU0 and GPU1", None),
])
def test_azure_vm_size_is_a_vm(text, want):
    assert host_facts(text).get("host.virtualized") is want
