"""The barrier's two mechanisms, without system calls on the step path when nothing is ordered.

layer.py runs the barrier at every step of the job's first optimizer (docs/cluster.md, "The
barrier"): a rank raises its need once it has seen the stop order, publishes it, and reads
every rank's need of the previous step; a positive sum stops every rank after the same step.
This module is how a rank learns of the order and how the needs travel. It imports neither
torch nor the layer: the c10d store is passed in (anything with set(key, str) and a blocking
get(key) -> bytes), so barrier_test.py runs it in plain processes.

OrderWatch: the order without a stat per step.
  A daemon thread waits on inotify (libc's inotify_init1 / inotify_add_watch through ctypes)
  for `order` to be created in, or renamed into, the run directory (the agent writes it with
  a rename, cluster/job/control.cc), and sets `ordered`; the step path reads that attribute
  and nothing else. Where inotify is unavailable the thread checks the file every POLL_S
  instead (`method` says which). The file is checked once after the watch is set, so an order
  written before the watch existed is not missed.

MetaExchange: the needs, through shared memory between ranks on one host.
  Call j of exchange() (j = 0, 1, ... : the rank's j-th step) publishes this rank's need of
  step j and returns how many ranks had need = 1 at step j - 1 (0 at j = 0). A need never
  falls back to 0, so a rank's whole history of needs is one number: f, the first step at
  which its need was 1 (none yet: infinity). need(r, i) = 1 exactly when f_r <= i.

  Ranks on one host (equal host keys, host_key()) share a file in /dev/shm, mapped by each:
  one 64-bit word per rank, holding
      (g << 32) | (f + 1, or 0 while the need is 0)
  where g = the number of calls the rank has made (the generation: the word is rewritten at
  every call, with one store). A rank at call j reads each local peer's word and, if the
  peer's g < j (its step j - 1 is not published yet), waits for it. In a data-parallel job
  it never waits: a rank at its step j has finished step j's gradient allreduce, which every
  other rank entered after its call j - 1 (the allreduce's socket I/O orders that store
  before this load). So the per-step cost is one store, W_local - 1 loads and one search of
  a few bytes (below); no system call.

  Waiting (jobs without a collective per step, or a slow rank): the waiter raises its byte
  in the peer's row of "sleeping" bytes (after the words), re-reads the word and sleeps in
  futex(FUTEX_WAIT) on the word's generation half while it is unchanged; a rank that has
  just stored its word looks for a raised byte in its row (mmap.find, no system call) and
  only then calls futex(FUTEX_WAKE). The waiter raises its byte before the kernel compares
  the word, but the writer's load of the row may pass its own store (x86's store buffer),
  so a wake-up can be lost: the wait therefore times out every millisecond and re-reads the
  word, which bounds a lost wake-up's cost and never affects what is read. Where futex is
  unavailable the waiter sleeps from 20 us doubling to 1 ms. Every second of waiting it
  checks in /proc that the peer is alive. Ranks on other hosts (different keys) get the need as one byte per
  step over TCP, one connection per pair, exactly as before this module (the byte of step j
  is sent at call j and read at call j + 1; TCP's order and delivery give the same
  guarantee as the word).

  Why every rank decides alike, whatever the interleaving (barrier_test.py tries them):
  - At call j a rank decides from need(r, j - 1) for every r, i.e. from "f_r <= j - 1". f_r
    is written once, at the call it refers to (f_r = g - 1 of that write), and never
    changes; a word with g >= j carries every f_r <= j - 1 the rank will ever have, so a
    reader that waits until g >= j reads the same answer as every other reader, early or
    late. A write racing with the read (the peer's call j, possibly setting f_r = j) cannot
    change it: f_r = j is not <= j - 1. So every rank gets the same sum at call j, and the
    first call with a positive sum, j* = min_r f_r + 1, is the same on every rank: all stop
    after step j* + 1 = min_r f_r + 2 and none before (at calls j < j*, f_r > j - 1 for all
    r).
  - The order reaching ranks at different steps only changes the f_r; the stop step is
    their minimum plus 2: within two steps of the first rank to see the order, whenever
    the others do (a rank that has not seen it yet stops too, the sum counts the others).
  - A reader early (the peer has not written step j - 1) waits for g >= j; it never takes
    an older word for the step's. A stopped peer (SIGSTOP, a descheduled process) only
    delays the reader; a dead one is reported (RuntimeError) instead of waited for.
  - A torn word cannot be read: each word is 8-byte aligned in a page-aligned mapping and
    CPython's memoryview stores and loads a 'Q' item with one 8-byte memcpy, a single
    aligned 64-bit move, which x86-64 and AArch64 perform single-copy atomically.
  - A stale word cannot be read: each incarnation's ranks create a new file (random name,
    O_EXCL), zero-filled, and unlink it once every local rank has mapped it.
  Singularity piggybacks the meta-allreduce on the job's collectives; here the collectives
  carry nothing extra and only order the words (and bytes), as in the TCP exchange before.
"""
import ctypes
import mmap
import os
import socket
import threading
import time
import uuid

