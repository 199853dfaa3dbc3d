#!/usr/bin/env bash
# Collects a capture of a real GPU host into DIR: what nvidia-smi prints, p2ptop's view of the same host,
# a live p2ptop snapshot and the host facts the doctor reads. Read-only; run from the repo root.
# Usage: scripts/collect_capture.sh DIR [PYTHON]
set -u
dir=${1:?usage: collect_capture.sh DIR [PYTHON]}; py=${2:-python3}
mkdir -p "$dir"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi topo -m > "$dir/nvidia-smi-topo-m.txt" 2>&1
for c in r w n a p; do echo "## $c"; nvidia-smi topo -p2p $c; done > "$dir/nvidia-smi-topo-p2p.txt" 2>&1
nvidia-smi -q -x > "$dir/nvidia-smi-q.xml" 2>&1
nvidia-smi nvlink -s > "$dir/nvidia-smi-nvlink-s.txt" 2>&1
"$py" -m p2ptop topo > "$dir/p2ptop-topo.txt" 2> "$dir/p2ptop-topo.err"; echo "p2ptop topo exit $?" >> "$dir/p2ptop-topo.err"
"$py" -m p2ptop snapshot -o "$dir/p2ptop-snapshot.json" 2>> "$dir/p2ptop-topo.err"
{
  echo "## uname"; uname -a
  echo "## os-release"; cat /etc/os-release
  echo "## cmdline"; cat /proc/cmdline
  echo "## iommu"; ls -la /sys/class/iommu 2>&1; ls /sys/kernel/iommu_groups 2>&1 | wc -l
  echo "## hypervisor"; grep -m1 -o hypervisor /proc/cpuinfo; cat /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name 2>&1; systemd-detect-virt 2>&1
  echo "## container"; ls -la /.dockerenv /run/.containerenv 2>&1; cat /proc/1/cgroup 2>&1 | head -5
  echo "## shm"; df -k /dev/shm 2>&1
  echo "## nvidia version"; cat /proc/driver/nvidia/version 2>&1
  echo "## nvidia params"; cat /proc/driver/nvidia/params 2>&1
  echo "## modules"; grep -E '^nvidia' /proc/modules 2>&1
  echo "## fabricmanager"; systemctl is-active nvidia-fabricmanager 2>&1; which nv-fabricmanager nvidia-fabricmanager 2>&1
  echo "## lspci"; which lspci 2>&1 && lspci -tv 2>&1 | head -40
  echo "## pci devices"; for d in /sys/bus/pci/devices/*; do echo "$(basename $d) class=$(cat $d/class) -> $(readlink -f $d) cfg=$(wc -c < $d/config 2>/dev/null)"; done
  echo "## numa"; ls /sys/devices/system/node/ 2>&1; cat /sys/devices/system/node/node*/cpulist 2>&1
  echo "## env"; env | grep -E '^(NCCL|CUDA|NVSHMEM|TORCH)_' | sort
  echo "## xid"; (dmesg 2>&1 || journalctl -k 2>&1) | grep -i -m20 xid
  echo "## python"; "$py" -c 'import sys, pynvml, networkx; print(sys.version); print("nvidia-ml-py", getattr(pynvml, "__version__", "?"))' 2>&1
} > "$dir/host.txt" 2>&1
echo "capture written to $dir"
