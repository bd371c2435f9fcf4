"""The interposition layer: transparent preemption of an unmodified PyTorch job.

The cluster agent starts every rank of a command job with this package on PYTHONPATH
(sitecustomize.py installs it when the job imports torch). No line of the training script
changes. The layer wraps four framework entry points:

  torch.optim.Optimizer       (construction and step): the step counter and the barrier
  torch.nn.parallel.DistributedDataParallel (construction): the model whose state is captured
  torch.utils.data.DataLoader (construction and iteration): the data position
  torch.optim.lr_scheduler._LRScheduler (construction): schedulers' state

The barrier (Singularity's meta-allreduce). At every step of the first optimizer (when
Optimizer.step begins) each rank publishes its need (1 once it has seen the order) and reads
every rank's need of the previous step; every rank gets the same sum at the same step, and if
it is positive all ranks stop right after that step. A rank that sees the order when it has
done k steps therefore stops every rank at step k + 2: within two steps of the order, at any
step time. Nothing on the step path makes a system call while nothing is ordered
(barrier.py): a thread of the layer watches the order file with inotify and sets a flag the
step reads, and ranks on one host exchange their needs as 64-bit words in a shared /dev/shm
mapping (a store and a few loads per step); ranks on other hosts as one byte per step over
TCP connections of the layer's own. barrier.py argues why every rank decides alike whatever
the interleaving. (Singularity's second integer, ack, is needed there because its proxy
intercepts asynchronous collectives at arbitrary points; here the decision is taken at a step
boundary, where the job has no collective in flight, from one result all ranks share.)

State capture at the stop step s: rank 0 writes the model's state_dict (every DDP-wrapped
module; without DDP the parameters found through the optimizers' param_groups), every
optimizer's and lr scheduler's state_dict; every rank writes its RNG states (torch, Python
random, numpy) and each DataLoader's position (how many times it was iterated, batches
yielded in the current iteration, the torch RNG state when that iteration began). Files go
to <checkpoint dir>/step-<s>/, then rank 0 points <checkpoint dir>/LATEST at it once every
rank has written (two barriers on the job's process group), and each rank writes
<run dir>/rank-<r>.exit ("checkpointed step=s") and exits with code 0.

Exact resume. A new incarnation runs the script from the top. The layer loads LATEST at
start-up. The script builds its model, optimizer and loaders again; when a DataLoader is
iterated, iterations that ended before the checkpoint yield nothing (no data is loaded, no
step is taken), and the one in progress draws its shuffle from the saved RNG state, skips
the batches already consumed (indices only, when the loader has no workers), and then, at
exactly the saved position, the layer restores the model, optimizers, schedulers and RNG
states. The script's next step is step s + 1 with the same bits as an uninterrupted run.

Logical ranks (logical.py). A job submitted with `cluster-ctl submit --logical-ranks` keeps
its world size W on P < W processes: each process runs the training iteration once per
logical rank it holds (its shard, its RNG, its gradients kept) and steps once, the gradients
reduced through a DDP communication hook on gloo groups of W ranks, so that the result is
bit-identical to the job on W processes without the layer. Checkpoints are per logical rank
whatever the number of processes that wrote them.

What a job must not do is listed in docs/cluster.md ("What the layer captures and what it
cannot"): e.g. keep training state outside the model/optimizer/scheduler/RNG/DataLoader, or
draw its batches without a DataLoader. A resume it cannot do exactly fails loudly (exit
code 3) instead of training on from the wrong point.
"""
import functools
import os
import sys
import time
import weakref

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader

from tessera_interpose import barrier
from tessera_interpose import logical as logical_ranks

_layer = None

EXIT_CANNOT_RESUME = 3

# Rank 0's progress file (step count for the scheduler's SLA accounting and `cluster-ctl list`)
# is rewritten at most this often. Each rewrite creates and renames a file; at every 100 ms
# that cost 3.4 % of the CPU of a 4.5 ms DDP step on the loaded test machine (in-process
# measurement, bench/cluster/interpose_overhead.py --toggle; without the file: +0.95 %), far
# more than the write costs alone on an idle disk, so it is done once a second.
PROGRESS_INTERVAL_S = 1.0


