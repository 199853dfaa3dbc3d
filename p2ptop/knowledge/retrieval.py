"""Retrieval: rank knowledge-base entries by how much of their own text the pasted text shares (BM25).

The matcher offers an entry on its own signs (a regex, an error code, a condition on a symptom fact).
Where those are silent but the text shows a symptom, the answer must not be empty (issue 22 point 4):
this module gives the *general* ranking for that case, written from no case at all. Each entry is a
document made of its own words (signature, root cause, both languages; the literals of its regexes;
its error codes; tags, aliases; its class's description, kb/entry.py FAILURE_CLASSES), and the text is
the query. Scoring is Okapi BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25
and Beyond", 2009; k1 = 1.2, b = 0.75).

Tokens: English words lower-cased, identifiers split at ``_`` and camelCase as well as whole
(``NCCL_P2P_DISABLE`` -> nccl_p2p_disable, nccl, p2p, disable; ``cudaErrorPeerAccessUnsupported`` ->
cuda, error, peer, access, unsupported), a crude suffix stem (hangs/hanging -> hang), numbers of three
digits or more (4090, 802, 217); Chinese as character bigrams. Words of one symptom family map to one
concept token as well (CONCEPTS: hang, slow, wrong data, ...; the vocabulary of NCCL's troubleshooting
page, CUDA's error table and the Chinese words of the gitcode write-ups), so "stuck" in a report meets
"hangs" in an entry.

The text's facts join the query as concept tokens too (``query_terms``): a consumer GPU, a VM, a
container, MIG, NVSwitch, an NCCL transport that is not P2P, each symptom kind: what the parsers read in
any wording or language counts once more, by meaning.

Cost: the index is built once per knowledge base (cached); a query reads at most the first 48 KB and
last 16 KB of the text and the lines that carry warn/error/fail words (at most 300), so a 20 MB log
costs what a short paste does.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any, Iterable, Optional

from .regex_safety import ISSUE_TEMPLATE_LINE

K1, B = 1.2, 0.75
HEAD, TAIL, MAX_MARKED = 48_000, 16_000, 300

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*|\d{3,}")
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_REGEX_ESCAPE = re.compile(r"\\[a-zA-Z]|\(\?[:=!<>a-zA-Z]*|[\[\]{}()*+?|^$\\.]")
#: a negative lookaround names what an entry's line is NOT ("(?<!NCCL INFO )", "(?!\\s+and NCCL)"): its words are no words of
#: the entry's, so an index leaves them out (non-nested groups; a nested one keeps its words)
_NEGATIVE_LOOKAROUND = re.compile(r"\(\?<?!(?:[^()\\]|\\.)*\)")
_STOP = frozenset("""a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having he her here
hers him his how i if in into is it its itself just me more most my no nor not now of off on once only or other our out
over own same she should so some such than that the their them then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your also via per use used using
uses one two see get gets got set sets may might must shall yet its
mib gib kib tib mi gi ki mb gb kb tb gbps mhz ms us ns default off
http https www com org var usr tmp log logs output outputs""".split())
# (and the units and cells of tool tables, the pieces of URLs and paths, and the words of the medium: every paste is a log
# or an output)
_SUFFIXES = ("ing", "ed", "es", "s", "e")
#: Chinese function characters: a bigram holding one ("的是", "而不") says nothing of the report
_ZH_FUNCTION = frozenset("的了是我们这那个吗呢吧啊而和与及就也都还又在把被从对")
#: Chinese words of any report, technical or not (to use, to run, to appear, a problem, normal, the user, after ...):
#: as bigrams they match every entry's Chinese text and rank by chance, as English stop words would
_ZH_GENERIC = frozenset("""出现 使用 运行 问题 正常 可以 通过 进行 时候 之后 以后 用户 一个 没有 已经 如果 所以 但是 因为 现在 然后
情况 发现 尝试 报告 工作 需要 相关 同样 所有 能够 可能 方法 原因 请问 什么 怎么 如何 其中 以及 关于 大家 他们 作者 您好 谢谢
感谢 时候 这样 那样 一直 还是 或者 而且 比如 例如 其他 之前 以下 以上 一些 这些 那些 部分 表现 显示 执行 操作 结果""".split())

#: concept token -> words (stems, lower case; Chinese as written) that name it. Sources: NCCL's
#: troubleshooting page (hangs, timeouts, the watchdog), CUDA's error table (illegal address,
#: unsupported, invalid device), nvbandwidth/p2pBandwidthLatencyTest/simpleP2P output ("Verification
#: error", "FAIL"), and the Chinese words of the blog.gitcode.com write-ups.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "_hang": ("hang", "hung", "stuck", "deadlock", "freez", "froze", "frozen", "timeout", "watchdog", "unresponsive", "stall",
              "卡住", "卡死", "死锁", "挂起", "超时", "无响应", "卡顿", "停滞", "不动"),
    "_slow": ("slow", "slower", "slowdown", "throughput", "bandwidth", "latency", "degrad", "慢", "带宽", "性能"),
    "_wrong": ("wrong", "incorrect", "zero", "zeros", "nan", "garbage", "corrupt", "corruption", "mismatch", "checksum",
               "verification", "错误结果", "结果错误", "全零", "乱码", "数据错误", "不一致"),
    "_unsupported": ("unsupport", "unavailable", "not_support", "不支持"),
    "_virtual": ("vm", "virtual", "hypervisor", "passthrough", "kvm", "qemu", "vfio", "proxmox", "esxi", "vmware",
                 "hyper", "xen", "guest", "vgpu", "sriov", "hostdev", "ec2", "azure", "gcp", "虚拟机", "直通"),
    # where the pair's path runs: nvidia-smi topo's codes and legend words (socket interconnect, host bridge, NUMA)
    "_topo": ("socket", "sockets", "numa", "qpi", "upi", "phb", "pxb", "pix", "chipset", "complex", "bridge", "跨"),
    "_container": ("container", "docker", "kubernet", "k8s", "pod", "podman", "singularity", "apptainer", "容器"),
    "_consumer": ("geforce", "rtx", "gtx", "consumer", "titan", "4090", "3090", "5090", "4080", "3080", "2080", "1080",
                  "消费级"),
    "_pcie": ("pcie", "pci", "lspci", "lnksta", "lnkcap", "gen", "gt"),
    "_acs": ("acs", "acsctl", "srcvalid", "iommu", "vt", "amd_iommu", "intel_iommu", "dmar", "smmu"),
    "_bar": ("bar", "bar1", "rebar", "resizable", "above", "4g", "mmio", "aperture"),
    "_nvswitch": ("nvswitch", "hgx", "dgx", "fabricmanager", "fabric", "nvls", "multicast"),
    "_mig": ("mig", "instance", "instances"),
    "_shm": ("shm", "dev_shm", "shared", "共享内存"),
    "_ipc": ("ipc", "handle", "shareable", "cumem", "pidfd"),
    "_lost": ("xid", "fallen", "lost", "bus", "vanish", "disappear", "掉卡", "掉线", "消失"),
}
_CONCEPT_OF: dict[str, str] = {w: c for c, words in CONCEPTS.items() for w in words}
#: the concepts' Chinese words, in _CONCEPT_OF's order: what a run of CJK characters is searched for
_CJK_CONCEPTS: tuple[tuple[str, str], ...] = tuple((w, c) for w, c in _CONCEPT_OF.items() if w[:1] >= "\u4e00")
#: the programs people run when P2P fails (frameworks, inference servers, model names, the language and its package tools):
#: they say what was running, not why peer traffic failed, and every cause meets every one of them, so a word of theirs
#: shared with an entry (written from some thread that ran it) weighs a fraction of its IDF
APP_WORDS = frozenset("""llama cpp vllm sglang pytorch torch tensorflow jax xla deepspeed megatron ray lmdeploy tensorrt trt
llm llms ollama verl accelerate huggingface transformers paddle paddlepaddle triton comfyui nemo horovod lightning
qwen deepseek mistral mixtral gemma diffusion model models inference training serve server python python3 pip conda""".split())
APP_FACTOR = 0.3

#: what a fact says, as terms of the query: (key, True / None (any value) / a predicate on the value, terms)
FACT_TERMS: tuple[tuple[str, Any, tuple[str, ...]], ...] = (
    ("symptom.hang", True, ("_hang",)),
    ("symptom.slow", True, ("_slow",)),
    ("symptom.nvlink_unused", True, ("_slow", "nvlink")),
    ("symptom.wrong_results", True, ("_wrong",)),
    ("tool.verification_error", True, ("_wrong",)),
    ("tool.p2p_slower_than_no_p2p", True, ("_slow",)),
    ("symptom.fixed_by_p2p_disable", True, ("p2p", "disable")),
    ("symptom.fixed_by_shm_increase", True, ("_shm", "shm")),
    ("symptom.shm_exhausted", True, ("_shm", "shm")),
    ("symptom.gpus_missing", True, ("visibl", "devic")),
    ("symptom.no_cuda_device", True, ("visibl", "devic", "detect")),
    ("symptom.fixed_by_nvls_disable", True, ("nvls", "multicast")),
    ("symptom.caused_by_env", None, ("environment", "variabl", "set")),
    ("gpu.consumer", True, ("_consumer",)),
    ("host.virtualized", True, ("_virtual",)),
    ("host.container", None, ("_container",)),
    ("gpu.mig", True, ("_mig",)),
    ("host.one_gpu_per_process", True, ("visibl", "ipc", "process")),
    ("host.split_across_containers", True, ("ipc", "_ipc", "namespac", "process")),
    ("host.nvswitch_present", True, ("_nvswitch",)),
    ("host.acs_redirect", True, ("_acs",)),
    ("host.acs_enabled", True, ("_acs",)),
    ("host.iommu_fault", True, ("_acs",)),
    ("gpu.bar1_mb", None, ("_bar",)),
    ("pair.cross_socket", True, ("socket", "sys", "_topo")),
    ("host.xid_codes", None, ("xid",)),
    ("gpu.nvlink_down", True, ("nvlink", "inactive")),
    ("host.shm_mb", None, ("_shm",)),
    # what tool outputs and logs say in figures and codes rather than words
    ("pair.path", lambda v: str(v).upper() in ("PHB", "NODE", "SYS"), ("cpu", "phb", "node", "sys", "_topo")),
    ("pair.path", lambda v: str(v).upper() in ("PIX", "PXB"), ("pcie", "switch", "pix", "pxb")),
    ("p2p.read", lambda v: str(v).upper() not in ("OK", "UNKNOWN", ""), ("_unsupported", "p2p")),
    ("bench.peer_access", lambda v: str(v).lower() not in ("ok", ""), ("_unsupported", "peer", "access")),
    ("nccl.transport", lambda v: str(v).upper().startswith("SHM"), ("shm",)),
    ("nccl.transport", lambda v: str(v).upper().startswith(("NET", "COLLNET")), ("net", "socket", "network")),
    ("host.fabric_manager", lambda v: str(v).lower() in ("not running", "failed", "version mismatch"), ("fabric", "manag")),
    ("host.fabric_manager", lambda v: str(v).lower() == "version mismatch", ("version", "mismatch")),
    ("gpu.lost", True, ("_lost",)),
    ("host.iommu_active", True, ("iommu",)),
    ("host.iommu_fault", True, ("iommu", "fault")),
    ("env.NCCL_P2P_DISABLE", None, ("nccl_p2p_disabl",)),
    ("env.NCCL_P2P_LEVEL", None, ("nccl_p2p_level",)),
    ("env.NCCL_SHM_DISABLE", None, ("nccl_shm_disabl",)),
    ("env.NCCL_NVLS_ENABLE", None, ("nccl_nvls_enabl", "nvls")),
    ("host.bios_mentions", lambda v: any(w in str(v) for w in ("Above4G", "ReBAR")), ("_bar",)),
    ("host.bios_mentions", lambda v: any(w in str(v) for w in ("ACS", "IOMMU", "VT-d")), ("_acs",)),
    ("gpu.nvlink_replay_recovery", True, ("nvlink", "replay")),
    ("bench.verdict", lambda v: str(v).lower() == "slow", ("_slow",)),
    # a resolution said in words: changing the driver / NCCL version fixed it (a regression or a release's bug)
    ("text.fixed_by", lambda v: v == "driver", ("driver", "regression", "version")),
    ("text.fixed_by", lambda v: v == "nccl", ("nccl", "releas", "regression", "version")),
    # the trouble said to begin after a change of version: a regression of that component
    ("text.broken_by", lambda v: v == "driver", ("driver", "regression", "version")),
    ("text.broken_by", lambda v: v == "nccl", ("nccl", "releas", "regression", "version")),
    ("pair.nvlink_count", lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0, ("nvlink",)),
    # nvidia-smi's ERR!: NVML cannot query the GPU (a GPU lost or needing a reset)
    ("error.text", lambda v: "ERR!" in str(v), ("_lost", "reset")),
    ("host.gpu_count", lambda v: v == 0, ("visible", "cuda_visible_devic", "_lost")),
)


def _stem(w: str) -> str:
    if len(w) <= 4 or w.isdigit():
        return w
    for suf in _SUFFIXES:
        if suf == "s" and w.endswith(("ss", "us", "is")):
            continue
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)]
    return w


#: the terms of each word seen (a word's terms depend on the word alone): the knowledge base's texts repeat their words, and
#: the index of the entries is built once per process
_WORD_TERMS: dict[str, tuple[str, ...]] = {}
WORD_CACHE = 100_000


def _word_terms(raw: str) -> tuple[str, ...]:
    """One word's terms: itself lower-cased, its identifier parts (snake_case, camelCase), each stemmed, and its concepts."""
    parts = [raw.lower()]
    if not raw.isdigit() and ("_" in raw or (raw[1:] != raw[1:].lower() and raw[1:] != raw[1:].upper())):
        for chunk in raw.split("_"):
            parts.append(chunk.lower())
            if chunk[1:] != chunk[1:].lower() and chunk[1:] != chunk[1:].upper():  # camelCase
                parts.extend(p.lower() for p in _CAMEL.findall(chunk))
    out: list[str] = []
    for p in dict.fromkeys(parts):
        if len(p) < 2 or p in _STOP:
            continue
        s = _stem(p)
        out.append(s)
        c = _CONCEPT_OF.get(p) or _CONCEPT_OF.get(s)
        if c:
            out.append(c)
    return tuple(out)


