#!/bin/sh
# One prepared GPU session (docs/calibration.md, "On a GPU"), in one command under ten
# minutes, each stage under a deadline of the whole so that one slow stage cannot take the
# others' time:
#   1. PyTorch on the GPU, the engine the machine has: its operators inside its own steps
#      at two fit models' shapes (tools/torch_ops.py) and its steps at those two and at two
#      check models (tools/torch_steps.py), bf16, in separate processes;
#   2. the steps fit (calibrate --steps) from PyTorch's operator profile, and the check on
#      the two models the fit never saw (validate --steps): catalog, operators, fitted;
#   3. fleetsim's own CUDA operator series at Llama-3-8B's shapes (--operators-only --quick)
#      and its check on the same unseen models;
#   4. the device series (calibrate --device cuda --quick) with what time is left.
# Everything it wrote (profiles, samples, steps, logs) goes to $OUT (out/h200 when unset),
# packed as h200.tgz beside session.log.
#   sh kernels/calibrate_h200.sh            builds with CUDA=yes for sm_90 first
#   FLEETSIM=path/to/fleetsim sh kernels/calibrate_h200.sh   uses a binary built elsewhere
#       (make CUDA=yes BUILD=build/h200 NVCCFLAGS='-O2 -gencode arch=compute_90,code=sm_90'
#        build/h200/fleetsim, with its libraries beside it on LD_LIBRARY_PATH)
#   RECORDED=DIR CATALOG=ENTRY sh kernels/calibrate_h200.sh   replays DIR's torch-ops.csv
#       and steps.csv (recorded by an earlier session) through the same fits and checks,
#       measuring nothing: the host-side pipeline where no GPU is lent (a test does so
#       with samples recorded on a CPU, CATALOG=EPYC-9654)
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-out/h200}
PY=${PYTHON:-python3}
CATALOG=${CATALOG:-H200-SXM}           # the catalog entry the measured device is
RECORDED=${RECORDED:-}
BUDGET=${BUDGET:-540}                  # seconds for the whole session, the build included
work=${WORK:-out/h200-work}
rm -rf "$work"
mkdir -p "$OUT" "$work"
started=$(date +%s)
failed=0
say() { printf '%s\n' "$*" | tee -a "$OUT/session.log"; }
left() { echo $((BUDGET - ($(date +%s) - started))); }

# stage NAME SECONDS COMMAND...: run under min(SECONDS, time left), output in $work/NAME.*
stage() {
    name=$1 limit=$2
    shift 2
    t=$(left)
    [ "$t" -lt "$limit" ] && limit=$t
    if [ "$limit" -lt 10 ]; then
        say "== $name: skipped, $t s left"
        return 124
    fi
    say "== $name (at most $limit s)"
    s=$(date +%s)
    timeout "$limit" "$@" > "$work/$name.txt" 2> "$work/$name.log"
    rc=$?
    say "$name exited $rc after $(($(date +%s) - s)) s"
    [ "$rc" -eq 0 ] || failed=$((failed + 1))
    tail -n 40 "$work/$name.txt" >> "$OUT/session.log"
    [ "$rc" -eq 0 ] || tail -n 8 "$work/$name.log" | tee -a "$OUT/session.log"
    return "$rc"
}

say "== $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)${RECORDED:+, replaying $RECORDED}"
if [ -z "$RECORDED" ]; then
    nvidia-smi > "$work/nvidia-smi.txt" 2>&1 || say "nvidia-smi failed (see nvidia-smi.txt)"
    nvidia-smi --query-gpu=name,compute_cap,memory.total,clocks.max.sm --format=csv \
        >> "$OUT/session.log" 2>&1 || true
fi

# cuBLAS is opened when the device series needs it: from the toolkit, or PyTorch's wheels.
for d in /usr/local/cuda/lib64 $("$PY" -c 'import nvidia, os; print(" ".join(
        os.path.join(p, "cublas", "lib") for p in nvidia.__path__))' 2>/dev/null); do
    [ -d "$d" ] && LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export LD_LIBRARY_PATH

FLEETSIM=${FLEETSIM:-}
if [ -z "$FLEETSIM" ] && [ -n "$RECORDED" ]; then
    FLEETSIM=build/fleetsim                 # a replay: the host's own build
