#!/usr/bin/env bash
# The live exporter's own cost on an idle GPU host (issue 21: the exporter reads through the same live path as
# the dashboard): CPU share of the exporter process over IDLE_S seconds at --interval 2 and 15, scraped every 2 s,
# with each scrape's time and size. Needs prometheus_client; $OUT gets exporter-idle.log. About 2.5 minutes.
set -u
OUT=${OUT:-/tmp/p2ptop-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/exporter-idle.log") 2>&1
export PYTHONPATH=$PWD
PY=${P2PTOP_PY:-python3}
IDLE_S=${IDLE_S:-60}
PORT=19470
echo "== $(date -u) $(nvidia-smi -L | tr '\n' ' ')"
for interval in 2 15; do
  $PY -m p2ptop exporter --listen 127.0.0.1:$PORT --interval $interval > /tmp/exp.out 2>&1 &
  EXP=$!
  for i in $(seq 1 60); do curl -sf "http://127.0.0.1:$PORT/metrics" -o /dev/null && break; sleep 0.5; done
  sleep 3  # past the first read
  read -r -a st < /proc/$EXP/stat; U0=${st[13]}; S0=${st[14]}; T0=$(date +%s.%N)
  times=()
  end=$(( $(date +%s) + IDLE_S ))
  while [ "$(date +%s)" -lt "$end" ]; do
    times+=("$(curl -s -o /tmp/scrape.txt -w '%{time_total}' "http://127.0.0.1:$PORT/metrics")")
    sleep 2
  done
  read -r -a st < /proc/$EXP/stat; U1=${st[13]}; S1=${st[14]}; T1=$(date +%s.%N)
  HZ=$(getconf CLK_TCK)
  $PY - "$U0" "$S0" "$U1" "$S1" "$T0" "$T1" "$HZ" "$interval" "${times[@]}" <<'PYEOF'
import statistics, sys
u0, s0, u1, s1 = map(int, sys.argv[1:5]); t0, t1 = float(sys.argv[5]), float(sys.argv[6]); hz = int(sys.argv[7]); iv = sys.argv[8]
ts = [float(x) * 1000 for x in sys.argv[9:]]
cpu = (u1 + s1 - u0 - s0) / hz
print(f"exporter --interval {iv}: {cpu:.2f} s CPU in {t1 - t0:.1f} s = {100 * cpu / (t1 - t0):.2f} % of one core, "
      f"with {len(ts)} scrapes (every 2 s): median {statistics.median(ts):.1f} ms, max {max(ts):.1f} ms")
PYEOF
  echo "  scrape: $(wc -c < /tmp/scrape.txt) bytes; $(grep -E '^p2ptop_(reads_total|read_duration_seconds|read_ok|gpus) ' /tmp/scrape.txt | tr '\n' ' ')"
  grep -E '^p2ptop_read_duration_seconds' /tmp/scrape.txt | head -3
  kill $EXP; wait $EXP 2>/dev/null
done
