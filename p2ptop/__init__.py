"""p2ptop: why two GPUs cannot talk to each other, or talk slowly, and what to do about it."""

__version__ = "0.1.0"
