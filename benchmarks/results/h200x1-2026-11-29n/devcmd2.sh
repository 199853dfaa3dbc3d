bash benchmarks/device/texts_on_host.sh .carry/texts40all.txt > $OUT/run.log 2>&1; grep -E '^1\. ' $OUT/diagnosis.log | md5sum > $OUT/md5.txt; grep 'entries match' $OUT/diagnosis.log >> $OUT/md5.txt
export PYTHONPATH=$PWD:/tmp/site
while IFS= read -r t; do echo "== $t"; printf '%s\n' "$t" | timeout 60 /tmp/v/bin/python -m p2ptop explain - 2>&1 | grep -E "^[0-9]\. |No sign|No entry|Nothing|Symptoms" | head -5; done < .carry/texts42new.txt > $OUT/new.log 2>&1
cat $OUT/md5.txt