# The order thread's check interval where inotify is unavailable.
POLL_S = 0.01

ENV_HOST = "TESSERA_INTERPOSE_HOST"  # overrides host_key() (tests force the TCP path with it)

_IN_CLOEXEC = 0o2000000
_IN_CREATE = 0x100
_IN_MOVED_TO = 0x80
_IN_IGNORED = 0x8000
_IN_Q_OVERFLOW = 0x4000
_EVENT_HEADER = 16  # struct inotify_event: int wd; uint32 mask, cookie, len; char name[len]

_GENERATION_SHIFT = 32
_LOW = (1 << _GENERATION_SHIFT) - 1
_LIVENESS_S = 1.0  # how often a waiting rank checks that the peer it waits for is alive
_FUTEX_TIMEOUT_S = 0.001  # a waiter re-reads the word at least this often (a lost wake-up)
_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}.get(os.uname().machine)
_FUTEX_WAIT, _FUTEX_WAKE = 0, 1  # shared (not _PRIVATE): the word is in another process too


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def _libc_futex():
    """futex(2) through libc's syscall(), or None."""
    if _SYS_FUTEX is None:
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    call.restype = ctypes.c_long
    call.argtypes = [ctypes.c_long, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32,
                     ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32]
    return call


def _libc_inotify():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        init, add, rm = libc.inotify_init1, libc.inotify_add_watch, libc.inotify_rm_watch
    except (OSError, AttributeError):
        return None
    init.argtypes, init.restype = [ctypes.c_int], ctypes.c_int
    add.argtypes, add.restype = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32], ctypes.c_int
    rm.argtypes, rm.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return init, add, rm


class OrderWatch:
    """Sets `ordered` once `<directory>/<name>` exists. `method` is "inotify" or "poll"."""

    def __init__(self, directory, name="order", use_inotify=True, poll_s=POLL_S):
        self.path = os.path.join(directory, name)
        self._name = os.fsencode(name)
        self._poll_s = poll_s
        self._closed = threading.Event()
        self._lock = threading.Lock()  # guards _fd: the thread closes it, close() uses it
        self.ordered = False
        self._fd = self._wd = None
        calls = _libc_inotify() if use_inotify else None
        if calls is not None:
            init, add, self._rm = calls
            fd = init(_IN_CLOEXEC)
            if fd >= 0:
                wd = add(fd, os.fsencode(directory), _IN_CREATE | _IN_MOVED_TO)
                if wd >= 0:
                    self._fd, self._wd = fd, wd
                else:
                    os.close(fd)
        self.method = "inotify" if self._fd is not None else "poll"
        # After the watch: an order written before it is seen here, one after it by the thread.
        if os.path.exists(self.path):
            self.ordered = True
            self._close_fd()
            return
        target = self._wait_inotify if self._fd is not None else self._poll
        threading.Thread(target=target, name="tessera-order-watch", daemon=True).start()

    def _poll(self):
        while not self._closed.wait(self._poll_s):
            if os.path.exists(self.path):
                self.ordered = True
                return

    def _wait_inotify(self):
        try:
            while not self._closed.is_set():
                try:
                    data = os.read(self._fd, 4096)
                except OSError:
                    break
                if not data:
                    break
                maybe, gone = self._scan(data)
                if maybe and os.path.exists(self.path):
                    self.ordered = True
                    return
                if gone:
                    break
        finally:
            self._close_fd()
        if not self._closed.is_set():
            self._poll()  # the watch went away (directory removed, read error): poll on

    def _scan(self, data):
        """(whether a batch of inotify events may concern the order: its name or an
        overflow, whether the watch is gone)."""
        maybe = gone = False
        at = 0
        while at + _EVENT_HEADER <= len(data):
            mask = int.from_bytes(data[at + 4:at + 8], "little")
            length = int.from_bytes(data[at + 12:at + 16], "little")
            name = data[at + _EVENT_HEADER:at + _EVENT_HEADER + length].rstrip(b"\0")
            maybe = maybe or name == self._name or bool(mask & _IN_Q_OVERFLOW)
            gone = gone or bool(mask & _IN_IGNORED)
            at += _EVENT_HEADER + length
        return maybe, gone

    def _close_fd(self):
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def close(self):
        """Stops the thread (tests; a job's watch lives as long as the process)."""
        self._closed.set()
        with self._lock:
            if self._fd is not None:
                self._rm(self._fd, self._wd)  # queues IN_IGNORED: the blocked read returns


