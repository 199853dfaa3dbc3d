# twenty-fifth session, one GPU: session_check (md5, doctor, texts), then nvbandwidth v0.8 built from source (Boost from
# Debian's packages, static) and run whole on the one GPU: its device_to_device tests are waived (no pair), and
# p2ptop explain on that output must offer no failure entry
bash benchmarks/device/session_check.sh .carry/texts40all.txt .carry/texts54new.txt > /dev/null 2>&1
cat "$OUT/md5.txt"
export PYTHONPATH=/tmp/site
{
mkdir -p /tmp/boost && for d in .carry/nvb/*.deb; do dpkg-deb -x "$d" /tmp/boost; done
cd /tmp && tar xzf "$OLDPWD/.carry/nvb/nvbandwidth.tar.gz" && cd nvbandwidth
t0=$(date +%s)
cmake -S . -B build -DBoost_INCLUDE_DIR=/tmp/boost/usr/include -DBOOST_ROOT=/tmp/boost/usr -DBoost_NO_SYSTEM_PATHS=ON \
  -DBoost_PROGRAM_OPTIONS_LIBRARY_RELEASE=/tmp/boost/usr/lib/x86_64-linux-gnu/libboost_program_options.a > /tmp/cmake.log 2>&1 \
  && cmake --build build -j 16 > /tmp/build.log 2>&1; echo "build rc $? in $(( $(date +%s) - t0 )) s"
tail -3 /tmp/cmake.log /tmp/build.log
cd "$OLDPWD"
timeout 240 /tmp/nvbandwidth/build/nvbandwidth > "$OUT/nvbandwidth-1gpu.txt" 2>&1; echo "nvbandwidth rc $?"
grep -c -i "waived" "$OUT/nvbandwidth-1gpu.txt"; grep -E "^Device|^nvbandwidth Version" "$OUT/nvbandwidth-1gpu.txt"
echo "### explain on the live host"
timeout 60 /tmp/v/bin/python -m p2ptop explain "$OUT/nvbandwidth-1gpu.txt" 2>&1 | grep -E "^Symptoms|^[0-9]\. |No sign|Unsure|Nothing|Read in" | head -6
echo "### explain --text-only"
timeout 60 /tmp/v/bin/python -m p2ptop explain --text-only "$OUT/nvbandwidth-1gpu.txt" 2>&1 | grep -E "^Symptoms|^[0-9]\. |No sign|Unsure|Nothing" | head -6
echo "### the same output with its device list cut (what a report that names only the waived tests gives)"
grep -v "^Device" "$OUT/nvbandwidth-1gpu.txt" | timeout 60 /tmp/v/bin/python -m p2ptop explain --text-only - 2>&1 | grep -E "^Symptoms|^[0-9]\. |No sign|Unsure|Nothing" | head -6
echo "### doctor"
timeout 120 /tmp/v/bin/python -m p2ptop doctor 2>&1 | grep -E "entries match|^Doctor|GPU" | head -5
} > "$OUT/nvb.log" 2>&1
cat "$OUT/nvb.log"
