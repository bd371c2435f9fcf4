#!/usr/bin/env bash
# Part 0: the machine and build the other parts run on, checked live (the traps of
# shared/research/environment.md: reference BLAS, thread oversubscription).
set -euo pipefail
echo "cores: $(nproc), memory: $(free -g | awk '/Mem:/{print $2}') GiB"
blas=$(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu 2>/dev/null || echo none)
echo "libblas.so.3 -> $blas"
case "$blas" in
  *openblas*) echo "BLAS: OpenBLAS (libtorch will not fall back to the 20x slower reference BLAS)";;
  *) echo "BLAS: WARNING, not OpenBLAS: torch code will be 17-30x slower"; exit 1;;
esac
echo "compiler: $(c++ --version | head -1)"
echo "binaries built: $(wc -l < build/release/binaries.txt | tr -d ' ') (each answers --help)"
for d in /usr/share/datasets/fashion-mnist /usr/share/games/fortunes; do
  [ -d "$d" ] && echo "data: $d ($(du -sh "$d" | cut -f1))"
done
