"""The prose reader's third round (issue 22, descriptions): English words written against Chinese, Chinese hang
words, negation, "works with / did not help with NCCL_P2P_DISABLE=1", the IOMMU said on / off / fixed by turning
it off, GPU counts written against the model and GeForce series; the retrieval's program words; and the small KB
links (consumer GPU + "works only with P2P disabled", NVLS in a container needs an NVSwitch host).

Each reading is tried on real sentences of public threads (source URL beside each; none of these threads is in
benchmarks/corpus) and on healthy or unrelated sentences that must not fire."""

from __future__ import annotations

import pytest

from p2ptop.evidence import read_text
from p2ptop.evidence.read import gpu_trace
from p2ptop.knowledge.retrieval import index_for, tokens
from .kbtools import bundled_kb, host_facts, explained as answer, kb_from

KB = bundled_kb()


# ---- English written against Chinese (ASCII word boundaries) and Chinese hang words ---------------------------

@pytest.mark.parametrize("text, source", [
    ("单机单卡模型能正常训练，单机多卡模式在训练迭代多个batch后会hang住，同时没有报错信息。",
     "https://github.com/PaddlePaddle/Paddle/issues/18629"),
    ("NCCL_LAUNCH_MODE=PARALLEL 环境变量打开，多卡下容易hang住", "https://github.com/PaddlePaddle/Paddle/issues/16272"),
    # 卡再: a common slip of 卡在 ("stuck at")
    ("多机训练的时候一直卡再第一个step，nvidia查看会出现利用率占满但是功能基本和闲置时一样，cpu跑满",
     "https://github.com/hiyouga/LlamaFactory/issues/9496"),
])
def test_a_hang_written_in_chinese_or_against_chinese_is_a_hang(text, source):
    assert host_facts(text).get("symptom.hang") is True, source


def test_chinese_hang_words_do_not_fire_on_a_count_of_cards_or_a_healthy_run():
    assert "symptom.hang" not in host_facts("四卡顿时快了很多，训练正常")  # 卡 (card) + 顿时 (at once)
    assert "symptom.hang" not in host_facts("8卡在线运行，一切正常")  # 8 卡 (cards) 在线 (online)
    assert "symptom.hang" not in host_facts("多卡训练正常，不会卡住")


def test_p2p_and_nccl_written_against_chinese_name_gpu_communication():
    # https://github.com/uccl-project/uccl/issues/196 is in the corpus; this wording is the general case
    assert gpu_trace("单机禁用p2p和shm后报错")
    assert gpu_trace("NCCL报错了")
    assert not gpu_trace("数据库连接报错了")


def test_an_nccl_version_written_against_chinese_is_read():
    assert host_facts("进程成功检测到NCCL 2.21.5版本后停滞")["nccl.version"] == "2.21.5"
    assert host_facts("进程成功检测到NCCL 2.21.5版本后停滞")["symptom.hang"] is True


# ---- negation ---------------------------------------------------------------------------------------------

def test_a_noun_after_without_does_not_negate_the_verb_that_follows_it():
    assert host_facts("Docker multi-node setups without NVSwitch hang on dist.init_process_group")["symptom.hang"] is True
    # while the symptom said absent stays absent
    assert "symptom.hang" not in host_facts("With NCCL 2.19 the all_reduce test runs without any hang.")
    assert "symptom.hang" not in host_facts("After the driver update the job does not even hang any more, it finishes.")


# ---- "works with NCCL_P2P_DISABLE=1" and its negation -------------------------------------------------------

@pytest.mark.parametrize("text, source", [
    ("I tried to export NCCL_P2P_DISABLE=1. But it didn't work.", "https://github.com/NVIDIA/nccl/issues/1033"),
    ("I tried nccl-tests and it fails too, even I disabled P2P by env", "https://github.com/NVIDIA/TensorRT-LLM/issues/99"),
])
def test_p2p_disabled_without_success_is_not_fixed_by_p2p_disable(text, source):
    assert "symptom.fixed_by_p2p_disable" not in host_facts(text), source