def _write_atomic(path, data, durable=True):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w" if isinstance(data, str) else "wb") as f:
        f.write(data)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)


def _save_atomic(obj, path):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _distributed():
    return dist.is_available() and dist.is_initialized()


class _LoaderState:
    __slots__ = ("index", "iter_count", "yielded", "epoch_rng", "epoch_rngs")

    def __init__(self, index):
        self.index = index
        self.iter_count = 0  # __iter__ calls so far
        self.yielded = 0  # batches yielded by the current iteration (per logical rank)
        self.epoch_rng = None  # torch RNG state when the current iteration began
        self.epoch_rngs = None  # spliced: that state per logical rank held

    def position(self, logical_index):
        rng = self.epoch_rngs[logical_index] if self.epoch_rngs is not None else self.epoch_rng
        return (self.iter_count, self.yielded, rng)


class _CountingIterator:
    """Counts the batches a DataLoader iterator yields, and is where an agreed stop is carried
    out (before the next batch); otherwise the iterator itself."""

    def __init__(self, layer, it, state):
        self._layer = layer
        self._it = it
        self._state = state

    def __iter__(self):
        return self

    def __next__(self):
        if self._layer.stop_pending is not None:
            self._layer.checkpoint_and_exit()
        batch = next(self._it)
        self._state.yielded += 1
        return batch

    def __len__(self):
        return len(self._it)

    def __getattr__(self, name):
        return getattr(self._it, name)


