"""Paste.outside_nccl: the readers of other programs' output (nvidia-smi, lspci, the kernel log, the CUDA samples,
DCGM, df) read the paste with NCCL's own INFO lines blank, every line number kept, and find what they found before."""

from p2ptop.evidence import read_text
from p2ptop.evidence.paste import Paste
from p2ptop.evidence.read import OUTSIDE_NCCL, PARSERS

NCCL = "node1:2143:2561 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM\n"
XID = "[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
SMI = ("|   1  NVIDIA A100-SXM4-80GB          On  | 00000000:3B:00.0 Off |                    0 |\n")


def test_info_lines_blank_and_numbers_kept():
    text = NCCL * 3 + XID + NCCL + "node1:2143:2561 [1] NCCL WARN Cuda failure 'peer access is not supported'\n"
    paste = Paste(text)
    out = paste.outside_nccl()
    assert len(out.lines) == len(paste.lines)
    assert out.lines[:3] == ["", "", ""] and out.lines[3] == paste.lines[3] and out.lines[4] == ""
    assert "NCCL WARN" in out.lines[5]  # NCCL's warnings stay: only its INFO lines are another reader's
    assert paste.outside_nccl() is out and out.outside_nccl() is out
    assert paste.text.count("NCCL INFO") == 4  # the paste itself is untouched


def test_without_info_lines_the_paste_is_its_own_view():
    paste = Paste(XID)
    assert paste.outside_nccl() is paste


def test_readers_find_the_same_facts_between_info_lines():
    text = NCCL * 50 + XID + NCCL * 50
    def read(t):
        return {(f.id, f.subject, k, str(v), tuple(f.evidence)) for f in read_text(t).findings for k, v in f.facts.items()
                if k.startswith(("gpu.", "xid"))}

    inside, alone = read(text), read(XID)
    assert alone, "the Xid line alone gives facts"
    # the same facts, cited at the Xid's own line (51 among the INFO lines, 1 alone)
    assert {(i, s, k, v, tuple(e.replace("line 1 of", "line 51 of") for e in ev)) for i, s, k, v, ev in alone} <= inside


def test_only_known_readers_read_the_view():
    names = {name for name, _ in PARSERS}
    assert OUTSIDE_NCCL <= names
    assert not OUTSIDE_NCCL & {"nccl", "env", "errors", "prose", "topo"}  # these read NCCL's INFO lines or sentences quoting them