def test_p2p_disable_said_to_help_is_read_but_not_across_a_sentence_or_a_command_line():
    assert host_facts("Setting NCCL_P2P_DISABLE=1 seems like a good solution for now.")["symptom.fixed_by_p2p_disable"] is True
    assert host_facts("It runs fine with NCCL_P2P_DISABLE=1.")["symptom.fixed_by_p2p_disable"] is True
    # "works" of another sentence, or the flags of a command line, are no report that P2P-off fixed it
    assert "symptom.fixed_by_p2p_disable" not in host_facts(
        "Inference on a single GPU works fine. Forcing NCCL_P2P_DISABLE=1 did not help to resolve the issue.")
    assert "symptom.fixed_by_p2p_disable" not in host_facts(
        "NCCL_P2P_DISABLE=1 ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 4 - 2 GPU正常")


# ---- the IOMMU said on / off / passthrough, and turning it off said to fix it --------------------------------

@pytest.mark.parametrize("text, source, facts", [
    ("I disabled both ACS and IOMMU.", "https://github.com/NVIDIA/nccl/issues/1160", {"host.iommu_active": False}),
    ("Turning off IOMMU in the motherboard may solve it .", "https://github.com/pytorch/pytorch/issues/52142",
     {"host.iommu_active": True}),
    ("Tl;dr, disabling IOMMU by changing/adding the line `GRUB_CMDLINE_LINUX=\"iommu=soft\"` to `/etc/default/grub` "
     "and rebooting. This solved an issue with NCCL", "https://github.com/facebookresearch/Detectron/issues/219",
     {"host.iommu_active": True}),
    ("Hi @wenkaidu, in `/etc/default/grub`, I added `iommu=pt` to `GRUB_CMDLINE_LINUX_DEFAULT` and finished with "
     "`sudo update-grub`.", "https://github.com/ROCm/rccl/issues/1129",
     {"host.iommu_passthrough": True, "host.iommu_active": False}),
])
def test_the_iommu_in_words(text, source, facts):
    f = host_facts(text)
    for k, v in facts.items():
        assert f.get(k) == v, (source, k, f.get(k))


def test_the_iommu_words_do_not_fire_on_groups_or_a_failed_attempt():
    assert "host.iommu_active" not in host_facts("Adding to iommu group 19")
    assert host_facts("I disabled IOMMU. It did not help, the training still hangs.")["host.iommu_active"] is False
    # on and off both said (before / after): the state at the trouble is not known
    assert "host.iommu_active" not in host_facts("IOMMU was enabled, then I disabled IOMMU and tried again; same result.")


def test_iommu_on_and_wrong_results_puts_the_iommu_entry_first_but_unsure():
    got = answer("IOMMU is enabled in BIOS and P2P copies between the two GPUs give wrong results")
    assert got[0][0] == "iommu_acs_p2p_broken"
    assert got[0][1] == "unsure"  # whether the driver reports P2P available is still unknown


# ---- GPU models: a count written against the name, GeForce series -------------------------------------------

def test_a_count_written_against_the_model_and_a_geforce_series():
    # https://github.com/NVIDIA/TensorRT-LLM/issues/99
    f = host_facts("On the 4xRTX3090 environment, did you have chance to run ncclTest to see whether it work or not?")
    assert f["gpu.consumer"] is True and f["gpu.architecture"] == "Ampere"
    # https://github.com/QwenLM/Qwen-VL/issues/447 (Chinese: an error fine-tuning on 40-series cards)
    f = host_facts("使用40系显卡做微调出现的报错")
    assert f["gpu.consumer"] is True and f["gpu.architecture"] == "Ada"
    # https://github.com/cocktailpeanut/fluxgym/issues/283 (accelerate's message)
    f = host_facts("NotImplementedError: Using RTX 4000 series doesn't support faster communication broadband via P2P or IB.")
    assert f["gpu.consumer"] is True
    # a hex address, a year, a workstation card are none of these
    assert "gpu.name" not in host_facts("mapped at 0xa100 in the aperture")
    assert "gpu.name" not in host_facts("in the 2040 series of events")
    assert host_facts("Quadro RTX 4000 in the box")["gpu.consumer"] is False


# ---- links between a symptom and a setup (KB) ----------------------------------------------------------------