def tokens(text: str) -> list[str]:
    """The text's terms (see the module docstring): words, identifier parts, stems, concepts, CJK bigrams."""
    out: list[str] = []
    for m in _WORD.finditer(text):
        raw = m.group(0)
        if m.start() and text[m.start() - 1] == "=" and raw.isalpha():
            continue  # a setting's value as a tool prints it ("P2P=Disabled"), not a word of the report
        terms = _WORD_TERMS.get(raw)
        if terms is None:
            if len(_WORD_TERMS) >= WORD_CACHE:
                _WORD_TERMS.clear()
            terms = _WORD_TERMS[raw] = _word_terms(raw)
        out.extend(terms)
    for run in _CJK_RUN.findall(text):
        out.extend(b for b in (run[i:i + 2] for i in range(len(run) - 1)) if not (set(b) & _ZH_FUNCTION) and b not in _ZH_GENERIC)
        out.extend(c for word, c in _CJK_CONCEPTS if word in run)
    return out


def entry_text(entry) -> str:
    """The entry's own words: what an index of it holds (the signature twice: it says the symptom)."""
    d = entry.data
    from .entry import FAILURE_CLASSES

    parts = [d.get("signature", ""), d.get("signature", ""), d.get("signature_zh", ""), d.get("root_cause", ""),
             d.get("root_cause_zh", ""), FAILURE_CLASSES.get(entry.failure_class or "", ""),
             " ".join(str(c) for c in entry.error_codes), " ".join(map(str, d.get("tags") or [])),
             " ".join(map(str, d.get("aliases") or []))]
    for rx in [d.get("regex") or ""] + list(d.get("regexes") or []):
        if isinstance(rx, str):
            parts.append(_REGEX_ESCAPE.sub(" ", _NEGATIVE_LOOKAROUND.sub(" ", rx)))
    return "\n".join(p for p in parts if isinstance(p, str))


