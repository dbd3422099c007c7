#!/bin/sh
# The training planner's choice for one model on one kind of GPU at several scales, a
# row a scale: the plan, its MFU, its memory a GPU, and the share of a step the pipeline
# bubble and the exposed communication take (fleetsim estimate --training --csv).
#
# Usage: sh docs/plan_table.sh FLEETSIM MODEL GPU COUNT... [-- ESTIMATE-OPTIONS...]
set -eu
[ $# -ge 4 ] || { echo "usage: sh docs/plan_table.sh FLEETSIM MODEL GPU COUNT... [-- OPTIONS]" >&2; exit 2; }
bin=$1 model=$2 gpu=$3
shift 3
counts=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do counts="$counts $1"; shift; done
[ $# -gt 0 ] && shift
printf '%6s  %-34s %5s %7s %7s %7s %7s %7s\n' GPUs plan MFU 'GB/GPU' bubble 'tp comm' 'dp comm' 'ep comm'
for n in $counts; do
  "$bin" estimate --model "$model" --gpu "$gpu" --gpus "$n" --training --csv "$@" |
    awk -F, -v n="$n" '
      { v[$1] = $2 }
      END {
        if (v["train_fits"] != 1) { printf "%6d  does not fit\n", n; exit }
        plan = sprintf("tp %d pp %d dp %d", v["train_tp"], v["train_pp"], v["train_dp"])
        if (v["train_cp"] > 1) plan = plan sprintf(" cp %d", v["train_cp"])
        if (v["train_ep"] > 1) plan = plan sprintf(" ep %d", v["train_ep"])
        if (v["train_vpp"] > 1) plan = plan sprintf(" v%d", v["train_vpp"])
        plan = plan sprintf(" Z%d mb %d", v["train_zero"], v["train_micro_batch"])
        if (v["train_recompute_layers"] > 0) plan = plan sprintf(" rc %d", v["train_recompute_layers"])
        s = v["train_step_s"]
        printf "%6d  %-34s %4.1f%% %7.1f %6.1f%% %6.1f%% %6.1f%% %6.1f%%\n", n, plan,
               100 * v["mfu"], v["train_memory_per_gpu_gb"], 100 * v["train_bubble_s"] / s,
               100 * v["train_tp_comm_s"] / s, 100 * v["train_dp_comm_s"] / s,
               100 * v["train_ep_comm_s"] / s
      }'
done