def test_a_geforce_that_works_only_with_p2p_disabled_is_the_consumer_entry():
    # https://github.com/NVIDIA/nccl/issues/631 is the KB's; the wording of a report: consumer cards + P2P off fixes it
    got = answer("Two RTX 4090 cards: training works with NCCL_P2P_DISABLE=1, without it NCCL fails.")
    assert got[0] == ("p2p_unsupported_consumer_gpu", "possible")
    # without a GPU model it is one candidate among the P2P-broken causes, never likely or possible
    got = answer("Training works with NCCL_P2P_DISABLE=1, without it NCCL fails.")
    assert "p2p_unsupported_consumer_gpu" in [c for c, _ in got[:3]]
    assert all(conf == "unsure" for _, conf in got)


def test_a_hang_on_geforce_cards_is_a_possible_consumer_entry_and_a_card_alone_is_nothing():
    assert answer("training hangs at the first all_reduce with 4x RTX 4090")[0] == ("p2p_unsupported_consumer_gpu", "possible")
    assert all(conf == "unsure" for _, conf in answer("We run 4x RTX 4090 in one box."))


def test_a_container_alone_does_not_put_the_nvswitch_entry_first():
    got = answer("Crash with tensor parallel 2 in the docker container: NCCL error while initializing between the GPUs")
    assert got and got[0][0] != "nvls_multicast_failure"


def test_healthy_descriptions_get_no_failure_entry_likely_or_possible():
    for text in ("P2P works fine on our 2x A100 box, bandwidth is as expected.",
                 "多卡训练正常，没有问题",
                 "We run 8x A100 in a VM, driver 535.",
                 "IOMMU is enabled in BIOS; simpleP2P passes on both GPUs."):
        assert all(conf == "unsure" for _, conf in answer(text)), text


# ---- retrieval: a program's name weighs less than a word of the cause ---------------------------------------

def test_program_names_weigh_less_than_words_of_the_cause(tmp_path):
    base = KB.entries[0]
    kb = kb_from(base, tmp_path,
                 app={"signature": "vllm llama sglang custom allreduce", "root_cause": "vllm llama sglang", "tags": [],
                      "aliases": []},
                 cause={"signature": "deadlock watchdog", "root_cause": "deadlock", "tags": [], "aliases": []})
    ix = index_for(kb)
    ranked = [e.id for e, _s, _w in ix.scores(tokens("vllm with llama deadlock"))]
    assert ranked[0] == "test/cause"


def test_the_serving_switch_for_several_gpus_names_gpu_communication():
    # https://github.com/vllm-project/vllm/issues/1710 is in the corpus; the switch is vLLM's documented one
    text = "The server crashes with --tensor-parallel-size 2 inside the docker container"
    assert gpu_trace(text)
    assert host_facts(text)["symptom.reported"] is True
    assert "text.topic" not in host_facts("The server crashes inside the docker container")
    # single-GPU serving is no report of GPU communication
    assert "symptom.reported" not in host_facts("It crashes with --tp 1 on one card")


def test_an_error_said_to_appear_in_chinese_is_a_failure_and_a_driver_upgrade_a_driver_fix():
    # a sentence of the form of PaddlePaddle's FAQ (https://github.com/PaddlePaddle/docs/issues/997 is in the corpus, so
    # not its own words): 出现错误 = an error appears; 升级CUDA驱动 = upgrade the CUDA driver
    f = host_facts("驱动版本偏低时会出现错误，升级CUDA驱动可以解决。")
    assert f["symptom.fails"] is True and f["text.fixed_by"] == "driver"
    assert "symptom.fails" not in host_facts("错误处理模块的说明文档")  # the word "error" alone is no failure


def test_chinese_words_of_any_report_are_not_retrieval_terms():
    got = tokens("用户在使用时出现问题，运行不正常")
    assert not {"出现", "使用", "运行", "问题", "正常", "用户"} & set(got)
    assert {"卡住", "_hang"} <= set(tokens("多卡训练卡住"))


def test_gpus_that_cannot_reach_each_other_in_containers():
    # https://github.com/openucx/ucx/issues/10070
    f = host_facts("But in containers they can't communicate via PCIe P2P or NVLink.")
    assert f["symptom.fails"] is True and f["host.container"] == "container"
    assert host_facts("The two GPUs can't see each other.")["symptom.fails"] is True
    # https://github.com/NVIDIA/nvidia-docker/issues/1255: a wish, not a failure
    f = host_facts("Can nvidia-docker provides a capability that allow GPUs in docker containers can see each other "
                   "while applications can be isolated in some way?")
    assert "symptom.fails" not in f and f["host.container"] == "docker"
    assert "symptom.fails" not in host_facts("You can't use docker here, run it on the host.")


