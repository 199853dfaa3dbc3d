#!/usr/bin/env python3
# NCCL refusing how a program calls it, for real, through ctypes on the libnccl.so.2 PyTorch loads (NCCL_DEBUG=WARN):
#   1. ncclGroupEnd() outside a group: group.cc's WARN "ncclGroupEnd: not in a group call", ncclInvalidUsage;
#   2. a one-rank communicator sending to itself without a matching receive: enqueue.cc's WARN "Trying to send to self
#      without a matching recv". The WARN lines go to stdout; the return codes are printed after them.
import ctypes, os, sys
import torch
import nvidia.nccl as n
d = os.path.join(list(n.__path__)[0], "lib")
lib = ctypes.CDLL(os.path.join(d, sorted(os.listdir(d))[0]))
lib.ncclGetErrorString.restype = ctypes.c_char_p
which = sys.argv[1]
if which == "groupend":
    r = lib.ncclGroupEnd()
    sys.stdout.flush()
    print(f"ncclGroupEnd returned {r}: {lib.ncclGetErrorString(r).decode()}")
else:
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
