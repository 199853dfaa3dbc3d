"""A launch that asks for more processes per node than the GPUs the text says the host has.

torchrun starts ``--nproc-per-node N`` workers per node and each one selects the GPU of its ``LOCAL_RANK``
(PyTorch's DDP and torchrun documentation: https://pytorch.org/docs/stable/elastic/run.html, "--nproc-per-node:
number of workers per node"; https://pytorch.org/tutorials/intermediate/ddp_tutorial.html, ``torch.cuda.set_device(
local_rank)``); DeepSpeed's launcher (``--num_gpus N``) and Accelerate (``num_processes: N``, ``--num_processes N``)
do the same. A worker whose local rank is past the last GPU asks CUDA for an ordinal it does not have: ``invalid device
ordinal`` (cudaErrorInvalidDevice), or NCCL's ``Duplicate GPU detected`` where a launcher wraps the index. So where a
text gives both a per-node count and the GPUs of the host, and the count is larger, that is the setup that explains such
an error: ``host.ranks_exceed_gpus`` (True), from the line of the launch.

The GPUs of the host are read where the text counts them (or a tool's output pasted with it lists them, nvidia-smi's
``host.gpu_count``): "2 GPUs", "two 3090s", "3090 24g*2", "8xA100",
"4 x H100", "one GPU", "a single GPU", 单卡/双卡/两张卡/8卡. Several counts: the largest is taken (the host has at
least that many), so a launch is said to exceed them only against every count the text gives. Where the text sets
CUDA_VISIBLE_DEVICES (one value throughout), the workers see only the devices it lists, numbered from 0 (CUDA C
Programming Guide, "CUDA Environment Variables": "Only the devices whose index is present in the sequence are visible to
CUDA applications and they are enumerated in the order of the sequence"): their count is the GPUs the launch has, however
many the host holds ("CUDA_VISIBLE_DEVICES=0 torchrun --nproc-per-node 2": the second worker's ordinal 1 does not exist).

And the launch or rendezvous that failed before any GPU communication (``never_met``): the processes never met, so no
GPU-to-GPU traffic had begun and no P2P entry can explain the paste's trouble; ``text.trouble_before_gpu``. So is
nvidia-smi refusing its own command line ("tool_usage"): it read no GPU.
"""

from __future__ import annotations

import re
from typing import Optional

from .gpus import MODEL_NAMES, count_of
from .paste import Collector


#: the per-node process count a launcher is given (torchrun/torch.distributed.launch, DeepSpeed, Accelerate)
_LAUNCH = re.compile(r"--nproc[-_]per[-_]node[= ]+(\d{1,3})\b|--num[-_]gpus[= ]+(\d{1,3})\b|"
                     r"\bnum[-_]processes\s*[:=]?\s*(\d{1,3})\b|"
                     # in words: "distributes the load over 8 workers", "launches 8 processes" (not a DataLoader's num_workers)
                     r"\b(?:over|across|into|launch\w*|spawn\w*|start\w*|with|uses?|runs?)\s+(\d{1,2})\s+(?:workers|processes|ranks)\b", re.I)
_MODEL = MODEL_NAMES  # the models p2ptop knows (evidence/gpus.py)
#: GPUs counted in words: a number or word before "GPU(s)"/"card(s)" (a model may stand between), a count written
#: against a model on either side ("8xA100", "3090 24g*2", "A100 * 4"), Chinese counts of cards
_COUNT = re.compile(
    r"(?<![\w.-])(\d{1,2}|one|a single|single|two|dual|three|four|quad|six|eight)\s*(?:x\s*)?(?:nvidia\s+)?(?:(?:" + _MODEL +
    r"\s+)?(?:gpus?|graphics cards?|cards?)\b|" + _MODEL + r"s\b)|"
    r"(?<![\w.])(\d{1,2})\s*[x×\*]\s*(?:nvidia\s+)?" + _MODEL + r"(?![\w])|"
    r"(?<![\w])" + _MODEL + r"(?:\s+gpus?)?(?:\s*\d{1,3}\s*g(?:b|ib)?)?\s*[x×\*]\s*(\d{1,2})(?![\d.])|"
    # (a model's digits are no count: "H20 GPU" is not "20 GPU")
    r"([一二两三四六八单双]|(?<![A-Za-z0-9.])\d{1,2})\s*(?:张|块|个)?\s*(?:显卡|卡|gpu)|"
    r"([一二两三四六八]|(?<![A-Za-z0-9.])\d{1,2})\s*(?:张|块)\s*(?:nvidia\s*)?" + _MODEL + r"\s*(?:显卡|卡|gpu)", re.I)
