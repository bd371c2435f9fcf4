"""The Python layer's barrier between hosts, with the hosts as network namespaces
(cluster_interpose_netns_test; integration, ~30-60 s: twelve torch processes on 2 cores).

Until this test the barrier's TCP path between hosts was exercised only with host keys forced
(TESSERA_INTERPOSE_HOST) on one network stack. Here two "hosts" are network namespaces joined
by a veth pair (each end named tessera0, addresses 10.67.<n>.1 and .2), and every rank runs
in its host's namespace and in a UTS namespace of its own with that host's name
(`ip netns exec NS unshare --uts`), so that its host key differs from the other host's the way
it does between machines (the hostname; boot id and /dev/shm stay shared, as do the file
system and the job directory, which docs/cluster.md assumes on storage every node reaches).

The job is testdata/ddp_train.py, unchanged, with 4 ranks, 2 per host, started as torchrun
starts them on two nodes (MASTER_ADDR is host 0's veth address, GLOO_SOCKET_IFNAME=tessera0):
gloo's store and allreduce, and the barrier's TCP connections, cross the veth link.

Properties guarded:
  - the barrier splits by host: each rank exchanges needs with its host's other rank through
    /dev/shm words and with the other host's two over TCP (the layer's own log line);
  - on an order written to one node's run directory only (each node has its own, as on
    machines of their own), all four ranks stop after one step, exactly the first sighting
    plus 2 (barrier.py's rule; the sightings are read from every rank's log): the other
    node's ranks learn of it only through the TCP bytes;
  - the job resumes at exactly that step, on the hosts swapped (ranks 0-1 on host 1), runs to
    the end, and its final parameters equal the reference's bit for bit: the same script
    without the layer on the same two hosts.

Skipped (not failed) where namespaces cannot be made: not root, no iproute2 or unshare.

  /usr/bin/python3 cluster/interpose/netns_test.py
"""
import glob
import os
import re
import shutil
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
IFNAME = "tessera0"
DEADLINE_S = 240  # a run not finished by then has hung
GRACE_S = 60  # the other ranks' time to exit once one has begun to stop (see wait)


