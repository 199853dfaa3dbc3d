#!/usr/bin/env python3
"""NCCL refusing how a program calls it, for real, through ctypes on the libnccl.so.2 PyTorch loads (run with
NCCL_DEBUG=WARN; the WARN lines go to stdout, the return codes are printed after them):

    python3 benchmarks/device/nccl_refused_calls.py groupend   # ncclGroupEnd() outside a group: group.cc's WARN
                                                               # "ncclGroupEnd: not in a group call", ncclInvalidUsage
    python3 benchmarks/device/nccl_refused_calls.py selfsend   # a one-rank communicator sending to itself without a
                                                               # receive: enqueue.cc's "Trying to send to self ..."

Needs a GPU, PyTorch and its nvidia-nccl wheel (the device machine); benchmarks/device/nccl_warns.sh runs both."""

import ctypes
import os
import sys


def main(argv=None) -> int:
    import torch
    import nvidia.nccl as n

    which = (argv if argv is not None else sys.argv[1:])[0]
    d = os.path.join(list(n.__path__)[0], "lib")
    lib = ctypes.CDLL(os.path.join(d, sorted(os.listdir(d))[0]))
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    if which == "groupend":
        r = lib.ncclGroupEnd()
        sys.stdout.flush()
        print(f"ncclGroupEnd returned {r}: {lib.ncclGetErrorString(r).decode()}")
        return 0
    torch.cuda.init()
    comm = ctypes.c_void_p()
    devs = (ctypes.c_int * 1)(0)
    r = lib.ncclCommInitAll(ctypes.byref(comm), 1, devs)
    print(f"ncclCommInitAll returned {r}")
    t = torch.ones(16, device="cuda")
    s = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    r = lib.ncclSend(ctypes.c_void_p(t.data_ptr()), ctypes.c_size_t(16), 7, 0, comm, s)  # 7 = ncclFloat32
    torch.cuda.synchronize()
    sys.stdout.flush()
    print(f"ncclSend to self returned {r}: {lib.ncclGetErrorString(r).decode()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
