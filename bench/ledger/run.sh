#!/usr/bin/env bash
# Ledger foundations benchmarks: every figure beside its baseline from the same run.
# Usage: TESSERA_BUILD=build/release TESSERA_BENCH_OUT=out bench/ledger/run.sh
set -euo pipefail
build=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
out=${TESSERA_BENCH_OUT:?set TESSERA_BENCH_OUT to an output directory}
mkdir -p "$out"
bench="$build/bench/ledger_bench"
[ -x "$bench" ] || { echo "missing $bench (ninja -C $build ledger_bench)"; exit 1; }

echo "ledger: running ledger_bench (about a minute; building the 1,000,000-account tree first)"
"$bench" --benchmark_out="$out/ledger_bench.json" --benchmark_out_format=json \
  --benchmark_repetitions=1 | tee "$out/ledger_bench.txt"

python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
data = json.load(open(os.path.join(out, "ledger_bench.json")))
b = {x["name"].split("/")[0]: x for x in data["benchmarks"]}
def rate(name): return b[name]["items_per_second"]
lines = []
def row(what, value, unit, base_what, base, ratio_text):
    base_text = f"{base:>12,.0f}" if base else f"{'-':>12}"
    lines.append(f"{what:<52} {value:>12,.0f} {unit:<8} | {base_what:<38} {base_text} | {ratio_text}")
tess, sod = rate("BM_SigVerify_Tessera"), rate("BM_SigVerify_LibsodiumBaseline")
row("signature verifies/s (VerifyTransaction)", tess, "/s", "libsodium verify alone, same bytes", sod,
    f"overhead {100 * (sod / tess - 1):+.1f}% (goal < 5%)")
row("VRF prove/s", rate("BM_VrfProve"), "/s", "libsodium Ed25519 sign", rate("BM_Ed25519Sign_LibsodiumBaseline"),
    f"ratio {rate('BM_VrfProve') / rate('BM_Ed25519Sign_LibsodiumBaseline'):.2f}")
row("VRF verify/s", rate("BM_VrfVerify"), "/s", "libsodium Ed25519 verify", sod,
    f"ratio {rate('BM_VrfVerify') / sod:.2f}")
batched = rate("BM_TreeBlockUpdate_Batched")
leaves = b["BM_TreeBlockUpdate_Batched"]["leaves_per_block"]
row(f"leaf updates/s, 10k-tx block ({leaves:,.0f} leaves), 1M accts", batched, "/s/core",
    "same updates one at a time", rate("BM_TreeBlockUpdate_OneByOneBaseline"),
    f"batching x{batched / rate('BM_TreeBlockUpdate_OneByOneBaseline'):.2f}; goal >= 100,000/s: "
    + ("met" if batched >= 100000 else "NOT met"))
row("", batched, "/s/core", "depth-256 SMT, hashing alone (bound)", rate("BM_Depth256HashingOnlyBaseline"),
    f"x{batched / rate('BM_Depth256HashingOnlyBaseline'):.1f} faster")
row("leaf updates/s committed to RocksDB (synced), 200k accts", rate("BM_StoreCommitBlock"), "/s/core",
    "in-memory batched update (above)", batched,
    f"ratio {rate('BM_StoreCommitBlock') / batched:.2f}; wall-clock incl. fsync: "
    f"{rate('BM_StoreCommitBlock') * b['BM_StoreCommitBlock']['cpu_time'] / b['BM_StoreCommitBlock']['real_time']:,.0f}/s")
row("transfers/s, 10k-tx block incl. tree update", rate("BM_TransferBlockApply"), "/s", "(no baseline: end-to-end figure)", 0, "")
p = b["BM_MultiProofBytes"]
row("multi-proof bytes, 1000 keys in 1M accounts", p["multi_proof_bytes"], "bytes",
    "1000 single proofs (same format)", p["single_proofs_bytes"],
    f"ratio {p['multi_proof_bytes'] / p['single_proofs_bytes']:.3f}; vs 32 B/level siblings "
    f"({p['bare_siblings_bytes']:,.0f} B): {p['multi_proof_bytes'] / p['bare_siblings_bytes']:.3f}")
row("multi-proof decode+verify, keys/s", rate("BM_MultiProofVerify"), "/s", "(1000-key proof)", 0, "")
row("a member's check of a 2,500-transfer block, tx/s", rate("BM_MemberBlockCheck"), "/s",
    "the politician's execution of it", rate("BM_PoliticianBlockExecute"),
    f"ratio {rate('BM_MemberBlockCheck') / rate('BM_PoliticianBlockExecute'):.2f}; "
    f"{b['BM_MemberBlockCheck']['proof_bytes_per_tx']:.0f} proof bytes/tx; x64 members: "
    f"{64e6 / rate('BM_MemberBlockCheck'):.0f} us per transfer")
text = "\n".join(lines)
open(os.path.join(out, "ledger_summary.txt"), "w").write(text + "\n")
print("\nledger summary (figure | baseline | ratio)\n" + text)
with open(os.path.join(out, "ledger_plot.dat"), "w") as f:
    f.write(f'"multi-proof" {p["multi_proof_bytes"] / 1024:.1f}\n')
    f.write(f'"1000 single proofs" {p["single_proofs_bytes"] / 1024:.1f}\n')
    f.write(f'"32 B/level siblings" {p["bare_siblings_bytes"] / 1024:.1f}\n')
PY

if command -v gnuplot > /dev/null; then
  gnuplot <<GP
set terminal pngcairo size 720,420
set output "$out/ledger_proof_bytes.png"
set title "Proof bytes for 1,000 random keys in 1,000,000 accounts"
set ylabel "KiB"
set style fill solid 0.6
set boxwidth 0.6
set yrange [0:*]
unset key
plot "$out/ledger_plot.dat" using 0:2:xtic(1) with boxes, "" using 0:2:(sprintf("%.0f", \$2)) with labels offset 0,1
GP
  echo "plot: $out/ledger_proof_bytes.png"
fi
