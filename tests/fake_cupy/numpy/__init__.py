"""SIMULATED numpy: only what the worker's host-link path passes to kernels."""
uint64 = int
uint32 = int