class Layer:
    def __init__(self):
        env = os.environ
        self.rank = int(env.get("RANK", "0"))  # the process's, in the job's c10d group
        self.world_size = int(env.get("WORLD_SIZE", "1"))  # processes
        try:
            # W and this process's logical ranks (logical.py); W = world_size and {rank}
            # unless the job was submitted with --logical-ranks.
            self.logical_world_size, first, count = logical_ranks.block_of(
                self.rank, self.world_size, env)
        except ValueError as e:
            self.die(str(e), logical_ranks.EXIT_CANNOT_SPLICE)
        self.logical_env = bool(env.get(logical_ranks.ENV_WORLD))
        self.logical_ranks = list(range(first, first + count))
        # Spliced: fewer processes than ranks; each runs its logical ranks in turn.
        self.logical = (logical_ranks.LogicalRanks(self, self.logical_world_size, first, count)
                        if self.world_size < self.logical_world_size else None)
        self.workers = int(env.get("TESSERA_JOB_WORKERS", str(self.world_size)))
        self.run_dir = env["TESSERA_RUN_DIR"]
        self.ckpt_dir = env.get("TESSERA_CHECKPOINT_DIR") or os.path.join(
            env["TESSERA_JOB_DIR"], "ckpt"
        )
        self.step = 0  # optimizer steps completed (of the first optimizer)
        self.order_seen_step = None
        self.stop_pending = None  # the agreed stop step, until the cut is taken
        self.need = 0  # 1 once this rank has seen the order
        self.meta = None  # the barrier's exchange with the other ranks (made at the first step)
        self.optimizers = []
        self.modules = []  # the modules DDP wraps
        self.ddps = []
        self.schedulers = []
        self.loader_count = 0
        self.last_progress = 0.0
        self.resume = None
        self.restored = False
        # For bench/cluster/interpose_overhead.py --toggle only: while True, the first
        # optimizer's steps skip the layer (no order check, exchange or progress), so the
        # layer's per-step cost can be measured against steps without it in the same process.
        # Every rank must bypass the same steps (the exchange pairs bytes by step).
        self.bypass = False
        os.makedirs(self.ckpt_dir, exist_ok=True)
        self._load_resume()
        # The stop order, watched by a thread of its own: the step reads a flag, no syscall.
        self.watch = barrier.OrderWatch(self.run_dir)
        _write_atomic(os.path.join(self.run_dir, f"rank-{self.rank}.layer"), f"{os.getpid()}\n")
        if self.logical_env:
            self.log(
                f"installed: process {self.rank} of {self.world_size}, logical ranks "
                f"{self._ranks_text()} of world size {self.logical_world_size}, run "
                f"{env.get('TESSERA_RUN', '?')} on {self.workers} slot(s)"
            )
        else:
            self.log(
                f"installed: rank {self.rank} of world size {self.world_size}, run "
                f"{env.get('TESSERA_RUN', '?')} on {self.workers} slot(s)"
            )

    def _ranks_text(self):
        first, last = self.logical_ranks[0], self.logical_ranks[-1]
        return str(first) if first == last else f"{first}-{last}"

    def log(self, message):
        print(f"tessera-interpose: rank {self.rank}: {message}", file=sys.stderr, flush=True)

    def fail(self, message):
        self.die("cannot resume exactly: " + message, EXIT_CANNOT_RESUME)

    def die(self, message, code):
        self.log(message)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    # ---- resume -------------------------------------------------------------------------

    def _load_resume(self):
        latest = os.path.join(self.ckpt_dir, "LATEST")
        if not os.path.exists(latest):
            return
        with open(latest) as f:
            name = f.read().strip()
        directory = os.path.join(self.ckpt_dir, name)
        state = torch.load(os.path.join(directory, "state.pt"))
        paths = [os.path.join(directory, f"rank-{r}.pt") for r in self.logical_ranks]
        if state["world_size"] != self.logical_world_size or not all(map(os.path.exists, paths)):
            self.fail(
                f"checkpoint {directory} is of world size {state['world_size']}, "
                f"this run has {self.logical_world_size}"
            )
        # One file per rank the process holds (a checkpoint is per rank, whatever process
        # wrote it: taken on 4 processes, it resumes on 2 holding 2 logical ranks each).
        self.resume = {"step": state["step"], "state": state,
                       "ranks": [torch.load(p) for p in paths]}
        self.log(f"will resume from {directory} (step {state['step']})")

    def _restore(self):
        state = self.resume["state"]
        if len(state["models"]) != len(self.modules) or len(state["optimizers"]) != len(
            self.optimizers
        ):
            self.fail(
                f"the checkpoint has {len(state['models'])} DDP model(s) and "
                f"{len(state['optimizers'])} optimizer(s), this run built {len(self.modules)} "
                f"and {len(self.optimizers)} by the time its data loader reached step "
                f"{self.resume['step']}"
            )
        for module, saved in zip(self.modules, state["models"]):
            module.load_state_dict(saved)
        if not self.modules:
            with torch.no_grad():
                for optimizer, groups in zip(self.optimizers, state["params"]):
                    for group, saved in zip(optimizer.param_groups, groups):
                        for param, value in zip(group["params"], saved):
                            param.copy_(value)
        for optimizer, saved in zip(self.optimizers, state["optimizers"]):
            optimizer.load_state_dict(saved)
        for scheduler, saved in zip(self.schedulers, state["schedulers"]):
            scheduler.load_state_dict(saved)
        if self.logical is not None:
            self.logical.restore_rng_states(_saved_rng_states(self.resume["ranks"]))
        else:
            logical_ranks.set_rng_state(_saved_rng_states(self.resume["ranks"])[0])
        self.step = self.resume["step"]
        self.restored = True
        self.log(
            f"resumed at step {self.step} (world size {self.logical_world_size} on "
            f"{self.workers} slot(s))"
            + (f"; logical ranks {self._ranks_text()}" if self.logical_env else "")
        )
        self.report_progress(force=True)

    # ---- data position ------------------------------------------------------------------

    def register_loader(self, loader):
        loader._tessera_state = _LoaderState(self.loader_count)
        self.loader_count += 1

    def iterate_loader(self, loader, original_iter):
        state = getattr(loader, "_tessera_state", None)
        if state is None:
            return original_iter(loader)
        if self.stop_pending is not None:
            self.checkpoint_and_exit()
        state.iter_count += 1
        state.yielded = 0
        saved = None
        if self.resume is not None and not self.restored:
            positions = self.resume["ranks"][0]["loaders"]
            if state.index < len(positions):
                saved = positions[state.index]
        if self.logical is not None and logical_ranks.distributed_sampler(loader) is not None:
            return self._iterate_spliced(loader, original_iter, state, saved)
        if saved is not None:
            saved_iters, saved_yielded, saved_epoch_rng = saved
            if state.iter_count < saved_iters:
                return iter(())  # this pass over the data ended before the checkpoint
            if state.iter_count == saved_iters:
                if saved_epoch_rng is not None:
                    torch.set_rng_state(saved_epoch_rng)
                state.epoch_rng = saved_epoch_rng
                it = original_iter(loader)
                self._skip(loader, it, saved_yielded)
                state.yielded = saved_yielded
                self._restore()
                return _CountingIterator(self, it, state)
        state.epoch_rng = torch.get_rng_state()
        return _CountingIterator(self, original_iter(loader), state)

    def _iterate_spliced(self, loader, original_iter, state, saved):
        """A pass over `loader` yielding, at each step, a batch of each logical rank held
        (logical.py), each from the rank's own shard and RNG, resumed at a saved position."""
        logical = self.logical
        restoring = False
        if saved is not None:
            saved_iters = saved[0]
            if state.iter_count < saved_iters:
                return iter(())  # this pass over the data ended before the checkpoint
            restoring = state.iter_count == saved_iters
        if restoring:
            logical.restore_rng_states(_saved_rng_states(self.resume["ranks"]))
        state.epoch_rngs = [None] * logical.count
        iterators = []
        for i, rank in enumerate(logical.ranks):
            logical.switch_to(i)
            if restoring:
                _, saved_yielded, epoch_rng = self.resume["ranks"][i]["loaders"][state.index]
                if epoch_rng is not None:
                    torch.set_rng_state(epoch_rng)
            state.epoch_rngs[i] = torch.get_rng_state()
            sibling = logical_ranks.loader_for_rank(loader, rank)
            it = original_iter(sibling)
            if restoring:
                self._skip(sibling, it, saved_yielded)
            iterators.append(it)
        logical.switch_to(0)
        if restoring:
            state.yielded = saved[1]
            self._restore()
        return logical_ranks.SplicedIterator(self, iterators, state)

    @staticmethod
    def _skip(loader, it, batches):
        if batches <= 0:
            return
        iterable = isinstance(loader.dataset, torch.utils.data.IterableDataset)
        if loader.num_workers == 0 and not iterable and hasattr(it, "_sampler_iter"):
            # Only the indices: no sample is loaded for the batches already trained on.
            for _ in range(batches):
                next(it._sampler_iter)
            it._num_yielded += batches
        else:
            for _ in range(batches):
                next(it)

    # ---- steps and the barrier ----------------------------------------------------------

    def register_optimizer(self, optimizer):
        self.optimizers.append(optimizer)

    def around_step(self, optimizer, original_step, args, kwargs):
        if self.logical is not None and not self.bypass and self.logical.step_is_a_pass():
            return None  # a logical rank's pass: its gradients are kept, the step comes later
        if not self.optimizers or optimizer is not self.optimizers[0] or self.bypass:
            return original_step(optimizer, *args, **kwargs)
        if self.resume is not None and not self.restored:
            self.fail(
                f"the optimizer stepped before a DataLoader reached the checkpoint's position "
                f"(step {self.resume['step']}); does the job draw its batches without one?"
            )
        if not self.need and self.watch.ordered:
            self.need = 1
            if self.order_seen_step is None:
                self.order_seen_step = self.step
                self.log(f"stop order seen after step {self.step}")
        if not _distributed():
            total = self.need
        else:
            if self.meta is None:
                self.meta = barrier.MetaExchange(
                    self.rank, self.world_size, dist.distributed_c10d._get_default_store(),
                    os.environ.get("MASTER_ADDR", "127.0.0.1"))
                self.log(f"barrier: needs of ranks {self.meta.local_ranks or 'none'} through "
                         f"/dev/shm words, of ranks {self.meta.tcp_ranks or 'none'} over TCP; "
                         f"order watched by {self.watch.method}")
            # This step's need out, every rank's need of the previous step in (published a
            # step ago: in a data-parallel job it is there without waiting, barrier.py).
            total = self.meta.exchange(self.need)
        result = original_step(optimizer, *args, **kwargs)
        self.step += 1
        if self.logical is not None:
            self.logical.step_done()
        self.report_progress()
        if total > 0 and self.stop_pending is None:
            # Every rank read the same needs of the previous step here: all agree on this
            # step. The cut is taken at the next data boundary (the next batch or pass over a
            # DataLoader), once the script has finished this iteration (its lr scheduler step,
            # logging, ...). Without a DataLoader there is no such boundary: the cut is taken
            # here (such a job cannot be resumed exactly).
            self.stop_pending = self.step
            if self.loader_count == 0:
                self.checkpoint_and_exit()
        return result

    def report_progress(self, force=False):
        if self.rank != 0:
            return
        now = time.monotonic()
        if not force and now - self.last_progress < PROGRESS_INTERVAL_S:
            return
        self.last_progress = now
        _write_atomic(
            os.path.join(self.run_dir, "progress"),
            f"step={self.step} total=0 world={self.world_size} workers={self.workers} loss=0\n",
            durable=False,  # for people and the SLA; a lost update is harmless
        )

    def checkpoint_and_exit(self):
        step = self.step
        assert self.stop_pending == step, (self.stop_pending, step)
        name = f"step-{step}"
        directory = os.path.join(self.ckpt_dir, name)
        os.makedirs(directory, exist_ok=True)
        layouts = [_bucket_layout(d) for d in self.ddps]  # on every rank: it may broadcast
        if self.rank == 0:
            state = {
                "step": step,
                "world_size": self.logical_world_size,
                "models": [m.state_dict() for m in self.modules],
                "optimizers": [o.state_dict() for o in self.optimizers],
                "schedulers": [s.state_dict() for s in self.schedulers],
                "ddp_buckets": layouts,
                "params": [
                    [[p.detach().clone() for p in g["params"]] for g in o.param_groups]
                    for o in self.optimizers
                ]
                if not self.modules
                else [],
            }
            _save_atomic(state, os.path.join(directory, "state.pt"))
        rngs = (self.logical.rank_rng_states() if self.logical is not None
                else [logical_ranks.rng_state()])
        for i, rank in enumerate(self.logical_ranks):  # one file per rank, whoever holds it
            torch_rng, py_rng, np_rng = rngs[i]
            mine = {
                "step": step,
                "torch_rng": torch_rng,
                "py_rng": py_rng,
                "np_rng": np_rng,
                "loaders": self._loader_positions(i),
            }
            _save_atomic(mine, os.path.join(directory, f"rank-{rank}.pt"))
        # The implementation's barrier: torch.distributed.barrier is the script's, refused
        # when spliced (logical.py).
        if _distributed():
            dist.distributed_c10d.barrier()  # every rank's file is written
        if self.rank == 0:
            _write_atomic(os.path.join(self.ckpt_dir, "LATEST"), name + "\n")
        if _distributed():
            dist.distributed_c10d.barrier()  # LATEST points at it: the exit reports are true
        _write_atomic(
            os.path.join(self.run_dir, f"rank-{self.rank}.exit"), f"checkpointed step={step}\n"
        )
        self.log(
            f"barrier at step {step} (order seen after step {self.order_seen_step}); "
            f"checkpoint {directory}"
        )
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    def _loader_positions(self, logical_index=0):
        positions = [None] * self.loader_count
        for loader in self._live_loaders:
            state = loader._tessera_state
            positions[state.index] = state.position(logical_index)
        return [p if p is not None else (0, 0, None) for p in positions]

    _live_loaders = weakref.WeakSet()

    def saved_bucket_layout(self, index):
        if self.resume is None or self.restored:
            return None
        layouts = self.resume["state"].get("ddp_buckets", [])
        return layouts[index] if index < len(layouts) else None


