# the sysfs reader (p2ptop.pcie.link_gen behind sources/sysfs.py) against the raw sysfs files and nvidia-smi
BUS=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1)
echo "GPU bus: $BUS"
nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max --format=csv
/tmp/v/bin/python - "$BUS" <<'PY'
import sys, os
from p2ptop.sources.sysfs import read_pcie_path, sysfs_bdf
res = read_pcie_path(sys.argv[1])
print("read_pcie_path ->", res[0], res[2], res[3])
for d in res[1]:
    raw = {k: open(f"/sys/bus/pci/devices/{d.bdf}/{k}").read().strip() if os.path.exists(f"/sys/bus/pci/devices/{d.bdf}/{k}") else None
           for k in ("current_link_speed", "max_link_speed", "current_link_width", "max_link_width")}
    print(d.bdf, {k: getattr(d, k, None) for k in ("link_gen_cur", "link_gen_max", "link_width_cur", "link_width_max")}, raw)
PY
/tmp/v/bin/python -m p2ptop snapshot -o /tmp/snap.json >/dev/null 2>&1; /tmp/v/bin/python - <<'PY'
import json; d = json.load(open("/tmp/snap.json"))
for g in d.get("gpus", []): print("snapshot gpu", g.get("index"), {k: g.get(k) for k in ("pcie_gen_cur", "pcie_gen_max", "pcie_width_cur", "pcie_width_max")})
PY
