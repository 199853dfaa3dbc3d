#!/usr/bin/env bash
# The forty-sixth round's readers on real output of one GPU, framed by the real programs that frame it, each through
# `p2ptop explain` on the live host beside the same output unframed. Expects p2ptop's wheel in /tmp/v and pytest's wheels
# (pytest, pluggy, iniconfig, packaging) in .whl/ (session_check.sh / texts_on_host.sh install the rest).
#   q:      the live `nvidia-smi -q` as printed (and through explain: a healthy host's -q is no report), with each line's
#           start trimmed (sed), and with runs of spaces squeezed (tr -s): the text facts of each (read_text), compared
#           with the printed one's
#   pytest: a real pytest run of a test that asks PyTorch for a GPU this host does not have (cuda:1): pytest prints the
#           exception's lines after its "E" marker
#   rich:   the real CUDA error of that test printed by rich inside a panel (rich.panel.Panel: "│ ... │" edges)
#   pad:    the printed -q excerpt padded to 120 columns with awk (what Windows' conhost does: simulated here)
[ -x /tmp/v/bin/python ] || { python3 -m venv /tmp/v && /tmp/v/bin/pip install -q --no-index --no-deps .whl/*.whl >/dev/null 2>&1; }
export PYTHONPATH=$PWD:/tmp/site
R=/tmp/r75; mkdir -p $R  # the work files; $OUT gets the log and the real outputs worth keeping
facts() { timeout 60 /tmp/v/bin/python -c "
import sys
from p2ptop.evidence import read_text
ev = read_text(open(sys.argv[1]).read())
print(sorted((f.subject, k, str(v)) for f in ev.findings for k, v in f.facts.items() if k != 'text.language'))" "$1"; }
ex() { timeout 60 /tmp/v/bin/python -m p2ptop explain "$1" 2>&1 | grep -E "^[0-9]\. |No sign|Nothing|Unsure|Symptoms|in doubt|Note" | head -4; }
{
echo "### q"
nvidia-smi -q > "$R/q.txt"; sed 's/^[ \t]*//' "$R/q.txt" > "$R/q_trimmed.txt"; tr -s ' ' < "$R/q.txt" > "$R/q_squeezed.txt"
awk '{printf "%-120s\n", $0}' "$R/q.txt" > "$R/q_padded.txt"
facts "$R/q.txt" > "$R/q.facts"; head -c 600 "$R/q.facts"; echo
echo "-- the printed -q through explain on the live host:"; ex "$R/q.txt"
for v in trimmed squeezed padded; do
  facts "$R/q_$v.txt" > "$R/q_$v.facts"
  if cmp -s "$R/q.facts" "$R/q_$v.facts"; then echo "$v: the same facts"; else echo "$v: DIFFERENT"; diff "$R/q.facts" "$R/q_$v.facts" | head -5; fi
done
echo "### pytest"
python3 -m pip install -q --no-index --no-deps --target /tmp/pt .whl/pytest-*.whl .whl/pluggy-*.whl .whl/iniconfig-*.whl .whl/packaging-*.whl >/dev/null 2>&1
mkdir -p /tmp/ptest && cat > /tmp/ptest/test_peer.py <<'EOF'
import torch


def test_second_gpu():
    torch.cuda.set_device(1)
EOF
(cd /tmp/ptest && PYTHONPATH=/tmp/pt timeout 120 python3 -m pytest -q -p no:cacheprovider test_peer.py) > "$R/pytest.txt" 2>&1; echo "rc $?"
grep -E "^E " "$R/pytest.txt" | head -4
ex "$R/pytest.txt"
grep -E "^E " "$R/pytest.txt" | sed 's/^E *//' > "$R/pytest_unmarked.txt"; echo "-- the E lines unmarked by sed:"; ex "$R/pytest_unmarked.txt"
echo "### rich"
python3 -c "import torch; torch.cuda.set_device(1)" > "$R/err.txt" 2>&1
PYTHONPATH=/tmp/site:$(ls -d /tmp/v/lib/python3*/site-packages) timeout 60 python3 -c "
import sys
from rich.console import Console
from rich.panel import Panel
from rich.text import Text
Console(width=140, force_terminal=False, color_system=None).print(Panel(Text(open(sys.argv[1]).read().rstrip()), title='job 4711 failed'))" "$R/err.txt" > "$R/rich.txt" 2>&1
head -3 "$R/rich.txt"; tail -4 "$R/rich.txt"
ex "$R/rich.txt"; echo "-- unframed:"; ex "$R/err.txt"
echo "### pad: a grep'd -q excerpt padded"
grep -A11 "GPU Link Info" "$R/q.txt" > "$R/link.txt"; awk '{printf "%-120s\n", $0}' "$R/link.txt" > "$R/link_padded.txt"
facts "$R/link.txt"; facts "$R/link_padded.txt"
} > "$OUT/r75.log" 2>&1
cp "$R/q.txt" "$R/pytest.txt" "$R/rich.txt" "$OUT/"
cat "$OUT/r75.log"
