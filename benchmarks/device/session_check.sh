#!/usr/bin/env bash
# A session's diagnosis check on a one-GPU machine, from wheels, in one device call (what each session's devcmd*.sh in
# benchmarks/results/h200x1-* did by hand):
#   1. texts_on_host.sh TEXTS: provoked PyTorch/CuPy/NCCL errors and doctor ($OUT/diagnosis.log), TEXTS through explain on
#      the live host ($OUT/onegpu2.log); $OUT/md5.txt: the md5 of the provoked errors' first answers and doctor's count,
#      to compare with the last session's ($OUT/first.txt: those first lines, to diff where it moved);
#   2. NEW (optional): every line of it through `p2ptop explain -` on the live host, its first lines into $OUT/new.log;
#   3. START (optional): a folder of the session-start p2ptop wheel: bench_explain.py on the 20 MB NCCL log, three runs
#      of each wheel alternately, compiled modules ($OUT/bench.log).
# Run from the repository root with the wheels in .whl/:
#   run(kind=nvidia-h200, carry=[".whl", ".carry", ".whlstart"]): bash benchmarks/device/session_check.sh .carry/texts.txt .carry/new.txt .whlstart
set -u
TEXTS=${1:-.carry/texts.txt}; NEW=${2:-}; START=${3:-}
bash benchmarks/device/texts_on_host.sh "$TEXTS" > "$OUT/run.log" 2>&1
{ grep -E '^1\. ' "$OUT/diagnosis.log" | md5sum; grep 'entries match' "$OUT/diagnosis.log"; } > "$OUT/md5.txt"
# each provoked output's first answer line (its "1." line, or the answer's sentence where there is none), to diff against
# an earlier call's where the md5 moved (a provoked program's output can vary with timing: the NCCL run with an invalid
# rank printed nothing on most machines, a store timeout on one; neither gives a "1." line, so the md5 did not see it)
grep -E '^(================|1\. |Not a GPU|No sign|Nothing|The text is empty)' "$OUT/diagnosis.log" | cut -c1-120 > "$OUT/first.txt"
if [ -n "$NEW" ]; then
  while IFS= read -r t; do
    [ -z "$t" ] && continue
    echo "== $t"
    printf '%b\n' "$t" | PYTHONPATH=$PWD:/tmp/site timeout 60 /tmp/v/bin/python -m p2ptop explain - 2>&1 \
      | grep -E "^Note|^[0-9]\. |in doubt|No sign|No entry|Nothing|Symptoms|^Context" | head -8
  done < "$NEW" > "$OUT/new.log" 2>&1
fi
if [ -n "$START" ]; then
  python3 -m venv /tmp/vs && /tmp/vs/bin/pip install -q --no-index --no-deps "$START"/*.whl $(ls .whl/*.whl | grep -v p2ptop-) >/dev/null 2>&1
  (unset PYTHONDONTWRITEBYTECODE; /tmp/vs/bin/python -m compileall -q -j 8 /tmp/vs/lib >/dev/null; /tmp/v/bin/python -m compileall -q -j 8 /tmp/v/lib >/dev/null)
  mkdir -p /tmp/b/benchmarks /tmp/b/tests/fixtures/captures && cp benchmarks/bench_explain.py /tmp/b/benchmarks/ \
    && cp -r tests/fixtures/captures/h200x2-nvswitch-vm /tmp/b/tests/fixtures/captures/
  (cd /tmp && for r in 1 2 3; do for v in v vs; do echo "== $v run $r"
     PYTHONPATH=/tmp/site timeout 120 /tmp/$v/bin/python /tmp/b/benchmarks/bench_explain.py --runs 3 --demo "" 2>&1 | tail -4
   done; done) > "$OUT/bench.log" 2>&1
fi
cat "$OUT/md5.txt"; [ -n "$NEW" ] && cat "$OUT/new.log"; [ -n "$START" ] && grep -E "^==|process" "$OUT/bench.log"; true
