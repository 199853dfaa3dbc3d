#!/usr/bin/env bash
# p2ptop exporter on a live GPU host (one GPU is enough), for issue 19. Under 3 minutes; no internet.
#   - the exporter live while a host<->GPU copy loop runs (CuPy, else PyTorch), scraped by curl every 15 s for 60 s:
#     the metrics, read health, the PCIe link under load, each scrape's time, and the exporter's CPU over the minute
#   - a Prometheus scraping it, if $PROM names Debian's prometheus binary (or one is on PATH)
#   - read health when the source fails (a replay file that disappears): p2ptop_read_ok 0 and the reason
#   - the fleet benchmark on this machine's CPUs (1,000 generated 8-GPU snapshots: first screen, RSS) and the
#     exporter's scrape time on the 8- and 72-GPU demos
# Everything is printed with its command and goes to $OUT/exporter.log.
set -u
OUT=${OUT:-/tmp/p2ptop-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/exporter.log") 2>&1
export PYTHONPATH=$PWD
PY=${PY:-python3}
PORT=19469
step() { echo; echo "=== $*"; }
run() { echo "+ $*"; "$@"; echo "(exit $?)"; }

step "machine"
run nvidia-smi -L
run nvidia-smi --query-gpu=name,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,utilization.gpu --format=csv
run $PY -c "import prometheus_client, sys; print('prometheus_client', prometheus_client.__version__ if hasattr(prometheus_client, '__version__') else 'present', sys.version.split()[0])"
echo "CPUs: $(nproc)"

step "exporter, live NVML, reads every 15 s"
echo "+ $PY -m p2ptop exporter --listen 127.0.0.1:$PORT --interval 15 &"
$PY -m p2ptop exporter --listen 127.0.0.1:$PORT --interval 15 > "$OUT/exporter.stdout" 2>&1 &
EXP=$!
for i in $(seq 1 40); do curl -sf "http://127.0.0.1:$PORT/metrics" -o /dev/null && break; sleep 0.5; done
cat "$OUT/exporter.stdout"
run curl -s -o /dev/null -w 'first scrape: HTTP %{http_code}, %{size_download} bytes, %{time_total} s\n' "http://127.0.0.1:$PORT/metrics"
curl -s "http://127.0.0.1:$PORT/metrics" | grep -E '^p2ptop_(read_ok|read_error_info|reads_total|read_failures_total|read_duration_seconds|data_age_seconds|gpus|simulated|source_info|gpu_info|gpu_lost|pcie_link_|gpu_utilization_percent|nvlinks_|worst_severity|findings|kb_match_score)' | head -40

step "a host<->GPU copy loop (60 s) while the exporter runs"
cat > "$OUT/copyload.py" <<'PYEOF'
import time, sys
t_end = time.time() + float(sys.argv[1])
try:
    import cupy as cp
    a = cp.empty(256 << 20, dtype=cp.uint8); h = cp.cuda.alloc_pinned_memory(256 << 20)
    import numpy as np
    hb = np.frombuffer(h, dtype=np.uint8, count=256 << 20)
    n = 0
    while time.time() < t_end:
        a.set(hb); a.get(out=hb); n += 2
    cp.cuda.Device().synchronize(); print(f"cupy: {n} copies of 256 MiB host<->GPU")
except ImportError:
    import torch
    a = torch.empty(256 << 20, dtype=torch.uint8, device="cuda"); hb = torch.empty(256 << 20, dtype=torch.uint8).pin_memory()
    n = 0
    while time.time() < t_end:
        a.copy_(hb, non_blocking=True); hb.copy_(a, non_blocking=True); n += 2
    torch.cuda.synchronize(); print(f"torch: {n} copies of 256 MiB host<->GPU")
PYEOF
$PY "$OUT/copyload.py" 62 &
LOAD=$!
read -r _ _ _ _ _ _ _ _ _ _ _ _ _ U0 S0 _ < /proc/$EXP/stat
T0=$(date +%s.%N)
for k in 1 2 3 4 5; do
  curl -s -o "$OUT/scrape.txt" -w "scrape $k: %{time_total} s, %{size_download} bytes\n" "http://127.0.0.1:$PORT/metrics"
  grep -E '^p2ptop_(read_ok|data_age_seconds|gpu_utilization_percent|pcie_link_gen_current|pcie_link_width_current)' "$OUT/scrape.txt"
  [ $k -lt 5 ] && sleep 15
done
read -r _ _ _ _ _ _ _ _ _ _ _ _ _ U1 S1 _ < /proc/$EXP/stat
T1=$(date +%s.%N)
TCK=$(getconf CLK_TCK)
$PY -c "u=($U1+$S1-$U0-$S0)/$TCK; w=$T1-$T0; print(f'exporter CPU: {u:.2f} s over {w:.1f} s wall = {100*u/w:.2f} % of one core (reads every 15 s, 5 scrapes)')"
grep VmRSS /proc/$EXP/status
wait $LOAD; echo "(copy loop exit $?)"

step "Prometheus scraping the exporter"
PROM=${PROM:-$(command -v prometheus || true)}
if [ -n "$PROM" ] && [ -x "$PROM" ]; then
  D=$(mktemp -d)
  printf 'global:\n  scrape_interval: 5s\nscrape_configs:\n  - job_name: p2ptop\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' $PORT > "$D/prometheus.yml"
  echo "+ $PROM --config.file=$D/prometheus.yml --web.listen-address=127.0.0.1:19090 &"
  "$PROM" --config.file="$D/prometheus.yml" --storage.tsdb.path="$D/data" --web.listen-address=127.0.0.1:19090 > "$D/prom.log" 2>&1 &
  PR=$!
  sleep 15
  for q in 'up{job="p2ptop"}' 'p2ptop_read_ok' 'p2ptop_gpu_info' 'p2ptop_pcie_link_width_current' 'scrape_duration_seconds{job="p2ptop"}' 'scrape_samples_scraped{job="p2ptop"}'; do
    echo "+ query $q"; curl -s "http://127.0.0.1:19090/api/v1/query" --data-urlencode "query=$q"; echo
  done
  kill $PR; wait $PR 2>/dev/null
else
  echo "no prometheus binary (set PROM=/path/to/prometheus): skipped"
fi
kill $EXP; wait $EXP 2>/dev/null

step "read health when the source fails: a replayed file removed after the first read"
$PY -m p2ptop snapshot > "$OUT/live.json" 2>/dev/null || $PY -m p2ptop snapshot --demo h200x2-vm > "$OUT/live.json"
echo "+ $PY -m p2ptop exporter --replay $OUT/live.json --listen 127.0.0.1:$((PORT+1)) --interval 1 &"
$PY -m p2ptop exporter --replay "$OUT/live.json" --listen 127.0.0.1:$((PORT+1)) --interval 1 > /dev/null 2>&1 &
EXP2=$!
sleep 3; rm -f "$OUT/live.json"; sleep 3
curl -s "http://127.0.0.1:$((PORT+1))/metrics" | grep -E '^p2ptop_(read_ok|read_error_info|read_failures_total|data_age_seconds|gpus)'
kill $EXP2; wait $EXP2 2>/dev/null

step "fleet and exporter benchmark on this machine's CPUs (timeout 70 s)"
run timeout 70 $PY benchmarks/bench_fleet.py --hosts 1000 --keep /tmp/p2ptop-fleet-1000
echo; echo "done"
