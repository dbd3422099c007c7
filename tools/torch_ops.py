#!/usr/bin/python3
"""Profile a decoder layer's operators as eager PyTorch runs them, at one model's shapes.

The operator profile `fleetsim calibrate --model` takes through CBLAS and plain C loops
times the chip, each kernel alone and hot; an engine runs other kernels (torch's linear
layout, its element-wise kernels, a fresh tensor per result, the dispatch of every call)
and runs them in a step, after the previous operator's weights went through the caches
(measured here: an RMSNorm of one token takes 10 us in a loop of its own, 20 us after 16
MB of other data, 60 us in a step).  So this script times the operators inside the steps
of tools/torch_steps.py's decoder, one clock reading after each operator, over a grid of
decode and prefill steps at the model's shapes, and writes them as fleetsim calibration
samples (kernels/calib_sample.h, kinds op_*, bytes and flops counted as
kernels/calib_ops.h counts them), so that

    fleetsim calibrate --refit OPS.csv -o torch-ops.lua

fits the operator table of the engine, not of the BLAS alone (docs/calibration.md).
Each sample is one operator's mean over the layers of one timed step:

  op_gemm         QKV, output, gate-up, down (tokens = the step's), LM head (its rows)
  op_attn_decode  the group's queries times the cached keys, scaled, softmax, times the
                  values (m = sequences x kv heads, n = context, k = queries per kv head)
  op_attn_prefill the same over a prompt with the causal mask (m = prompt, n = heads)
  op_norm, op_rope, op_act, op_add, op_embed, op_reshape, op_sample
                  the step's element-wise code (op_reshape: the cache writes and the
                  attention output's layout copy)

What runs between the operators (views, slices, the Python loop) is in no sample: the
steps fit's host work takes it.

Usage (Debian's python3-torch; `make deps-validate` installs it):
    /usr/bin/python3 tools/torch_ops.py -o ops.csv \
        --model fit-a:layers=2,hidden=1024,heads=16,kv_heads=4,ffn=2816,vocab=16000
"""
import argparse
import datetime
import os
import socket
import statistics
import sys
import time

import torch_steps  # sets the BLAS threads from --threads and the allocator before torch loads
from torch_steps import DTYPES, Decoder, blas_threads, cpu_name, malloc_loaded, numbers, parse_model

torch = torch_steps.torch


class Ticks:
    """Time from one tick to the next, summed and counted per operator: this thread's CPU
    time on a CPU; on a GPU the wall clock after waiting for the device (sync), so that
    each operator's kernels are timed to their end, launches included, as an eager engine
    that runs one operator after another spends them."""

    def __init__(self, clock=time.thread_time, sync=lambda: None):
        self.sum, self.calls = {}, {}
        self.clock, self.sync = clock, sync
        self.sync()
        self.last = self.clock()

    def __call__(self, name):
        self.sync()
        now = self.clock()
        self.sum[name] = self.sum.get(name, 0.0) + now - self.last
        self.calls[name] = self.calls.get(name, 0) + 1
        self.last = self.clock()  # the bookkeeping above is not the operator's


def samples_of(s, batch, tokens, context, prefill, ticks, rep, width=4):
    """The step's operators as (kind, m, n, k, bytes, flops, seconds) rows; width: the
    bytes of an element (the counts below are written for fp32's 4 and scaled)."""
    h, hd = s["hidden"], s["hidden"] // s["heads"]
    q, kv, ffn, vocab = s["heads"], s["kv_heads"], s["ffn"], s["vocab"]
    group, qkv = q // kv, (q + 2 * kv) * hd
    T = tokens

    def gemm(t, k, n):
        return ("op_gemm", t, n, k, 4 * (k * n + t * k + t * n), 2 * t * k * n)

    shapes = {
        "embed": ("op_embed", T, h, 0, 8 * T * h, 0),
        "norm": ("op_norm", T, h, 0, 8 * T * h, 0),
        "final_norm": ("op_norm", batch, h, 0, 8 * batch * h, 0),
        "qkv": gemm(T, h, qkv),
        "rope": ("op_rope", T, (q + kv) * hd, 0, 8 * T * (q + kv) * hd, 0),
        "reshape": ("op_reshape", T, qkv, 0, 8 * T * qkv, 0),
        "out": gemm(T, q * hd, h),
        "add": ("op_add", T, h, 0, 12 * T * h, 0),
        "up": gemm(T, h, 2 * ffn),
        "act": ("op_act", T, ffn, 0, 12 * T * ffn, 0),
        "down": gemm(T, ffn, h),
        "lm_head": gemm(batch, h, vocab),
        "sample": ("op_sample", batch, vocab, 0, 12 * batch * vocab, 0),
    }
    if prefill:
        shapes["attention"] = ("op_attn_prefill", T, q, hd, 4 * T * hd * (group + 2) * kv,
                               4 * hd * q * T * T / 2)
    else:
        shapes["attention"] = ("op_attn_decode", batch * kv, context, group,
                               4 * 2 * batch * kv * context * hd, 4 * hd * q * batch * context)
    rows = []
    for name, total in ticks.sum.items():
        kind, m, n, k, nbytes, flops = shapes[name]
        calls = ticks.calls[name] / (2 if name == "reshape" else 1)  # two copies a layer: one operator
        rows.append((kind, m, n, k, nbytes * width / 4, flops, rep, total / calls))
    return rows


