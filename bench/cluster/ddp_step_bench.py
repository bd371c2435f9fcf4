"""A data-parallel training script that times its own steps, for interpose_overhead.py.

Plain DDP over gloo (started with torchrun's environment), an MLP on synthetic data through a
DataLoader with a DistributedSampler, SGD with momentum. After --warmup steps, every step's
wall time (batch fetch, forward, backward with the gradient allreduce, optimizer step) is
recorded with the CPU time the process used in it (all its threads, gloo's included: the work
the step cost, which other processes' load does not inflate as it does wall time); every
process writes "wall cpu" in seconds, one iteration per line: process 0 (the RANK variable) to
--out, process r to --out.rank<r>. Process 0 also writes the SHA-256 of the final parameters
to --out.params (so that runs with and without the layer, spliced or not, can be compared).

Under the layer's logical ranks (TESSERA_LOGICAL_WORLD_SIZE, a process holding k ranks) the
loop body runs once per logical rank: an iteration is then a pass, and k consecutive passes
(from a multiple of k) make one step; --warmup counts iterations.

With --toggle N (under the interposition layer only) the timed steps come in blocks of N that
alternate, ABBA-fashion, between the layer bypassed and the layer at work (Layer.bypass): a
third column says which (0: bypassed, 1: at work), so that the layer's per-step cost is
measured against neighbouring steps of the same process.

With --gate DIR --block N (interleaved_overhead.py) the timed steps come in blocks of N, and
before each block the process waits for its turn: it writes one byte to the FIFO
DIR/arrived-<process> and reads one from DIR/go-<process>. A controller runs two jobs (without
and with the layer) side by side this way, one block at a time, so that both see the same
machine within a fraction of a second; a waiting job blocks in read() and uses no CPU. Once
its last block is done a process arrives once more and waits to be released, so that no job's
teardown overlaps the other's timed steps. The wait is outside the timed steps: the clock of a
block's first step starts when the turn is given, before its batch is fetched.
"""
import argparse
import gc
import hashlib
import os
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
    parser.add_argument("--toggle", type=int, default=0)
    parser.add_argument("--gate", default="", help="directory of the turn FIFOs (see above)")
    parser.add_argument("--block", type=int, default=0, help="steps per turn with --gate")
    parser.add_argument("--gc-off", action="store_true",
                        help="disable Python's garbage collector before the loop (diagnosis)")
    args = parser.parse_args()
    layer = None
    if args.toggle:
        from tessera_interpose import layer as interpose  # noqa: PLC0415 - only when toggling

        layer = interpose._layer
        if layer is None:
            raise SystemExit("--toggle needs the interposition layer installed")
    process = int(os.environ["RANK"])
    gate = Gate(args.gate, process) if args.gate else None
    if gate is not None and (args.block <= 0 or args.warmup <= 0
                             or (args.steps - args.warmup) % args.block):
        raise SystemExit("--gate needs --warmup >= 1 and --block N dividing the timed steps "
                         "(--steps - --warmup)")
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
    on = 1
    if args.gc_off:
        gc.disable()
    for i, (xb, yb) in enumerate(loader):
        if layer is not None and i >= args.warmup:
            block = (i - args.warmup) // args.toggle
            on = 1 if block % 4 in (1, 2) else 0  # off, on, on, off, off, on, on, ...
            layer.bypass = not on
        optimizer.zero_grad()
        F.mse_loss(model(xb), yb).backward()
        optimizer.step()
        now, cpu_now = time.perf_counter(), time.process_time()
        if i >= args.warmup:
            times.append((now - start, cpu_now - cpu_start, on))
        start, cpu_start = now, cpu_now
        if gate is not None and i + 1 >= args.warmup and (i + 1 - args.warmup) % args.block == 0:
            # Before the next block (the next batch's fetch is its first step's), or, after
            # the last one, until every job's blocks are done.
            gate.wait_turn()
            start, cpu_start = time.perf_counter(), time.process_time()
    # The process's own number (RANK): under logical ranks dist.get_rank() is a pass's
    # logical rank.
    with open(args.out if process == 0 else f"{args.out}.rank{process}", "w") as f:
        if layer is None:
            f.write("".join(f"{w:.9f} {c:.9f}\n" for w, c, _ in times))
        else:
            f.write("".join(f"{w:.9f} {c:.9f} {on}\n" for w, c, on in times))
    if process == 0:
        digest = hashlib.sha256()
        for p in model.parameters():
            digest.update(p.detach().numpy().tobytes())
        with open(args.out + ".params", "w") as f:
            f.write(digest.hexdigest() + "\n")
    dist.destroy_process_group()


class Gate:
    """The process's turn FIFOs (--gate): arrive, then wait for the controller's byte."""

    def __init__(self, directory, process):
        # Opening a FIFO blocks until the other end opens it: the controller opens its ends
        # for both jobs' processes before it reads any arrival.
        self.arrived = open(os.path.join(directory, f"arrived-{process}"), "wb", buffering=0)
        self.go = open(os.path.join(directory, f"go-{process}"), "rb", buffering=0)

    def wait_turn(self):
        self.arrived.write(b"a")
        if self.go.read(1) != b"g":
            raise SystemExit("the controller went away")


if __name__ == "__main__":
    main()
