"""The prose reader's fifth round (descriptions): an error said to have been seen without its text, a copy that
silently leaves wrong data, "used to work" / "works only on", the training launchers and NCCL's other names as
topics of GPU communication, an idle link named by its generation, cloud GPU instances as VMs, and two versions of
the driver or NCCL contrasted (one works, one fails) as the version the trouble follows; the KB entries those facts
feed (the driver-regression and NCCL-release entries, the VM entry's hang/wrong-data triggers that need the VM said).

Real sentences carry their thread (none of these threads is in benchmarks/corpus); the short sentences without a
source are the family's plain wording or healthy sentences that must not fire."""

from __future__ import annotations

import pytest

from p2ptop.commands.explain import explain

from .kbtools import bundled_kb, host_facts, explained as answer

KB = bundled_kb()


# ---- an error said to have been seen, in words -----------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "I get the following error when loading a model with tp=2 on two GPUs",
    "I try to run inference with 2 A30 but it reports error.",
    "The error above occurs for all versions when the driver is installed.",
    "When launching on more than 8 GPUs, tensorflow will cause a CUDA_TOO_MANY_PEERS error in the driver.",
    "It fails at the pynccl group initialization.",
    "This used to work before the upgrade.",
    "llama2 runs normally only on adjacent gpus",
    "运行多卡推理时出现以下错误",
])
def test_an_error_or_failure_said_in_words_is_a_weak_failure(text):
    assert host_facts(text).get("symptom.fails") is True


@pytest.mark.parametrize("text", [
    "The test returns no error and the bandwidth is fine.",
    "No errors were reported by nccl-tests.",
    "It works on all GPUs.",
])
def test_a_run_without_errors_is_no_failure(text):
    assert "symptom.fails" not in host_facts(text)


def test_peer_access_said_unavailable_is_a_failure():
    assert host_facts("issue with Device 0 peer access Device 1 is not available.").get("symptom.fails") is True
    assert host_facts("On an AWS g5.12xlarge the four A10G report no peer access").get("symptom.fails") is True


# ---- wrong data, silently -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, source", [
    ("Direct device-to-device copies between two RTX 6000 Ada GPUs silently return corrupted data.",
     "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1257"),
    ("On my dual RTX 6000 Ada workstation the result is wrong tokens rather than an error.",
     "https://github.com/unslothai/unsloth/issues/10613"),
    ("The runtime reports peer access is available, but actual queue.memcpy(dst_device_ptr, src_device_ptr, size) returns "
     "incorrect bytes.", "https://github.com/intel/compute-runtime/issues/942"),
    ("cuMemcpyPeerAsync into allocations from that pool silently fails to write the data.", None),
    ("拷贝完成后数据没有写入对端显卡", None),
])
def test_a_copy_that_silently_leaves_wrong_data_is_wrong_results(text, source):
    assert host_facts(text).get("symptom.wrong_results") is True, source


def test_an_error_silently_ignored_is_no_wrong_result():
    assert "symptom.wrong_results" not in host_facts("The CUDARuntimeError should be silently ignored in this case.")


# ---- topics, idle links, cloud VMs, path classes ----------------------------------------------------------------

def test_the_launchers_and_nccls_other_names_are_topics_of_gpu_communication():
    assert host_facts("CUDA error when training roBERTa from scratch with data parallel.").get("symptom.reported") is True
    assert host_facts("torchrun --nproc_per_node=4 main.py fails on two GPUs").get("symptom.reported") is True
    assert host_facts("RCCL all-to-all hangs with 4 GPUs").get("text.topic") == "gpu communication"
    assert "symptom.reported" not in host_facts("The data parallel job finished without issues.")


def test_a_generation_said_low_while_idle_is_the_benign_downclock():
    text = ("Device 1 [GeForce GTX 1080 Ti] PCIe GEN 1@16x\n\nbut we know it works at GEN 3\n\n"
            "If the GPU is idle it may use a lower link generation (probably to reduce power consumption).")
    assert host_facts(text).get("gpu.pcie_idle_downclock") is True  # https://github.com/Syllo/nvtop/issues/6
    assert "gpu.pcie_idle_downclock" not in host_facts("The link trained at Gen4 x16 under load.")