_NOT_A_HOST_COUNT = re.compile(r"\s*(?:per|for each|each|in each|a)\s+(?:process|rank|worker|task|container|pod|job)\b|\s*/\s*(?:process|rank)\b|"
                               r"\s*每", re.I)  # "one GPU per process", "8 GPUs per node" count no host's GPUs (per node: they do)


def gpus_said(text: str) -> Optional[int]:
    """The largest count of the host's GPUs the text gives, None when it gives none."""
    best = None
    for m in _COUNT.finditer(text):
        if _NOT_A_HOST_COUNT.match(text, m.end()):
            continue
        n = count_of(next(g for g in m.groups() if g))
        if n and n <= 64:
            best = n if best is None else max(best, n)
    return best


#: literals one of which a line counting GPUs holds (lower case: the models of _MODEL, "gpu", "card", 卡)
_GPU_WORDS = ("gpu", "card", "卡", "rtx", "gtx", "titan", "quadro", "a100", "a800", "h100", "h800", "h200", "h20", "b200", "b300",
              "gb200", "gh200", "v100", "a6000", "a5000", "a4000", "a40", "a30", "a10", "l40", "l20", "l4", "t4", "p100", "p40",
              "k80", "090", "080", "070", "060")
#: one device of a CUDA_VISIBLE_DEVICES list: an index, or a GPU-/MIG- UUID
_VISIBLE_DEVICE = re.compile(r"\d{1,2}|(?:GPU|MIG)-[0-9a-fA-F-]{8,}(?:/\d+/\d+)?")


def visible_count(c: Collector) -> Optional[int]:
    """How many devices CUDA_VISIBLE_DEVICES lists where the paste's shell lines set it to one value throughout (the
    values nccl.parse_env_lines read, its advice and workaround lines left out), else None."""
    values = c.structured.get("env_values", {}).get("CUDA_VISIBLE_DEVICES", [])
    if len(values) != 1:
        return None
    devices = values[0].split(",")
    return len(devices) if all(_VISIBLE_DEVICE.fullmatch(d) for d in devices) else None


#: literals one of which a launch line holds (lower case): only those lines are searched (a 20 MB log is not)
_LAUNCH_WORDS = ("nproc", "num_gpus", "num-gpus", "num_processes", "num-processes", "workers", "processes", "ranks")


def parse(c: Collector) -> bool:
    view = c.paste.select(_LAUNCH_WORDS, context=0)
    launch = _LAUNCH.search(view.text)
    if launch is None:
        return False
    ranks = int(next(g for g in launch.groups() if g))
    line = view.line_of(launch.start())
    # the GPUs: the lines that name GPUs or cards (NCCL's INFO lines left out, as the prose reader leaves them), less
    # the launch itself; and a tool's list of them read before (nvidia-smi -L, its table, -q)
    said = gpus_said(c.paste.select(_GPU_WORDS, context=0).text.replace(launch.group(0).lower(), " "))
    counts = [n for n in (said, c.get("host", "host.gpu_count")) if isinstance(n, int) and n > 0]
    gpus = max(counts) if counts else None
    visible = visible_count(c)
    if visible:
        gpus, what = visible, "CUDA_VISIBLE_DEVICES gives the workers"
    else:
        what = "the text gives the host"
    if gpus is None or ranks <= gpus:
        return False
    return c.add("host", "host.ranks_exceed_gpus", True, line, severity="info",
                 summary=f"the launch asks for {ranks} processes per node; {what} {gpus} GPU"
                         f"{'s' if gpus != 1 else ''}: the workers past the last GPU select one that does not exist")


