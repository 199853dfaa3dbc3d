bash benchmarks/device/texts_on_host.sh .carry/texts40all.txt > $OUT/run.log 2>&1; grep -E '^1\. ' $OUT/diagnosis.log | md5sum > $OUT/md5.txt; grep 'entries match' $OUT/diagnosis.log >> $OUT/md5.txt
export PYTHONPATH=$PWD:/tmp/site
while IFS= read -r t; do echo "== $t"; printf '%s\n' "$t" | timeout 60 /tmp/v/bin/python -m p2ptop explain - 2>&1 | grep -E "^Note|^[0-9]\. |No sign|No entry|Nothing|Symptoms|^Context" | head -6; done < .carry/texts46new.txt > $OUT/new.log 2>&1
python3 -m venv /tmp/vs && /tmp/vs/bin/pip install -q --no-index --no-deps .whlstart/*.whl $(ls .whl/*.whl | grep -v p2ptop-) >/dev/null 2>&1
(unset PYTHONDONTWRITEBYTECODE; /tmp/vs/bin/python -m compileall -q -j 8 /tmp/vs/lib >/dev/null; /tmp/v/bin/python -m compileall -q -j 8 /tmp/v/lib >/dev/null)
mkdir -p /tmp/b/benchmarks /tmp/b/tests/fixtures/captures && cp benchmarks/bench_explain.py /tmp/b/benchmarks/ && cp -r tests/fixtures/captures/h200x2-nvswitch-vm /tmp/b/tests/fixtures/captures/
(cd /tmp && for r in 1 2; do for v in v vs; do echo "== $v run $r"; PYTHONPATH=/tmp/site timeout 120 /tmp/$v/bin/python /tmp/b/benchmarks/bench_explain.py --runs 3 --demo "" 2>&1 | tail -3; done; done > $OUT/bench.log 2>&1)
export PYTHONPATH=/tmp/site
(cd /tmp; { echo "## nvidia-smi topo -m"; nvidia-smi topo -m; echo "## p2ptop topo"; /tmp/v/bin/p2ptop topo; echo "## p2ptop doctor (tail)"; /tmp/v/bin/p2ptop doctor 2>&1 | tail -4
  echo "## p2ptop snapshot + topo --replay"; /tmp/v/bin/p2ptop snapshot -o /tmp/s.json >/dev/null 2>&1; /tmp/v/bin/p2ptop topo --replay /tmp/s.json | sed -n 3,4p; } > $OUT/review.log 2>&1)
cat $OUT/md5.txt; cat $OUT/new.log; grep -E "==|explain|s$" $OUT/bench.log | head -20; tail -12 $OUT/review.log
