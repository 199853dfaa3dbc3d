"""The floor of a topo command in Python, for comparing `p2ptop topo` with `nvidia-smi topo -m`: import pynvml,
init, per GPU name, PCI info, CPU affinity and NUMA node, shutdown (no p2ptop code). Run it as a process:

    python benchmarks/device/live_probe.py procs 9 --target 2 nvidia-smi topo -m / python benchmarks/device/topo_floor.py
"""

if __name__ == "__main__":
    import pynvml as n

    n.nvmlInit()
    c = n.nvmlDeviceGetCount()
    for i in range(c):
        h = n.nvmlDeviceGetHandleByIndex(i)
        n.nvmlDeviceGetName(h)
        n.nvmlDeviceGetPciInfo(h)
        try:
            n.nvmlDeviceGetCpuAffinity(h, 4)
            n.nvmlDeviceGetNumaNodeId(h)
        except n.NVMLError:
            pass
    n.nvmlShutdown()
    print(c)