def _saved_rng_states(rank_files):
    return [(m["torch_rng"], m["py_rng"], m.get("np_rng")) for m in rank_files]


def _bucket_layout(ddp):
    """The gradient buckets of a DDP model as lists of parameter positions, in reducer order,
    once DDP has rebuilt them in backward order (None before). A fresh DDP reduces its first
    iteration in one bucket in parameter order; a resumed job must reduce with the layout the
    uninterrupted run uses at that step, or the allreduce sums in a different order (gloo's
    ring splits the flat bucket by position) and the last bits differ."""
    if not getattr(ddp, "_has_rebuilt_buckets", False):
        # DDP rebuilds in the forward after the first backward. Do it now (every rank is at
        # the same data boundary; the rebuild broadcasts rank 0's layout): the uninterrupted
        # run's next step uses that layout. No backward yet: the layout DDP started with.
        if ddp.reducer._rebuild_buckets():
            ddp._has_rebuilt_buckets = True
        else:
            return getattr(ddp, "_tessera_layout", None)
    params = [p for p in ddp.module.parameters() if p.requires_grad]
    position = {p.data_ptr(): i for i, p in enumerate(params)}
    buckets = sorted(ddp.reducer._get_zeros_like_grad_buckets(), key=lambda b: b.index())
    return [[position[t.data_ptr()] for t in b.parameters()] for b in buckets]