#: launches and rendezvous that failed before the processes met, each in its program's own words (the pattern, what
#: it is: "rendezvous" where the ranks never all met, "launch" where the launcher could not start them):
NEVER_MET: tuple[tuple[re.Pattern, str], ...] = tuple((re.compile(rx, re.I), what) for rx, what in (
    # PyTorch's TCPStore (torch/csrc/distributed/c10d/TCPStore.cpp): the server gave up on ranks that never connected
    # (waitForWorkers, "Timed out after {} seconds waiting for clients. {}/{} clients joined."; printed so on the one-GPU
    # H200 host, benchmarks/device/diagnosis.sh), a client that never reached the server (socket.cpp, "The client socket
    # has timed out after {} while trying to connect to ({}, {})."), a key no rank ever set (doWait, "wait timeout after
    # {}ms, keys: {}")
    (r"timed out after \d+ seconds waiting for clients\. \d+/\d+ clients joined", "rendezvous"),
    (r"the client socket has timed out after \S+ while trying to connect to \(", "rendezvous"),
    (r"\bwait timeout after \d+ ?ms, keys:", "rendezvous"),
    # torch.distributed: the store-based barrier of init_process_group (distributed_c10d.py), env:// without its
    # variables (rendezvous.py, "environment variable {var} expected, but not set"), torchelastic's rendezvous
    # (RendezvousTimeoutError, RendezvousConnectionError "The connection to the C10d store has failed") and its barrier
    # (elastic/utils/store.py, "Timed out waiting on barrier on rank {}, for key prefix")
    (r"timed out initializing process group in store based barrier", "rendezvous"),
    (r"environment variable (?:MASTER_ADDR|MASTER_PORT|RANK|WORLD_SIZE) expected, but not set", "rendezvous"),
    (r"\bRendezvous(?:Timeout|Connection)Error\b", "rendezvous"),
    (r"timed out waiting on barrier on rank \d+, for key prefix", "rendezvous"),
    # init_process_group given an init_method whose scheme has no handler (rendezvous.py, "No rendezvous handler for {}://"):
    # a typo or a scheme of the user's own, so the processes never met. Not env:// or tcp://, which every Linux build
    # registers: their absence is a build's (PyTorch 1.7 on Windows had only file://; platform/no-nccl-in-windows-builds)
    (r"\bno rendezvous handler for (?!env://|tcp://)[a-z][\w+.-]*://", "init_method"),
    # Open MPI's and PRRTE's launchers (help-errmgr-base.txt "failed-daemon-launch", "node-died"; rmaps "There are not
    # enough slots available in the system to satisfy"), Horovod's launcher (runner/launch.py "could not connect to some
    # hosts via ssh", "Unable to find a set of common task-to-task communication interfaces", util/timeout.py "Timed out
    # waiting for {activity}. Please check connectivity between servers"), DeepSpeed's (launcher/runner.py "was not
    # reachable via ssh", "Unable to detect suitable master address")
    (r"\b(?:ORTE|PRTE|PRRTE|prterun|mpirun) (?:was unable to reliably start one or more daemons|has lost communication with a remote daemon)", "launch"),
    (r"there are not enough slots available in the system to satisfy the \d+", "launch"),
    (r"could not connect to some hosts via ssh|unable to find a set of common task-to-task communication interfaces|"
     r"timed out waiting for [\w ]+\. please check connectivity between servers", "launch"),
    (r"\bwas not reachable via ssh\b|unable to detect suitable master address", "launch"),
    # nvidia-smi refusing its own command line, before it reads any GPU: "ERROR: Option -i is not valid for this command.
    # Please run 'nvidia-smi -h' for help." (`nvidia-smi -L -i 7`, printed so by the 580 driver's nvidia-smi on the H200,
    # benchmarks/device/diagnosis.sh), "ERROR: Option and is not recognized. Please run 'nvidia-smi -h'.", "Failed to
    # parse --display/-d flags" (`-q -d RESET_STATUS` on that nvidia-smi, r75_healthy_sweep.sh), "Invalid combination of
    # input arguments", and --query-gpu's 'Field "temperature.memory" is not a valid field to query.' (a field that version lacks)
    (r"\berror: option \S+ is not (?:valid for this command|recognized)\b|\bfailed to parse --display/-d flags\b|"
     r"\binvalid combination of input arguments\b|\bfield [\"\u201c\u201d][^\"\u201c\u201d\n]{1,80}[\"\u201c\u201d] is not a valid field to query\b",
     "tool_usage"),
))
#: lines of the same failure around it: the store's client retrying before the timeout (TCPStore.cpp, "[c10d] TCP client
#: failed to connect/validate to host"), the ssh a launcher ran to reach a host ("ssh: connect to host ... Connection timed
#: out", DeepSpeed's "Command '['ssh', ...]' returned non-zero exit status 255"), and the C++ exception the store's socket
#: threw for it (c10::Error's "Exception raised from throwTimeoutError at .../c10d/socket.cpp:1030 (most recent call
#: first):", c10/util/Exception.cpp; socket.cpp is the TCP store's socket)
_SAME_FAILURE = re.compile(r"\bTCPStore\.cpp\b|\bTCP client failed to connect|^\W*ssh: |\[\s*'ssh',|"
                           r"\bException raised from \w+ at \S*\bc10d/(?:socket|TCPStore\w*)\.cpp:\d+", re.I)
