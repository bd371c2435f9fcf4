"""A plain PyTorch DDP training script, written for torchrun and nothing else: it reads the
process group from the environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), shards a
synthetic regression set with DistributedSampler, and trains an MLP with dropout (per-rank
RNG), SGD with momentum and a StepLR schedule. It knows nothing of the cluster: the live
test runs it unmodified, once with plain processes and once under the scheduler.

At the end rank 0 writes "params <sha256 of every parameter's bytes> step <steps taken by
this process>" to --out.
"""
import argparse
import hashlib
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
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--samples", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--step-sleep-ms", type=float, default=0.0)
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()

    data_rng = torch.Generator().manual_seed(1234)
    x = torch.randn(args.samples, 32, generator=data_rng)
    teacher = torch.randn(32, 1, generator=data_rng)
    y = torch.tanh(x @ teacher) + 0.1 * torch.randn(args.samples, 1, generator=data_rng)
    dataset = TensorDataset(x, y)

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(32, args.hidden), nn.Tanh(), nn.Dropout(0.1), nn.Linear(args.hidden, 1)
    )
    ddp = DDP(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=100, gamma=0.5)
    sampler = DistributedSampler(dataset, shuffle=True, seed=7)
    loader = DataLoader(dataset, batch_size=args.batch, sampler=sampler)
    torch.manual_seed(100 + rank)  # dropout masks differ per rank

    steps = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = F.mse_loss(ddp(xb), yb)
            loss.backward()
            optimizer.step()
            schedule.step()
            steps += 1
            if rank == 0 and steps % 50 == 0:
                print(f"epoch {epoch} step {steps} loss {loss.item():.6f}", flush=True)
            if args.step_sleep_ms > 0:
                time.sleep(args.step_sleep_ms / 1000)

    if rank == 0 and args.out:
        digest = hashlib.sha256()
        for name, tensor in model.state_dict().items():
            digest.update(name.encode())
            digest.update(tensor.detach().numpy().tobytes())
        with open(args.out, "w") as f:
            f.write(f"params {digest.hexdigest()} step {steps}\n")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
