#!/usr/bin/env python3
"""Predicted against measured, component by component, for predict.sh's runs.

For every run <case>.<round> in a predict.sh output directory (its JSON summary, the profile it
was predicted from, <case>.<round>.profile.json, and the workers' reports in run-<case>.<round>/),
prints per stage the forward, recompute and backward per micro-batch as the auto-config fed
them to the simulator (the contended times for the run's worker count, else the alone medians)
and as the run measured them (means after the first step), the optimizer per step, the
all-reduce per step (measured only: the prediction folds it into the simulated step), and what
a step spent outside its tasks, all-reduce and optimizer ("idle": the bubble and other waits for
a neighbour's message, zeroing the gradients, the step boundary). The simulator's figure from
the run's own task times ("simulated from the run") tells the model's share of a miss from the
profile's: near the measured step, the task times are what the prediction missed. The last column is the run's step over the prediction; "tasks" is the
measured over the predicted F+R+B of the slowest stage: near the step's ratio when the miss is
in the task times (the profile), far from it when the miss is elsewhere (the model).

With P > 1 also the messages' delivery delay (session 15): measured in the run (the workers'
waited-for activations and gradients, send stamp to task start), by the loopback probe before
running, and the step simulated from the run's own times without it.

Usage: breakdown.py OUT_DIR [CSV_OUT]   (OUT_DIR = $TESSERA_BENCH_OUT/predict)
"""
import csv
import glob
import json
import os
import statistics
import sys


def mean_after_first(steps, key):
    xs = [s[key] for s in steps[1:]] or [s[key] for s in steps]
    return statistics.mean(xs) if xs else 0.0


def main():
    out = sys.argv[1]
    rows = []
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        if path.endswith(".profile.json"):
            continue
        name = os.path.basename(path)[: -len(".json")]
        prof_path = os.path.join(out, name + ".profile.json")
        run_dir = os.path.join(out, "run-" + name)
        if not (os.path.exists(prof_path) and os.path.isdir(run_dir)):
            continue
        j = json.load(open(path))
        profiles = json.load(open(prof_path))
        job = json.load(open(os.path.join(run_dir, "job.json")))
        m, P, D = j["micro_batch"], j["stages"], j["replicas"]
        W = P * D
        prof = next(p for p in profiles if p["micro_batch"] == m)
        cont = next((c for c in prof.get("contended", []) if c["workers"] == W), None)
        alone = sum(prof["forward_s"]) + sum(prof["backward_s"])
        slowdown = (sum(cont["forward_s"]) + sum(cont["backward_s"])) / alone if cont else 1.0
        fw = cont["forward_s"] if cont else prof["forward_s"]
        bw = cont["backward_s"] if cont else prof["backward_s"]
        bounds = job["boundaries"]
        recompute = j["schedule"] in ("varuna", "gpipe")
        reports = {}
        for rp in glob.glob(os.path.join(run_dir, "report-*.json")):
            r = json.load(open(rp))
            reports[r["rank"]] = r
        worst_pred = worst_meas = 0.0
        stages = []
        for s in range(P):
            b, e = bounds[s], bounds[s + 1]
            pf, pb = sum(fw[b:e]), sum(bw[b:e])
            pr = pf if (recompute and s + 1 < P) else 0.0
            popt = slowdown * sum(prof["optimizer_s"][b:e])
            reps = [r for r in reports.values() if r["stage"] == s]
            mf = statistics.mean(r["forward_s"] for r in reps)
            mr = statistics.mean(r["recompute_s"] for r in reps)
            mb = statistics.mean(r["backward_s"] for r in reps)
            mopt = statistics.mean(mean_after_first(r["steps"], "optimizer_s") for r in reps)
            mar = statistics.mean(mean_after_first(r["steps"], "allreduce_s") for r in reps)
            wall = statistics.mean(mean_after_first(r["steps"], "wall_s") for r in reps)
            busy = statistics.mean(mean_after_first(r["steps"], "busy_s") for r in reps)
            other = wall - busy - mar - mopt
            worst_pred = max(worst_pred, pf + pr + pb)
            worst_meas = max(worst_meas, mf + mr + mb)
            stages.append(
                f"s{s} F {1e3*pf:.2f}/{1e3*mf:.2f} R {1e3*pr:.2f}/{1e3*mr:.2f} "
                f"B {1e3*pb:.2f}/{1e3*mb:.2f} opt {1e3*popt:.2f}/{1e3*mopt:.2f} "
                f"ar -/{1e3*mar:.2f} idle {1e3*other:.2f}"
            )
            rows.append({"run": name, "P": P, "D": D, "m": m, "stage": s,
                         "pred_f_ms": 1e3 * pf, "meas_f_ms": 1e3 * mf,
                         "pred_r_ms": 1e3 * pr, "meas_r_ms": 1e3 * mr,
                         "pred_b_ms": 1e3 * pb, "meas_b_ms": 1e3 * mb,
                         "pred_opt_ms": 1e3 * popt, "meas_opt_ms": 1e3 * mopt,
                         "meas_allreduce_ms": 1e3 * mar, "meas_idle_ms": 1e3 * other,
                         "pred_step_ms": 1e3 * j["predicted_step_s"],
                         "meas_step_ms": 1e3 * j["step_s"],
                         "sim_from_run_ms": 1e3 * j.get("sim_step_s", 0),
                         "sim_from_run_without_delay_ms":
                             1e3 * j.get("sim_step_without_delay_s", 0),
                         "run_delay_ms": 1e3 * j.get("run_message_delay_s", 0),
                         "probe_delay_ms": 1e3 * j.get("probe_message_delay_s", 0)})
        step_ratio = j["step_s"] / j["predicted_step_s"]
        task_ratio = worst_meas / worst_pred if worst_pred > 0 else 0
        print(f"{name:22s} P{P}D{D}m{m} pred {1e3*j['predicted_step_s']:.1f} meas "
              f"{1e3*j['step_s']:.1f} ms (error {100*(1/step_ratio-1):+.1f} %"
              + (f"; re-profiled {1e3*j['reprofiled_step_s']:.1f} ms, "
                 f"{100*(j['reprofiled_step_s']/j['step_s']-1):+.1f} %" if j.get("reprofiled_step_s") else "")
              + f"); simulated from the "
              f"run's own task times {1e3*j.get('sim_step_s', 0):.1f}"
              + (f" (without its delivery delay {1e3*j['sim_step_without_delay_s']:.1f}; delay "
                 f"{1e3*j.get('run_message_delay_s', 0):.3f} ms measured in the run, "
                 f"{1e3*j.get('probe_message_delay_s', 0):.3f} ms by the probe before)"
                 if P > 1 and "sim_step_without_delay_s" in j else "")
              + f"; measured/predicted: step {step_ratio:.3f}, tasks {task_ratio:.3f}")
        for line in stages:
            print("    " + line + "   (ms: predicted/measured; F R B per micro-batch, opt ar idle per step)")
    if len(sys.argv) > 2 and rows:
        with open(sys.argv[2], "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