_NEVER_MET_WORDS = ("clients joined", "client socket has timed out", "wait timeout after", "store based barrier",
                    "expected, but not set", "rendezvous", "barrier on rank", "daemon", "not enough slots", "via ssh",
                    "task-to-task", "connectivity between servers", "master address", "is not valid for this command",
                    "is not recognized", "failed to parse --display", "invalid combination of input", "is not a valid field to query")
#: each kind: the fact's summary, and the note naming what to read instead
_KINDS = {
    "tool_usage": ("nvidia-smi refused its own command line: it read no GPU",
                   "nvidia-smi refused its own command line and read no GPU; `nvidia-smi -h` lists the options this version "
                   "takes (`--help-query-gpu` its fields)"),
    "rendezvous": ("the processes never met at the rendezvous",
                   "the processes never met at the rendezvous (its store timed out or could not be reached), so no "
                   "GPU-to-GPU traffic had started. Read the output of the rank that did not join (it may have failed "
                   "first) and check MASTER_ADDR/MASTER_PORT and the launcher's world size"),
    "launch": ("the launcher could not start them",
               "the launcher could not start or reach all of the processes, so no GPU-to-GPU traffic had started. Check "
               "the hosts it names (ssh, host names, slots) and the network between them"),
    "init_method": ("the init_method names no rendezvous PyTorch has",
                    "init_process_group was given an init_method whose scheme no rendezvous handler serves (PyTorch knows "
                    "env://, tcp:// and file://), so the processes never met and no GPU-to-GPU traffic had started. Check "
                    "the init_method's spelling"),
}


def never_met(c: Collector) -> None:
    """``text.trouble_before_gpu``: a launch or rendezvous that failed before the processes met (``NEVER_MET``). No GPU
    traffic (and no NCCL communicator) had begun: the hang, error or failure read from its line is no symptom of GPU
    communication, taken back, with a note that names what to read instead. Other symptoms of the paste (a rank's CUDA
    error before it) stay and are answered."""
    view = c.paste.select(_NEVER_MET_WORDS, context=0)
    hits = [(view.line_of(m.start()), what) for rx, what in NEVER_MET for m in rx.finditer(view.text)] if view.text else []
    if not hits:
        return
    line, what = hits[0]  # the table's first kind said, at its first line
    said = {ln for ln, _ in hits}
    for key in ("symptom.hang", "error.text", "symptom.fails", "symptom.reported"):
        fact = c.facts.get(("host", key))
        if fact is not None and (fact.line in said or _SAME_FAILURE.search(c.paste.line(fact.line) or "")):
            c.withdraw("host", key)
    c.add("host", "text.trouble_before_gpu", what, line, severity="info",
          summary="the trouble lies before any GPU communication: " + _KINDS[what][0])
    c.notes.append(f"line {line} (\"{c.paste.line(line).strip()[:160]}\"): " + _KINDS[what][1])
