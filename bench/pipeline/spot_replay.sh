#!/usr/bin/env bash
# Replays a real spot-availability trace against an elastic pipeline job, time-compressed:
# ../shared/data/traces/aws-spot-g4dn-xlarge-us-east-1c.csv (seconds, available g4dn.xlarge
# instances, 0..12, one day in us-east-1c; from the Bamboo authors' public data). The trace's
# count is scaled to this machine's workers (12 instances -> SPOT_MAX_WORKERS) and written to the
# job's workers file as the trace says; every change stops the job at the next step boundary
# with a checkpoint (a spot notice gives two minutes of warning), and the job morphs to a new
# auto-configuration. Some preemptions also arrive as SIGKILL of a worker without notice
# (SPOT_KILL_EVERY: every n-th decrease), which costs the steps since the last checkpoint.
# The replay cycles through the trace until the job has trained SPOT_STEPS steps.
#
# Writes $TESSERA_BENCH_OUT/spot/{out.json,launch.log,events.csv,segments.csv,summary.md,
# throughput.png}: lost steps, morph count and throughput over time.
# Knobs: SPOT_SPEEDUP (trace seconds per real second, default 60), SPOT_FROM/SPOT_TO (trace
# window, default 21529..28578: the first busy two hours), SPOT_STEPS (default 400),
# SPOT_MAX_WORKERS (default 4), SPOT_KILL_EVERY (default 3; 0: all with notice), SPOT_NETNS=1:
# every worker slot is a "host" of its own (a network namespace pipeline-spot-h<i> on a bridge,
# veth links, 10.77.0.<i+1>), workers are started through pipeline/testdata/ssh-like with
# `ip netns exec` (needs root; the namespaces are removed at the end), and a kill hits the
# remote worker process itself, which the wrapper reports as exit 255.
set -uo pipefail
BUILD=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
OUT=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}/spot
HERE=$(cd "$(dirname "$0")" && pwd)
TRACE=${SPOT_TRACE:-$HERE/../../../shared/data/traces/aws-spot-g4dn-xlarge-us-east-1c.csv}
SPEEDUP=${SPOT_SPEEDUP:-60}
FROM=${SPOT_FROM:-21529}
TO=${SPOT_TO:-28578}
STEPS=${SPOT_STEPS:-400}
MAXW=${SPOT_MAX_WORKERS:-4}
KILL_EVERY=${SPOT_KILL_EVERY:-3}
[ -r "$TRACE" ] || { echo "spot: no trace at $TRACE"; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT"
echo "$MAXW" > "$OUT/workers"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/load.txt"

HOSTS_ARGS=()
if [ "${SPOT_NETNS:-0}" = 1 ]; then
  cleanup_netns() {
    for i in $(seq 0 $((MAXW - 1))); do ip netns del "pipeline-spot-h$i" 2>/dev/null; done
    ip link del plspotbr 2>/dev/null
  }
  cleanup_netns
  trap cleanup_netns EXIT
  ip link add plspotbr type bridge && ip link set plspotbr up || exit 1
  : > "$OUT/hosts.txt"
  for i in $(seq 0 $((MAXW - 1))); do
    ip netns add "pipeline-spot-h$i" &&
      ip link add "plspv$i" type veth peer name "plspb$i" &&
      ip link set "plspv$i" netns "pipeline-spot-h$i" &&
      ip link set "plspb$i" master plspotbr && ip link set "plspb$i" up &&
      ip netns exec "pipeline-spot-h$i" ip addr add "10.77.0.$((i + 1))/24" dev "plspv$i" &&
      ip netns exec "pipeline-spot-h$i" ip link set "plspv$i" up &&
      ip netns exec "pipeline-spot-h$i" ip link set lo up || exit 1
    echo "10.77.0.$((i + 1)) $HERE/../../pipeline/testdata/ssh-like ip netns exec pipeline-spot-h$i" \
      >> "$OUT/hosts.txt"
  done
  HOSTS_ARGS=(--hosts "$OUT/hosts.txt" --base-port 29700)
  echo "workers on $MAXW hosts: network namespaces pipeline-spot-h0..$((MAXW - 1)) (ssh-like wrapper)"
fi

"$BUILD/bin/pipeline-launch" --elastic --workers-file "$OUT/workers" --save-dir "$OUT/ckpt" \
  --run-dir "$OUT/run" --json "$OUT/out.json" --checkpoint-every 20 --cores 2 \
  --auto-micro-batches 2,4 --model gpt --layers 4 --width 64 --heads 4 --vocab 64 \
  --seq-len 32 --global-batch 16 --steps "$STEPS" --lr 0.05 --timeout 1800 "${HOSTS_ARGS[@]}" \
  --max-restarts 200 \
  > "$OUT/launch.log" 2>&1 &
LAUNCHER=$!

/usr/bin/python3 - "$TRACE" "$OUT" "$SPEEDUP" "$FROM" "$TO" "$MAXW" "$KILL_EVERY" "$LAUNCHER" <<'EOF'
import csv, glob, os, signal, sys, time
trace, out, speedup, t0, t1, maxw, kill_every, launcher = sys.argv[1:]
speedup, t0, t1, maxw, kill_every, launcher = (float(speedup), float(t0), float(t1), int(maxw),
                                                int(kill_every), int(launcher))
rows = [(float(r["seconds"]), int(r["available_instances"])) for r in csv.DictReader(open(trace))]
window = [(t, n) for t, n in rows if t0 <= t <= t1]
def alive():  # the launcher is the shell's child: an exited one is a zombie until waited for
    try:
        with open(f"/proc/{launcher}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
events = open(f"{out}/events.csv", "w")
events.write("real_s,trace_s,instances,workers,how\n")
start = time.time()
current, decreases, cycle = maxw, 0, 0
while alive():
    for t, n in window:
        due = start + (cycle * (t1 - t0) + (t - t0)) / speedup
        while time.time() < due and alive():
            time.sleep(0.05)
        if not alive():
            break
        workers = max(1, round(n * maxw / 12))  # 0 instances: keep one worker (the job waits otherwise)
        if workers == current:
            continue
        how = "file"
        if workers < current:
            decreases += 1
            if kill_every and decreases % kill_every == 0:
                # No notice: a worker dies. Its loss alone takes the job to current - 1 workers.
                pids = sorted(glob.glob(f"{out}/run/segment-*/pids"), key=os.path.getmtime)
                if pids:
                    lines = open(pids[-1]).read().split()
                    if len(lines) >= 2:
                        victim = int(lines[-1])
                        try:  # behind a wrapper (SPOT_NETNS): the remote worker, not the wrapper
                            kids = open(f"/proc/{victim}/task/{victim}/children").read().split()
                            if kids:
                                victim = int(kids[0])
                        except OSError:
                            pass
                        try:
                            os.kill(victim, signal.SIGKILL)
                            how = "kill"
                        except ProcessLookupError:
                            pass
        if how == "file":
            with open(f"{out}/workers.tmp", "w") as f:
                f.write(f"{workers}\n")
            os.replace(f"{out}/workers.tmp", f"{out}/workers")
            current = workers
        else:
            current -= 1
        events.write(f"{time.time() - start:.2f},{t:.0f},{n},{current},{how}\n")
        events.flush()
    cycle += 1
EOF
wait "$LAUNCHER"
rc=$?
echo "launcher exit $rc"
[ $rc = 0 ] || { tail -20 "$OUT/launch.log"; exit 1; }

/usr/bin/python3 - "$OUT" <<'EOF'
import json, sys
out = sys.argv[1]
j = json.load(open(f"{out}/out.json"))
t = 0.0
with open(f"{out}/segments.csv", "w") as f:
    f.write("start_s,end_s,workers,stages,replicas,micro_batch,first_step,reached,steps_per_s,ended\n")
    for s in j["segments"]:
        steps = s["reached"] - s["first_step"]
        rate = steps / s["wall_s"] if s["wall_s"] > 0 else 0
        f.write(f"{t:.2f},{t + s['wall_s']:.2f},{s['workers']},{s['stages']},{s['replicas']},"
                f"{s['micro_batch']},{s['first_step']},{s['reached']},{rate:.3f},{s['ended']}\n")
        t += s["wall_s"]
kills = sum(1 for s in j["segments"] if s["ended"].endswith("lost"))
notices = sum(1 for s in j["segments"] if s["ended"].startswith("workers file"))
total = j["segments"][-1]["reached"]
print(f"morphs {j['morphs']} ({notices} with notice, {kills} lost without), lost steps "
      f"{j['lost_steps']}, {total} steps in {t:.1f} s of segments ({total / t:.2f} steps/s "
      f"including restarts)")
EOF
cat > "$OUT/plot.gp" <<EOF
set terminal pngcairo size 900,400
set output "$OUT/throughput.png"
set datafile separator ","
set xlabel "time (s)"
set ylabel "steps/s"
set y2label "workers"
set y2tics
set key top left
plot "$OUT/segments.csv" skip 1 using (\$1+\$2)/2:9 with steps title "steps/s per segment", \
     "" skip 1 using (\$1+\$2)/2:3 axes x1y2 with points pt 7 title "workers"
EOF
command -v gnuplot >/dev/null && gnuplot "$OUT/plot.gp"
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/load.txt"