_APP_STEMS = frozenset(APP_WORDS) | frozenset(_stem(w) for w in APP_WORDS)


class Index:
    """BM25 over the entries of one knowledge base."""

    def __init__(self, entries: Iterable[Any]):
        self.entries = [e for e in entries if not getattr(e, "benign", False)]
        self.tf = [Counter(tokens(entry_text(e))) for e in self.entries]
        self.len = [sum(c.values()) for c in self.tf]
        self.avg = (sum(self.len) / len(self.len)) if self.len else 1.0
        df: Counter = Counter()
        for c in self.tf:
            df.update(c.keys())
        n = len(self.entries)
        self.idf = {t: math.log(1 + (n - k + 0.5) / (k + 0.5)) * (APP_FACTOR if t in _APP_STEMS else 1.0)
                    for t, k in df.items()}

    def scores(self, query: Iterable[str]) -> list[tuple[Any, float, list[str]]]:
        """(entry, BM25 score, the query terms it shares, best first) for entries sharing any term."""
        q = [t for t in dict.fromkeys(query) if t in self.idf]
        out = []
        for e, tf, n in zip(self.entries, self.tf, self.len):
            s, shared = 0.0, []
            norm = K1 * (1 - B + B * n / self.avg)
            for t in q:
                f = tf.get(t)
                if f:
                    s += self.idf[t] * f * (K1 + 1) / (f + norm)
                    shared.append(t)
            if s > 0:
                shared.sort(key=lambda t: -self.idf[t])  # the rarest shared words first: they say the most
                out.append((e, s, shared))
        out.sort(key=lambda x: -x[1])
        return out