@pytest.mark.parametrize("text, source", [
    ("Environment: two GCE `g2-standard-24` VMs with two NVIDIA L4s each", "https://github.com/lupinemachines/lupine/issues/724"),
    ("We run on a p4d.24xlarge with 8 A100", None),
    ("It runs in a Kaggle notebook with 2x T4", None),
])
def test_cloud_gpu_instances_are_vms(text, source):
    assert host_facts(text).get("host.virtualized") is True, source


def test_a_bare_metal_instance_is_no_vm():
    assert "host.virtualized" not in host_facts("We run on a p4d.metal with 8 A100")


def test_a_path_class_said_between_two_gpus():
    facts = host_facts("the topo between GPU0 and GPU3 is SYS, and PIX between GPU2 and GPU3")
    assert facts["pair.path"] == "SYS" and facts["pair.cross_socket"] is True


# ---- two versions contrasted: the trouble follows the version ---------------------------------------------------

@pytest.mark.parametrize("text, source, key, what", [
    ("[Issue]: NCCL all_reduce_perf hangs with A100 SXM4 on AMD CPUs (driver 570.172.08 + CUDA 12.8) but works on driver "
     "550.163.01", "https://github.com/NVIDIA/nccl/issues/1830", "text.broken_by", "driver"),
    ("nccl-tests get stuck and free(): invalid next size (fast) error with 2.19.3 and 2.18.5, but no error with 2.16.5",
     "https://github.com/NVIDIA/nccl/issues/1043", "text.broken_by", "nccl"),
    ("The error above occurs when the driver 550.90.07 is installed. When the driver 545.23.08 is installed, all versions "
     "work fine.", None, "text.broken_by", "driver"),
    ("Training hangs with NCCL 2.18.3; NCCL 2.19.3 works.", None, "text.fixed_by", "nccl"),
])
def test_two_versions_one_working_one_failing(text, source, key, what):
    assert host_facts(text).get(key) == what, source


def test_versions_that_all_fail_or_all_work_are_no_contrast():
    for text in ("NCCL 2.18.5 and NCCL 2.19.3 both hang", "driver 535.104.05 and driver 550.54.14 both work fine",
                 "torch 2.1.0 works fine but NCCL 2.18.1 hangs"):
        facts = host_facts(text)
        assert "text.broken_by" not in facts and "text.fixed_by" not in facts, text


def test_the_version_the_trouble_follows_puts_its_class_in_the_answer():
    said = answer("P2P started returning wrong data after upgrading the driver to 550; rolling back to 535 fixed it.")
    assert said[0] == ("p2p_driver_regression", "possible")
    said = answer("nccl-tests get stuck and free(): invalid next size (fast) error with 2.19.3 and 2.18.5, but no error with 2.16.5")
    assert said[0][0] == "nccl_version_bug" and said[0][1] in ("possible", "likely")
    # a version change said without any symptom offers nothing (context alone)
    assert not [a for a in answer("We upgraded the driver to 550 last week.") if a[1] in ("likely", "possible")]


def test_a_driver_too_old_for_cuda_is_not_a_p2p_regression():
    said = answer("CUDA driver version is insufficient for CUDA runtime version. Upgrading the driver fixed it.")
    assert "p2p_driver_regression" not in [c for c, _ in said[:1]]


# ---- the VM entry: a hang or wrong data counts where the VM is said, not elsewhere --------------------------------

def test_a_hang_in_a_passthrough_vm_offers_the_vm_entry_and_a_hang_alone_does_not():
    said = answer("Two RTX 3090 passed through to a Proxmox VM: every NCCL all_reduce hangs.")
    assert ("vm_p2p_unavailable", "possible") in said[:3]
    assert "vm_p2p_unavailable" not in [c for c, _ in answer("Every NCCL all_reduce hangs and nccl-tests report wrong results.")]
    # the VM alone (no symptom) offers nothing likely or possible
    assert not [a for a in answer("We run vLLM inside a KVM VM with two L40S.") if a[1] in ("likely", "possible")]


# ---- the setting in words: a PCIe switch, a path class between two GPUs, GeForce cards named as a class ------------

@pytest.mark.parametrize("text", [
    "Both GPUs are behind the same PLX switch and NCCL hangs",
    "two A6000 behind a PCIe switch hang in the first all_reduce",
    "两张卡挂在同一个PCIe交换机(PLX)下面，P2P拷贝卡住",
])
def test_gpus_said_under_one_pcie_switch_are_a_pix_pair(text):
    assert host_facts(text).get("pair.path") == "PIX"


