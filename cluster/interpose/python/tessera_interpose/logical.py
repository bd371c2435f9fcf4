"""Logical ranks for unmodified PyTorch DDP jobs: replica splicing inside one process.

A job submitted with `cluster-ctl submit --logical-ranks` keeps its world size W whatever the
number of processes P <= W it runs on: the agent starts one process per slot (RANK, WORLD_SIZE =
P, the processes' c10d group) and tells each the block of the W ranks it holds
(TESSERA_LOGICAL_WORLD_SIZE, TESSERA_LOGICAL_RANKS; cluster/agent/gang_run.h). When P = W every
process holds one rank and the layer does nothing of what follows. When P < W ("spliced") a
process runs the script's training iteration once per logical rank it holds, one after the
other, and takes the optimizer step once, after the last:

  data      the DataLoader of a DistributedSampler yields, at each step, one batch per logical
            rank r (the sampler's shard of rank r of W), each from a copy of the loader whose
            sampler has rank r; the script's loop body runs once per batch (a "pass");
  RNG       each logical rank has its own torch / Python `random` / numpy global RNG state,
            installed before its batch is yielded and kept when the next rank's is: a rank
            draws the same dropout masks and loader seeds in whichever process it runs;
  gradients in every pass but the last, DDP does not synchronise (require_backward_grad_sync
            is off, as in DDP's no_sync()) and the layer keeps the pass's gradients at the end
            of its backward; the optimizer's step (and an lr scheduler's) in those passes does
            nothing. In the last pass DDP synchronises through a communication hook of the
            layer: per gradient bucket, every logical rank's gradients (the kept ones, and the
            bucket itself for the last) are multiplied by 1/W, as DDP's own reduction does,
            and allreduced on a gloo group of W ranks in which this process holds its logical
            ranks' places (one ProcessGroupGloo per logical rank held, W in all across the
            processes). gloo's ring then performs the same additions on the same operands as
            in a job of W processes: the result is bit-identical to the unspliced job run
            without the layer, not merely close.
  dist      torch.distributed.get_world_size() returns W and get_rank() the logical rank of
            the current pass (so a DistributedSampler built by the script shards for W ranks);
            the collectives of torch.distributed called by the script fail loudly (a
            collective per pass would reduce over processes, not ranks).

What a spliced job must do (docs/cluster.md, "Logical ranks for PyTorch jobs"): draw its
batches from DataLoaders with a DistributedSampler, clear its gradients every iteration, call
backward once per iteration through one DDP model, and issue no collectives of its own. A
violation that the layer can see stops the job with exit code 4 and the reason, instead of
training on wrongly.
"""
import atexit
import copy
import datetime
import gc
import os
import random
import sys
import threading

import torch
import torch.distributed as dist
from torch.utils.data.distributed import DistributedSampler

EXIT_CANNOT_SPLICE = 4

ENV_WORLD = "TESSERA_LOGICAL_WORLD_SIZE"
ENV_RANKS = "TESSERA_LOGICAL_RANKS"

# The script's own collectives in spliced mode (torch.distributed's namespace only: DDP and the
# layer call the implementations in distributed_c10d, which stay as they are).
_COLLECTIVES = (
    "all_reduce", "all_gather", "all_gather_object", "all_to_all", "all_to_all_single",
    "barrier", "broadcast", "broadcast_object_list", "gather", "gather_object", "reduce",
    "reduce_scatter", "scatter", "scatter_object_list", "all_reduce_coalesced",
    "all_gather_coalesced", "monitored_barrier",
)


def first_rank_of_slot(slot, slots, world_size):
    """cluster/job/rank_dealing.h: slot s of P holds ranks [floor(sW/P), floor((s+1)W/P))."""
    return slot * world_size // slots


def block_of(rank, world_size, env):
    """(W, first logical rank, count) of process `rank` of `world_size`; W = world_size and the
    block {rank} without the agent's variables. Raises ValueError on inconsistent ones."""
    text = env.get(ENV_WORLD, "")
    if not text:
        return world_size, rank, 1
    try:
        logical = int(text)
    except ValueError:
        raise ValueError(f"{ENV_WORLD}={text} is not an integer") from None
    if logical < world_size:
        raise ValueError(f"{ENV_WORLD}={logical} is below WORLD_SIZE {world_size}")
    first = first_rank_of_slot(rank, world_size, logical)
    count = first_rank_of_slot(rank + 1, world_size, logical) - first
    told = env.get(ENV_RANKS, "")
    if told and told != f"{first}-{first + count - 1}":
        raise ValueError(f"{ENV_RANKS}={told}, but process {rank} of {world_size} holds ranks "
                         f"{first}-{first + count - 1} of {logical}")
    return logical, first, count


