"""A data-parallel training script that times its own steps, for interpose_overhead.py.

Plain DDP over gloo (started with torchrun's environment), an MLP on synthetic data through a
DataLoader with a DistributedSampler, SGD with momentum. After --warmup steps, every step's
wall time (batch fetch, forward, backward with the gradient allreduce, optimizer step) is
recorded with the CPU time the process used in it (all its threads, gloo's included: the work
the step cost, which other processes' load does not inflate as it does wall time); rank 0
writes "wall cpu" in seconds, one step per line, to --out.
"""
import argparse
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    world = dist.get_world_size()
    samples = args.steps * args.batch * world
    g = torch.Generator().manual_seed(0)
    x = torch.randn(samples, 256, generator=g)
    y = torch.randn(samples, 1, generator=g)
    loader = DataLoader(
        TensorDataset(x, y), batch_size=args.batch, sampler=DistributedSampler(TensorDataset(x, y))
    )
    torch.manual_seed(0)
    model = DDP(
        nn.Sequential(
            nn.Linear(256, args.hidden), nn.ReLU(), nn.Linear(args.hidden, args.hidden), nn.ReLU(),
            nn.Linear(args.hidden, 1),
        )
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    times = []
    start, cpu_start = time.perf_counter(), time.process_time()
    for i, (xb, yb) in enumerate(loader):
        optimizer.zero_grad()
        F.mse_loss(model(xb), yb).backward()
        optimizer.step()
        now, cpu_now = time.perf_counter(), time.process_time()
        if i >= args.warmup:
            times.append((now - start, cpu_now - cpu_start))
        start, cpu_start = now, cpu_now
    if dist.get_rank() == 0:
        with open(args.out, "w") as f:
            f.write("".join(f"{w:.9f} {c:.9f}\n" for w, c in times))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
