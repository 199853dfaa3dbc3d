"""NCCL's own advice is no setting, CUDA's 35 inside a container, nvidia-smi's banner CUDA (the forty-eighth round).

- NCCL's messages name variables it does not see set, as advice (its sources: graph/paths.cc "P2P is disabled between
  connected GPUs 1 and 0. You can repress this message with NCCL_IGNORE_DISABLED_P2P=1.", misc/cudawrap.cc "cuMem host
  allocations do not appear to be working; ... To disable this warning, set NCCL_CUMEM_HOST_ENABLE=0", init.cc "Set
  NCCL_IGNORE_NET_MISMATCH=1 to continue."): none is a variable of the failing run. Read as one, the cuMem one ruled out
  the very entry of NCCL's cuMem host path (its exclude: NCCL_CUMEM_HOST_ENABLE=0 set).
- CUDA's runtime reports cudaErrorInsufficientDriver (35) where it finds no driver library at all, as in a container
  started without the NVIDIA Container Toolkit's mounts (nvidia-docker#180, #400): inside a container the text names,
  with no driver shown older than the build, that cause is offered beside the old driver, never above it.
- nvidia-smi's banner "CUDA Version: 12.4" is the newest CUDA the driver supports, not the CUDA a program was built with.
"""

from __future__ import annotations

import os

from .conftest import FIXTURES
from .kbtools import answer, flat_facts


def capture(*parts: str) -> str:
    with open(os.path.join(FIXTURES, "captures", *parts), encoding="utf-8") as f:
        return f.read()


ADVICE = (
    "node1:454:838 [0] NCCL INFO P2P is disabled between connected GPUs 1 and 0. You can repress this message with "
    "NCCL_IGNORE_DISABLED_P2P=1.\n"
    "node1:454:838 [0] NCCL INFO cuMem host allocations do not appear to be working; falling back to a /dev/shm/ based "
    "implementation. This could be due to the container runtime disabling NUMA support. To disable this warning, set "
    "NCCL_CUMEM_HOST_ENABLE=0\n"
    "node1:454:838 [0] init.cc:1339 NCCL WARN Detected mixed local Net device counts across ranks (min 1, max 2). Set "
    "NCCL_IGNORE_NET_MISMATCH=1 to continue.\n"
)


def test_ncccls_advice_names_no_variable_of_the_run():
    facts = flat_facts(ADVICE)
    assert not [k for k in facts if k.startswith("env.")], facts


def test_an_example_a_message_gives_is_no_setting():
    # MindSpore's hint after "invalid device ordinal" (runtime/device/gpu/cuda_driver.cc)
    text = ("[ERROR] DEVICE [mindspore/ccsrc/runtime/device/gpu/cuda_driver.cc:245] SetDevice] SetDevice for id:7 failed, "
            "ret[101], invalid device ordinal. Please make sure that the 'device_id' set in context is in the range:[0, total "
            "number of GPU). If the environment variable 'CUDA_VISIBLE_DEVICES' is set, the total number of GPU will be the "
            "number set in the environment variable 'CUDA_VISIBLE_DEVICES'. For example, if export CUDA_VISIBLE_DEVICES=4,5,6, "
            "the 'device_id' can be 0,1,2 at the moment\n")
    assert "env.CUDA_VISIBLE_DEVICES" not in flat_facts(text)
    assert flat_facts("Setting e.g. NCCL_P2P_LEVEL=NVL avoids it\n").get("env.NCCL_P2P_LEVEL") is None


def test_a_variable_the_run_sets_is_still_read():
    facts = flat_facts("NCCL_CUMEM_HOST_ENABLE=0 NCCL_IGNORE_DISABLED_P2P=1 torchrun --nproc_per_node 2 train.py\n"
                       "RuntimeError: NCCL error: unhandled cuda error\n")
    assert facts.get("env.NCCL_CUMEM_HOST_ENABLE") == "0" and facts.get("env.NCCL_IGNORE_DISABLED_P2P") == "1"


def test_the_cumem_entry_is_not_ruled_out_by_nccls_advice():
    text = ADVICE + "node1:454:838 [0] misc/shmutils.cc:87 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'\n"
    ids = [a[3] for a in answer(text)]
    assert "nccl/cumem-host-shm-217" in ids[:3], ids


IN_DOCKER = ("I run the image with docker run -it myimage bash\n"
             "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version\n")


def test_35_inside_a_container_offers_the_container_without_driver_second():
    assert flat_facts(IN_DOCKER).get("symptom.container_cuda_insufficient_driver") is True
    got = answer(IN_DOCKER)
    assert got[0][3] == "cuda/insufficient-driver" and got[0][1] == "likely"
    assert got[1][3] == "container/docker-no-nvidia-runtime" and got[1][1] == "unsure", got[:3]


def test_35_outside_a_container_or_with_a_driver_shown_too_old_stays_the_drivers():
    bare = "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version\n"
    assert "symptom.container_cuda_insufficient_driver" not in flat_facts(bare)
    assert "container/docker-no-nvidia-runtime" not in [a[3] for a in answer(bare)]
    # PyTorch's collect_env: a CUDA 12.1 build on a 470 driver (older than 12.x's 525.60.13): the runtime's 35 says just that
    old = ("I run it in a docker container.\nPyTorch version: 2.1.0+cu121\nCUDA used to build PyTorch: 12.1\n"
           "Nvidia driver version: 470.182.03\n" + bare)
    facts = flat_facts(old)
    assert facts.get("host.driver_below_cuda_build") is True and facts.get("host.container")
    assert "symptom.container_cuda_insufficient_driver" not in facts