def sh(command):
    return subprocess.run(command, shell=True, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode


class Hosts:
    """Two network namespaces joined by a veth pair; ok is False where they cannot be made."""

    def __init__(self):
        tag = os.getpid() % 100000
        self.names = [f"tessera-ip-{tag}-h{h}" for h in range(2)]
        self.addresses = [f"10.67.{tag % 250}.{h + 1}" for h in range(2)]
        ends = self.ends = [f"tip{tag}a", f"tip{tag}b"]
        setup = [f"ip netns add {ns}" for ns in self.names]
        setup.append(f"ip link add {ends[0]} type veth peer name {ends[1]}")
        for ns, end, address in zip(self.names, ends, self.addresses):
            setup += [f"ip link set {end} netns {ns}",
                      f"ip -n {ns} link set {end} name {IFNAME}",
                      f"ip -n {ns} addr add {address}/24 dev {IFNAME}",
                      f"ip -n {ns} link set {IFNAME} up", f"ip -n {ns} link set lo up"]
        self.ok = (os.geteuid() == 0 and shutil.which("ip") is not None
                   and shutil.which("unshare") is not None and sh(" && ".join(setup)) == 0)

    def close(self):
        for ns in self.names:  # removing a namespace removes its veth end, and so the pair
            sh(f"ip netns del {ns}")
        sh(f"ip link del {self.ends[0]}")  # a setup that failed before moving it

    def prefix(self, host):
        """The command prefix that runs a program on `host` under its own hostname."""
        return ["ip", "netns", "exec", self.names[host], "unshare", "--uts", "sh", "-c",
                f'hostname tessera-host{host} && exec "$@"', "sh"]


class NetnsBarrierTest(unittest.TestCase):
    def setUp(self):
        self.hosts = Hosts()
        if not self.hosts.ok:
            self.hosts.close()
            self.skipTest("network namespaces need root, iproute2 and unshare")
        self.root = tempfile.mkdtemp(prefix="interpose-netns-test-")
        self.job = os.path.join(self.root, "job")
        self.passed = False

    def tearDown(self):
        self.hosts.close()
        if self.passed:  # kept for a look otherwise
            shutil.rmtree(self.root, ignore_errors=True)

    def start(self, name, host_of_node, run=None, extra=()):
        """The script's 4 ranks, 2 per node; node n runs on host host_of_node[n]. Under the
        layer when `run` names a run number. Returns (processes, out file, node 0's run
        directory)."""
        master = self.hosts.addresses[host_of_node[0]]
        # Ports are per namespace: nothing else listens there. A new one per run (no
        # TIME_WAIT of the previous run's store in the way).
        self.runs = getattr(self, "runs", 0) + 1
        port = 29000 + self.runs
        out = os.path.join(self.root, name + ".txt")
        run_dir = None
        procs = []
        for rank in range(4):
            node = rank // 2
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE="4", LOCAL_RANK=str(rank % 2),
                       LOCAL_WORLD_SIZE="2", GROUP_RANK=str(node), MASTER_ADDR=master,
                       MASTER_PORT=str(port), GLOO_SOCKET_IFNAME=IFNAME, OMP_NUM_THREADS="1",
                       PYTHONFAULTHANDLER="1")
            for key in list(env):
                if key.startswith("TESSERA_") or key == "PYTHONPATH":
                    del env[key]
            if run is not None:
                # A run directory per node, as on machines of their own: an order written to
                # one node's reaches the other node's ranks only through the barrier.
                node_dir = os.path.join(self.job, "runs", str(run), f"node{node}")
                os.makedirs(node_dir, exist_ok=True)
                run_dir = run_dir or node_dir  # node 0's: rank 0's progress, the order
                env.update(PYTHONPATH=LAYER, TESSERA_RUN_DIR=node_dir, TESSERA_JOB_DIR=self.job,
                           TESSERA_RUN=str(run), TESSERA_JOB_WORKERS="4",
                           TESSERA_CHECKPOINT_DIR=os.path.join(self.job, "ckpt"))
            command = (self.hosts.prefix(host_of_node[node]) +
                       [sys.executable, SCRIPT] + ARGS + list(extra) + ["--out", out])
            with open(os.path.join(self.root, f"{name}-rank{rank}.log"), "w") as log:
                procs.append(subprocess.Popen(command, env=env, stdout=log,
                                              stderr=subprocess.STDOUT))
        self.deadline = time.monotonic() + DEADLINE_S
        return procs, out, run_dir

    def checkpoint_files(self):
        return set(glob.glob(os.path.join(self.job, "ckpt", "step-*", "*.pt")))

    def wait(self, procs, name):
        """Every rank exits 0. A rank that has started to write the stop's checkpoint waits
        in the layer's own barriers for every other rank to do the same; ranks that did not
        agree on the stop step never will (they wait in an allreduce, for gloo's 30 minutes):
        once a checkpoint file of this run appears, or a rank has exited, the others get
        GRACE_S to exit, a cap for a broken build, not a measurement."""
        deadline = self.deadline
        before = self.checkpoint_files()
        try:
            while any(p.poll() is None for p in procs):
                if time.monotonic() > deadline:
                    running = [r for r, p in enumerate(procs) if p.poll() is None]
                    self.fail(f"{name}: ranks {running} still running {GRACE_S} s after a "
                              f"rank began to stop, or {DEADLINE_S} s after the start: see "
                              f"{self.root}")
                if deadline > time.monotonic() + GRACE_S and (
                        any(p.poll() is not None for p in procs)
                        or self.checkpoint_files() - before):
                    deadline = time.monotonic() + GRACE_S
                time.sleep(0.05)
            for rank, p in enumerate(procs):
                self.assertEqual(p.returncode, 0, f"{name} rank {rank}: see {self.root}")
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()

    def log(self, name, rank):
        with open(os.path.join(self.root, f"{name}-rank{rank}.log")) as f:
            return f.read()

    def params(self, out):
        with open(out) as f:
            return re.search(r"params ([0-9a-f]+)", f.read()).group(1)

    def order_after(self, run_dir, procs, step):
        if not job_orders.order_after(run_dir, step,
                                      lambda: all(p.poll() is None for p in procs),
                                      self.deadline):
            self.fail(f"rank 0 did not reach step {step}: see {self.root}")

    def assert_split_by_host(self, name):
        """Each rank: its node's other rank through /dev/shm words, the other node's over TCP."""
        for rank in range(4):
            node_peer = rank ^ 1
            others = [r for r in range(4) if r // 2 != rank // 2]
            self.assertIn(f"barrier: needs of ranks [{node_peer}] through /dev/shm words, of "
                          f"ranks {others} over TCP", self.log(name, rank),
                          f"{name} rank {rank}: see {self.root}")

    def test_ranks_on_two_hosts_stop_at_one_step_and_resume_exactly(self):
        procs, out, _ = self.start("reference", [0, 1])
        self.wait(procs, "reference")
        reference = self.params(out)

        # Run 1: nodes 0 and 1 on hosts 0 and 1, stopped by an order given to node 0 only.
        # (Rank 0's progress file is up to a second old: the steps are slowed so that the
        # stop falls mid-run.)
        procs, _, run_dir = self.start("run1", [0, 1], run=1, extra=["--step-sleep-ms", "20"])
        self.order_after(run_dir, procs, 10)
        self.wait(procs, "run1")
        self.assert_split_by_host("run1")
        stops = {int(s) for r in range(4) for s in re.findall(r"barrier at step (\d+)",
                                                                self.log("run1", r))}
        self.assertEqual(len(stops), 1, f"the ranks stopped at {stops}: see {self.root}")
        stop = stops.pop()
        seen = [int(s) for r in range(4)
                for s in re.findall(r"stop order seen after step (\d+)", self.log("run1", r))]
        self.assertTrue(seen, f"no rank logged the order: see {self.root}")
        for rank in (2, 3):  # node 1 learnt of it over TCP only
            self.assertNotIn("stop order seen", self.log("run1", rank))
        self.assertEqual(stop, min(seen) + 2, f"sightings {seen}: see {self.root}")
        self.assertLess(stop, 3 * 64, "the order came after the run's end")
        with open(os.path.join(self.job, "ckpt", "LATEST")) as f:
            self.assertEqual(f.read().strip(), f"step-{stop}")

        # Run 2: the nodes swapped (ranks 0-1 on host 1, the master there), to the end.
        procs, out, _ = self.start("run2", [1, 0], run=2)
        self.wait(procs, "run2")
        self.assert_split_by_host("run2")
        for rank in range(4):
            resumed = re.findall(r"resumed at step (\d+)", self.log("run2", rank))
            self.assertEqual(resumed, [str(stop)], f"run2 rank {rank}: see {self.root}")
        print(f"4 ranks on 2 namespaces: order seen after step(s) {sorted(set(seen))}, all "
              f"stopped at {stop}, resumed there on the hosts swapped", file=sys.stderr)
        self.assertEqual(self.params(out), reference, "final parameters differ")
        self.passed = True


if __name__ == "__main__":
    unittest.main()