def test_a_switch_that_is_no_pcie_switch_is_no_path():
    for text in ("I'm on a Nintendo Switch", "connected to a network switch", "The switch to NCCL 2.18 went fine"):
        assert "pair.path" not in host_facts(text), text


def test_a_path_class_said_between_two_named_gpus():
    assert host_facts("GPU0和GPU1之间是SYS连接")["pair.path"] == "SYS"
    assert host_facts("GPU0 and GPU1 are connected via PIX but P2P hangs")["pair.path"] == "PIX"


@pytest.mark.parametrize("text", ["P2P doesn't work between our consumer GPUs", "Our GeForce cards hang in NCCL all_reduce",
                                  "两张消费级显卡之间P2P不通"])
def test_geforce_cards_named_as_a_class_are_consumer_cards(text):
    facts = host_facts(text)
    assert facts.get("gpu.consumer") is True and facts.get("gpu.product_class") == "consumer"


def test_a_named_data_centre_model_is_not_overridden_by_a_class_word():
    facts = host_facts("Unlike GeForce cards, our A100 GPUs support P2P")
    assert facts.get("gpu.consumer") is False


# ---- "works only with P2P off", as people write it -------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "I have to set NCCL_P2P_DISABLE=1 to make training run on the two cards.",
    "It runs only when NCCL_P2P_DISABLE=1 is exported.",
    "Setting NCCL_P2P_DISABLE=1 avoids the deadlock",
    "with P2P off it runs fine",
    "必须设置NCCL_P2P_DISABLE=1才能跑",
    "禁用P2P之后就可以了",
])
def test_p2p_off_said_to_be_needed_is_fixed_by_p2p_disable(text):
    assert host_facts(text).get("symptom.fixed_by_p2p_disable") is True


@pytest.mark.parametrize("text", ["We don't need to set NCCL_P2P_DISABLE=1 anymore.", "Setting NCCL_P2P_DISABLE=1 did not help.",
                                  "You must not set NCCL_P2P_DISABLE=1 on NVLink systems."])
def test_p2p_off_not_needed_or_not_helping_is_no_fix(text):
    assert "symptom.fixed_by_p2p_disable" not in host_facts(text)


def test_a_version_change_written_in_chinese_with_the_component_first():
    assert host_facts("驱动升级到550后训练卡住").get("text.broken_by") == "driver"
    facts = host_facts("NCCL升级到2.19.3以后all_reduce偶尔卡住，换回2.18.3就没问题")
    assert facts.get("text.broken_by") == "nccl" and facts.get("symptom.hang") is True
    assert host_facts("驱动从535升级到550之后，P2P拷贝数据出错，降级回535就正常了").get("symptom.wrong_results") is True


def test_a_stall_said_as_nothing_happening_or_a_long_init():
    assert host_facts("GPU utilization stays at 100% and nothing happens").get("symptom.hang") is True
    assert host_facts("nccl初始化时间很长").get("symptom.hang") is True
    assert "symptom.hang" not in host_facts("I ran it and nothing happens to be wrong")


def test_a_model_written_against_its_gpu_word_or_its_d_suffix():
    assert host_facts("I'm using 4*5090GPU. However, NCCL fails.").get("gpu.consumer") is True
    assert host_facts("two RTX4090D cards").get("gpu.consumer") is True
    assert "gpu.name" not in host_facts("the address 0x4090g")


# ---- NVLink SHARP turned off said to fix it ----------------------------------------------------------------------

@pytest.mark.parametrize("text, source", [
    ("My workload hang if set `NCCL_NVLS_ENABLE=1`; no issue if disable NVLS. We use cuda 12.1",
     "https://github.com/NVIDIA/nccl/issues/1197"),
    ("setting NCCL_NVLS_ENABLE=0 fixed the hang", None),
    ("Set NCCL_NVLS_ENABLE=0 to fall back to non-NVLS algorithms", None),
    ("禁用NVLS之后就不卡了", None),
])
def test_nvls_turned_off_said_to_fix_it(text, source):
    assert host_facts(text).get("symptom.fixed_by_nvls_disable") is True, source


