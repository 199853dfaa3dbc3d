# twenty-third session: session_check, then `import` of the 16-GPU paste and `explain` of a 3 KB paste, both wheels alternately
bash benchmarks/device/session_check.sh .carry/texts40all.txt .carry/texts54new.txt .whlstart > /dev/null 2>&1
cat "$OUT/md5.txt"
mkdir -p /tmp/b/tests/fixtures/pastes && cp tests/fixtures/pastes/topo-m-dgx2-16gpu.txt /tmp/b/tests/fixtures/pastes/ && cp benchmarks/bench_import.py /tmp/b/benchmarks/
cp .carry/small.txt /tmp/small.txt
(cd /tmp && for r in 1 2 3; do for v in v vs; do echo "== $v run $r"
   PYTHONPATH=/tmp/site /tmp/$v/bin/python /tmp/b/benchmarks/bench_import.py
   for k in 1 2 3; do /usr/bin/time -f "explain 3 KB paste: %e s" env PYTHONPATH=/tmp/site /tmp/$v/bin/python -m p2ptop explain /tmp/small.txt --text-only > /dev/null; done
 done; done) > "$OUT/import.log" 2>&1
grep -E "^==|process" "$OUT/bench.log"; cat "$OUT/import.log"
