"""The prose reader's seventh round (descriptions): a release named as where the trouble starts or as a regression
("starting from nccl-X", "since NCCL X", "NCCL X has a performance regression", "upgrading NCCL ... causes ..."), a
regression of speed as slowness, nccl-tests' "#wrong" transfers said in words, and an NCCL variable said to bring the
trouble (set in a condition the trouble follows, named as its cause, or removed to fix it) with the KB entry that
fact feeds (nccl/trouble-with-variable-set, nccl_env_misconfig).

Real sentences carry their thread (none of these threads is in benchmarks/corpus); the short sentences without a
source are the family's plain wording or sentences that must not fire."""

from __future__ import annotations

import pytest

from .kbtools import answer, host_facts


# ---- a release named as where the trouble starts, or as a regression -------------------------------------------------

@pytest.mark.parametrize("text,what,source", [
    # the title of the issue
    ("Upgrading NCCL from 2.22 to 2.24/2.29 causes significant performance regression in collective operations due to "
     "increased local memory instructions (ldl/stl).", "nccl", "https://github.com/NVIDIA/nccl/issues/1997"),
    ("Starting from nccl-2.22.3 I see all_reduce_perf hang on 8 GPUs.", "nccl", None),
    ("Since NCCL 2.19 the all-reduce between the GPUs hangs.", "nccl", None),
    ("There is a regression in the 545 driver: P2P copies between the GPUs give wrong results.", "driver", None),
    ("从 NCCL 2.19 开始多卡训练卡住", "nccl", None),
])
def test_a_release_said_to_start_the_trouble_is_broken_by(text, what, source):
    assert host_facts(text).get("text.broken_by") == what, source


@pytest.mark.parametrize("text", [
    "Since 2 weeks the job hangs on the GPUs.",          # a duration, not a release
    "Starting from step 300 the loss is NaN on 4 GPUs.",  # a training step
    "NCCL 2.18.3 is installed and the all-reduce hangs.",  # a version named, nothing said of it
    "Since NCCL 2.19 everything works fine on our GPUs.",  # no symptom: nothing began
])
def test_a_version_or_number_without_a_start_of_trouble_is_not_broken_by(text):
    assert "text.broken_by" not in host_facts(text)


@pytest.mark.parametrize("text", [
    "NCCL 2.20 has a performance regression on 8 GPUs.",
    "We see a bandwidth regression in all_reduce_perf between the GPUs.",
    "升级后多卡通信性能回退明显",
])
def test_a_regression_of_speed_is_slowness(text):
    assert host_facts(text).get("symptom.slow") is True


def test_a_release_with_a_performance_regression_is_offered_the_nccl_release_entry():
    classes = [a[0] for a in answer("NCCL 2.20.3 has a performance regression in all_reduce_perf on 8 GPUs.")[:3]]
    assert "nccl_version_bug" in classes


def test_wrong_transfers_said_in_words_are_wrong_results():
    assert host_facts("I am seeing occasional `#wrong` transfers reported by all_reduce_perf on 2 nodes.").get(
        "symptom.wrong_results") is True
    # nccl-tests' own header names the column, it reports nothing
    assert "symptom.wrong_results" not in host_facts(
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong")


# ---- an NCCL variable said to bring the trouble ---------------------------------------------------------------------

@pytest.mark.parametrize("text,var,source", [
    ("Setting NCCL_GRAPH_FILE causes NCCL to fail on NC96ads_A100_v4 when run on < 4 GPU's.", "NCCL_GRAPH_FILE",
     "https://github.com/Azure/azurehpc/pull/730"),
    ("When NCCL_ALGO=Tree is set, all_reduce_perf hangs at 1 GB on 8 GPUs.", "NCCL_ALGO", None),
    ("If I set NCCL_MIN_NCHANNELS=32 the training gets very slow.", "NCCL_MIN_NCHANNELS", None),
    ("Unsetting NCCL_NET_GDR_LEVEL fixed it, the GPUs talk again.", "NCCL_NET_GDR_LEVEL", None),
    ("设置 NCCL_P2P_LEVEL=NVL 后多卡训练卡住", "NCCL_P2P_LEVEL", None),
])
def test_a_variable_said_to_bring_the_trouble_is_caused_by_env(text, var, source):
    assert host_facts(text).get("symptom.caused_by_env") == var, source


@pytest.mark.parametrize("text,source", [
    # the variable set as the workaround (the fault is elsewhere: a protocol bug, ACS ...)
    ("i found that if I set NCCL_PROTO with specific value(no matter it's LL, LL128, Simple or combination) it's working.",
     "https://github.com/NVIDIA/nccl/issues/354"),
    ("When I set NCCL_P2P_DISABLE=1 the hang goes away.", None),
    ("A bare all-reduce hangs at 2 ranks, and completes at 2 with NCCL_P2P_DISABLE=1.", None),
    # a debug variable only prints; a removal that did not help says nothing of the variable
    ("With NCCL_DEBUG=INFO set I get this error on the GPUs.", None),
    ("Removing NCCL_P2P_LEVEL did not fix the hang on the GPUs.", None),
    # set, with no trouble following it
    ("We set NCCL_SOCKET_IFNAME=eth0 on every node.", None),
])
def test_a_variable_set_as_a_workaround_or_without_trouble_is_not_the_cause(text, source):
    assert "symptom.caused_by_env" not in host_facts(text), source


def test_the_variable_said_to_cause_it_offers_the_env_entry_first():
    top = answer("Setting NCCL_GRAPH_FILE causes NCCL to fail on NC96ads_A100_v4 when run on < 4 GPU's. If also causes "
                 "NCCL tests to run significantly slower on one NC48ads_A100_v4")
    assert top[0][3] == "nccl/trouble-with-variable-set" and top[0][1] in ("likely", "possible")


def test_a_workaround_variable_does_not_offer_the_env_entry():
    said = answer("The job hangs on 4 GPUs; when I set NCCL_P2P_DISABLE=1 it works.")
    assert not any(a[3] == "nccl/trouble-with-variable-set" for a in said)


# ---- one job's GPUs said to sit in different containers --------------------------------------------------------------

@pytest.mark.parametrize("text,source", [
    ("We would like to split workloads between two container but still allow them to communicate though shared IPC.",
     "https://github.com/moby/moby/pull/9074"),
    ("Two ranks run in two containers respectively and are not able to communicate through NVLink.", None),
    ("I start two docker containers on the same node, each with 4 GPUs, and run all_reduce_perf across them.", None),
    ("NCCL between different containers only reaches PCIe speed.", None),
    ("两个容器之间的多卡通信走不了 P2P", None),
])
def test_a_job_split_across_containers_is_said(text, source):
    assert host_facts(text).get("host.split_across_containers") is True, source


@pytest.mark.parametrize("text", [
    "We run the training inside a docker container with 8 GPUs.",
    "Start the container with --ipc=host.",
    "The container has access to all GPUs.",
])
def test_one_container_is_no_split(text):
    assert "host.split_across_containers" not in host_facts(text)


def test_not_able_to_communicate_is_a_failure():
    assert host_facts("The two GPUs are not able to communicate through NVLink.").get("symptom.fails") is True
    assert "symptom.fails" not in host_facts("The two GPUs are able to communicate through NVLink.")


def test_ranks_split_across_containers_put_the_cross_container_ipc_class_first():
    text = "The NCCL ranks in separate containers on the same host are not able to communicate through P2P between the GPUs."
    assert answer(text)[0][0] == "cuda_ipc_cross_boundary"
