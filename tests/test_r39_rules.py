"""Rules of the fifteenth session (2026-11-29), each written from a program's own source or documentation, never from one
case. All three came after opening fresh39 (labelled so).

1. The NVIDIA kernel module's BAR check (open-gpu-kernel-modules, kernel-open/nvidia/nv-pci.c nv_pci_validate_bars): a GPU
   BAR the platform left without an address is printed "NVRM: This PCI I/O region assigned to your NVIDIA device is
   invalid:" then "NVRM: BAR%d is %lluM @ 0x%llx (PCI:...)", and the probe of that GPU fails. The BAR entry (the firmware's
   MMIO space too small: Above 4G decoding, Resizable BAR, a VM's MMIO window) already took "BAR1 is 0M"; it now takes the
   header, printed for whichever BAR has no address (the MMIO space ran out), and the header told as a title ("Invalid
   PCI I/O Region"). A lone "BAR0 is 0M" line stays off it (test_r16_rules).
2. nvidia-smi's "No devices were found" (NVML found no GPU) is read where a sentence quotes it ("encounters \"No devices
   were found\"") and whatever the case of "found".
4. (after source-probe round 96) a text that says the machine has no GPU by design (a CPU-only runner, node or instance;
   "no GPU installed, by design") is text.no_gpu_by_design, which rules the no-device entry out: a quoted "No devices were
   found" there is as it should be.
3. GPUs kept idle ("underutilized", "low GPU utilization", "utilization only 40%"; 利用率低) are the slow symptom: a
   communication-bound job leaves its GPUs waiting; which cause is for the facts beside it.
"""

from __future__ import annotations

import pytest

from .kbtools import alarms, answer
from .kbtools import host_facts as _host


def _ids(text, n=3):
    return [a[3] for a in answer(text)[:n]]


# ---- 1. NVRM's invalid BAR ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "[  5.112] NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\n"
    "[  5.112] NVRM: BAR1 is 0M @ 0x0 (PCI:0000:0b:00.0)\n[  5.113] nvidia: probe of 0000:0b:00.0 failed with error -1",
    "Invalid PCI I/O region when a second NVIDIA GPU is passed through to the VM: only one card initialises",
])
def test_nvrm_invalid_bar_is_the_bar_entry(text):
    assert _ids(text, 1) == ["pcie/bar1-cannot-assign-no-space"]


def test_nvrm_invalid_bar0_header_is_the_mmio_space_too():
    # the header is printed for any BAR left without an address (an MMIO window too small places none of the later
    # GPUs' BARs); a lone "BAR0 is 0M" line stays off the entry (test_r16_rules)
    text = "NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\nNVRM: BAR0 is 0M @ 0x0 (PCI:0000:41:00.0)"
    assert _ids(text, 1) == ["pcie/bar1-cannot-assign-no-space"]


def test_a_valid_bar_line_is_no_bar_trouble():
    text = "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15\nRegion 1: Memory at 38000000000 (64-bit, prefetchable) [size=32G]"
    assert "pcie/bar1-cannot-assign-no-space" not in [a[3] for a in alarms(text)]


# ---- 2. nvidia-smi finds no GPU, quoted -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    'Our CI runner with 8 GPUs sometimes encounters "No devices were found" when nvidia-smi runs in the container.',
    "inside the pod nvidia-smi prints `No devices were found` although the node has 4 GPUs",
    'After the reboot the job fails: "No devices Found"',
])
def test_quoted_no_devices_found_is_no_gpu_seen(text):
    assert _ids(text, 1) == ["cuda/no-device-visible"]


def test_a_quoted_no_devices_found_is_the_error_not_the_gpu_count():
    """Quoted in a sentence the message is the text's error; "no GPU on the host" stays for nvidia-smi's whole output."""
    from .kbtools import text_facts

    facts = text_facts('Sometimes the runner encounters "No devices were found" when nvidia-smi runs in the container.')
    assert facts["host"].get("error.text") and "host.gpu_count" not in facts["host"]
    assert text_facts("No devices were found\n")["host"].get("host.gpu_count") == 0


# ---- 3. idle GPUs -----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Why is the GPU underutilized with tensor parallel size 2 on two A100 PCIe cards?",
    "low GPU utilization when training on 4 GPUs with DDP",
    "GPU utilization is only 40% on both cards with --tensor-parallel-size 2",
    "双卡推理时 GPU 利用率很低",
])
def test_idle_gpus_are_the_slow_symptom(text):
    assert _host(text).get("symptom.slow") is True


@pytest.mark.parametrize("text", [
    "GPU utilization is 100% on both GPUs and training runs fine",
    "GPU utilization only 95% on both GPUs",
])
def test_busy_gpus_are_not_slow(text):
    assert "symptom.slow" not in _host(text)


# ---- 4. no GPU by design --------------------------------------------------------------------------------------------------

def test_a_cpu_only_machine_quoting_no_devices_found_is_not_the_no_device_entry():
    text = ('On our CPU-only build runners (no GPU installed by design) nvidia-smi prints "No devices were found", so the '
            "CUDA tests are skipped there.")
    assert _host(text).get("text.no_gpu_by_design") is True
    assert "cuda/no-device-visible" not in [a[3] for a in alarms(text)]


@pytest.mark.parametrize("text", [
    'Our 8-GPU runner sometimes encounters "No devices were found" when nvidia-smi runs inside the container.',
    "The job fails: no GPU is found on the node although it has 4 A100s",
])
def test_a_machine_that_should_have_gpus_is_not_one_without_by_design(text):
    assert "text.no_gpu_by_design" not in _host(text)
