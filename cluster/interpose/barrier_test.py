"""The barrier's mechanisms (cluster/interpose/python/tessera_interpose/barrier.py) as real
processes, without torch (cluster_interpose_barrier_test; a few seconds).

Property guarded: every rank stops after the same step, and that step is the first rank's
order plus two (the reference is that formula, computed here from the steps at which each
rank raised its need, not by the code under test), whatever the interleaving:

  - orders raised at different steps on different ranks, ranks jittering (random sleeps)
    so that readers come early and late, over shared memory (one host), over TCP (every rank
    its own host key) and mixed (two hosts of two ranks);
  - a rank SIGSTOP'd for 0.5 s while the order file is written (the others wait for it, at
    most one call ahead): still one stop step, and no rank ran ahead of what it had read
    (every call j returned after every rank had entered call j - 1);
  - a rank that dies is reported by the ranks waiting for it, not waited for forever;
  - the order watch sees the order file created or renamed into the directory (inotify),
    or already there, and with polling where inotify is not used.

  /usr/bin/python3 cluster/interpose/barrier_test.py
"""
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "python"))

from tessera_interpose import barrier  # noqa: E402


class DirStore:
    """A stand-in for the c10d store: set() writes a file, get() waits for it."""

    def __init__(self, directory):
        self.directory = directory

    def _path(self, key):
        return os.path.join(self.directory, key.replace("/", "%"))

    def set(self, key, value):
        path = self._path(key)
        with open(path + ".tmp", "w") as f:
            f.write(value)
        os.replace(path + ".tmp", path)

    def get(self, key):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with open(self._path(key), "rb") as f:
                    return f.read()
            except FileNotFoundError:
                time.sleep(0.001)
        raise TimeoutError(key)


def worker(config):
    """One rank: `steps` calls of the exchange, its need raised at call order_at (or when the
    order watch sees the order file); writes what it decided to `out`."""
    rank = config["rank"]
    store = DirStore(config["store"])
    watch = barrier.OrderWatch(config["run_dir"]) if config.get("run_dir") else None
    exchange = barrier.MetaExchange(rank, config["world"], store, host=config["host"])
    store.set(f"ready/{rank}", "1")
    rng = random.Random(config["seed"] * 131 + rank)
    seen = stop = None
    enter, leave = [], []
    result = {"rank": rank, "local": exchange.local_ranks, "tcp": exchange.tcp_ranks}
    try:
        for j in range(config["steps"]):
            if j == config.get("die_at"):
                os._exit(0)
            if seen is None and (0 <= config["order_at"] <= j or (watch and watch.ordered)):
                seen = j
            enter.append(time.monotonic())
            total = exchange.exchange(seen is not None)
            leave.append(time.monotonic())
            if total > 0:
                stop = j + 1  # as the layer: the cut after this call's step
                break
            if rng.random() < config["jitter"]:
                time.sleep(rng.random() * config["sleep_s"])
    except RuntimeError as e:
        result["error"] = str(e)
    exchange.close()
    if watch:
        watch.close()
    result.update(seen=seen, stop=stop, enter=enter, leave=leave)
    with open(config["out"], "w") as f:
        json.dump(result, f)


class Forked:
    """`target(config)` in a child process (fork: no interpreter start-up, no imports)."""

    def __init__(self, target, config):
        self.pid = os.fork()
        if self.pid == 0:
            code = 1
            try:
                target(config)
                code = 0
            finally:
                os._exit(code)

    def wait(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.002)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise TimeoutError(f"rank process {self.pid}")


class BarrierTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="barrier-test-")
        self.addCleanup(shutil.rmtree, self.root, True)
        self.round = 0

    def start(self, hosts, order_at, seed=0, steps=200, jitter=0.3, sleep_s=0.002,
              run_dir=None, die_at=None):
        self.round += 1
        store = os.path.join(self.root, f"store-{self.round}")
        os.makedirs(store)
        procs, outs = [], []
        for rank, host in enumerate(hosts):
            out = os.path.join(self.root, f"out-{self.round}-{rank}.json")
            config = dict(rank=rank, world=len(hosts), store=store, host=host, seed=seed,
                          steps=steps, order_at=order_at[rank], jitter=jitter, sleep_s=sleep_s,
                          run_dir=run_dir, out=out,
                          die_at=die_at[rank] if die_at else None)
            procs.append(Forked(worker, config))
            outs.append(out)
        return procs, outs, DirStore(store)

    def finish(self, procs, outs):
        for p in procs:
            self.assertEqual(p.wait(timeout=60), 0)
        results = []
        for out in outs:
            with open(out) as f:
                results.append(json.load(f))
        return results

    def assert_one_stop(self, results):
        """Every rank stopped after the same step: the first rank's need + 2 (the reference,
        from the steps the ranks raised their needs at)."""
        first = min(r["seen"] for r in results if r["seen"] is not None)
        self.assertEqual([r["stop"] for r in results], [first + 2] * len(results),
                         [(r["rank"], r["seen"], r["stop"]) for r in results])

    def assert_lockstep(self, results):
        """No rank left call j before every rank had entered call j - 1 (published its need
        of step j - 1): no one read an older word for the step's."""
        for r in results:
            for j in range(1, len(r["leave"])):
                for other in results:
                    self.assertGreaterEqual(r["leave"][j], other["enter"][j - 1],
                                            (r["rank"], other["rank"], j))

    def run_orders(self, hosts, orders, seeds):
        for seed in seeds:
            for order_at in orders:
                results = self.finish(*self.start(hosts, order_at, seed=seed)[:2])
                self.assert_one_stop(results)
                self.assert_lockstep(results)
        return results

    ORDERS = ([40, 17, 63, -1], [5, 5, 5, 5], [-1, -1, -1, 30], [0, -1, -1, -1])

    def test_orders_at_different_steps_shared_memory(self):
        results = self.run_orders(["h"] * 4, self.ORDERS, seeds=[1, 2])
        for r in results:  # every peer through the words, none over TCP
            self.assertEqual(sorted(r["local"] + [r["rank"]]), [0, 1, 2, 3])
            self.assertEqual(r["tcp"], [])

    def test_cross_host_path(self):
        results = self.run_orders(["a", "b", "c", "d"], self.ORDERS[:2], seeds=[3])
        for r in results:  # forced: every peer over TCP
            self.assertEqual(r["local"], [])
            self.assertEqual(len(r["tcp"]), 3)
        results = self.run_orders(["a", "a", "b", "b"], self.ORDERS[:2], seeds=[4])
        self.assertEqual([(r["local"], r["tcp"]) for r in results],
                         [([1], [2, 3]), ([0], [2, 3]), ([3], [0, 1]), ([2], [0, 1])])

    def test_slow_rank_stopped_while_the_order_arrives(self):
        run_dir = os.path.join(self.root, "run")
        os.makedirs(run_dir)
        procs, outs, store = self.start(["h"] * 4, [-1] * 4, steps=2000, jitter=1.0,
                                        sleep_s=0.002, run_dir=run_dir)
        for rank in range(4):
            store.get(f"ready/{rank}")
        time.sleep(0.05)
        os.kill(procs[2].pid, signal.SIGSTOP)
        try:
            time.sleep(0.2)
            with open(os.path.join(run_dir, "order.tmp"), "w") as f:
                f.write("checkpoint-exit test\n")
            os.replace(os.path.join(run_dir, "order.tmp"), os.path.join(run_dir, "order"))
            time.sleep(0.3)
        finally:
            os.kill(procs[2].pid, signal.SIGCONT)
        results = self.finish(procs, outs)
        self.assert_one_stop(results)
        self.assert_lockstep(results)
        # The others waited for rank 2 (at most one call ahead of it) while it was stopped.
        waited = max(leave - enter for r in results if r["rank"] != 2
                     for enter, leave in zip(r["enter"], r["leave"]))
        self.assertGreater(waited, 0.25)

    def test_a_dead_rank_is_reported(self):
        procs, outs, _ = self.start(["h"] * 3, [-1] * 3, steps=100, jitter=0.0,
                                    die_at=[None, 20, None])
        results = []
        for p, out in zip(procs, outs):
            self.assertEqual(p.wait(timeout=30), 0)
            if os.path.exists(out):
                with open(out) as f:
                    results.append(json.load(f))
        self.assertEqual(len(results), 2)  # rank 1 exited without a word
        for r in results:
            self.assertIn("exited before step", r.get("error", ""), r["rank"])


class OrderWatchTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="order-watch-test-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def wait_ordered(self, watch, seconds=5):
        deadline = time.monotonic() + seconds
        while not watch.ordered and time.monotonic() < deadline:
            time.sleep(0.001)
        return watch.ordered

    def test_renamed_into_place(self):
        watch = barrier.OrderWatch(self.dir)
        self.addCleanup(watch.close)
        self.assertEqual(watch.method, "inotify")
        for name in ("progress.tmp", "progress", "rank-0.layer"):  # other files: no order
            with open(os.path.join(self.dir, name), "w"):
                pass
        time.sleep(0.05)
        self.assertFalse(watch.ordered)
        with open(os.path.join(self.dir, "order.tmp"), "w") as f:
            f.write("checkpoint-exit\n")
        os.replace(os.path.join(self.dir, "order.tmp"), os.path.join(self.dir, "order"))
        self.assertTrue(self.wait_ordered(watch))

    def test_created(self):
        watch = barrier.OrderWatch(self.dir)
        self.addCleanup(watch.close)
        with open(os.path.join(self.dir, "order"), "w"):
            pass
        self.assertTrue(self.wait_ordered(watch))

    def test_already_there(self):
        with open(os.path.join(self.dir, "order"), "w"):
            pass
        self.assertTrue(barrier.OrderWatch(self.dir).ordered)

    def test_polling(self):
        watch = barrier.OrderWatch(self.dir, use_inotify=False)
        self.addCleanup(watch.close)
        self.assertEqual(watch.method, "poll")
        time.sleep(0.03)
        self.assertFalse(watch.ordered)
        with open(os.path.join(self.dir, "order"), "w"):
            pass
        self.assertTrue(self.wait_ordered(watch))

    def test_close_ends_the_thread(self):
        watch = barrier.OrderWatch(self.dir)
        watch.close()
        deadline = time.monotonic() + 5
        while any(t.name == "tessera-order-watch" for t in __import__("threading").enumerate()):
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.005)


if __name__ == "__main__":
    unittest.main()