def rng_state():
    numpy = sys.modules.get("numpy")
    return (torch.get_rng_state(), random.getstate(),
            numpy.random.get_state() if numpy is not None else None)


def set_rng_state(state):
    torch_state, py_state, np_state = state
    torch.set_rng_state(torch_state)
    random.setstate(py_state)
    numpy = sys.modules.get("numpy")
    if np_state is not None and numpy is not None:
        numpy.random.set_state(np_state)


def seeded_rng_state(seed):
    """The RNG states a process would have after seeding everything with `seed` (for a logical
    rank that starts without a checkpoint, see LogicalRanks.switch_to)."""
    generator = torch.Generator()
    generator.manual_seed(seed)
    numpy = sys.modules.get("numpy")
    np_state = numpy.random.RandomState(seed % 2**32).get_state() if numpy is not None else None
    return (generator.get_state(), random.Random(seed).getstate(), np_state)


def distributed_sampler(loader):
    """The DistributedSampler that shards `loader`'s data, or None."""
    batch_sampler = loader.batch_sampler
    if batch_sampler is not None:
        inner = getattr(batch_sampler, "sampler", None)
        return inner if isinstance(inner, DistributedSampler) else None
    return loader.sampler if isinstance(loader.sampler, DistributedSampler) else None


def loader_for_rank(loader, rank):
    """A shallow copy of `loader` whose DistributedSampler (a copy, with the primary's epoch,
    seed, ... as they are now) yields logical rank `rank`'s shard."""
    sibling = copy.copy(loader)  # __dict__ copied: DataLoader's __setattr__ guard not involved
    fields = sibling.__dict__
    batch_sampler = loader.batch_sampler
    if batch_sampler is not None:
        sampler = copy.copy(batch_sampler.sampler)
        sampler.rank = rank
        batch_sampler = copy.copy(batch_sampler)
        batch_sampler.sampler = sampler
        fields["batch_sampler"] = batch_sampler
        if loader.sampler is loader.batch_sampler.sampler:
            fields["sampler"] = sampler
    else:
        sampler = copy.copy(loader.sampler)
        sampler.rank = rank
        fields["sampler"] = sampler
    fields["_iterator"] = None
    return sibling


