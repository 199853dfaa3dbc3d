"""How the evaluation corpus is split into parts: dev and holdout by thread hash, fresh, fresh2, fresh3, fresh4, fresh5, fresh6, fresh7, fresh8, fresh9, fresh10, fresh11, fresh12, fresh13, fresh14, fresh15 and fresh16 by collection date.

dev/ and holdout/: the split was fixed before any case was run through p2ptop. A case's part depends
only on its thread (the source URL without fragment, query or trailing slash), so every case of one
thread lands in the same part. tests/test_corpus.py checks that each file of dev/ and holdout/ sits
where ``split_of`` says.

fresh/: a third part, collected on 2026-11-24 after the holdout had been measured twice (and so had
begun to steer the rules through its figures). It is assigned by collection date, not by hash:
``split_of`` is never asked about it. Every case of fresh/ must come from a thread that is in neither
dev/ nor holdout/ (compared by ``thread_of``), at most MAX_PER_THREAD cases per thread. Nobody who
writes rules reads fresh/ (nor holdout/); it is only judged, by benchmarks/eval_diagnosis.py.

fresh2/: a fourth part, collected on 2026-11-24 after fresh/ had been measured (so fresh/ too had begun
to steer the rules through its figures), to judge the next round of rules. Assigned by collection, like
fresh/: every case comes from a thread that is in no other part (dev/, holdout/, fresh/), at most
MAX_PER_THREAD cases per thread; nobody who writes rules reads it.

fresh3/: a fifth part, collected on 2026-11-24 after fresh2/ had been measured, to judge the third round of
rules. Assigned by collection, like fresh/ and fresh2/: every case comes from a thread that is in no other
part (dev/, holdout/, fresh/, fresh2/), at most MAX_PER_THREAD cases per thread; nobody who writes rules
reads it.

fresh4/: a sixth part, collected on 2026-11-24 after fresh3/ had been measured, to judge the fourth round of
rules. Assigned by collection, like the other fresh parts: every case comes from a thread that is in no other
part (dev/, holdout/, fresh/, fresh2/, fresh3/), at most MAX_PER_THREAD cases per thread; nobody who writes
rules reads it.

fresh5/: a seventh part, collected on 2026-11-24 after fresh4/ had been measured, to judge the fifth round of
rules. Assigned by collection, like the other fresh parts: every case comes from a thread that is in no other
part (dev/, holdout/, fresh/ to fresh4/), one case per thread; nobody who writes rules reads it.

fresh6/: an eighth part, collected on 2026-11-24 after fresh5/ had been measured, to judge the sixth round of
rules. Assigned by collection, like the other fresh parts: every case comes from a thread that is in no other
part (dev/, holdout/, fresh/ to fresh5/), one case per thread; nobody who writes rules reads it.

fresh7/: a ninth part, collected on 2026-11-27 after fresh6/ had been measured, to judge the seventh round of
rules. Assigned by collection, like the other fresh parts: every case comes from a thread that is in no other
part (dev/, holdout/, fresh/ to fresh6/), one case per thread; nobody who writes rules reads it.

fresh8/: a tenth part, collected on 2026-11-27 after fresh7/ had been collected, to judge a later round of
rules. Assigned by collection, like the other fresh parts: every case comes from a thread that is in no other
part (dev/, holdout/, fresh/ to fresh7/), one case per thread; nobody who writes rules reads it.

fresh9/: an eleventh part, collected on 2026-11-27 after fresh8/ had been collected, to judge a later round of
rules. Assigned by collection, like the other fresh parts: every case comes from a thread that is in no other
part (dev/, holdout/, fresh/ to fresh8/), one case per thread; nobody who writes rules reads it.

fresh10/: a twelfth part, collected on 2026-11-27 after fresh9/ had been collected, to judge a later round of
rules, favouring pasted errors and tool output (fresh9/ has only descriptions and logs). Assigned by collection,
like the other fresh parts: every case comes from a thread that is in no other part (dev/, holdout/, fresh/ to
fresh9/), one case per thread; nobody who writes rules reads it.

fresh11/: a thirteenth part, collected on 2026-11-27 after fresh10/ had been collected, to judge a later round
of rules, drawn mostly from repositories of schedulers, cluster tooling, inference servers and scientific codes
rather than from the NCCL and driver trackers the earlier parts mined. Assigned by collection, like the other
fresh parts: every case comes from a thread that is in no other part (dev/, holdout/, fresh/ to fresh10/), one
case per thread; nobody who writes rules reads it.

fresh12/: a fourteenth part, collected on 2026-11-27 after fresh11/ had been collected, to judge a later round
of rules, drawn from repositories and phrasings the earlier collectors had used little (training and inference
frameworks' trackers, install checks, container setups). Assigned by collection, like the other fresh parts:
every case comes from a thread that is in no other part (dev/, holdout/, fresh/ to fresh11/), one case per
thread; nobody who writes rules reads it.

fresh13/: a fifteenth part, collected on 2026-11-27 after fresh12/ had been collected, to judge a later round
of rules, favouring tool output and repositories the earlier collectors had used little (cluster health
checks, enthusiast inference forks, MIG set-ups). Assigned by collection, like the other fresh parts: every
case comes from a thread that is in no other part (dev/, holdout/, fresh/ to fresh12/), one case per thread;
nobody who writes rules reads it.

fresh14/: a sixteenth part, collected on 2026-11-28 by two collectors (GitHub owners a-m and n-z; the two threads
both took are kept once), to judge the rules written after it; judged once, blind, with the code of 93aa90d
(benchmarks/results/eval-diagnosis-fresh14-blind-93aa90d.txt) before any rule of that session. Assigned by
collection, like the other fresh parts: every case comes from a thread that is in no other part (dev/, holdout/,
fresh/ to fresh13/), one case per thread.

fresh15/: a seventeenth part, collected on 2026-11-28 after fresh14/ had been judged and opened, favouring threads in
Chinese and repositories of LLM training and serving stacks the earlier collectors used little; judged once, blind,
with the session's final code (90ff1d5; benchmarks/results/eval-diagnosis-fresh15-blind-90ff1d5.txt). Assigned by
collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh14/), one case per thread.

fresh16/: an eighteenth part, collected on 2026-11-28 (second session) after fresh15/ had been judged and opened, by
three helpers with venues kept apart (NVIDIA's driver and infrastructure repositories, training stacks, inference
stacks); judged once, blind, with c875119 (benchmarks/results/eval-diagnosis-fresh16-blind-c875119.txt), then opened.
Assigned by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh15/), one case
per thread.

fresh17/: a nineteenth part, collected on 2026-11-28 (third session) after fresh16/ had been judged and opened, by
three helpers with venues kept apart (forums and blogs outside GitHub; the NCCL, PyTorch, vLLM/SGLang and framework
repositories; every other repository); judged once, blind, with e748568
(benchmarks/results/eval-diagnosis-fresh17-blind-e748568.txt), then opened. Assigned by collection: every case comes
from a thread in no other part (dev/, holdout/, fresh/ to fresh16/), one case per thread.

fresh18/: a twentieth part, collected on 2026-11-28 (fourth session) after fresh17/ had been judged and opened, by three
helpers with venues kept apart (LLM serving and training projects other than vLLM/SGLang/TensorRT-LLM; HPC,
infrastructure, containers and clouds; deep-learning frameworks and GPU libraries, NCCL included), who were asked to
say nothing of their cases in their reports; judged once, blind, with fcad272
(benchmarks/results/eval-diagnosis-fresh18-blind-fcad272.txt), then opened. Assigned by collection: every case comes
from a thread in no other part (dev/, holdout/, fresh/ to fresh17/), one case per thread.

fresh19/: a twenty-first part, collected on 2026-11-28 (fifth session) after fresh18/ had been judged and opened, by four
helpers with venues kept apart (LLM serving and fine-tuning projects other than vLLM/SGLang/TensorRT-LLM; HPC,
infrastructure, containers and clouds; frameworks and GPU libraries; threads in Chinese and application/research
repositories), who reported a count only; judged once, blind, with 5bffbaf
(benchmarks/results/eval-diagnosis-fresh19-blind-5bffbaf.txt), then opened. Assigned by collection: every case comes
from a thread in no other part (dev/, holdout/, fresh/ to fresh18/), one case per thread.

fresh20/: a twenty-second part, collected on 2026-11-28 (sixth session) after fresh19/ had been judged and opened, by four
helpers with venues kept apart (communication/MoE/kernel libraries and newer training stacks; host level, drivers,
virtualisation and GPU sharing; image/video generation, speech and benchmark repositories; threads in Chinese and
Chinese-led repositories), who reported a count only; two of their files repeated threads of earlier parts and were
dropped unread; judged once, blind, with ae05520 (benchmarks/results/eval-diagnosis-fresh20-blind-ae05520.txt), then
opened. Assigned by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh19/),
one case per thread.

fresh21/: a twenty-third part, collected on 2026-11-28 (sixth session) after fresh20/ had been judged and opened, by four
helpers kept apart by the family of text rather than by repository (CUDA errors as frameworks print them; NCCL's own
lines; tool outputs; kernel and system logs), asked for pasted evidence (errors, logs, tool outputs), who reported a
count only; judged once, blind, with 783bbbc (benchmarks/results/eval-diagnosis-fresh21-blind-783bbbc.txt), then opened.
Assigned by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh20/), one case
per thread.

fresh22/: a twenty-fourth part, collected on 2026-11-28 (seventh session) after fresh21/ had been judged and opened, by
five helpers kept apart by venue (forums that are not GitHub, which gave none; HPC and scientific GPU software; local
inference and application repositories; clusters, clouds and schedulers; frameworks other than PyTorch), who reported a
count only; judged once, blind, with c7e3a1c (benchmarks/results/eval-diagnosis-fresh22-blind-c7e3a1c.txt), then opened.
Assigned by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh21/), one case
per thread.

fresh23/: a twenty-fifth part, collected on 2026-11-28 (seventh session) beside fresh22/ (the helpers were started before
fresh22/ was judged and never saw it), by four helpers kept apart by family (GitHub Discussions; NCCL's own lines in
threads of 2024-2026; tool outputs, which gave none; threads in Chinese), who reported a count only; judged once, blind,
with 47d0db9 (benchmarks/results/eval-diagnosis-fresh23-blind-47d0db9.txt), then opened. Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh22/), one case per thread.

fresh24/: a twenty-sixth part, collected on 2026-11-28 (seventh session) after fresh22/ and fresh23/ had been judged and
opened, by four helpers kept apart by venue (NVIDIA's repositories other than NVIDIA/nccl; reinforcement-learning and
post-training frameworks; the PyTorch ecosystem; inference servers), who reported a count only; judged once, blind, with
2cadc1c (benchmarks/results/eval-diagnosis-fresh24-blind-2cadc1c.txt), then opened. Assigned by collection: every case
comes from a thread in no other part (dev/, holdout/, fresh/ to fresh23/), one case per thread.

fresh25/: a twenty-seventh part, collected on 2026-11-29 (eighth session) after fresh24/ had been judged and opened, by
eight helpers kept apart by venue (bug trackers that are not GitHub, which gave none; Linux distributions and driver
packaging; virtualisation and confidential computing; Windows, WSL and desktop apps; the newest hardware; the newest
threads of the most-mined venues; threads in Chinese; small repositories found by the messages software prints), who
reported a count only; judged once, blind, with 66ac113 (benchmarks/results/eval-diagnosis-fresh25-blind-66ac113.txt),
then opened. Assigned by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh24/),
one case per thread.

fresh26/: a twenty-eighth part, collected on 2026-11-29 (eighth session) while fresh25/ was being opened and its rules
written (the helpers never saw fresh25/ nor the rules), by six helpers kept apart by venue (small repositories found by
how people describe the trouble; GitHub Discussions and forums, which gave none; HPC and cluster software; research
training code, which gave none; threads in Chinese; tool output pastes, which gave none), who reported a count only;
the session's search budget ran out during the round. Judged once, blind, with 3fd55bc
(benchmarks/results/eval-diagnosis-fresh26-blind-3fd55bc.txt), then opened. Assigned by collection: every case comes
from a thread in no other part (dev/, holdout/, fresh/ to fresh25/), one case per thread.

fresh27/: a twenty-ninth part, collected on 2026-11-29 (ninth session) by nine helpers kept apart by venue (forums that
are not GitHub; descriptions in the reporter's own words; threads in Chinese; tool output pastes; inference servers,
which gave none; threads opened before 2021; clusters and clouds; threads opened in 2026; GPU rendering and simulation
software), who reported a count only. One file was left out before the part was judged, on scope alone: a ROCm (AMD)
thread. Judged once, blind, with a1440d3 (benchmarks/results/eval-diagnosis-fresh27-blind-a1440d3.txt), then opened.
Assigned by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh26/), one case
per thread.

fresh28/: a thirtieth part, collected on 2026-11-29 (ninth session) while fresh27/ was being opened and its rules
written (the helpers never saw fresh27/ nor the rules), by four helpers kept apart by what they looked for (rare
classes; descriptions; logs; threads in Chinese, which gave none), who reported a count only; the search budget ran out
during the round. One file was left out before the part was judged, on scope alone: an AMD (RCCL) thread. Judged once,
blind, with 6dc4abf (benchmarks/results/eval-diagnosis-fresh28-blind-6dc4abf.txt), then opened. Assigned by collection:
every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh27/), one case per thread.
fresh29/: a thirty-first part, collected on 2026-11-29 (tenth session) by thirteen helpers kept apart by venue or by
what they looked for (descriptions in training frameworks; local-LLM communities; system software; forums that are not
GitHub, which gave none; threads in Chinese, which gave none; GPU-aware MPI and HPC; RL and distributed stacks; rare
classes; example and research code; then tool outputs; logs; errors by CUDA's and NCCL's own texts; other language
ecosystems), who reported a count only; 682 threads checked. Judged once, blind, with a26a06d
(benchmarks/results/eval-diagnosis-fresh29-blind-a26a06d.txt), then opened. Assigned by collection: every case comes
from a thread in no other part (dev/, holdout/, fresh/ to fresh28/), one case per thread.
fresh30/: a thirty-second part, collected on 2026-11-29 (eleventh session) by sixteen helpers kept apart by venue or by
what they looked for (inference servers; science codes; compilers and comm libraries; cloud and cluster infrastructure;
large-scale training codebases; older threads of 2014-2020; pull requests and discussions; rare classes; then new
hardware; the P2P-patched driver world; then a third wave that the search budget cut short after a few look-ups), who
reported a count only; 589 threads checked. Judged once, blind, with 5fc7564
(benchmarks/results/eval-diagnosis-fresh30-blind-5fc7564.txt), then opened. Assigned by collection: every case comes from a
thread in no other part (dev/, holdout/, fresh/ to fresh29/), one case per thread.
fresh31/: a thirty-third part, collected on 2026-11-29 (twelfth session) by eight helpers kept apart by angle (older
data-centre and workstation cards by name; vision, diffusion and multimodal training code; errors as the distributed wrappers
print them; threads in Chinese; rare classes; logs and tool outputs; the newest threads, none qualifying; descriptions in
repositories not heavily mined), who reported a count only; 735 threads checked. Judged once, blind, with 0aefa81
(benchmarks/results/eval-diagnosis-fresh31-blind-0aefa81.txt), then opened. Assigned by collection: every case comes from a
thread in no other part (dev/, holdout/, fresh/ to fresh30/), one case per thread.
fresh32/: a thirty-fourth part, collected on 2026-11-29 (twelfth session, second wave) by six helpers kept apart by angle
(rented and hosted GPUs; workstation and newest cards by name, none qualifying; device faults between GPUs; threads in
Chinese; descriptions found by the fix's words; logs and tool outputs, none qualifying), who reported a count only; 352
threads checked. Judged once, blind, with d5a3ae5 (benchmarks/results/eval-diagnosis-fresh32-blind-d5a3ae5.txt), then
opened. Assigned by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh31/), one
case per thread.
fresh33/: a thirty-fifth part, collected on 2026-11-29 (twelfth session, third wave) by five helpers kept apart by angle
(speech and NLP toolkits; graph, recommender and tabular ML; 3D vision and graphics ML; HPC centres' user support; GitHub
Discussions), who reported a count only; 134 threads checked before the search budget ran out. Judged once, blind, with
9c9a11e (benchmarks/results/eval-diagnosis-fresh33-blind-9c9a11e.txt), then opened. Assigned by collection: every case
comes from a thread in no other part (dev/, holdout/, fresh/ to fresh32/), one case per thread.
fresh34/: a thirty-sixth part, collected on 2026-11-29 (thirteenth session, first wave) by seven helpers kept apart by angle
(NVIDIA's developer forums on CUDA programming and on data-centre/driver topics, discuss.pytorch.org, other forums, little-mined
training frameworks, local LLM runners, the newest GitHub threads), who reported a count only; 207 threads checked. Judged once,
blind, with 4a98a25 (benchmarks/results/eval-diagnosis-fresh34-blind-4a98a25.txt), then opened. Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh33/), one case per thread.
fresh35/: a thirty-seventh part, collected on 2026-11-29 (thirteenth session, second wave) by six helpers kept apart by angle
(HPC and scientific codes; rendering, graphics and simulation; Rust, Julia, Go, Java and .NET GPU stacks; Windows and WSL2;
diffusion and video generation on several GPUs; NVIDIA's own libraries and bindings), who reported a count only; 347 threads
checked. Judged once, blind, with 4c29667 (benchmarks/results/eval-diagnosis-fresh35-blind-4c29667.txt), then opened. Assigned
by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh34/), one case per thread.
fresh36/: a thirty-eighth part, collected on 2026-11-29 (thirteenth session, third wave) by six helpers kept apart by angle
(model repositories run on several GPUs; Kubernetes and cluster GPU plumbing; operating systems packaging NVIDIA drivers;
benchmarks and performance guides; errors and logs found by CUDA's and NCCL's own messages; threads in Chinese), asked for
fault classes rather than 'other', who reported a count only; 220 threads checked before the search budget ran out. Judged
once, blind, with 9e5904e (benchmarks/results/eval-diagnosis-fresh36-blind-9e5904e.txt), then opened. Assigned by
collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh35/), one case per thread.
fresh37/: a thirty-ninth part, collected on 2026-11-29 (fourteenth session) by twelve helpers kept apart by angle: seven by
class (containers and shared memory; NCCL settings and releases; the platform between the GPUs; what the driver and CUDA
refuse; the links themselves; NVSwitch systems; threads in Chinese, Japanese or Korean) and five walking venues (NVIDIA/nccl
issues 1-900; Paddle, MindSpore and other Chinese frameworks; fine-tuning and LLM tooling; NVIDIA tool repositories; CUDA
from Python and other runtimes), who reported a count only; 836 thread URLs checked (most already known). Judged once, blind,
with 31759a1 (benchmarks/results/eval-diagnosis-fresh37-blind-31759a1.txt), then opened. Assigned by collection: every case
comes from a thread in no other part (dev/, holdout/, fresh/ to fresh36/), one case per thread.
fresh38/: a fortieth part, collected on 2026-11-29 (fourteenth session, second wave) by six helpers walking venues (NVIDIA/nccl
issues 900-1450 and 1450-2100 with nccl-tests; LLM serving platforms and cluster managers; older framework trackers; older
pytorch/pytorch issues; Hugging Face libraries, Lightning and DeepSpeed), who reported a count only; 131 thread URLs
checked before the search budget ran out. Judged once, blind, with 88e14e5
(benchmarks/results/eval-diagnosis-fresh38-blind-88e14e5.txt), then opened. Assigned by collection: every case comes from
a thread in no other part (dev/, holdout/, fresh/ to fresh37/), one case per thread.
fresh39/: a forty-first part, collected on 2026-11-29 (fifteenth session) by ten helpers in two waves (the newest
threads; virtualisation stacks; transport and kernel libraries; forums; GitHub discussions; descriptions found by the fix's
words; then walking pytorch/pytorch 100000+, vllm, sglang/llama.cpp/ollama and RL/training stacks), who reported a count
only; 484 thread URLs checked. Judged once, blind, with 37285f3 (benchmarks/results/eval-diagnosis-fresh39-blind-37285f3.txt),
then opened. Assigned by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh38/),
one case per thread.
fresh40/: a forty-second part, collected on 2026-11-29 (seventeenth session) by five helpers (LLM serving stacks; training
frameworks; cluster, virtualisation and driver infrastructure; GPU libraries and communication layers; Chinese-language
repositories and write-ups), who reported a count, classes and kinds only; about 830 thread URLs checked, 18 cases written,
one dropped unread (its collector flagged it as the same incident as a corpus case), 17 kept. Judged blind with the code of
the session (benchmarks/results/eval-diagnosis-fresh40-blind-b295c34.txt), then opened. Assigned by collection: every case comes
from a thread in no other part (dev/, holdout/, fresh/ to fresh39/), one case per thread.
fresh41/: a forty-third part, collected on 2026-11-29 (seventeenth session, second wave) by four helpers (the newest
hardware and software; the older era; HPC and scientific codes with MPI/UCX; pasted tool output and logs, healthy ones
too), who reported a count, classes and kinds only; about 590 thread URLs checked, 24 cases. Judged blind with the
session's rules then (benchmarks/results/eval-diagnosis-fresh41-blind-4476e19.txt), then opened. Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh40/), one case per thread.
fresh42/: a forty-fourth part, collected on 2026-11-29 (seventeenth session, third wave) by four helpers (NVIDIA/nccl and
nccl-tests oldest first; pytorch/pytorch's distributed issues; LLM serving stacks walked; the platform under the GPUs:
boards, CPUs, BIOS, Windows/WSL, clouds) until the session's search budget ran out; about 500 thread URLs checked, 20
cases. Judged blind with the session's last rules (benchmarks/results/eval-diagnosis-fresh42-blind-da88adc.txt), again with
the seventeenth session's final rules (-b32a7ee.txt), then opened. Assigned by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh41/), one case per thread.
fresh43/: a forty-fifth part, collected on 2026-11-29 (eighteenth session) by five helpers (Q&A sites and forums;
containers, orchestration, clusters and clouds; frameworks and libraries mined least; Chinese-language sources; hobbyist
and workstation multi-GPU software) who reported a count, classes and kinds only; about 490 thread URLs checked, 22 cases
(two cross-helper twins dropped, and one report from an AMD ROCm build's repository, out of scope; a second AMD ROCm
report, llama.cpp on two MI50s, removed after opening for the same reason: 21 cases). Judged blind with the session's rules then
(benchmarks/results/eval-diagnosis-fresh43-blind-*.txt). Assigned by collection: every case comes from a thread in no
other part (dev/, holdout/, fresh/ to fresh42/), one case per thread.
fresh44/: a forty-sixth part, collected on 2026-11-29 (eighteenth session, second wave) by two helpers (error strings
searched across all repositories; symptoms in the reporters' own words), who reported a count, classes and kinds only and
skipped every thread an earlier collection had checked (checked-threads.txt); about 500 thread URLs checked, 8 cases (one
AMD report dropped unread, out of scope, and one whose log is a dev/ case's own paste, cross-posted by its reporter). Judged blind with the session's rules then
(benchmarks/results/eval-diagnosis-fresh44-blind-*.txt). Assigned by collection: every case comes from a thread in no
other part (dev/, holdout/, fresh/ to fresh43/), one case per thread.
fresh45/: a forty-seventh part, collected on 2026-11-29 (eighteenth session, third wave) by two helpers (the newest
threads, 2025-2026, on Blackwell, CUDA 12.8-13, NCCL 2.24-2.29; HPC sites and CUDA-aware MPI stacks) with the last of
the session's search budget, skipping every thread already checked; about 190 thread URLs checked, 17 cases. Judged
blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh45-blind-*.txt). Assigned by collection:
every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh44/), one case per thread.
fresh46/: a forty-eighth part, collected on 2026-11-30 (nineteenth session, first wave) by six helpers (LLM serving and its
communication libraries; RL and fine-tuning frameworks; pasted tool output; HPC codes, CUDA-aware MPI and UCX; cloud,
rental and VM hosts; symptoms in the reporters' words), who reported a count, classes and kinds only and skipped every
thread an earlier collection had checked (checked-threads.txt); about 1,200 thread URLs checked, 57 cases (40 of them
`other`). Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh46-blind-*.txt). Assigned by
collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh45/), one case per thread.
fresh47/: a forty-ninth part, collected on 2026-11-30 (nineteenth session, second wave) by two helpers (Chinese-language
sources; the older frameworks' multi-GPU years, 2015-2021), who reported a count, classes and kinds only and skipped every
thread already checked; about 180 thread URLs checked, 5 cases. Judged blind with the session's rules then
(benchmarks/results/eval-diagnosis-fresh47-blind-*.txt). Assigned by collection: every case comes from a thread in no
other part (dev/, holdout/, fresh/ to fresh46/), one case per thread.
fresh48/: a fiftieth part, collected on 2026-11-30 (nineteenth session, third wave) by two helpers (GitHub threads opened
in 2026, by error strings; forums and Q&A of 2024-2026, which gave none), skipping every thread already checked; about
110 thread URLs checked, 5 cases. Judged blind with the session's rules then
(benchmarks/results/eval-diagnosis-fresh48-blind-*.txt). Assigned by collection: every case comes from a thread in no
other part (dev/, holdout/, fresh/ to fresh47/), one case per thread.
fresh49/: a fifty-first part, collected on 2026-11-30 (twentieth session) by eight helpers in two waves (image and video
generation with several GPUs; scientific, graph, search and quantum-simulation libraries; LLM pretraining and fine-tuning
stacks mined least; inference engines outside the big serving stacks and renderers; NVIDIA/nccl and nccl-tests threads
not yet checked, by number; pytorch, vLLM and SGLang threads not yet checked), who reported a count, classes and kinds
only and skipped every thread an earlier collection had checked (checked-threads.txt); about 860 thread URLs checked,
32 cases (21 of them `other`; one AMD ROCm report removed after opening, out of scope: 31). Judged blind with the session's rules then
(benchmarks/results/eval-diagnosis-fresh49-blind-*.txt). Assigned by collection: every case comes from a thread in no
other part (dev/, holdout/, fresh/ to fresh48/), one case per thread.
fresh50/: a fifty-second part, collected on 2026-11-30 (twentieth session, third wave) by two helpers (DeepSpeed,
Accelerate, Transformers, Lightning, Megatron-LM, TransformerEngine, NeMo and kin; JAX, XLA, TensorFlow, Horovod, Ray,
Paddle, MXNet, ColossalAI, ONNX Runtime, CuPy and dask-cuda threads not yet checked), who reported a count, classes and
kinds only and skipped every thread an earlier collection had checked; about 120 thread URLs checked, 6 cases. Judged
blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh50-blind-*.txt). Assigned by collection:
every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh49/), one case per thread.
fresh51/: a fifty-third part, collected on 2026-11-30 (twenty-first session) by four helpers in fields not mined before or
mined least (the NVIDIA Developer Forums and other hardware forums; Chinese-language pages; GitHub repositories outside the
most mined ones, searched by the errors' own strings; Q&A sites, HPC centres' and vendors' pages of known problems), who
reported a count, classes and kinds only and skipped every thread an earlier collection had checked; about 310 URLs
checked, 14 cases of which two were the same pages taken by two helpers (one of each kept): 12. Judged blind with the
session's rules then (benchmarks/results/eval-diagnosis-fresh51-blind-*.txt). Assigned by collection: every case comes
from a thread in no other part (dev/, holdout/, fresh/ to fresh50/), one case per thread.
fresh52/: a fifty-fourth part, collected on 2026-11-30 (twenty-first session, second wave) by two helpers (Japanese and
Korean pages; GitHub threads of Asian AI labs' and GPU cloud and Kubernetes tooling repositories), who reported a count,
classes and kinds only and skipped every thread an earlier collection had checked; about 110 URLs checked, 5 cases.
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh52-blind-*.txt). Assigned by
collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh51/), one case per thread.
fresh53/: a fifty-fifth part, collected on 2026-11-30 (twenty-first session, third wave) by three helpers (cloud GPU
providers' and HPC centres' documentation; PCIe switches, boards, BIOS options, platforms and virtualization; inference and
training tools built on NCCL or CUDA IPC outside the most mined repositories), who reported a count, classes and kinds only
and skipped every thread an earlier collection had checked; about 380 URLs checked, 24 cases, of which five AMD/ROCm
reports (ROCm repositories, Radeon R9700 builds, IREE's HIP backend) were left out before sealing, by their source, as
out of scope: 19. Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh53-blind-*.txt).
Assigned by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh52/), one case per
thread.
fresh54/: a fifty-sixth part, collected on 2026-11-30 (twenty-second session) by seven helpers (scientific and HPC
application communities and CUDA-aware MPI libraries; applications outside deep-learning training; operating-system and
virtualization trackers; containers, schedulers and clusters; older and less common frameworks; threads of NVIDIA/nccl and
nccl-tests, and of pytorch, vllm, sglang and accelerate, not checked before), who reported a count, classes and kinds only
and skipped every thread an earlier collection had checked; about 1,160 URLs checked, 22 cases staged: two threads taken by
two helpers each were kept once, one of them (PaddlePaddle/Paddle#37803) left out because the two helpers labelled it with
different classes: 19. Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh54-blind-*.txt).
Assigned by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh53/), one case per
thread.
fresh55/: a fifty-seventh part, collected on 2026-11-30 (twenty-second session, second wave) by two helpers searching by
what a kind of evidence prints (tool outputs: p2pBandwidthLatencyTest, simpleP2P, nvbandwidth, topo, nvlink, lspci,
dcgmi, nccl-tests; logs: NCCL's INFO/WARN lines and the kernel's), who reported a count, classes and kinds only and
skipped every thread an earlier collection had checked; about 520 URLs checked, 5 cases (the tool outputs gave none).
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh55-blind-*.txt). Assigned by
collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh54/), one case per thread.
fresh56/: a fifty-eighth part, collected on 2026-11-30 (twenty-third session) by four helpers (NVIDIA's own repositories other
than nccl, nccl-tests, TensorRT-LLM and open-gpu-kernel-modules; training frameworks and libraries on PyTorch distributed; serving
stacks and KV-cache transfer libraries; data-science, HPC and numerical libraries), who reported a count, classes and kinds only
and skipped every thread an earlier collection had checked; about 500 URLs checked, 9 cases. Judged blind with the session's rules
then (benchmarks/results/eval-diagnosis-fresh56-blind-*.txt). Assigned by collection: every case comes from a thread in no other
part (dev/, holdout/, fresh/ to fresh55/), one case per thread.
fresh57/: a fifty-ninth part, collected on 2026-11-30 (twenty-third session, second wave) by three helpers searching by symptom
in any repository (wrong data between GPUs; slow transfers on one host; the exact error strings of failed starts), who reported a
count, classes and kinds only and skipped every thread an earlier collection had checked; about 350 URLs checked, 12 cases. Judged
blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh57-blind-*.txt). Assigned by collection: every case
comes from a thread in no other part (dev/, holdout/, fresh/ to fresh56/), one case per thread.
fresh58/: a sixtieth part, collected on 2026-11-30 (twenty-third session, third wave) by four helpers (GitHub threads written in
Chinese; GPUs shared or handed out by schedulers, device plugins and containers; Windows, WSL2 and mixed or external GPUs; the
newest hardware and software), who reported a count, classes and kinds only and skipped every thread an earlier collection had
checked; about 850 URLs checked, 32 cases (twenty of them Windows runs without NCCL, `other`). Judged blind with the session's
rules then (benchmarks/results/eval-diagnosis-fresh58-blind-*.txt). Assigned by collection: every case comes from a thread in no
other part (dev/, holdout/, fresh/ to fresh57/), one case per thread.
fresh59/: a sixty-first part, collected on 2026-11-30 (twenty-fourth session) by six helpers (NVIDIA/nccl and nccl-tests, newer
features and releases; PyTorch's and the serving stacks' newer GPU-to-GPU paths; forums and Q&A sites; tool outputs; consumer and
workstation builds; cluster and platform software), who reported a count, classes and kinds only and skipped every thread an
earlier collection had checked; about 1,030 URLs checked, 39 cases (two helpers found none). Judged blind with the session's
rules then (benchmarks/results/eval-diagnosis-fresh59-blind-*.txt). Assigned by collection: every case comes from a thread in no
other part (dev/, holdout/, fresh/ to fresh58/), one case per thread.
fresh60/: a sixty-second part, collected on 2026-11-30 (twenty-fourth session, second wave) by four helpers (the serving
stacks' 2025-2026 threads on the newest GPUs and paths; weight sync between trainer and rollout processes in RL frameworks;
training stacks' 2024-2026 threads; the newer CUDA and NCCL error strings), who reported a count, classes and kinds only and
skipped every thread an earlier collection had checked; about 610 URLs checked, 17 cases. Judged blind with the session's rules
then (benchmarks/results/eval-diagnosis-fresh60-blind-*.txt). Assigned by collection: every case comes from a thread in no other
part (dev/, holdout/, fresh/ to fresh59/), one case per thread.
fresh61/: a sixty-third part, collected on 2026-11-30 (twenty-fourth session, third wave) by four helpers (GPU serving and
cloud platforms; scientific and robotics software; image and video generation; speech and vision toolkits), whose search
budget ran out after a few look-ups each: 1 case. Judged blind with the session's rules then
(benchmarks/results/eval-diagnosis-fresh61-blind-*.txt). Assigned by collection: every case comes from a thread in no other
part (dev/, holdout/, fresh/ to fresh60/), one case per thread.
fresh62/: a sixty-fourth part, collected on 2026-11-30 (twenty-fifth session) by six helpers (GPU serving and cloud
platforms; scientific and robotics software; image and video generation; speech and vision toolkits; cluster and platform
software; Chinese pages), each skipping every thread an earlier collection had checked; about 890 URLs checked, 29 cases.
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh62-blind-*.txt). Assigned by collection:
every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh61/), one case per thread.
fresh63/: a sixty-fifth part, collected on 2026-11-30 (twenty-fifth session, second wave) by three helpers (GPU ecosystems
outside the big Python frameworks; TensorFlow, Keras and JAX threads of 2020-2026; forums and Q&A pages), each skipping every
thread an earlier collection had checked; about 230 URLs checked, 6 cases. Judged blind with the session's rules then
(benchmarks/results/eval-diagnosis-fresh63-blind-*.txt). Assigned by collection: every case comes from a thread in no other
part (dev/, holdout/, fresh/ to fresh62/), one case per thread.
fresh64/: a sixty-sixth part, collected on 2026-11-30 (twenty-fifth session, third wave) by one helper (LLM inference and
fine-tuning engines less mined than vLLM and SGLang), skipping every thread an earlier collection had checked; about 100 URLs
checked, 2 cases. Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh64-blind-*.txt).
Assigned by collection: every case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh63/), one case per
thread.
fresh65/: a sixty-seventh part, collected on 2026-11-30 (twenty-sixth session) by six helpers (HPC communication
software; GPU data-science, retrieval and graph software; Chinese pages; older deep-learning frameworks; virtualization and
NVIDIA's system repositories; rendering and molecular simulation), each skipping every thread an earlier collection had
checked; about 620 URLs checked, 23 cases.
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh65-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh64/), one case per thread.
fresh66/: a sixty-eighth part, collected on 2026-11-30 (twenty-sixth session, second wave) by two helpers (LLM and multimodal model
repositories and small fine-tuning projects; local and self-hosted inference engines), each skipping every thread an earlier
collection had checked; about 230 URLs checked, 1 case.
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh66-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh65/), one case per thread.
fresh67/: a sixty-ninth part, collected on 2026-11-30 (twenty-sixth session, third wave) by two helpers (measurements and tool outputs of
slow or failing GPU-to-GPU paths; small and less-known repositories found through the NCCL and CUDA messages users paste),
each skipping every thread an earlier collection had checked; about 640 URLs checked, 5 cases.
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh67-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh66/), one case per thread.
fresh68/: a sixty-eighth part, collected on 2026-11-30 (twenty-seventh session) by five helpers (threads found through NCCL's own WARN messages of its intra-host transports and of its topology detection, through PyTorch distributed's own messages, through kernel and driver log lines of GPU links, and through the peer-access messages of serving stacks), each skipping every thread an earlier collection had checked; about 940 URLs checked, 17 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh68-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh67/), one case per thread.
fresh69/: a sixty-ninth part, collected on 2026-11-30 (twenty-seventh session, second wave) by four helpers (English write-ups and lab notes, homelab and Reddit copies, HPC centres' documentation, cloud and integrators' cluster tooling; a fifth took NVIDIA's release notes, whose bullets were left out), each skipping every thread an earlier collection had checked; about 270 URLs checked, 19 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh69-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh68/), one case per thread.
fresh70/: a seventieth part, collected on 2026-11-30 (twenty-seventh session, third wave) by three helpers (documents kept in public repositories: notes and reports of consumer and workstation rigs, of datacenter nodes and clusters, and Chinese-language notes), each skipping every thread and document an earlier collection had checked, until the session's search budget ran out; 65 URLs checked, 16 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh70-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh69/), one case per thread.
fresh71/: a seventy-first part, collected on 2026-11-30 (twenty-eighth session, first wave) by five helpers (notebooks, course repositories and Kaggle/Colab setups; the user reports behind downstream projects' workaround pull requests; incident notes kept in public repositories; forums and mailing lists in the stored pages, which gave none; reports written in words in model, trainer and application repositories), each skipping every thread an earlier collection had checked; about 460 URLs checked, 54 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh71-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh70/), one case per thread.
fresh72/: a seventy-second part, collected on 2026-11-30 (twenty-eighth session, second wave) by four helpers (the newest hardware and software; frameworks less mined for multi-GPU trouble; pasted tool outputs and logs; Chinese-language sources), each skipping every thread an earlier collection had checked, collected before the session's first rules and judged after them; about 670 URLs checked, 41 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh72-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh71/), one case per thread.
fresh73/: a seventy-third part, collected on 2026-11-30 (twenty-eighth session, third wave) by two helpers (the classes the corpus holds least; documentation pages with worked problems, through the docs corpus), each skipping every thread an earlier collection had checked, sealed after every rule of the session; about 80 URLs opened (about 150 more known ones skipped in search results), 17 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh73-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh72/), one case per thread.
fresh74/: a seventy-fourth part, collected on 2026-11-30 (twenty-eighth session, fourth wave) by one helper (repositories fetched whole and searched locally for their authors' incident notes), skipping every thread an earlier collection had checked, sealed after every rule of the session; 34 URLs checked, 4 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh74-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh73/), one case per thread.
fresh75/: a seventy-fifth part, collected on 2026-11-30 (twenty-ninth session, one wave) by eight helpers (older stacks of 2013-2020; scientific and HPC applications; rendering, video, mining and system builders; pages in other languages; NVIDIA's infrastructure trackers, which gave none; GPU rental and cloud platforms; Q&A sites and discussions; serving engines less mined), each skipping every thread an earlier collection had checked; about 830 URLs checked, 73 cases judged (one left out after: its text another's word for word), 72 kept
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh75-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh74/), one case per thread.
fresh76/: a seventy-sixth part, collected on 2026-11-30 (twenty-ninth session, second wave) by four helpers (distribution and vendor bug trackers and forges; kernel, PCIe and virtualisation lists and trackers; GPU libraries of other language ecosystems; node health, burn-in and cluster-validation tooling), each skipping every thread an earlier collection had checked, sealed after the session's first rules; about 320 URLs checked, 21 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh76-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh75/), one case per thread.
fresh77/: a seventy-seventh part, collected on 2026-11-30 (twenty-ninth session, third wave) by two helpers (English blog posts and engineering write-ups, which gave none; issues of small and mid-size projects), each skipping every thread an earlier collection had checked, sealed after every rule of the session; about 110 URLs checked, 2 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh77-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh76/), one case per thread.
fresh78/: a seventy-eighth part, collected on 2026-12-01 (thirtieth session) by seven helpers (PCIe links and BAR1; NVLink and NVSwitch hardware; Fabric Manager, NVLS and MIG; home-lab builds; Chinese sources other than CSDN; written descriptions; pasted tool output), each skipping every thread an earlier collection had checked; about 900 URLs checked, 16 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh78-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh77/), one case per thread.
fresh79/: a seventy-ninth part, collected on 2026-12-01 (thirtieth session, second wave) by three helpers told to search the stored documentation pages (full GitHub issue pages) with the words of a fix rather than of an error, each skipping every thread an earlier collection had checked, sealed after the session's ranking rule; about 440 URLs checked, 39 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh79-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh78/), one case per thread.
fresh80/: an eightieth part, collected on 2026-12-01 (thirtieth session, third wave) by two helpers searching the stored issue pages with a fix's words (drivers older than a build's CUDA and builds without NCCL in frameworks other than PyTorch; GPUs hidden from a process), each skipping every thread an earlier collection had checked, sealed after the session's rules for fresh79's misses; about 320 URLs checked, 31 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh80-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh79/), one case per thread.
fresh81/: an eighty-first part, collected on 2026-12-01 (thirty-first session, one wave) by eight helpers searching the stored issue pages and documentation with a fix's words for the P2P classes (IOMMU/ACS, GeForce cards, VMs, NVSwitch hosts, NCCL shared memory and variables, NVLink faults, PCIe links and BAR1, CUDA IPC/MIG/NCCL releases), each skipping every thread an earlier collection had checked; about 780 URLs checked, 19 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh81-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh80/), one case per thread.
fresh82/: an eighty-second part, collected on 2026-12-01 (thirty-first session, second wave) by six helpers searching notes kept in public repositories (exact message words, traced to their repository), pages in Chinese, Japanese and Korean, forums, and GitHub issues of projects other than PyTorch and NCCL, each skipping every thread an earlier collection had checked, sealed after the session's first rules; about 380 URLs checked, 11 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh82-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh81/), one case per thread.
fresh83/: an eighty-third part, collected on 2026-12-01 (thirty-second session) by seven helpers searching troubleshooting and known-issue documentation, release notes and change logs (also in fetched git histories), pull requests that fix peer trouble, older TensorFlow/Caffe/MXNet-era threads, cloud instance types and shared notebooks, pages in other languages, and Hugging Face and GitHub discussions, each skipping every thread an earlier collection had checked, sealed before any rule of the session; about 690 URLs checked, 23 cases staged and judged, 9 release-note bullets of them left out after judging (notreport), 14 kept
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh83-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh82/), one case per thread.
fresh84/: an eighty-fourth part, collected on 2026-12-01 (thirty-second session, second wave) by four helpers searching pasted tool outputs, pasted NCCL and kernel logs, Chinese projects and pages, and cluster and container tooling (Kubernetes, Slurm, Docker), each skipping every thread an earlier collection had checked, release-note bullets excluded, sealed after the session's first rules; about 450 URLs checked, 13 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh84-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh83/), one case per thread.
fresh85/: an eighty-fifth part, collected on 2026-12-01 (thirty-second session, third wave) by two helpers searching the issues of computer-vision, speech and video training projects and of reinforcement-learning and newer LLM trainers, each skipping every thread an earlier collection had checked, release-note bullets excluded, sealed after every rule of the session but the last; about 180 URLs checked, 5 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh85-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh84/), one case per thread.
fresh86/: an eighty-sixth part, collected on 2026-12-01 (thirty-third session) by six helpers searching projects the corpus had barely touched, scientific and HPC applications, Rust/Java/C++ GPU stacks, question-and-answer sites and vendor forums, Japanese and Korean pages and workstation inference projects, each skipping every thread an earlier collection had checked, release-note bullets and AI-written error pages excluded; about 430 URLs checked, 15 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh86-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh85/), one case per thread.
fresh87/: an eighty-seventh part, collected on 2026-12-01 (thirty-third session, second wave) by three helpers searching NVIDIA's own repositories, mailing-list archives and bug trackers, and notes kept as files in public repositories, each skipping every thread an earlier collection had checked; about 270 URLs checked, 7 cases
Judged blind with the session's rules then (benchmarks/results/eval-diagnosis-fresh87-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh86/), one case per thread.
fresh88/: an eighty-eighth part, collected on 2026-12-01 (thirty-fourth session) by five helpers searching NVIDIA's developer forums, question-and-answer sites and community forums, HPC sources (the Open MPI users list, HPC projects and centres), virtualisation, container and scheduler forums and trackers, and pages in languages other than English, each skipping every thread an earlier collection had checked; 158 threads opened, 25 of them not checked before, 2 cases (no fault class: one `none`, one `other`)
Judged blind with the session-start code (benchmarks/results/eval-diagnosis-fresh88-blind-*.txt). Assigned by collection: every
case comes from a thread in no other part (dev/, holdout/, fresh/ to fresh87/), one case per thread.
"""