def host_key():
    """Ranks with equal keys share /dev/shm: the host name, the boot, and the device of
    /dev/shm (a container with a /dev/shm of its own differs). TESSERA_INTERPOSE_HOST
    overrides it."""
    told = os.environ.get(ENV_HOST)
    if told:
        return told
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
    except OSError:
        boot = "?"
    try:
        device = os.stat("/dev/shm").st_dev
    except OSError:
        device = "none"
    return f"{socket.gethostname()}/{boot}/{device}"


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


class MetaExchange:
    """The needs of every rank, one step behind (see the module's comment). Made once, at the
    job's first step, by every rank of the c10d group (rank, world_size) with its store."""

    def __init__(self, rank, world_size, store, master_addr="127.0.0.1", host=None,
                 prefix="tessera_barrier"):
        self.rank = rank
        self.calls = 0  # exchange() calls made: the generation
        self.waits = 0  # calls that found a local peer's word not yet written (benches)
        self.first_need = None  # f: the first call whose need was 1
        key = host if host is not None else host_key()
        store.set(f"{prefix}/host/{rank}", key)
        store.set(f"{prefix}/pid/{rank}", str(os.getpid()))
        keys = [key if r == rank else store.get(f"{prefix}/host/{r}").decode()
                for r in range(world_size)]
        local = [r for r in range(world_size) if keys[r] == key]
        self.words = None  # the /dev/shm words of the local ranks, by their index in `local`
        self.slot = local.index(rank)
        self.local_slots = []  # the other local ranks' slots
        self.local_pids = {}
        if len(local) > 1 and self._map(store, prefix, local):
            self.local_slots = [i for i, r in enumerate(local) if r != rank]
            self.local_pids = {i: int(store.get(f"{prefix}/pid/{local[i]}").decode())
                               for i in self.local_slots}
            tcp = [r for r in range(world_size) if keys[r] != key]
        else:
            tcp = [r for r in range(world_size) if r != rank]
        self.tcp_ranks = tcp
        self.local_ranks = [local[i] for i in self.local_slots]
        self.peers = _connect(rank, tcp, store, prefix, master_addr) if tcp else []

    def _map(self, store, prefix, local):
        """Maps the local ranks' words (the lowest local rank creates the file); False, on
        every local rank alike, when any of them cannot."""
        leader = local[0]
        path = None
        if self.rank == leader:
            path = f"/dev/shm/tessera-barrier-{uuid.uuid4().hex}"
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
                os.ftruncate(fd, _mapping_size(len(local)))
                os.close(fd)
            except OSError:
                path = ""
            store.set(f"{prefix}/shm/{leader}", path)
        else:
            path = store.get(f"{prefix}/shm/{leader}").decode()
        ok = False
        if path:
            try:
                fd = os.open(path, os.O_RDWR)
                try:
                    self._mmap = mmap.mmap(fd, _mapping_size(len(local)))
                finally:
                    os.close(fd)
                self.words = memoryview(self._mmap).cast("Q")
                n = len(local)
                self._row = 8 * n + self.slot * n  # this rank's row of sleeping bytes
                self._rows = {i: 8 * n + i * n for i in range(n)}
                self._futex = _libc_futex()
                if self._futex is not None:
                    self._anchor = ctypes.c_char.from_buffer(self._mmap)
                    self._base = ctypes.addressof(self._anchor)
                ok = True
            except (OSError, ValueError):
                ok = False
        store.set(f"{prefix}/mapped/{self.rank}", "1" if ok else "0")
        everyone = all(store.get(f"{prefix}/mapped/{r}") == b"1" for r in local)
        if self.rank == leader and path:
            try:
                os.unlink(path)  # every local rank has it mapped (or gave up): no leftover
            except OSError:
                pass
        if not everyone:
            self.words = None
        return everyone

    def close(self):
        for conn in self.peers:
            conn.close()
        self.peers = []
        if self.words is not None:
            self.words.release()
            self.words = None
            self._anchor = None
            self._mmap.close()

    def exchange(self, need):
        """Publishes this call's need; returns how many ranks had need = 1 at the previous
        call (0 at the first)."""
        j = self.calls
        self.calls = j + 1
        if need and self.first_need is None:
            self.first_need = j
        first = self.first_need
        words = self.words
        if words is not None:
            words[self.slot] = ((j + 1) << _GENERATION_SHIFT) | (0 if first is None else first + 1)
            row = self._row
            if self._mmap.find(b"\x01", row, row + len(self._rows)) >= 0:
                self._wake()
        if self.peers:
            byte = b"\x01" if first is not None else b"\x00"
            for conn in self.peers:
                conn.sendall(byte)
        if j == 0:
            return 0
        total = 1 if first is not None and first < j else 0
        for slot in self.local_slots:
            word = words[slot]
            if word >> _GENERATION_SHIFT < j:
                word = self._wait(slot, j)
            low = word & _LOW
            if low and low <= j:  # f + 1 <= j: need(peer, j - 1) = 1
                total += 1
        for conn in self.peers:
            total += _recv_exact(conn, 1)[0]
        return total

    def _futex_address(self, slot):
        """The generation half of the slot's word (the high 32 bits: little-endian)."""
        return self._base + 8 * slot + 4

    def _wake(self):
        if self._futex is not None:
            self._futex(_SYS_FUTEX, self._futex_address(self.slot), _FUTEX_WAKE, 2**31 - 1,
                        None, None, 0)

    def _wait(self, slot, j):
        """The peer's word once it has made call j - 1 (generation >= j)."""
        words, mm = self.words, self._mmap
        self.waits += 1
        flag = self._rows[slot] + self.slot
        mm[flag] = 1  # "slot's writer: wake me"
        try:
            delay = 0.0
            check = time.monotonic() + _LIVENESS_S
            timeout = _Timespec(0, int(_FUTEX_TIMEOUT_S * 1e9))
            while True:
                word = words[slot]
                generation = word >> _GENERATION_SHIFT
                if generation >= j:
                    return word
                if self._futex is not None:
                    # Sleeps only while the generation half still holds `generation`.
                    self._futex(_SYS_FUTEX, self._futex_address(slot), _FUTEX_WAIT,
                                generation & _LOW, ctypes.byref(timeout), None, 0)
                else:
                    delay = min(delay * 2 or 20e-6, 1e-3)
                    time.sleep(delay)
                if time.monotonic() > check:
                    pid = self.local_pids[slot]
                    if not _alive(pid):
                        raise RuntimeError(
                            f"tessera-interpose: a rank (pid {pid}) exited before step {j - 1} "
                            f"of the barrier")
                    check = time.monotonic() + _LIVENESS_S
        finally:
            mm[flag] = 0