def test_nvidia_smis_banner_cuda_is_the_drivers_not_the_programs():
    banner = "| NVIDIA-SMI 550.144.03             Driver Version: 550.144.03     CUDA Version: 12.4     |\n"
    facts = flat_facts(banner)
    assert facts.get("host.cuda_driver_version") == "12.4" and "host.cuda_runtime_version" not in facts
    facts = flat_facts(banner + "torch 2.3.0+cu118 fails with an error on both GPUs\n")
    assert facts.get("host.cuda_runtime_version") == "11.8"
    assert flat_facts("CUDA version: 11.8\n").get("host.cuda_runtime_version") == "11.8"
    # nvidia-smi -q's "CUDA Version" line after its "Driver Version" line is the driver's too (the live H200's -q)
    q = capture("h200x1-vm", "nvidia-smi-q.txt")
    facts = flat_facts(q)
    assert facts.get("host.cuda_driver_version") == "13.0" and "host.cuda_runtime_version" not in facts


def test_real_35_without_a_driver_library_reads_as_both_causes_in_a_container():
    """The H200's own CuPy and cudart errors with libcuda.so.1 hidden (benchmarks/results/h200x1-2026-12-02m): alone, the
    driver's entry; pasted after the `docker run` that started them, the container without the driver library second."""
    for name in ("cupy-no-libcuda.txt", "cudart-no-libcuda.txt"):
        text = capture("h200x1-vm", name)
        assert [a[3] for a in answer(text)][:1] == ["cuda/insufficient-driver"], name
        assert "container/docker-no-nvidia-runtime" not in [a[3] for a in answer(text)]
        got = answer("$ docker run --rm -it myimage python3 repro.py\n" + text)
        assert [a[3] for a in got][:2] == ["cuda/insufficient-driver", "container/docker-no-nvidia-runtime"], (name, got[:3])


def test_a_container_denied_is_no_container():
    err = "RuntimeError: CUDA driver version is insufficient for CUDA runtime version\n"
    for said in ("Bare metal, not in a container. ", "We do not use docker. ", "This runs without docker. "):
        facts = flat_facts(said + err)
        assert "host.container" not in facts and "symptom.container_cuda_insufficient_driver" not in facts, said
    for said in ("It does not work in docker: ", "Not in docker but in a podman container: ", "Inside the pod: "):
        assert flat_facts(said + err).get("symptom.container_cuda_insufficient_driver") is True, said


TORCH_NO_DRIVER = capture("h200x1-vm", "torch-no-libcuda.txt")


def test_no_driver_at_all_puts_fabric_manager_in_doubt():
    """PyTorch's own words on the H200 with libcuda.so.1 hidden (h200x1-2026-12-02m): no driver at all is not a fabric
    that Fabric Manager did not set up (that leaves the driver loaded and fails CUDA with 802)."""
    got = answer(TORCH_NO_DRIVER)
    assert got[0][3] == "cuda/no-device-visible" and got[0][1] == "likely"
    fm = [a for a in got if a[3].startswith("fabric-manager/")]
    assert all(a[1] == "unsure" for a in fm)
    from p2ptop.knowledge import match
    from .kbtools import bundled_kb
    ms = {m.entry.id: m for m in match(bundled_kb(), TORCH_NO_DRIVER)}
    fm_match = ms.get("fabric-manager/not-running-system-not-initialized")
    assert fm_match is None or any("in doubt" in r for r in fm_match.reasons)
    # ... unless the text holds the fabric's own 802 too
    both = TORCH_NO_DRIVER + "after loading the driver: CUDA error: system not yet initialized (802)\n"
    ms = {m.entry.id: m for m in match(bundled_kb(), both)}
    assert "fabric-manager/not-running-system-not-initialized" in ms
    assert not any("in doubt: the text says no NVIDIA driver" in r for r in ms["fabric-manager/not-running-system-not-initialized"].reasons)


def test_nvidia_smi_refusing_its_command_line_is_no_gpu_fault(capsys):
    """`nvidia-smi -L -i 7` on the H200's 580 driver printed the first line (benchmarks/device/diagnosis.sh): explain
    offered the container entry on its words. nvidia-smi refused its own options and read no GPU."""
    import json

    from p2ptop import cli
    for text in ("ERROR: Option -i is not valid for this command. Please run 'nvidia-smi -h' for help.",
                 "ERROR: Option and is not recognized. Please run 'nvidia-smi -h'.",
                 "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help."):
        assert flat_facts(text + "\n").get("text.trouble_before_gpu") == "tool_usage", text
        assert answer(text + "\n") == [], text
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("ERROR: Option -i is not valid for this command. Please run 'nvidia-smi -h' for help.\n")
    assert cli.main(["explain", f.name, "--text-only", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["answer"] == "before_gpu" and doc["matches"] == []
    os.unlink(f.name)
    # a program's own error beside it is still answered
    both = ("ERROR: Option -i is not valid for this command. Please run 'nvidia-smi -h' for help.\n"
            "RuntimeError: CUDA error: peer access is not supported between these two devices\n")
    assert answer(both)
