"""Logical ranks for an unmodified PyTorch DDP script (cluster/interpose/python/
tessera_interpose/logical.py), as real processes over gloo, outside the scheduler
(cluster_interpose_logical_py_test; the live test with the scheduler is in ddp_live_test.cc).

The script is testdata/ddp_train.py, unchanged: 4 ranks, DistributedSampler, dropout drawn from
a per-rank seed, SGD with momentum, StepLR. The reference is that script run as torchrun runs
it, 4 processes without the layer (gloo's ring allreduce). Under the layer with
TESSERA_LOGICAL_WORLD_SIZE=4 (what the agent gives a job submitted with --logical-ranks):

  - stopped by the barrier on 4 processes, resumed spliced on 2 (logical ranks 0-1 and 2-3),
    stopped again, resumed on 3 (ranks 0, 1 and 2-3) to the end: the final parameters equal
    the reference's bit for bit, and each run resumed at exactly the step the previous one
    stopped at;
  - started spliced on 2 processes without a checkpoint: bit-identical too, because the
    script seeds torch with 100 + rank, which is the scheme the layer assumes for the ranks a
    process did not seed itself (docs/cluster.md says so);
  - a spliced script that calls a collective of its own stops with exit code 4.

  /usr/bin/python3 cluster/interpose/logical_ranks_py_test.py
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import job_orders

HERE = os.path.dirname(os.path.abspath(__file__))
LAYER = os.path.join(HERE, "python")
SCRIPT = os.path.join(HERE, "testdata", "ddp_train.py")
ARGS = ["--epochs", "3", "--samples", "4096", "--batch", "16"]  # 64 steps an epoch at W = 4


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LogicalRanksPyTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="logical-ranks-py-test-")
        self.job = os.path.join(self.root, "job")
        self.passed = False

    def tearDown(self):
        if self.passed:  # kept for a look otherwise
            shutil.rmtree(self.root, ignore_errors=True)

    def start(self, processes, name, run=None, extra=(), script=SCRIPT):
        """The script on `processes` processes; under the layer (logical world size 4) when
        `run` names a run number. Returns (processes, out file, run dir)."""
        port = free_port()
        out = os.path.join(self.root, name + ".txt")
        run_dir = None
        procs = []
        for rank in range(processes):
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(processes),
                       LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(processes),
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1",
                       PYTHONFAULTHANDLER="1")  # a crash's log shows every thread's stack
            for key in list(env):
                if key.startswith("TESSERA_") or key == "PYTHONPATH":
                    del env[key]
            if run is not None:
                run_dir = os.path.join(self.job, "runs", str(run))
                os.makedirs(run_dir, exist_ok=True)
                env.update(PYTHONPATH=LAYER, TESSERA_RUN_DIR=run_dir, TESSERA_JOB_DIR=self.job,
                           TESSERA_RUN=str(run), TESSERA_JOB_WORKERS=str(processes),
                           TESSERA_CHECKPOINT_DIR=os.path.join(self.job, "ckpt"),
                           TESSERA_LOGICAL_WORLD_SIZE="4")
            with open(os.path.join(self.root, f"{name}-rank{rank}.log"), "w") as log:
                procs.append(subprocess.Popen([sys.executable, script] + ARGS + list(extra) +
                                              ["--out", out], env=env, stdout=log,
                                              stderr=subprocess.STDOUT))
        return procs, out, run_dir

    def wait(self, procs, name, expect=0):
        for rank, p in enumerate(procs):
            self.assertEqual(p.wait(timeout=300), expect, f"{name} rank {rank}: see {self.root}")

    def logs(self, name):
        texts = []
        for f in sorted(os.listdir(self.root)):
            if f.startswith(name + "-rank"):
                with open(os.path.join(self.root, f)) as log:
                    texts.append(log.read())
        return texts

    def params(self, out):
        with open(out) as f:
            return re.search(r"params ([0-9a-f]+)", f.read()).group(1)

    def reference(self):
        procs, out, _ = self.start(4, "reference")
        self.wait(procs, "reference")
        return self.params(out)

    def order_after(self, run_dir, procs, step):
        """Writes the run's stop order once rank 0 reports `step` (its progress file)."""
        if not job_orders.order_after(run_dir, step,
                                      lambda: all(p.poll() is None for p in procs),
                                      time.monotonic() + 240):
            self.fail(f"rank 0 did not reach step {step}: see {self.root}")

    def stopped_at(self, name):
        steps = {int(m) for log in self.logs(name)
                 for m in re.findall(r"barrier at step (\d+)", log)}
        self.assertEqual(len(steps), 1, f"{name}: the processes stopped at {steps}")
        return steps.pop()

    def resumed_at(self, name, ranks_texts):
        found = [re.search(r"resumed at step (\d+) \(world size 4 on \d+ slot\(s\)\); logical "
                           r"ranks (\S+)", log) for log in self.logs(name)]
        self.assertTrue(all(found), f"{name} did not resume: see {self.root}")
        self.assertEqual([m.group(2) for m in found], ranks_texts)
        steps = {int(m.group(1)) for m in found}
        self.assertEqual(len(steps), 1)
        return steps.pop()

    def test_shrunk_to_two_processes_and_grown_to_three_ends_bit_identical(self):
        reference = self.reference()
        # Run 1: 4 processes, one rank each (not spliced), stopped by the barrier.
        # (Rank 0's progress file is up to a second old: the steps are slowed down so that
        # the stops fall where the test wants them.)
        procs, _, run_dir = self.start(4, "run1", run=1, extra=["--step-sleep-ms", "20"])
        self.order_after(run_dir, procs, 10)
        self.wait(procs, "run1")
        s1 = self.stopped_at("run1")
        # Run 2: spliced, 2 processes holding ranks 0-1 and 2-3; stopped past the epoch's end
        # (64 steps), so a pass over the loader ends and another begins while spliced.
        procs, _, run_dir = self.start(2, "run2", run=2, extra=["--step-sleep-ms", "20"])
        self.order_after(run_dir, procs, max(s1 + 20, 66))
        self.wait(procs, "run2")
        self.assertEqual(self.resumed_at("run2", ["0-1", "2-3"]), s1)
        s2 = self.stopped_at("run2")
        self.assertGreater(s2, 64)
        # Run 3: 3 processes holding 1, 1 and 2 ranks, to the end.
        procs, out, _ = self.start(3, "run3", run=3)
        self.wait(procs, "run3")
        self.assertEqual(self.resumed_at("run3", ["0", "1", "2-3"]), s2)
        print(f"stopped at {s1} (4 processes) and {s2} (2 processes), finished on 3",
              file=sys.stderr)
        self.assertEqual(self.params(out), reference)
        self.passed = True

    def test_started_spliced_without_checkpoint_ends_bit_identical(self):
        reference = self.reference()
        procs, out, _ = self.start(2, "fresh", run=1)
        self.wait(procs, "fresh")
        self.assertIn("started spliced without a checkpoint", "".join(self.logs("fresh")))
        self.assertEqual(self.params(out), reference)
        self.passed = True

    def test_a_collective_of_the_script_stops_a_spliced_job(self):
        script = os.path.join(self.root, "with_all_reduce.py")
        with open(SCRIPT) as f:
            text = f.read()
        # The script averages its loss over the ranks once per step, as many scripts do.
        text = text.replace("            steps += 1\n",
                            "            steps += 1\n            dist.all_reduce(loss.detach())\n")
        with open(script, "w") as f:
            f.write(text)
        procs, _, _ = self.start(2, "collective", run=1, script=script)
        # The first process to exit stops with code 4. A peer still connecting its gloo groups
        # to the one that stopped waits for gloo's 30-minute timeout: in a job, the agent
        # stops the rest of the gang when one rank fails (cluster/agent/gang_run.h); here
        # the test does, after a grace period for the others to stop on their own.
        deadline = time.monotonic() + 300
        while all(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.1)
        codes = [p.poll() for p in procs]
        self.assertIn(4, codes, f"no process stopped with code 4: see {self.root}")
        self.assertEqual({c for c in codes if c is not None}, {4}, f"see {self.root}")
        for p in procs:
            try:
                self.assertEqual(p.wait(timeout=30), 4, f"see {self.root}")
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.assertIn("called torch.distributed.all_reduce", "".join(self.logs("collective")))
        self.passed = True


if __name__ == "__main__":
    unittest.main()