from __future__ import annotations

import hashlib
from urllib.parse import urlsplit, urlunsplit

SEED = "p2ptop-corpus-2026-11-24"
HOLDOUT_FRACTION = 0.4
PARTS = ("dev", "holdout", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14", "fresh15", "fresh16", "fresh17", "fresh18", "fresh19", "fresh20", "fresh21", "fresh22", "fresh23", "fresh24", "fresh25", "fresh26", "fresh27", "fresh28", "fresh29", "fresh30", "fresh31", "fresh32", "fresh33", "fresh34", "fresh35", "fresh36", "fresh37", "fresh38", "fresh39", "fresh40", "fresh41", "fresh42", "fresh43", "fresh44", "fresh45", "fresh46", "fresh47", "fresh48", "fresh49", "fresh50", "fresh51", "fresh52", "fresh53", "fresh54", "fresh55", "fresh56", "fresh57", "fresh58", "fresh59", "fresh60", "fresh61", "fresh62", "fresh63", "fresh64", "fresh65", "fresh66", "fresh67", "fresh68", "fresh69", "fresh70", "fresh71", "fresh72", "fresh73", "fresh74", "fresh75", "fresh76", "fresh77", "fresh78", "fresh79", "fresh80", "fresh81", "fresh82", "fresh83", "fresh84", "fresh85", "fresh86", "fresh87", "fresh88")
HASHED_PARTS = ("dev", "holdout")  # the parts split_of assigns; fresh/ to fresh88/ are assigned by collection
COLLECTED_PARTS = ("fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14", "fresh15", "fresh16", "fresh17", "fresh18", "fresh19", "fresh20", "fresh21", "fresh22", "fresh23", "fresh24", "fresh25", "fresh26", "fresh27", "fresh28", "fresh29", "fresh30", "fresh31", "fresh32", "fresh33", "fresh34", "fresh35", "fresh36", "fresh37", "fresh38", "fresh39", "fresh40", "fresh41", "fresh42", "fresh43", "fresh44", "fresh45", "fresh46", "fresh47", "fresh48", "fresh49", "fresh50", "fresh51", "fresh52", "fresh53", "fresh54", "fresh55", "fresh56", "fresh57", "fresh58", "fresh59", "fresh60", "fresh61", "fresh62", "fresh63", "fresh64", "fresh65", "fresh66", "fresh67", "fresh68", "fresh69", "fresh70", "fresh71", "fresh72", "fresh73", "fresh74", "fresh75", "fresh76", "fresh77", "fresh78", "fresh79", "fresh80", "fresh81", "fresh82", "fresh83", "fresh84", "fresh85", "fresh86", "fresh87", "fresh88")  # in the order collected; each one's threads are new to every earlier part
FRESH_COLLECTED = "2026-11-24"
FRESH2_COLLECTED = "2026-11-24"  # after fresh/ was measured
FRESH3_COLLECTED = "2026-11-24"  # after fresh2/ was measured
FRESH4_COLLECTED = "2026-11-24"  # after fresh3/ was measured
FRESH5_COLLECTED = "2026-11-24"  # after fresh4/ was measured
FRESH6_COLLECTED = "2026-11-24"  # after fresh5/ was measured
FRESH7_COLLECTED = "2026-11-27"  # after fresh6/ was measured
FRESH8_COLLECTED = "2026-11-27"  # after fresh7/ was collected
FRESH9_COLLECTED = "2026-11-27"  # after fresh8/ was collected
FRESH10_COLLECTED = "2026-11-27"  # after fresh9/ was collected
FRESH11_COLLECTED = "2026-11-27"  # after fresh10/ was collected
FRESH12_COLLECTED = "2026-11-27"  # after fresh11/ was collected
FRESH13_COLLECTED = "2026-11-27"  # after fresh12/ was collected
FRESH14_COLLECTED = "2026-11-28"  # after fresh13/ was judged and opened
FRESH15_COLLECTED = "2026-11-28"  # after fresh14/ was judged and opened
MAX_PER_THREAD = 3  # cases of one thread in any fresh part


def thread_of(url: str) -> str:
    """The thread a case comes from: its URL without fragment, query and trailing slash; host in lower case.

    ``capture:HOST/FILE`` (a capture under ../shared/captures) belongs to the thread of its host."""
    parts = urlsplit(url.strip())
    if parts.scheme == "capture":  # a real capture of the project's hosts: one thread per host
        return "capture:" + parts.path.strip("/").split("/")[0]
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def split_of(url: str) -> str:
    """'holdout' for about HOLDOUT_FRACTION of threads, 'dev' for the rest, fixed by SEED."""
    digest = hashlib.sha256(f"{SEED}|{thread_of(url)}".encode()).hexdigest()
    return "holdout" if int(digest[:8], 16) / 2**32 < HOLDOUT_FRACTION else "dev"