class LogicalRanks:
    """The spliced mode's state in one process: its logical ranks, the pass being run, each
    rank's RNG and kept gradients, and the gloo groups of W ranks (see the module's comment)."""

    def __init__(self, layer, world_size, first, count):
        self.layer = layer
        self.world_size = world_size  # W
        self.ranks = list(range(first, first + count))
        self.count = count
        self.current = 0  # index of the logical rank whose pass runs (whose RNG is live)
        self.rng = [None] * count  # RNG states of the ranks not live (None: live or unset)
        self.grads = [None] * count  # per pass: {id(param): gradient} kept after backward
        self.save_queued = False
        self.in_iteration = 0  # spliced loader iterations yielding now
        self.params = []  # every DDP model's parameters that require gradients
        self.groups = None  # ProcessGroupGloo per logical rank held, each of size W
        self._stores = []
        # The tensors of the latest step's allreduces, held here so that the last reference to
        # them is a Python one, dropped on the main thread (see release()); the previous
        # step's are dropped at the next step's first allreduce, all of them done by then.
        self._in_flight = []
        self._in_flight_stale = False
        self._fresh_seed_base = None

    @property
    def last(self):
        return self.current == self.count - 1

    def text(self):
        first, last = self.ranks[0], self.ranks[-1]
        return str(first) if first == last else f"{first}-{last}"

    # ---- passes and RNG ----------------------------------------------------------------

    def switch_to(self, index):
        """Makes logical rank `index` (of this process's) the one whose pass runs: its RNG
        states live, DDP synchronising only in the last rank's pass."""
        if index != self.current:
            self.rng[self.current] = rng_state()
            state = self.rng[index]
            if state is None:
                # A rank without a checkpoint (the job started spliced): the script seeded the
                # first rank only. Seed this one with the first rank's torch seed + its offset,
                # which is what a script seeding `base + rank` does for torch (not for Python's
                # random or numpy, nor for any other scheme): such a start is not guaranteed to
                # be bit-identical to an unspliced one; every resume from a checkpoint is.
                if self._fresh_seed_base is None:
                    self._fresh_seed_base = torch.initial_seed()
                state = seeded_rng_state(self._fresh_seed_base + index)
                if index == 1:
                    self.layer.log(
                        f"started spliced without a checkpoint: logical ranks "
                        f"{self.ranks[1]}-{self.ranks[-1]} draw from generators seeded with "
                        f"{self._fresh_seed_base} + their offset (not the script's own seeding)")
            set_rng_state(state)
            self.rng[index] = None
            self.current = index
        sync = index == self.count - 1
        for ddp in self.layer.ddps:
            ddp.require_backward_grad_sync = sync

    def rank_rng_states(self):
        """Each logical rank's RNG states now (for the checkpoint)."""
        return [rng_state() if i == self.current else self.rng[i] for i in range(self.count)]

    def restore_rng_states(self, states):
        self.rng = list(states)
        self.current = 0
        set_rng_state(self.rng[0])
        self.rng[0] = None
        self.switch_to(0)

    # ---- the step ------------------------------------------------------------------------

    def step_is_a_pass(self):
        """True in every pass but the last: the optimizer's (or a scheduler's) step does
        nothing, the pass's gradients having been kept."""
        if self.in_iteration <= 0:
            self.layer.die(
                "the optimizer stepped outside an iteration over a DataLoader with a "
                "DistributedSampler; spliced logical ranks take their batches from one",
                EXIT_CANNOT_SPLICE)
        if self.last:
            return False
        if self.grads[self.current] is None:
            self.layer.die(
                f"logical rank {self.ranks[self.current]}'s pass stepped the optimizer without "
                f"a backward through the DDP model", EXIT_CANNOT_SPLICE)
        return True

    def step_done(self):
        self.grads = [None] * self.count
        self._in_flight_stale = True

    # ---- DDP -----------------------------------------------------------------------------

    def connect(self):
        """The gloo groups of W ranks, one per logical rank held (all processes at once: each
        constructor waits for the W - 1 others, so this process's are made in threads)."""
        if self.groups is not None:
            return
        host = os.environ.get("MASTER_ADDR", "127.0.0.1")
        port = int(os.environ.get("MASTER_PORT", "29500"))
        timeout = dist.distributed_c10d.default_pg_timeout
        groups, errors = {}, []

        def make(rank):
            try:
                # A client of the job's TCPStore of its own: one is not safe from two threads.
                store = dist.TCPStore(host, port, is_master=False,
                                      timeout=datetime.timedelta(seconds=300))
                self._stores.append(store)
                prefixed = dist.PrefixStore("tessera_logical", store)
                groups[rank] = dist.ProcessGroupGloo(prefixed, rank, self.world_size, timeout)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(f"logical rank {rank}: {e}")

        threads = [threading.Thread(target=make, args=(r,)) for r in self.ranks]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            self.layer.die("connecting the logical ranks' gloo groups: " + "; ".join(errors),
                           EXIT_CANNOT_SPLICE)
        self.groups = [groups[r] for r in self.ranks]
        atexit.register(self.release)

    def release(self):
        """Destroys the gloo groups and store clients while the interpreter is alive (atexit).

        Left to the interpreter's teardown, a gloo worker thread could drop the last reference
        to a tensor of an allreduce it ran; the tensor's Python object then needs the GIL from
        a thread that is not Python's during finalization, the thread is ended inside a
        noexcept destructor and the process aborts ("terminate called without an active
        exception") after a correct run. Here each group's destructor joins its worker
        threads, idle since reduce() waited for every allreduce (a worker may still be
        dropping its reference to a tensor, which needs no GIL while ours is held), and then
        this thread drops the tensors."""
        self.groups = None
        self._stores.clear()
        gc.collect()  # groups only reachable through a cycle
        self._in_flight = []

    def attach(self, ddp):
        """Registers the hooks on a new DDP model (spliced mode only)."""
        self.connect()
        for param in ddp.module.parameters():
            if param.requires_grad:
                self.params.append(param)
                param.register_hook(self._on_gradient)
        logical = self

        def tessera_logical_ranks_hook(state, bucket):
            return logical.reduce(bucket)

        ddp.register_comm_hook(None, tessera_logical_ranks_hook)
        ddp.require_backward_grad_sync = self.last

    def _on_gradient(self, grad):
        if not self.last and not self.save_queued:
            self.save_queued = True
            # Runs when the whole backward is done (the gradients accumulated into .grad):
            # what DDP would have copied into its buckets.
            torch.autograd.Variable._execution_engine.queue_callback(self._keep_gradients)
        return None

    def _keep_gradients(self):
        self.save_queued = False
        self.grads[self.current] = {
            id(p): p.grad.detach().clone() for p in self.params if p.grad is not None
        }

    def reduce(self, bucket):
        """DDP's communication hook, called in the last pass: every logical rank's part of the
        bucket, scaled by 1/W, allreduced on its gloo group of W ranks."""
        scale = 1.0 / self.world_size  # DDP multiplies by 1/W (not divides) without a hook
        parts = []
        for i in range(self.count):
            if i == self.count - 1:
                part = bucket.buffer()
            else:
                kept = self.grads[i]
                if kept is None:
                    self.layer.die(f"no gradients kept for logical rank {self.ranks[i]}",
                                   EXIT_CANNOT_SPLICE)
                part = torch.cat([
                    (kept[id(p)] if id(p) in kept else torch.zeros_like(p)).reshape(-1)
                    for p in bucket.parameters()
                ])
            parts.append(part.mul_(scale))
        works = [g.allreduce([t]) for g, t in zip(self.groups, parts)]
        if self._in_flight_stale:
            self._in_flight, self._in_flight_stale = [], False
        self._in_flight.append(parts)
        # Waited for here, on this thread, and the result handed to DDP in a future completed
        # here: a callback chained to gloo's futures would be run and destroyed by a gloo
        # thread, which takes the GIL, also while the interpreter is finalizing (the thread is
        # then ended inside a noexcept destructor and the process aborts at exit). The cost:
        # in the last pass, a bucket's allreduce does not overlap the rest of the backward.
        for work in works:
            try:
                work.wait()  # releases the GIL
            except RuntimeError as e:
                self.layer.die(f"an allreduce of the logical ranks failed: {e}",
                               EXIT_CANNOT_SPLICE)
        reduced = torch.futures.Future()
        reduced.set_result(parts[-1])  # the sum, as every rank of the ring has it
        return reduced

    # ---- torch.distributed as the script sees it -----------------------------------------

    def patch_distributed(self):
        original_rank, original_size = dist.get_rank, dist.get_world_size
        logical = self

        def get_rank(group=None):
            return logical.ranks[logical.current] if group is None else original_rank(group)

        def get_world_size(group=None):
            return logical.world_size if group is None else original_size(group)

        dist.get_rank, dist.get_world_size = get_rank, get_world_size
        for name in _COLLECTIVES:
            if hasattr(dist, name):
                setattr(dist, name, self._refusal(name))

    def _refusal(self, name):
        def refused(*args, **kwargs):
            self.layer.die(
                f"the script called torch.distributed.{name}; a job spliced onto logical ranks "
                f"cannot run its own collectives (they would reduce over processes, not ranks)",
                EXIT_CANNOT_SPLICE)

        return refused


class SplicedIterator:
    """A pass over a DataLoader in spliced mode: at each step one batch per logical rank, each
    yielded with that rank's RNG live; the cut (an agreed stop) is taken before a step's first
    batch."""

    def __init__(self, layer, iterators, state):
        self._layer = layer
        self._logical = layer.logical
        self._its = iterators
        self._state = state
        self._next = 0
        self._ended = False
        self._logical.in_iteration += 1

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._its[0]) * len(self._its)

    def _end(self):
        if not self._ended:
            self._ended = True
            self._logical.in_iteration -= 1

    def __del__(self):
        self._end()

    def __next__(self):
        if self._ended:
            raise StopIteration
        index = self._next
        if index == 0 and self._layer.stop_pending is not None:
            self._layer.checkpoint_and_exit()
        self._logical.switch_to(index)
        try:
            batch = next(self._its[index])
        except StopIteration:
            if index != 0:
                self._layer.die(
                    f"logical rank {self._logical.ranks[index]}'s data ended before logical "
                    f"rank {self._logical.ranks[0]}'s", EXIT_CANNOT_SPLICE)
            self._end()
            raise
        if index == 0:
            self._state.yielded += 1
        self._next = (index + 1) % len(self._its)
        return batch
