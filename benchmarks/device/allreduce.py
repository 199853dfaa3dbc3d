"""A two-rank all-reduce for the device scripts (x2_diagnosis.sh, x2_prefixed_logs.sh): run under torchrun, one rank per
GPU, five all-reduces of 16 MB, so NCCL sets up its channels and prints them with NCCL_DEBUG=INFO."""


def main() -> None:
    import torch
    import torch.distributed as dist

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank)
    x = torch.ones(1 << 22, device="cuda")
    for _ in range(5):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    print(f"rank {rank}: all_reduce done, x[0] = {x[0].item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