def test_nvls_off_that_did_not_help_is_no_fix_and_the_fix_offers_the_nvls_class():
    assert "symptom.fixed_by_nvls_disable" not in host_facts("NCCL_NVLS_ENABLE=0 did not help")
    assert "symptom.fixed_by_nvls_disable" not in host_facts("Do not set NCCL_NVLS_ENABLE=0 to fix this")
    said = answer("On our HGX H100 the all_reduce hangs at init; it works with NCCL_NVLS_ENABLE=0.")
    assert said[0] == ("nvls_multicast_failure", "possible") or said[0] == ("nvls_multicast_failure", "likely")
    # a healthy NVSwitch host (its GPUs and board named, no symptom): the new entry is no candidate on that context, and
    # nothing is likely or possible
    healthy = [(m.entry.id, m.confidence) for m, _ in explain(KB, "We run 8 H100 SXM on an HGX board with NVSwitch.", [], None)]
    assert "nccl/nvls-trouble-gone-with-nvls-disabled" not in [i for i, _ in healthy]
    assert not [c for _, c in healthy if c in ("likely", "possible")]


def test_an_nccl_version_as_pip_and_vllm_print_it_and_collect_env_is_no_vm():
    assert host_facts("[pip3] nvidia-nccl-cu12==2.21.5").get("nccl.version") == "2.21.5"
    assert host_facts("INFO pynccl.py:69] vLLM is using nccl==2.21.5").get("nccl.version") == "2.21.5"
    # lscpu's lines in PyTorch's collect_env (a bare-metal host's "Virtualization: AMD-V", its mitigations) say no VM
    env = ("Virtualization:                       AMD-V\n"
           "Vulnerability Spectre v2:             Mitigation; Retpolines; IBPB conditional; STIBP always-on; RSB filling\n"
           "Socket(s):                            2\nNUMA node(s):                         2\n")
    facts = host_facts(env)
    assert "host.virtualized" not in facts and "pair.cross_socket" not in facts


@pytest.mark.parametrize("text", ["GPU0 and GPU4 are not on the same socket", "GPU 3 hangs off the other CPU", "两张卡不在同一个CPU下",
                                  "两张卡的NUMA节点不同", "两张卡分别插在两个CPU上"])
def test_gpus_said_on_different_sockets(text):
    assert host_facts(text).get("pair.cross_socket") is True


def test_a_power_socket_is_no_cpu_socket():
    assert "pair.cross_socket" not in host_facts("plug it into the other socket")


def test_wsl_and_unraid_are_vms():
    facts = host_facts("NCCL all_reduce hangs under WSL2 with two 3090s")
    assert facts.get("host.hypervisor") == "WSL2" and facts.get("host.virtualized") is True
    assert host_facts("Unraid VM with two GPUs").get("host.hypervisor") == "KVM"


def test_fabric_manager_said_not_matching_the_driver_is_a_version_mismatch_not_a_failure():
    facts = host_facts("nvidia-fabricmanager fails to start after the driver upgrade because its version does not match the driver.")
    assert facts.get("host.fabric_manager") == "version mismatch"
    assert answer("nvidia-fabricmanager fails to start after the driver upgrade because its version does not match the driver.")[0][0] \
        == "fabric_manager_version_mismatch"


def test_nvls_off_and_it_runs_is_a_fix_but_running_into_a_hang_is_not():
    assert host_facts("the all_reduce hangs at init; with NCCL_NVLS_ENABLE=0 it runs.").get("symptom.fixed_by_nvls_disable") is True
    assert "symptom.fixed_by_p2p_disable" not in host_facts("with NCCL_P2P_DISABLE=1 it runs into the same hang")


def test_a_paraphrased_insufficient_driver_is_not_a_p2p_regression():
    for text in ("Multi-GPU training fails: the CUDA driver is insufficient for the runtime; upgrading the driver fixed it.",
                 "多卡训练报错，驱动版本过低，升级驱动后解决了"):
        assert "p2p_driver_regression" not in [c for c, _ in answer(text)], text
    # the same report without the driver said too old is the regression entry's
    said = answer("Multi-GPU training fails after a while; upgrading the driver fixed it.")
    assert "p2p_driver_regression" in [c for c, _ in said[:3]]


def test_several_gpus_counted_are_a_topic_of_gpu_communication():
    assert host_facts("our training crashes with 4 GPUs but works on one").get("symptom.reported") is True
    assert host_facts("8卡训练报错").get("symptom.reported") is True
    assert "symptom.reported" not in host_facts("I have 2 gpus and everything is fine")