def test_nccl_timeout_and_chinese_driver_branch_and_cloud_server():
    assert host_facts("NCCL timeout after 30 minutes on 8 GPUs")["symptom.hang"] is True
    f = host_facts("驱动升级到550后P2P不通了")
    assert f["host.driver_major"] == 550 and f["symptom.fails"] is True
    assert host_facts("驱动版本 535，云服务器上两张A10")["host.virtualized"] is True
    assert "symptom.hang" not in host_facts("NCCL_TIMEOUT is set to 1800 seconds")


def test_gibberish_output_of_a_tensor_parallel_server_is_wrong_results():
    # https://github.com/vllm-project/vllm/issues/19022
    f = host_facts("LLMs give gibberish outputs when ```--tensor-parallel-size 2```")
    assert f["symptom.wrong_results"] is True and f["text.topic"] == "gpu communication"
    assert "symptom.wrong_results" not in host_facts("The model output is fine and coherent.")
    assert host_facts("Extremely low generation throughput (~0.2 tok/s) on both GPUs")["symptom.slow"] is True


def test_trouble_that_began_after_a_version_change_is_read_and_a_fix_is_not_a_regression():
    # the issue's own example of a description ("after upgrading the driver to 5xx P2P broke")
    f = host_facts("After upgrading the driver to 550, P2P between the two A100s no longer works.")
    assert f["text.broken_by"] == "driver" and "text.fixed_by" not in f
    assert host_facts("升级驱动后多卡训练卡住")["text.broken_by"] == "driver"
    f = host_facts("After upgrading the driver it works again.")
    assert f["text.fixed_by"] == "driver" and "text.broken_by" not in f
    # a change with no trouble said is nothing
    assert "text.broken_by" not in host_facts("After the driver update we ran the tests, all fine.")


def test_gpudirect_pinning_that_stops_at_a_size_is_the_bar1_aperture():
    # the form of GDRCopy / nv_peer_mem reports (their threads are in the corpus, so not their words): registration of
    # GPU memory for a NIC stops at BAR1's size (https://docs.nvidia.com/cuda/gpudirect-rdma/, "PCI BAR sizes")
    assert host_facts("With gdrcopy on the A4000 I can only pin about 220MB of the 16GB.")["gpu.bar1_mb"] == 220
    assert host_facts("ibv_reg_mr on GPU memory returns NULL when the size is over 256MB (GPUDirect RDMA).")["gpu.bar1_mb"] == 256
    # without GPUDirect it is any other size
    assert "gpu.bar1_mb" not in host_facts("We can only register about 200MB of hugepages for the database.")
    got = answer("With gdrcopy on the A4000 I can only pin about 220MB of the 16GB.")
    assert got and got[0][0] == "bar1_too_small" and all(conf == "unsure" for _, conf in got)


def test_fabric_manager_said_out_of_step_with_the_driver_is_a_version_mismatch():
    # the wording of such reports (their threads, e.g. NVIDIA/gpu-operator#544 and Azure/azhpc-images#86, are in the
    # corpus); the Fabric Manager user guide: its version must match the driver's
    for text in ("After apt-get upgrade the fabric manager and drivers will not be in sync.",
                 "Our Fabric Manager requires the driver to be of the same version, and the host got 550.90 vs 550.127.",
                 "fabricmanager 与驱动版本不一致"):
        assert host_facts(text)["host.fabric_manager"] == "version mismatch", text
    got = answer("After apt-get upgrade the fabric manager and drivers will not be in sync, and CUDA fails to initialise on the HGX.")
    assert got[0][0] == "fabric_manager_version_mismatch"
    assert host_facts("Fabric Manager is running and the versions match.").get("host.fabric_manager") == "running"  # no mismatch