def install():
    """Wraps the framework entry points (idempotent)."""
    global _layer
    if _layer is not None:
        return _layer
    layer = Layer()
    _layer = layer

    loader_init = DataLoader.__init__
    loader_iter = DataLoader.__iter__

    @functools.wraps(loader_init)
    def init_loader(self, *args, **kwargs):
        loader_init(self, *args, **kwargs)
        layer.register_loader(self)
        Layer._live_loaders.add(self)

    @functools.wraps(loader_iter)
    def iterate(self):
        return layer.iterate_loader(self, loader_iter)

    DataLoader.__init__ = init_loader
    DataLoader.__iter__ = iterate

    optimizer_init = torch.optim.Optimizer.__init__

    @functools.wraps(optimizer_init)
    def init_optimizer(self, *args, **kwargs):
        optimizer_init(self, *args, **kwargs)
        cls = type(self)
        step = cls.step
        if not getattr(step, "_tessera", False):

            @functools.wraps(step)  # keeps torch's "hooked" mark: torch does not wrap it again
            def step_with_barrier(opt, *a, **k):
                return layer.around_step(opt, step, a, k)

            step_with_barrier._tessera = True
            cls.step = step_with_barrier
        layer.register_optimizer(self)

    torch.optim.Optimizer.__init__ = init_optimizer

    ddp = torch.nn.parallel.DistributedDataParallel
    ddp_init = ddp.__init__

    @functools.wraps(ddp_init)
    def init_ddp(self, module, *args, **kwargs):
        layout = layer.saved_bucket_layout(len(layer.ddps))
        if layout is None:
            ddp_init(self, module, *args, **kwargs)
        else:
            # Resuming: start with the bucket layout the interrupted run had reached (DDP
            # reverses the list it gets).
            compute = dist._compute_bucket_assignment_by_size

            def saved_assignment(parameters, limits, *rest, **kw):
                return list(reversed(layout)), [limits[-1]] * len(layout)

            dist._compute_bucket_assignment_by_size = saved_assignment
            try:
                ddp_init(self, module, *args, **kwargs)
            finally:
                dist._compute_bucket_assignment_by_size = compute
            self._tessera_layout = layout
        layer.ddps.append(self)
        layer.modules.append(self.module)
        if layer.logical is not None:
            if self.will_sync_module_buffers():
                layer.die(
                    "the DDP model has buffers that DDP broadcasts at every forward (e.g. "
                    "BatchNorm's running statistics); they cannot be kept per logical rank",
                    logical_ranks.EXIT_CANNOT_SPLICE)
            layer.logical.attach(self)

    ddp.__init__ = init_ddp

    scheduler_base = torch.optim.lr_scheduler._LRScheduler
    scheduler_init = scheduler_base.__init__

    @functools.wraps(scheduler_init)
    def init_scheduler(self, *args, **kwargs):
        scheduler_init(self, *args, **kwargs)
        layer.schedulers.append(self)
        cls = type(self)
        if layer.logical is not None and not getattr(cls.step, "_tessera", False):
            step = cls.step

            @functools.wraps(step)
            def step_after_last_pass(scheduler, *a, **k):
                logical = layer.logical
                if logical.in_iteration > 0 and not logical.last:
                    return None  # a logical rank's pass: the schedule moves once per step
                return step(scheduler, *a, **k)

            step_after_last_pass._tessera = True
            cls.step = step_after_last_pass

    scheduler_base.__init__ = init_scheduler
    if layer.logical is not None:
        layer.logical.patch_distributed()
    return layer