elif [ -z "$FLEETSIM" ]; then
    # H200 = sm_90: native code (bf16 FMA and fp8 need it), plus PTX for anything newer.
    NVCCFLAGS="-O2 -std=c++17 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"
    if ! stage build 300 make CUDA=yes NVCCFLAGS="$NVCCFLAGS" -j"$(nproc)" build/fleetsim; then
        tar czf "$OUT/h200.tgz" -C "$work" .
        exit 1
    fi
    FLEETSIM=build/fleetsim
fi
"$FLEETSIM" --version >> "$OUT/session.log" 2>&1 || { say "$FLEETSIM does not run"; exit 1; }

# Shapes a GPU is busy with (hidden 2048-5120, up to 64 sequences, 8k contexts, 4k
# prompts), few layers each: the fit's two and the check's two differ in width, GQA
# ratio, FFN and vocabulary, as tools/calibrate_loop.sh's do on a CPU.
# (FIT_A ... GRID replace them: a dry run of the pipeline on a CPU takes small ones.)
fit_a=${FIT_A:-fit-a:layers=4,hidden=4096,heads=32,kv_heads=8,ffn=14336,vocab=32000}
fit_b=${FIT_B:-fit-b:layers=6,hidden=2048,heads=16,kv_heads=16,ffn=5632,vocab=32000}
check_a=${CHECK_A:-check-a:layers=5,hidden=3072,heads=24,kv_heads=8,ffn=8192,vocab=50000}
check_b=${CHECK_B:-check-b:layers=3,hidden=5120,heads=40,kv_heads=8,ffn=13824,vocab=64000}
grid=${GRID:-"--batch 1,16,64 --context 512,2048,8192 --prefill 256,1024,4096 --device cuda --dtype bf16"}

if [ -n "$RECORDED" ]; then
    stage torch-ops 10 cp "$RECORDED/torch-ops.csv" "$work/torch-ops.csv"
else
    stage torch-ops 90 "$PY" tools/torch_ops.py $grid --rounds 2 --processes 2 \
        --model "$fit_a" --model "$fit_b" -o "$work/torch-ops.csv"
fi \
    && stage refit 30 "$FLEETSIM" calibrate --refit "$work/torch-ops.csv" \
           --catalog "$CATALOG" -o "$work/torch-ops.lua"
if [ -n "$RECORDED" ]; then
    stage torch-steps 10 cp "$RECORDED/steps.csv" "$work/steps.csv"
else
    stage torch-steps 150 "$PY" tools/torch_steps.py $grid --rounds 2 --processes 3 \
        --model "$fit_a" --model "$fit_b" --model "$check_a" --model "$check_b" \
        -o "$work/steps.csv"
fi
if [ -s "$work/steps.csv" ]; then
    grep -v '^check-' "$work/steps.csv" > "$work/fit.csv"
    grep -v '^fit-' "$work/steps.csv" > "$work/check.csv"
    # the device column names the device as CUDA (or /proc/cpuinfo) does: the catalog's
    for f in fit check; do
        awk -F, -v OFS=, -v entry="$CATALOG" \
            '/^#/ { print; next } !header { header = 1; print; next } { $2 = entry; print }' \
            "$work/$f.csv" > "$work/$f.tmp" && mv "$work/$f.tmp" "$work/$f.csv"
    done
    stage check-catalog 30 "$FLEETSIM" validate --steps "$work/check.csv"
    [ -s "$work/torch-ops.lua" ] \
        && stage check-torch-ops 30 "$FLEETSIM" validate --steps "$work/check.csv" \
                 --profile "$work/torch-ops.lua" \
        && stage steps-fit 60 "$FLEETSIM" calibrate --steps "$work/fit.csv" \
                 --profile "$work/torch-ops.lua" -o "$work/engine.lua" \
        && stage check-fitted 30 "$FLEETSIM" validate --steps "$work/check.csv" \
                 --profile "$work/engine.lua"
fi

if [ -z "$RECORDED" ]; then
    stage operators 150 "$FLEETSIM" calibrate --device cuda --model llama-3-8b \
        --operators-only --quick --catalog "$CATALOG" -o "$work/h200-ops.lua" \
        && [ -s "$work/check.csv" ] \
        && stage check-cuda-ops 30 "$FLEETSIM" validate --steps "$work/check.csv" \
               --profile "$work/h200-ops.lua"
    stage device 240 "$FLEETSIM" calibrate --device cuda --quick --catalog "$CATALOG" \
        -o "$work/h200.lua"
fi

say "== done after $(($(date +%s) - started)) s, $failed stage(s) failed"
tar czf "$OUT/h200.tgz" -C "$work" .
[ "$failed" -eq 0 ]