def _mapping_size(ranks):
    """The ranks' words, then a row of `ranks` sleeping bytes per rank (a multiple of 8)."""
    return 8 * ranks + (ranks * ranks + 7) // 8 * 8


def _connect(rank, peers, store, prefix, master_addr):
    """One TCP connection to each of `peers` (connect to the lower ranks, accept the higher
    ones), TCP_NODELAY, in rank order."""
    higher = [r for r in peers if r > rank]
    listener = None
    if higher:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind((_local_address(master_addr), 0))
        listener.listen(len(higher))
        host, port = listener.getsockname()
        store.set(f"{prefix}/tcp/{rank}", f"{host}:{port}")
    conns = {}
    for peer in (r for r in peers if r < rank):
        peer_host, peer_port = store.get(f"{prefix}/tcp/{peer}").decode().rsplit(":", 1)
        conn = socket.create_connection((peer_host, int(peer_port)))
        conn.sendall(rank.to_bytes(4, "little"))
        conns[peer] = conn
    for _ in higher:
        conn, _ = listener.accept()
        conns[int.from_bytes(_recv_exact(conn, 4), "little")] = conn
    if listener is not None:
        listener.close()
    for conn in conns.values():
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return [conns[r] for r in sorted(conns)]


def _recv_exact(conn, size):
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise RuntimeError("tessera-interpose: a rank closed its barrier connection")
        data += chunk
    return data


def _local_address(master):
    """This host's address on the route to MASTER_ADDR (where the other ranks reach it)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect((socket.gethostbyname(master), 9))  # no packet is sent
        return probe.getsockname()[0]
    finally:
        probe.close()