_INDEX: dict[int, tuple[Any, Index]] = {}


def index_for(kb) -> Index:
    """The index of this knowledge base, built once per KB object."""
    hit = _INDEX.get(id(kb))
    if hit is None or hit[0] is not kb:
        hit = _INDEX[id(kb)] = (kb, Index(kb.entries))
    return hit[1]


_MARKED = ("warn", "error", "fail", "timeout", "hang", "xid", "abort")


def query_text(lines: list[str], lines_with=None) -> str:
    """What of a text the query reads: its head and tail, and the lines with warn/error/fail words in
    between (``lines_with(literals)`` -> 1-based line numbers, a fast search where the caller has one)."""
    head, size, i = [], 0, 0
    while i < len(lines) and size < HEAD:
        head.append(lines[i])
        size += len(lines[i]) + 1
        i += 1
    tail, size, j = [], 0, len(lines)
    while j > i and size < TAIL:
        j -= 1
        tail.append(lines[j])
        size += len(lines[j]) + 1
    if lines_with is not None:
        middle = [lines[n - 1] for n in lines_with(_MARKED) if i < n <= j][:MAX_MARKED]
    else:
        middle = [ln for ln in lines[i:j] if any(w in ln.lower() for w in _MARKED)][:MAX_MARKED]
    return "\n".join(head + middle + tail[::-1])