def test_an_nvlink_not_detected_or_a_bridge_not_seated_is_a_link_down():
    for text in ("NVLink is not detected by nvidia-smi on the second pair",
                 "the nvlink bridge was not properly seated"):
        assert host_facts(text)["gpu.nvlink_down"] == 1, text
    # the links fine, or NVLink not working across containers (no link down: the containers cannot share it)
    assert "gpu.nvlink_down" not in host_facts("NVLink is detected and works.")
    assert "gpu.nvlink_down" not in host_facts("NVLINK doesn't work across the containers")


def test_gpus_split_one_per_container_or_worker():
    # https://github.com/NVIDIA/nvidia-docker/issues/1255 (a maintainer's reply)
    assert host_facts("I'm assuming we're talking about containers where only a single GPU is visible -- please correct "
                      "me if I'm wrong.")["host.one_gpu_per_process"] is True
    for text in ("each pod gets one GPU", "每个容器一张卡", "Ray gives each worker 1 GPU through CUDA_VISIBLE_DEVICES"):
        assert host_facts(text)["host.one_gpu_per_process"] is True, text
    # DDP's one GPU per process (every process still sees every GPU) and one GPU per node are not this
    for text in ("one GPU per process is the usual DDP setup", "we use one GPU per node and 8 nodes"):
        assert "host.one_gpu_per_process" not in host_facts(text), text
    got = answer("Two docker containers on one node, each container with a single GPU: NCCL falls back to NET/Socket "
                 "and P2P does not work between them.")
    assert got[0][0] == "cuda_ipc_cross_boundary" and all(conf == "unsure" for _, conf in got)


def test_a_gpu_said_to_drop_out_in_chinese():
    for text in ("训练跑到一半掉显卡，nvidia-smi 只剩三张", "服务器上掉了一张卡"):
        assert host_facts(text)["gpu.lost"] is True, text
    assert "gpu.lost" not in host_facts("显卡正常，没有掉卡")


def test_a_gpu_that_falls_off_the_bus_in_the_present_tense():
    # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/507 is in the corpus; NVRM's own words are "has fallen
    # off the bus", people write "keeps falling off the bus", "falls off the bus under load"
    for text in ("one card keeps falling off the bus during training", "the GPU falls off the bus under load"):
        f = host_facts(text)
        assert f["symptom.crash"] is True and f["gpu.lost"] is True, text
    assert "gpu.lost" not in host_facts("the bus stops at the data centre gate")


def test_a_pcie_link_said_narrower_or_slower_while_busy_is_degraded():
    # the wording of hardware-diagnosis notes ("GPU running at PCIe 3.0 x8 instead of x16"); a narrower width is never
    # an idle power saving, a lower generation is only where the GPUs are said to be busy
    for text in ("The 4090 in slot 2 runs at x8 instead of x16.",
                 "The card advertises Gen4 in its Link Capabilities but the link trains at Gen1 during training"):
        assert host_facts(text)["gpu.pcie_degraded_under_load"] is True, text
    for text in ("the link runs at Gen3 instead of Gen4",  # maybe idle: no load said
                 "When idle the link drops to Gen1, under load it goes back to Gen4.",
                 "we run 8x A100 at x16"):
        assert "gpu.pcie_degraded_under_load" not in host_facts(text), text
    got = answer("The 4090 in slot 2 runs at x8 instead of x16 and training is slow.")
    assert "pcie_link_degraded" in [c for c, _ in got[:3]]


def test_the_iommus_own_passthrough_is_no_gpu_passthrough():
    """The kernel's 'iommu: Default domain type: Passthrough' (and iommu.passthrough=1) is the IOMMU's mode
    on bare metal, not a GPU passed through to a VM; the kernel log's IOMMU state wins over prose's."""
    from p2ptop.evidence import read_text

    text = ("[    0.012345] DMAR: IOMMU enabled\n"
            "[    1.2] iommu: Default domain type: Passthrough (set via kernel command line)\n")
    facts = {f.facts and next(iter(f.facts)): next(iter(f.facts.values())) for f in read_text(text).findings}
    assert "gpu.virtualization" not in facts and "host.virtualized" not in facts
    assert facts.get("host.iommu_passthrough") is True and facts.get("host.iommu_active") is not True
    vm = {next(iter(f.facts)) for f in read_text("GPU passthrough to a KVM guest, P2P fails").findings if f.facts}
    assert "gpu.virtualization" in vm
