#!/bin/sh
# One prepared GPU session: build with CUDA, calibrate the GPU in --quick mode, profile a
# decoder layer's operators at Llama-3-8B's shapes, and copy the profiles, their raw
# samples and the logs to $OUT (the device machine's results folder; out/h200 when unset).
# Run from anywhere:  sh kernels/calibrate_h200.sh
# Budget: a build (a minute or two on 16 cores), then a --quick calibration (a couple of
# minutes: bandwidth to 4 GB, FMA, launches, copies, GEMM in fp16/bf16/int8/fp8), then the
# --quick operator profile (about two minutes: projections, attention, passes in bf16).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-out/h200}
mkdir -p "$OUT" kernels/profiles
say() { printf '%s\n' "$*" | tee -a "$OUT/session.log"; }

say "== $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || say "nvidia-smi failed (see nvidia-smi.txt)"
nvidia-smi --query-gpu=name,compute_cap,memory.total,clocks.max.sm --format=csv \
    >> "$OUT/session.log" 2>&1 || true

# H200 = sm_90: native code (bf16 FMA and fp8 need it), plus PTX for anything newer.
NVCCFLAGS="-O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"
if ! make CUDA=yes NVCCFLAGS="$NVCCFLAGS" -j"$(nproc)" build/fleetsim build/libfleetsim.a \
        > "$OUT/build.log" 2>&1; then
    say "build failed: tail of build.log:"; tail -20 "$OUT/build.log" | tee -a "$OUT/session.log"
    exit 1
fi

FLEETSIM="build/fleetsim"

say "== calibrate --device cuda --quick"
timeout 420 "$FLEETSIM" calibrate --device cuda --quick -o kernels/profiles/h200.lua \
    > "$OUT/calibrate.txt" 2> "$OUT/calibrate.log"
status=$?
say "calibrate exited $status"
cat "$OUT/calibrate.txt" >> "$OUT/session.log"
tail -5 "$OUT/calibrate.log" >> "$OUT/session.log"
cp kernels/profiles/h200.lua kernels/profiles/h200.csv "$OUT/" 2>/dev/null \
    || say "no profile written (see calibrate.log)"

say "== calibrate --device cuda --model llama-3-8b --operators-only --quick"
timeout 300 "$FLEETSIM" calibrate --device cuda --model llama-3-8b --operators-only --quick \
    -o kernels/profiles/h200-ops.lua > "$OUT/operators.txt" 2> "$OUT/operators.log"
ops=$?
say "operator profile exited $ops"
cat "$OUT/operators.txt" >> "$OUT/session.log"
cp kernels/profiles/h200-ops.lua kernels/profiles/h200-ops.csv "$OUT/" 2>/dev/null \
    || say "no operator profile written (see operators.log)"
[ "$status" -eq 0 ] && status=$ops
exit $status