#: the words that frame a paste rather than tell of it: the name of the environment script the templates of PyTorch and
#: vLLM ask for (its report's lines are read by evidence.collect_env), an adjective of a paste's extent before the noun
#: that names the paste ("the full log", "complete traceback", "entire output"): what any report says of what it
#: attaches, no word of the cause ("full" is a word of "/dev/shm full"); and the sentences of GitHub's default bug
#: report template (.github/ISSUE_TEMPLATE/bug_report.md) that a reporter leaves in. (A collapsed section's title:
#: evidence.paste.SECTION_TITLE.)
_FRAME = re.compile(r"\bcollect[_-]env(?:\.py)?\b|"
                    r"\bA clear and concise description of what (?:the bug is|you expected to happen)|"
                    r"\bAdd any other context about the problem here|\bIf applicable, add screenshots to help explain your "
                    r"problem|\bSteps to reproduce the behaviou?r|"
                    r"\b(?:full|complete|entire|whole)(?=[ \t]+(?:nccl[ \t]+|error[ \t]+|debug[ \t]+|console[ \t]+)?"
                    r"(?:logs?|outputs?|tracebacks?|backtraces?|stack[ \t]*traces?|traces?|error[ \t]+messages?|"
                    r"messages?|dmesg|stdout|stderr|details|texts?|reports?|env(?:ironment)?)\b)", re.I)


def query_terms(lines: list[str], known, lines_with=None) -> list[str]:
    """The query: the text's terms and the concept tokens of its facts (``known(key)`` -> values). The text as the
    evidence readers see it (evidence.paste.tidy): a launcher's prefix on every line is no word of the program's, nor
    a section's title, a word that frames the paste (:data:`_FRAME`) or an issue template's line
    (:data:`~.regex_safety.ISSUE_TEMPLATE_LINE`)."""
    from ..evidence.paste import SECTION_TITLE, tidy  # lazy: the evidence package imports knowledge

    # the query's text is at most HEAD + TAIL and the marked lines: each search costs ms. A section's title before tidy,
    # which keeps its words for the readers; the framing words and the template's lines after it, as a launcher's prefix
    # or a quote mark before them comes off
    text = tidy(SECTION_TITLE.sub(" ", query_text(lines, lines_with)))
    q = tokens(ISSUE_TEMPLATE_LINE.sub(" ", _FRAME.sub(" ", text)))
    for key, want, terms in FACT_TERMS:
        vals = known(key)
        if any(want(v) if callable(want) else (v is want) if want is not None else (v not in (None, False, "", 0))
               for v in vals):
            q.extend(terms)
    return q


def rank(kb, lines: list[str], known, cache: Optional[dict] = None, lines_with=None) -> list[tuple[Any, float, list[str]]]:
    """Entries of ``kb`` by BM25 between the text (and its facts) and each entry's own text, best first.
    ``lines_with``: see query_text; ``cache``: a dict kept with the text (one query per text and KB)."""
    key = ("retrieval", id(kb))
    if cache is not None and key in cache:
        return cache[key]
    out = index_for(kb).scores(query_terms(lines, known, lines_with))
    if cache is not None:
        cache[key] = out
    return out