def copy_bandwidth(device, sync):
    """A large copy's bandwidth (bytes read and written a second), the fastest of five:
    256 MB on a CPU, 2 GB on a GPU, beyond their caches; what calibrate --refit judges a
    fitted stream faster than memory by."""
    size = (2 << 30) if device.type == "cuda" else (256 << 20)
    a = torch.ones(size // 4, device=device)
    b = torch.empty_like(a)
    best = float("inf")
    for _ in range(5):
        sync()
        start = time.perf_counter()
        b.copy_(a)
        sync()
        best = min(best, time.perf_counter() - start)
    return 2 * size / best


def last_level_cache():
    """This CPU's last-level cache in bytes (getconf: L3, else L2), 0 where it cannot say:
    what fleetsim calibrate --refit judges a stream faster than memory by."""
    import subprocess
    for name in ("LEVEL3_CACHE_SIZE", "LEVEL2_CACHE_SIZE"):
        try:
            value = int(subprocess.run(["getconf", name], capture_output=True, text=True,
                                       check=True).stdout.strip() or 0)
        except (OSError, ValueError, subprocess.CalledProcessError):
            value = 0
        if value > 0:
            return value
    return 0


def over_processes(a):
    """--processes K: K runs of this script one after the other, their samples merged
    shape by shape (each process places its tensors anew; the fit then takes the median
    of all, and the profile records their spread)."""
    comments, rows = [], []
    for lines in torch_steps.run_processes(a.processes):
        header = next(k for k, line in enumerate(lines) if not line.startswith("#"))
        if not comments:
            comments = lines[:header + 1]
        rows += [line.split(",") for line in lines[header + 1:] if line]
    # one shape's samples together, every process's, the repeats numbered again
    rows.sort(key=lambda r: (r[0], r[1], float(r[3]), float(r[4]), float(r[5])))
    with open(a.output, "w") as f:
        f.write("\n".join(comments[:-1]) + f"\n# processes: {a.processes}\n{comments[-1]}\n")
        for i, cells in enumerate(rows):
            same = i and rows[i - 1][:6] == cells[:6]
            rep = rep + 1 if same else 0
            cells[9] = str(rep)
            f.write(",".join(cells) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", type=parse_model, required=True,
                    help="NAME:layers=L,hidden=H,heads=A,kv_heads=G,ffn=F,vocab=V (repeat: "
                         "the operators at every model's shapes, one table fitted to all)")
    ap.add_argument("--batch", type=numbers, default=[1, 4, 16], help="decode batches")
    ap.add_argument("--context", type=numbers, default=[128, 512, 2048],
                    help="decode contexts")
    ap.add_argument("--prefill", type=numbers, default=[64, 256, 1024], help="prompt lengths")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1,
                    help="passes over the grid, the samples pooled (as torch_steps.py)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--processes", type=int, default=1,
                    help="measure in this many processes one after the other and keep every "
                         "process's samples (with --best, each process's fastest): the fit "
                         "takes their median, the profile their spread")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda where torch sees one")
    ap.add_argument("--dtype", choices=tuple(DTYPES), default="fp32",
                    help="the weights' and activations' type (the samples' precision)")
    ap.add_argument("--best", action="store_true",
                    help="one sample per shape: its fastest repeat (as torch_steps.py --best)")
    ap.add_argument("--malloc", choices=("tcmalloc", "system"), default=torch_steps.DEFAULT_MALLOC,
                    help="the engine's allocator (as torch_steps.py --malloc)")
    ap.add_argument("--device-name", default="",
                    help="default: the CPU's model name, or CUDA's")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if a.repeats < 1 or a.rounds < 1 or a.processes < 1:
        ap.error("--repeats, --rounds and --processes must be at least 1")
    if a.processes > 1:
        return over_processes(a)
    if a.threads != 1:
        sys.exit("torch_ops.py: --threads 1 only (operators are timed on this thread's CPU "
                 "clock)")
    torch.set_num_threads(1)
    blas = blas_threads()
    if blas is not None and blas != 1:
        sys.exit(f"torch_ops.py: OpenBLAS runs {blas} threads, not 1")
    device = torch.device(a.device)
    on_gpu = device.type == "cuda"
    if on_gpu and not torch.cuda.is_available():
        sys.exit("torch_ops.py: --device cuda: torch sees no CUDA device")
    dtype, width = DTYPES[a.dtype]
    clock, sync = time.thread_time, (lambda: None)
    if on_gpu:
        clock, sync = time.perf_counter, torch.cuda.synchronize
    name = a.device_name or (torch.cuda.get_device_name(device) if on_gpu else cpu_name())
    decoders = [(model, s, Decoder(s, max(a.batch), max(max(a.context) + 1, max(a.prefill)),
                                   device, dtype)) for model, s in a.model]
    grid = [(1, p, 0, True) for p in a.prefill]
    grid += [(b, b, c, False) for b in a.batch for c in a.context]
    rows = []
    with torch.inference_mode():
        for r in range(a.rounds):
            for model, s, dec in decoders:
                for batch, tokens, context, prefill in grid:
                    ids = torch.randint(0, s["vocab"], (batch, tokens if prefill else 1),
                                        device=device)
                    dec.step(ids, context)  # warm-up
                    for rep in range(a.repeats if not prefill or tokens < 1024 else 3):
                        ticks = Ticks(clock, sync)
                        dec.step(ids, context, ticks)
                        rows += samples_of(s, batch, tokens, context, prefill, ticks, rep,
                                           width)
                    print(f"torch_ops.py: {model}: round {r + 1}: "
                          f"{'prefill' if prefill else 'decode'} {batch} x {tokens} at {context}",
                          file=sys.stderr)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    # the measured machine's memory, which a profile's predictions then hold (a GPU's as
    # CUDA reports it, a CPU's physical memory)
    if on_gpu:
        memory = torch.cuda.get_device_properties(device).total_memory
        cache = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
    else:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        cache = last_level_cache()
    copy = copy_bandwidth(device, sync)
    with open(a.output, "w") as f:
        f.write("# fleetsim calibration samples (fleetsim calibrate --refit FILE redoes the fit)\n"
                f"# device: {name}\n# kind: {'gpu' if on_gpu else 'cpu'}\n"
                f"# host: {socket.gethostname()}\n# date: {date}\n# threads: 1\n# quick: true\n"
                f"# blas: PyTorch {torch.__version__} eager on {a.device}, in its steps, "
                f"OpenBLAS threads "
                f"{blas if blas is not None else 'n/a'}, malloc {malloc_loaded()}\n"
                f"# model: {'+'.join(model for model, _ in a.model)}\n"
                f"# memory_bytes: {memory}\n"
                + (f"# cache_bytes: {cache}\n" if cache else "")
                + f"# copy_bytes_per_s: {copy:.6g}\n" +
                "kind,precision,threads,m,n,k,size_bytes,bytes,flops,repeat,seconds\n")
        # one shape's repeats together (the fit takes their median), from every step
        # that ran it: a decode step's projections at 4 tokens at each context
        rows.sort(key=lambda r: (r[0], r[1], r[2], r[3], r[7] if a.best else 0))
        if a.best:
            rows = [r for i, r in enumerate(rows) if not i or rows[i - 1][:4] != r[:4]]
        for i, (kind, m, n, k, nbytes, flops, _, seconds) in enumerate(rows):
            same = i and rows[i - 1][:4] == (kind, m, n, k)
            rep = rep + 1 if same else 0
            f.write(f"{kind},{a.dtype},1,{m},{n},{k},{nbytes:.17g},{nbytes:.17g},{flops:.17g},"
                    f"{rep},{seconds:.17g}\n")


if __name__ == "__main__":
    main()
