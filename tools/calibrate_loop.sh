#!/bin/sh
# The real-engine check of docs/calibration.md: profile this CPU's operators, measure a
# PyTorch decoder's steps at two models' shapes and fit the engine parameters to them,
# then predict the steps of two OTHER models (other layer counts, widths, GQA ratios,
# vocabularies) and print the errors.  Nothing is fitted to the check models.  The
# operators are profiled twice: through this CPU's BLAS at the first fit model's shapes
# (what the chip does) and inside PyTorch's own steps at both fit models' (what the engine
# does; tools/torch_ops.py).
# Needs python3-torch and TCMalloc (make deps-validate).
#   sh tools/calibrate_loop.sh [FLEETSIM] [OUT]       (CI: .ci/run; about 4 minutes)
set -eu
bin=${1:-build/fleetsim}
out=${2:-build/calibrate-loop}
py=${PYTHON:-/usr/bin/python3}
threads=${THREADS:-1}
rounds=${ROUNDS:-2}
processes=${PROCESSES:-3}
ops_rounds=${OPS_ROUNDS:-1}
ops_processes=${OPS_PROCESSES:-3}
mkdir -p "$out"
grid="--batch 1,4,16 --context 128,512,2048 --prefill 64,256,1024 --threads $threads --best --rounds $rounds"
fit_a=fit-a:layers=2,hidden=1024,heads=16,kv_heads=4,ffn=2816,vocab=16000
fit_b=fit-b:layers=4,hidden=768,heads=12,kv_heads=12,ffn=2048,vocab=8000
check_a=check-a:layers=3,hidden=896,heads=14,kv_heads=2,ffn=2432,vocab=12000
check_b=check-b:layers=6,hidden=640,heads=10,kv_heads=5,ffn=1792,vocab=24000

echo "== operator profile at $fit_a's shapes: the CPU's BLAS and plain loops (calibrate --model)"
"$bin" calibrate --device cpu --quick --operators-only --threads "$threads" \
  --model "$fit_a" -o "$out/operators.lua" -q > /dev/null
echo "== operator profile at both fit models' shapes: the operators in PyTorch's steps (tools/torch_ops.py)"
"$py" tools/torch_ops.py --best --rounds "$ops_rounds" --processes "$ops_processes" \
  --model "$fit_a" --model "$fit_b" \
  -o "$out/torch-ops.csv" 2> /dev/null
"$bin" calibrate --refit "$out/torch-ops.csv" -o "$out/torch-ops.lua"
echo "== PyTorch steps: fit and check models, measured in the same rounds"
# One run for all four, so that a slow spell of a shared host falls on fit and check
# shapes alike; the file is then split by model: the fit sees only fit-a and fit-b.
"$py" tools/torch_steps.py $grid --processes "$processes" --model "$fit_a" --model "$fit_b" \
  --model "$check_a" --model "$check_b" -o "$out/steps.csv" 2> /dev/null
grep -v '^check-' "$out/steps.csv" > "$out/fit.csv"
grep -v '^fit-' "$out/steps.csv" > "$out/check.csv"
echo "== the BLAS operator profile alone, on the check models"
"$bin" validate --steps "$out/check.csv" --profile "$out/operators.lua" | tail -4
echo "== the PyTorch operator profile alone, on the check models"
"$bin" validate --steps "$out/check.csv" --profile "$out/torch-ops.lua"
echo "== fit the engine to the fit models' steps, from the PyTorch operator profile"
"$bin" calibrate --steps "$out/fit.csv" --profile "$out/torch-ops.lua" -o "$out/engine.lua"
echo "== the fitted profile on the check models"
"$bin" validate --steps "$out/check.csv" --profile "$out/engine.lua"
