#!/usr/bin/env bash
# The forty-first session's check on a one-GPU machine: errors PyTorch, CuPy and NCCL print there for real (provoked on
# purpose) and a healthy NCCL INFO log of this host, each through `p2ptop explain` on the live host as printed and as a
# log system hands it over (JSON-lines records, a service's answer printed by jq, Loki's and journalctl -r's newest-first
# lines with their times, Kibana's rows, a blank line after every line, Docker's json-file): r81_forms.sh with those forms.
# Run after session_check.sh (its /tmp/v holds the p2ptop wheel) from the repository root:
#   run(kind=nvidia-h200, carry=[".whl", ".carry"]): bash benchmarks/device/r80_record_forms.sh
FORMS=jsonl,jq,jsonstr,newest,journalr,kibana,blankdouble,dockerjson exec bash "$(dirname "$0")/r81_forms.sh"
