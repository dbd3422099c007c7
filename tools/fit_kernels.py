#!/usr/bin/env python3
"""Fits the kernel-family constants of fleetsim's performance model to published kernel
measurements, and writes them as the table models/kernel_constants.c.

    python3 tools/fit_kernels.py [--data DIR] [--c FILE] [--quiet]

DIR (default ../shared/reference/kernels) holds the second part of the fit set:
gemm_hopper.csv, attention_hopper.csv, moe_gemm.csv, moe_alltoall.csv,
collectives_scale.csv and engine_memory.csv (see DIR/README.md, and the credit lines
below); the datasheet peaks come from DIR/../devices.csv.  The report (stdout) gives every
constant with the rows it was fitted to and the fit's RMS relative error; --c writes the
C table.  Only python3's standard library; deterministic (Nelder-Mead from fixed starts,
rows in file order, the helpers of tools/fit_operators.py), so the same files give the
same table byte for byte.

Each class has one formula, the one models/kernel_constants.h states (sat(x, h) =
x / (x + h), P the precision's datasheet peak, BW the memory bandwidth, of the device the
rows were measured on):

  gemm      t = t0 + max(C, M) + overlap x min(C, M), C = 2 T K N / (P e sat(T, T_half)),
            M = (K N wb + 2 (T K + T N)) / (BW e_mem)      (models/perf.c's GEMM: weights
            at their precision's wb bytes, activations counted at 2 bytes)
  prefill   t = t0 + F_full / (P e_cached) + F_causal / (P e_new)  (F = 4 s_q s_kv d h b,
            halved when causal: FlashAttention's own FLOP convention, and
            tools/fit_operators.py's pairs: cached = full pairs, new = the causal triangle)
  backward  t = t0 + 2.5 F / (P e sat(s, s_half))   (F the forward's FLOPs as above, 2.5 x
            FlashAttention's backward convention: five products to the forward's two; s a
            sequence's tokens: the passes over O, dO and dQ that grow with s alone)
  decode    t = t0 + cache_bytes / (BW e sat(seqs x kv_heads, W_half))
  mla       t = t0 + max(cache_bytes / (BW e sat(..)), F / (P e_c)), F = 2 b s_q h_q s_kv
            (d_qk + d_v)   (FlashMLA's FLOP convention: absorbed latent attention)
  grouped   t = t0 + max(C, M), C = 2 G m N K / (P e sat(m, m_half)), M = (G N K wb +
            2 G m (K + N)) / (BW e_mem)         (G groups of m tokens each)
  alltoall  t = alpha + bytes / (e link),  bytes = tokens_per_rank x topk x hidden x b
            (b = 1 + 4/128 for FP8 with its per-128 float scales, 2 for BF16)
  collective t = alpha + f(n) bytes / (e link), f = 2 (n - 1) / n for all-reduce, (n - 1) / n
            for all-gather and reduce-scatter (nccl-tests' bus bandwidth)

Fits minimise the weighted mean squared log error.  Weights: a row's trust (official
tables, papers, merged PRs, maintainers and vendor blogs 1; a user's run posted in a PR
or a benchmark of a third party 0.5; a user's GitHub issue report 0.25, as the kernels
README asks), divided by the rows in its power-of-two bucket of size where a family
sweeps sizes, so that each decade counts alike.  RMS errors are relative (predicted /
measured - 1), weighted the same way.  Rows with `superseded` set are dropped; README
"up to" peaks are used as ceilings (checked against, or flagged where one sets a
constant), never as points.
"""
import argparse
import csv
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_operators import (c_string, cnum, comment, fit_log, rms_relative,  # noqa: E402
                           sat)

CREDITS = [
    "DeepGEMM, DeepEP (incl. the NVIDIA hybrid-ep branch docs), FlashMLA: "
    "github.com/deepseek-ai, MIT licence, \"DeepSeek\"",
    "FlashAttention: github.com/Dao-AILab/flash-attention (BSD-3-Clause); FlashAttention-3 "
    "paper, Shah, Bikshandi, Zhang, Thakkar, Ramani, Dao, arXiv 2407.08608",
    "TensorRT-LLM tech blog 18 \"Optimizing MoE Communication with One-Sided AlltoAll Over "
    "NVLink\", NVIDIA (github.com/NVIDIA/TensorRT-LLM, PR #12195)",
    "pplx-kernels README, Perplexity AI (MIT)",
    "\"Machine Learning Engineering Open Book\", Stas Bekman (github.com/stas00/ml-engineering, "
    "CC BY-SA 4.0)",
    "vLLM, SGLang, FlashInfer, tritonbench, TileOPs, NCCL/nccl-tests GitHub issues and PRs, "
    "github.com/lessizzmore/create-a3mega-ztan-fork: each row names its thread",
]

FILES = ["gemm_hopper.csv", "attention_hopper.csv", "moe_gemm.csv", "moe_alltoall.csv",
         "collectives_scale.csv", "engine_memory.csv"]

# Links the rows name (one direction), from the fit files' own notes or devices.csv.
LINK_H800_NVLINK = 160e9   # DeepEP notes: "H800 with ~160 GB/s NVLink"
LINK_CX7 = 50e9            # "one CX7 400 Gb/s IB NIC (~50 GB/s) per GPU" (DeepEP notes)
LINK_NVL72 = 900e9         # TensorRT-LLM blog notes: GB200 NVL72 uni-directional 900 GB/s
LINK_EFA_B200 = 50e9       # collectives notes: "8x 50 GBps EFA v4 per node", 8 GPUs


# ---- reading ----------------------------------------------------------------------------

def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for line, r in enumerate(rows, start=2):
        r["line"] = line
    return rows


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def trust(r):
    """The row's weight by who published it (README: user issues weigh less)."""
    kind = r["source_kind"].lower()
    if "issue" in kind:
        return 0.25
    if "user" in kind:
        return 0.5
    return 1.0


def devices(data):
    """devices.csv next to the fit set: name -> (bf16 FLOP/s, fp8 FLOP/s, B/s, link B/s
    one direction)."""
    out = {}
    for r in read_rows(os.path.join(data, "..", "devices.csv")):
        out[r["name"]] = (float(r["bf16_tflops"] or r["fp16_tflops"] or 0) * 1e12,
                          float(r["fp8_tflops"] or 0) * 1e12, float(r["mem_bw_gbs"]) * 1e9,
                          float(r["link_gbs"] or 0) * 1e9 / 2)
    return out


def msle(predict, params, rows):
    total = sum(r["w"] for r in rows)
    return sum(r["w"] * math.log(predict(params, r) / r["t"]) ** 2 for r in rows) / total


def fit_best(predict, rows, starts):
    """fit_log from each fixed start; the lowest loss wins (the first on a tie).  The
    grouped and GEMM fits have local minima (a fast kernel with a large m_half, or a slow
    one with a small m_half): one start is not enough."""
    best = None
    for x0 in starts:
        p = fit_log(predict, rows, x0)
        loss = msle(predict, p, rows)
        if best is None or loss < best[0]:
            best = (loss, p)
    return best[1]


def weigh(rows, key=None):
    """Each row's weight: its trust, divided by the rows of its power-of-two bucket of
    key(row) when a key is given."""
    count = {}
    for r in rows:
        r["bucket"] = int(math.log2(max(key(r), 1))) if key else 0
        count[r["bucket"]] = count.get(r["bucket"], 0) + 1
    for r in rows:
        r["w"] = trust(r) / count[r["bucket"]]
    return rows


# ---- the formulas (models/kernel_families.c evaluates the same) -------------------------

def gemm_time(p, r, peak, bw):
    t0, e, em, overlap, th = p
    T, K, N = r["T"], r["K"], r["N"]
    compute = 2.0 * T * K * N / (peak * e * sat(T, th))
    memory = (K * N * r["wb"] + 2.0 * (T * K + T * N)) / (bw * em)
    return t0 + max(compute, memory) + min(overlap, 1.0) * min(compute, memory)


def prefill_time(p, r, peak):
    t0, e_cached, e_new = p
    return t0 + r["full"] / (peak * e_cached) + r["causal"] / (peak * e_new)


def backward_time(p, r, peak):
    t0, e, s_half = p
    return t0 + 2.5 * r["F"] / (peak * e * sat(r["s"], s_half))


def decode_time(p, r, bw):
    t0, e = p  # width_half 0: every row of a family shares one width
    return t0 + r["bytes"] / (bw * e)


def grouped_time(p, r, peak, bw):
    """One layer's grouped GEMMs: r['gemms'] holds (G, m, N, K) per launch."""
    t0, e, mh, em = p
    t = 0.0
    for G, m, N, K in r["gemms"]:
        compute = 2.0 * G * m * N * K / (peak * e * sat(m, mh))
        memory = (G * N * K * r["wb"] + 2.0 * G * m * (K + N)) / (bw * em)
        t += t0 + max(compute, memory)
    return t


def wgrad_time(p, r, peak, bw):
    """A weight-gradient grouped GEMM: the products, then the fp32 gradients written."""
    e, ew = p
    return (2.0 * r["G"] * r["k"] * r["N"] * r["K"] / (peak * e)
            + 4.0 * r["G"] * r["N"] * r["K"] / (bw * ew))


def a2a_time(p, r, link):
    alpha, e = p
    return alpha + r["bytes"] / (e * link)


def collective_time(p, r, link):
    alpha, e = p
    return alpha + r["f"] * r["bytes"] / (e * link)


def fp8_bytes(hidden):
    return hidden * (1 + 4.0 / 128)


# ---- a family's result --------------------------------------------------------------------

class Family:
    def __init__(self, name, cls, kernel, device, prec, peak, bw, fields, rows, rms, how,
                 extra=None):
        self.name, self.cls, self.kernel, self.device, self.prec = name, cls, kernel, device, prec
        self.peak, self.bw, self.fields, self.rows, self.rms, self.how = peak, bw, fields, rows, rms, how
        self.extra = extra or {}


def line_list(rows):
    """Every row's line, runs joined: '2-13, 25-30, 71'."""
    lines = sorted(set(r["line"] for r in rows))
    spans, start, prev = [], lines[0], lines[0]
    for x in lines[1:] + [None]:
        if x != prev + 1 if x is not None else True:
            spans.append("%d-%d" % (start, prev) if prev > start else "%d" % start)
            start = x
        prev = x
    return ", ".join(spans)


def describe(rows, fname, what):
    return "%s %s, %d rows (lines %s)" % (fname, what, len(rows), line_list(rows))


# ---- (a) dense GEMM -------------------------------------------------------------------------

def gemm_rows(rows, pick):
    out = []
    for r in rows:
        if r["superseded"].strip() or not pick(r):
            continue
        M, N, K = float(r["m"]), float(r["n"]), float(r["k"])
        t = num(r["time_us"])
        t = t * 1e-6 if t else 2.0 * M * N * K / (float(r["tflops"]) * 1e12)
        d = dict(r)
        d.update(T=M, K=K, N=N, t=t, wb=2.0 if r["precision"].startswith("BF16") else 1.0)
        out.append(d)
    return out


def fit_gemm(data, dev, say):
    rows = read_rows(os.path.join(data, "gemm_hopper.csv"))
    fams = []
    h100 = dev["H100-SXM"]
    specs = [
        ("cublas_bf16_h100", "cuBLAS BF16 (torch.matmul), vLLM PR #23280's H100 sweep",
         "H100-SXM", "PREC_BF16", h100[0],
         lambda r: r["kernel"].startswith("torch.matmul (cuBLAS) BF16")),
        ("cutlass_fp8_block_h100", "CUTLASS block-FP8 (128x128) w8a8, vLLM PR #23280",
         "H100-SXM", "PREC_FP8", h100[1],
         lambda r: r["kernel"].startswith("w8a8 block FP8 CUTLASS")),
        ("triton_fp8_block_h100", "Triton block-FP8 (128x128) w8a8, vLLM PR #23280",
         "H100-SXM", "PREC_FP8", h100[1],
         lambda r: r["kernel"].startswith("w8a8 block FP8 Triton")),
        # README tables as last revised, and DeepGEMM main of Aug 2025 (PR #168's "before
        # fix" block, a user run: trust 0.5).  PRs #74/#81 are A/B runs of tile changes the
        # README's later tables took in; #95 is FP32-out weight gradients; #186 is H20.
        ("deepgemm_fp8_h800", "DeepGEMM gemm_fp8_fp8_bf16_nt (1x128/128x128 block FP8, "
         "BF16 out), H800 (H100 SXM's compute and bandwidth)", "H800", "PREC_FP8", h100[1],
         lambda r: r["library"] == "DeepGEMM" or r["library"].startswith("DeepGEMM (main")),
    ]
    for name, kernel, devname, prec, peak, pick in specs:
        fr = gemm_rows(rows, pick)
        weigh(fr, lambda r: r["T"])
        for r in fr:
            if "PR #168" in r["library"]:
                r["w"] *= 0.5
        g = lambda p, r, peak=peak: gemm_time(p, r, peak, h100[2])
        params = fit_best(g, fr, [[5e-6, 0.7, 0.8, 0.3, 16.0], [5e-6, 0.3, 0.3, 0.5, 16.0],
                                  [1e-5, 0.8, 0.9, 0.1, 100.0]])
        # an exposed share above 1 means the same as 1 (the formula clamps it); a
        # tokens_half below a thousandth of a token is flat (0)
        params[3] = min(params[3], 1.0)
        params[4] = params[4] if params[4] >= 1e-3 else 0.0
        err = rms_relative(g, params, fr)
        t0, e, em, ov, th = params
        say("%-24s e %.4g of %.4g TFLOP/s, e_mem %.4g, overlap %.4g, floor %.4g us, tokens_half "
            "%.4g; %d rows, RMS %.1f%%" % (name, e, peak / 1e12, em, ov, t0 * 1e6, th, len(fr),
                                           100 * err))
        for r in fr:
            say("    line %3d  M %5d N %5d K %5d  measured %8.2f us  model %8.2f us" %
                (r["line"], r["T"], r["N"], r["K"], r["t"] * 1e6, g(params, r) * 1e6))
        fields = {"gemm": {"efficiency": e, "bandwidth_efficiency": em, "overlap": ov,
                           "floor_s": t0, "tokens_half": th}}
        how = describe(fr, "gemm_hopper.csv", "(%s)" % kernel)
        fams.append(Family(name, "KERNEL_GEMM", kernel, devname, prec, peak, h100[2], fields,
                           fr, err, how))
    return fams


def mamf_ceilings(data, dev, say):
    """Max achievable matmul FLOPS (Bekman's table) over the datasheet peak: devices.csv
    where it has the device, else the 'theory' figure the row's notes quote."""
    alias = {"A100-SXM": "A100-80GB-SXM", "H100-SXM": "H100-SXM", "H200-SXM": "H200-SXM",
             "B200-SXM": "B200"}
    out = []
    for r in read_rows(os.path.join(data, "gemm_hopper.csv")):
        if not r["kernel"].startswith("maximum achievable matmul"):
            continue
        fp8 = r["precision"].startswith("FP8")
        name = alias.get(r["device"])
        if name in dev:
            peak, whence = dev[name][1 if fp8 else 0], "devices.csv " + name
        else:
            peak = float(re.search(r"theory (\d+) TFLOPS", r["notes"]).group(1)) * 1e12
            whence = "the row's notes (not in devices.csv)"
        tf = float(r["tflops"]) * 1e12
        out.append((r["device"].split(" (")[0], "PREC_FP8" if fp8 else "PREC_BF16", tf, peak,
                    tf / peak, r["line"], whence))
    say("\nMAMF ceilings (gemm_hopper.csv, Bekman's mamf-finder table):")
    for d, p, tf, peak, share, line, whence in out:
        say("    line %3d %-12s %-9s %7.1f of %6.0f TFLOP/s = %.3f (peak: %s)" %
            (line, d, p[5:], tf / 1e12, peak / 1e12, share, whence))
    return out


# ---- (b) attention --------------------------------------------------------------------------

def attention_flops(r):
    """(full, causal) FLOPs of a forward row: FlashAttention's 4 s_q s_kv d h b, halved if
    causal; from TFLOPS x time where heads or batch are not printed."""
    causal = r["causal"].startswith("True")
    t = num(r["time_us"])
    if r["batch"] and r["heads_q"]:
        f = 4.0 * float(r["batch"]) * float(r["seqlen_q"]) * float(r["seqlen_kv"]) * \
            float(r["head_dim"]) * float(r["heads_q"])
        f = f / 2 if causal else f
    else:
        f = float(r["tflops"]) * 1e12 * t * 1e-6
    if not t:
        t = f / (float(r["tflops"]) * 1e12) * 1e6
    return (0.0, f) if causal else (f, 0.0), t * 1e-6


def fit_attention(data, dev, say):
    rows = read_rows(os.path.join(data, "attention_hopper.csv"))
    fams = []
    h100, pcie = dev["H100-SXM"], dev["H100-PCIe"]
    # FA3 BF16/FP16 forward on H100 SXM class: the paper's full kernel (line 13; the two
    # ablations are not a shipped kernel), tritonbench #1267 (H100 BF16) and #1254
    # ("Hopper", H100 assumed), issue #1438 (H100 and H200: H200 has H100's compute).
    # Line 107 is dropped: 8,837 us for the non-causal 4096 row is 3.5x the 1,237 us of
    # the causal one at the same shape (half the FLOPs) and 187 TFLOP/s against 628 in
    # #1254: a misprint or a broken run.
    def fa3_bf16(r):
        return (r["kernel"].startswith("FlashAttention-3") and r["phase"] == "fwd" and
                r["line"] not in (14, 15, 107) and
                ("H100" in r["device"] or "H200" in r["device"] or r["device"].startswith("Hopper"))
                and "PCIe" not in r["device"] and "FP8" not in r["precision"])

    def fa3_fp8(r):
        return (r["kernel"].startswith("FlashAttention-3 forward (FP8") and
                r["device"] == "H100-PCIe")

    for name, kernel, devname, prec, peak, pick in [
            ("fa3_bf16_h100", "FlashAttention-3 forward, BF16/FP16", "H100-SXM", "PREC_BF16",
             h100[0], fa3_bf16),
            ("fa3_fp8_h100_pcie", "FlashAttention-3 forward, FP8 (PR #1075; precision inferred "
             "by the fit set, flagged)", "H100-PCIe", "PREC_FP8", pcie[1], fa3_fp8)]:
        fr = []
        for r in rows:
            if r["superseded"].strip() or not pick(r):
                continue
            (full, causal), t = attention_flops(r)
            d = dict(r)
            d.update(full=full, causal=causal, t=t, F=full + causal)
            fr.append(d)
        weigh(fr, lambda r: r["F"] / 1e9)
        has_causal = any(r["causal"] > 0 for r in fr)
        if has_causal:
            pf = lambda p, r, peak=peak: prefill_time(p, r, peak)
            params = fit_best(pf, fr, [[2e-5, 0.6, 0.6], [2e-6, 0.4, 0.4]])
        else:  # no causal rows: the triangle at the full pairs' rate (flagged)
            pf = lambda p, r, peak=peak: prefill_time((p[0], p[1], p[1]), r, peak)
            params = fit_log(pf, fr, [2e-5, 0.4])
            params = [params[0], params[1], params[1]]
            pf = lambda p, r, peak=peak: prefill_time(p, r, peak)
        err = rms_relative(pf, params, fr)
        say("%-24s e_cached (full pairs) %.4g, e_new (causal) %.4g of %.4g TFLOP/s, floor %.4g "
            "us; %d rows, RMS %.1f%%%s" % (name, params[1], params[2], peak / 1e12,
                                          params[0] * 1e6, len(fr), 100 * err,
                                          "" if has_causal else " (no causal rows: e_new = "
                                          "e_cached, assumed)"))
        for r in fr:
            say("    line %3d  %s  measured %9.2f us  model %9.2f us" %
                (r["line"], "causal" if r["causal"] else "full  ", r["t"] * 1e6,
                 pf(params, r) * 1e6))
        fields = {"attn_prefill": {"cached_efficiency": params[1], "new_efficiency": params[2],
                                   "floor_s": params[0]}}
        how = describe(fr, "attention_hopper.csv", "(%s)" % kernel)
        if not has_causal:
            how += "; no causal rows, new_efficiency set to cached_efficiency (assumed)"
        fams.append(Family(name, "KERNEL_ATTN_PREFILL", kernel, devname, prec, peak,
                           (h100 if devname == "H100-SXM" else pcie)[2], fields, fr, err, how))

    # FA3 BF16 backward on H100 (tritonbench #1267's FA3 column, B 4, H 48, D 128, causal,
    # 1,024-8,192 tokens): the forward family's FLOPs x 2.5 at an efficiency that grows with
    # the sequence (its per-token passes: dO.O, dQ's accumulation and conversion).  Three
    # constants for four rows of one shape; the floor is held at 0 (the smallest row is
    # 710 us, no launch-bound point).
    fr = []
    for r in rows:
        if (r["kernel"].startswith("FlashAttention-3 bwd") and r["device"] == "H100" and
                not r["superseded"].strip()):
            (full, causal), t = attention_flops(r)
            d = dict(r)
            d.update(F=full + causal, s=float(r["seqlen_kv"]), t=t)
            fr.append(d)
    weigh(fr, lambda r: r["F"] / 1e9)
    bf = lambda p, r: backward_time((0.0, p[0], p[1]), r, h100[0])
    params = fit_best(bf, fr, [[0.7, 2000.0], [0.5, 500.0]])
    err = rms_relative(bf, params, fr)
    say("%-24s e %.4g of %.4g TFLOP/s (backward = 2.5 x forward FLOPs), s_half %.4g tokens, "
        "floor 0; %d rows, RMS %.1f%%" % ("fa3_bwd_bf16_h100", params[0], h100[0] / 1e12,
                                          params[1], len(fr), 100 * err))
    for r in fr:
        say("    line %3d  s %5d  measured %9.2f us  model %9.2f us" %
            (r["line"], r["s"], r["t"] * 1e6, bf(params, r) * 1e6))
    fams.append(Family("fa3_bwd_bf16_h100", "KERNEL_ATTN_BACKWARD",
                       "FlashAttention-3 backward, BF16", "H100-SXM", "PREC_BF16", h100[0],
                       h100[2], {"attn_backward": {"efficiency": params[0],
                                                   "tokens_half": params[1], "floor_s": 0.0}},
                       fr, err, describe(fr, "attention_hopper.csv",
                                         "(FlashAttention-3 backward, BF16, tritonbench "
                                         "#1267; floor 0)")))

    # FA3 paged decode on H100 (issue #1572, a user's comment): 16 sequences x 32 kv heads
    # x 128 x BF16, K and V.  One width (512): width_half cannot be fitted, left 0 (flat).
    fr = []
    for r in rows:
        if r["kernel"].startswith("FlashAttention-3 paged decode"):
            b, kv, h, d = (float(r[k]) for k in ("batch", "seqlen_kv", "heads_kv", "head_dim"))
            x = dict(r)
            x.update(bytes=2.0 * b * kv * h * d * 2, t=float(r["time_us"]) * 1e-6,
                     width=b * h)
            fr.append(x)
    weigh(fr)
    df = lambda p, r: decode_time(p, r, h100[2])
    params = fit_log(df, fr, [1e-5, 0.6])
    err = rms_relative(df, params, fr)
    say("%-24s e %.4g of %.0f GB/s, floor %.4g us, width_half 0 (one width, %d); %d rows, "
        "RMS %.1f%%" % ("fa3_decode_bf16_h100", params[1], h100[2] / 1e9, params[0] * 1e6,
                        fr[0]["width"], len(fr), 100 * err))
    fams.append(Family("fa3_decode_bf16_h100", "KERNEL_ATTN_DECODE",
                       "FlashAttention-3 paged decode (flash_attn_with_kvcache), BF16 cache",
                       "H100-SXM", "PREC_BF16", h100[0], h100[2],
                       {"attn_decode": {"efficiency": params[1], "width_half": 0,
                                        "floor_s": params[0]}},
                       fr, err, describe(fr, "attention_hopper.csv",
                                         "(FA3 paged decode, issue #1572, a user's run; one "
                                         "width, width_half 0)")))

    # FlashMLA dense decode on H100 (achatbot PR #123, a user's benchmark): 576-wide BF16
    # latent + rotary cache, one latent head, b = 128: one width again.  Compute: no
    # compute-bound H100/H800 point with a shape; the README's "up to 660 TFLOPS" on H800
    # (H100 SXM's peak) is used as a ceiling and flagged so.
    fr = []
    for r in rows:
        if r["kernel"].startswith("FlashMLA decode") and r["device"].startswith("H100"):
            b, sq, kv, hq = (float(r[k]) for k in ("batch", "seqlen_q", "seqlen_kv", "heads_q"))
            x = dict(r)
            x.update(bytes=b * kv * 576 * 2.0, t=float(r["time_us"]) * 1e-6,
                     flops=2.0 * b * sq * hq * kv * (576 + 512))
            fr.append(x)
    weigh(fr)
    params = fit_log(df, fr, [1e-5, 0.8])
    err = rms_relative(df, params, fr)
    ceiling = [r for r in rows if r["line"] == 4][0]
    ce = float(ceiling["tflops"]) * 1e12 / h100[0]
    bw_ceiling = float(ceiling["gbs"]) * 1e9 / h100[2]
    say("%-24s e %.4g of %.0f GB/s (README ceiling %.3f), floor %.4g us; compute %.4g of the "
        "BF16 peak (README 'up to' 660 TFLOP/s, line 4: a ceiling); %d rows, RMS %.1f%%; the "
        "rows' own FLOP rates reach %.0f TFLOP/s, memory-bound" %
        ("flashmla_bf16_h100", params[1], h100[2] / 1e9, bw_ceiling, params[0] * 1e6, ce,
         len(fr), 100 * err, max(r["flops"] / r["t"] for r in fr) / 1e12))
    fams.append(Family("flashmla_bf16_h100", "KERNEL_MLA_DECODE",
                       "FlashMLA dense decode (flash_mla_with_kvcache), BF16 latent cache",
                       "H100-SXM", "PREC_BF16", h100[0], h100[2],
                       {"mla": {"efficiency": params[1], "width_half": 0, "floor_s": params[0],
                                "compute_efficiency": ce, "compute_is_ceiling": True}},
                       fr, err, describe(fr, "attention_hopper.csv",
                                         "(FlashMLA decode on H100, achatbot PR #123, a user's "
                                         "benchmark; compute from the H800 README ceiling, "
                                         "line 4)"),
                       {"bw_ceiling": bw_ceiling}))

    # FlashMLA FP8 sparse decode (DeepSeek-V3.2), H800: the deep-dive's 410 TFLOP/s at a
    # stated shape (line 5) is a point; 460 at topk 32768 (line 7, "up to") a ceiling;
    # 250 (line 6) the previous kernel.  The FP8 cache is dequantised and multiplied in
    # BF16: the efficiency is of the BF16 peak.  No memory figure: bandwidth 0.
    p5 = [r for r in rows if r["line"] == 5][0]
    ce8 = float(p5["tflops"]) * 1e12 / h100[0]
    c7 = float([r for r in rows if r["line"] == 7][0]["tflops"]) * 1e12 / h100[0]
    say("%-24s compute %.4g of the BF16 peak (line 5, one point: exact); the topk-32768 "
        "ceiling (line 7) is %.4g" % ("flashmla_fp8_sparse_h800", ce8, c7))
    p5.update(t=1.0, w=1.0)
    fams.append(Family("flashmla_fp8_sparse_h800", "KERNEL_MLA_DECODE",
                       "FlashMLA token-level sparse MLA decode, FP8 cache dequantised to BF16",
                       "H800", "PREC_BF16", h100[0], h100[2],
                       {"mla": {"efficiency": 0, "width_half": 0, "floor_s": 0,
                                "compute_efficiency": ce8, "compute_is_ceiling": False}},
                       [p5], 0.0, "attention_hopper.csv line 5 (FlashMLA FP8 sparse decode "
                       "deep-dive, 410 TFLOP/s at batch 128, 128 heads, s_q 2, topk 2048), "
                       "one point, no fit; memory not measured (efficiency 0)",
                       {"ceiling": c7}))
    return fams


# ---- (c) MoE grouped GEMMs --------------------------------------------------------------------

def touched(E, k, T):
    """Experts that T tokens, each routed to k of E at random, reach on average."""
    return E * (1.0 - (1.0 - float(k) / E) ** T)


def fit_grouped(data, dev, say):
    rows = read_rows(os.path.join(data, "moe_gemm.csv"))
    h100, h200, a100 = dev["H100-SXM"], dev["H200-SXM"], dev["A100-80GB-SXM"]
    fams = []
    # DeepGEMM grouped FP8 on H800: README rows as last revised (contiguous and masked);
    # PR #74's tile A/B rows are development runs the later README took in.
    fr = []
    for r in rows:
        if r["library"] != "DeepGEMM" or r["superseded"].strip():
            continue
        G, m, N, K = (float(r[k]) for k in ("num_groups", "m_per_group", "n", "k"))
        x = dict(r)
        x.update(gemms=[(G, m, N, K)], wb=1.0, m=m,
                 t=2.0 * G * m * N * K / (float(r["tflops"]) * 1e12))
        fr.append(x)
    weigh(fr, lambda r: r["m"])
    gf = lambda p, r: grouped_time(p, r, h100[1], h100[2])
    params = fit_best(gf, fr, [[5e-6, 0.7, 64.0, 0.8], [5e-6, 0.3, 8.0, 0.6]])
    err = rms_relative(gf, params, fr)
    say("%-24s e %.4g of 1979 TFLOP/s, m_half %.4g, e_mem %.4g, floor %.4g us; %d rows, RMS "
        "%.1f%%" % ("deepgemm_grouped_fp8_h800", params[1], params[2], params[3],
                    params[0] * 1e6, len(fr), 100 * err))
    for r in fr:
        say("    line %3d  %-10s G %d m %5d N %d K %d  measured %7.1f us  model %7.1f us" %
            (r["line"], r["layout"], r["gemms"][0][0], r["m"], r["gemms"][0][2],
             r["gemms"][0][3], r["t"] * 1e6, gf(params, r) * 1e6))
    fams.append(Family("deepgemm_grouped_fp8_h800", "KERNEL_GROUPED_GEMM",
                       "DeepGEMM m_grouped_gemm_fp8_fp8_bf16_nt, contiguous and masked",
                       "H800", "PREC_FP8", h100[1], h100[2], {"grouped": params}, fr, err,
                       describe(fr, "moe_gemm.csv", "(DeepGEMM grouped FP8 README tables, "
                                "contiguous and masked)")))

    # DeepGEMM's k-grouped weight-gradient kernel (training's backward of the experts): each
    # group's gradient, N x K = m_per_group x n, sums over its k tokens, then is written
    # once in fp32.  Its own formula (models/kernel_constants.h, wgrad): t = C + W, C = 2 G
    # k N K / (P e) the products, W = 4 G N K / (BW e_w) the fp32 gradients written after
    # the sum, in series (the epilogue); fitted here, e and e_w.  One user's runs on H200
    # (the only rows: they report 10-18% below the H800 figures PR #95 published, which
    # the set does not hold); two sizes of k separate the two terms.
    wr = []
    for r in rows:
        if not r["kernel"].startswith("k_grouped_wgrad") or r["superseded"].strip():
            continue
        G, mo, n, k = (float(r[c]) for c in ("num_groups", "m_per_group", "n", "k"))
        x = dict(r)
        x.update(G=G, k=k, N=n, K=mo, m=k, t=2.0 * G * mo * n * k / (float(r["tflops"]) * 1e12))
        wr.append(x)
    weigh(wr, lambda r: r["m"])
    wf = lambda p, r: wgrad_time(p, r, h200[1], h200[2])
    wp = fit_best(wf, wr, [[0.5, 0.8], [0.3, 0.3]])
    werr = rms_relative(wf, wp, wr)
    say("%-24s e %.4g of 1979 TFLOP/s, e_w %.4g of the bandwidth for the fp32 gradients; %d "
        "rows, RMS %.1f%%" % ("deepgemm_wgrad_fp8_h200", wp[0], wp[1], len(wr), 100 * werr))
    for r in wr:
        say("    line %3d  G %d k %5d  %d x %d  measured %7.1f us  model %7.1f us" %
            (r["line"], r["G"], r["k"], r["N"], r["K"], r["t"] * 1e6, wf(wp, r) * 1e6))
    fams.append(Family("deepgemm_wgrad_fp8_h200", "KERNEL_GROUPED_GEMM",
                       "DeepGEMM k_grouped_wgrad_gemm_fp8_fp8_fp32_nt (the experts' weight "
                       "gradients: the products, then the fp32 gradients written)", "H200-SXM",
                       "PREC_FP8", h200[1], h200[2], {"grouped": [0.0, wp[0], 0.0, wp[1]]},
                       wr, werr,
                       describe(wr, "moe_gemm.csv", "(DeepGEMM k-grouped FP8 weight-gradient "
                                "kernel, one user's H200 runs, 10-18% below the H800 "
                                "figures they compare with)")))

    # Triton fused_moe: one MoE layer = gate-up (N = 2n, K = hidden) and down (N = hidden,
    # K = n) over the experts T tokens touch, m = T topk / touched tokens each.  Tuned
    # configs where the set has them (vLLM and SGLang ship per-device tuned config files).
    specs = [
        ("fused_moe_bf16_h200", "vLLM fused_moe Triton, tuned config (from SGLang PR "
         "#26588), Gemma4 MoE 128 x 704, top-8", "H200-SXM", "PREC_BF16", h200[0], h200[2],
         lambda r: r["device"] == "H200" and "tuned config" in r["kernel"]),
        ("fused_moe_fp8_h100", "vLLM fused_moe Triton, FP8 w8a8, main's default config "
         "(PR #24700's proposed defaults were not merged), Qwen3-30B-A3B 128 x 768, top-8",
         "H100-SXM", "PREC_FP8", h100[1], h100[2],
         lambda r: r["device"].startswith("H100") and "default config on main" in r["kernel"]),
        ("fused_moe_fp8_h200_default", "SGLang fused_moe_triton, FP8 w8a8, untuned default "
         "(no tuned column), Qwen3-235B-A22B TP8 128 x 192, top-8", "H200-SXM", "PREC_FP8",
         h200[1], h200[2],
         lambda r: r["device"] == "H200" and r["library"] == "SGLang"),
        ("fused_moe_bf16_a100", "vLLM fused_moe Triton, tuned config, 64 x 1408, top-6",
         "A100-80GB-SXM", "PREC_BF16", a100[0], a100[2],
         lambda r: r["device"].startswith("A100") and "tuned config" in r["kernel"]),
    ]
    for name, kernel, devname, prec, peak, bw, pick in specs:
        fr = []
        for r in rows:
            if r["superseded"].strip() or not r["kernel"].startswith("fused_moe") or not pick(r):
                continue
            E, n, h, T, k = (float(r[c]) for c in ("num_groups", "n", "k", "tokens_per_rank",
                                                   "topk"))
            G = touched(E, k, T)
            m = T * k / G
            x = dict(r)
            x.update(gemms=[(G, m, 2 * n, h), (G, m, h, n)], T=T, m=m,
                     wb=1.0 if prec == "PREC_FP8" else 2.0, t=float(r["time_us"]) * 1e-6)
            fr.append(x)
        weigh(fr, lambda r: r["T"])
        gf = lambda p, r, peak=peak, bw=bw: grouped_time(p, r, peak, bw)
        params = fit_best(gf, fr, [[1e-5, 0.5, 16.0, 0.6], [1e-5, 0.1, 10.0, 0.7],
                                   [1e-5, 0.8, 100.0, 0.9]])
        err = rms_relative(gf, params, fr)
        say("%-24s e %.4g of %.4g TFLOP/s, m_half %.4g, e_mem %.4g, floor %.4g us a launch; %d "
            "rows, RMS %.1f%%" % (name, params[1], peak / 1e12, params[2], params[3],
                                  params[0] * 1e6, len(fr), 100 * err))
        for r in fr:
            say("    line %3d  T %5d  m %7.2f  measured %8.1f us  model %8.1f us" %
                (r["line"], r["T"], r["m"], r["t"] * 1e6, gf(params, r) * 1e6))
        fams.append(Family(name, "KERNEL_GROUPED_GEMM", kernel, devname, prec, peak, bw,
                           {"grouped": params}, fr, err,
                           describe(fr, "moe_gemm.csv", "(%s; a layer = gate-up + down "
                                    "launches over the experts touched)" % kernel)))
    return fams


# ---- (d) MoE all-to-all -------------------------------------------------------------------------

def a2a_bytes(r):
    T, k, h = float(r["tokens_per_rank"]), float(r["topk"]), float(r["hidden"])
    fp8 = r["op"] == "dispatch" and "BF16" not in r["precision"] and "FP4" not in r["precision"]
    return T * k * (fp8_bytes(h) if fp8 else 2.0 * h)


def fit_alltoall(data, say):
    rows = [r for r in read_rows(os.path.join(data, "moe_alltoall.csv"))
            if not r["superseded"].strip()]
    fams = []

    def rowset(pick):
        out = []
        for r in rows:
            if not pick(r):
                continue
            x = dict(r)
            x["bytes"] = a2a_bytes(r)
            lat, bw = num(r["latency_us"]), num(r["bandwidth_gbs"])
            x["t"] = lat * 1e-6 if lat else x["bytes"] / (bw * 1e9)
            out.append(x)
        return out

    specs = [
        # name, kernel, device, link, pick, pooled (one alpha and e for both ops)
        ("deepep_normal_nvlink_h800", "DeepEP normal kernels, intranode NVLink (EP 8)", "H800",
         LINK_H800_NVLINK, lambda r: r["kernel"].startswith("normal (high-throughput) v1")
         and r["ep_size"] == "8", False),
        ("deepep_normal_rdma_h800", "DeepEP normal kernels, internode RDMA (EP 16-64)", "H800",
         LINK_CX7, lambda r: r["kernel"].startswith("normal (high-throughput) v1")
         and r["ep_size"] != "8", False),
        ("deepep_ll_nvlink_h800", "DeepEP low-latency kernels, EP 8 in one node (NVLink, "
         "README of 2025-06-05)", "H800", LINK_H800_NVLINK,
         lambda r: r["kernel"] == "low-latency v1" and r["ep_size"] == "8", True),
        ("deepep_ll_rdma_h800", "DeepEP low-latency kernels, EP 16-256 over RDMA", "H800",
         LINK_CX7, lambda r: r["kernel"] == "low-latency v1" and r["ep_size"] != "8", True),
        ("hybrid_ep_rdma_h100", "Hybrid-EP (DeepEP hybrid-ep branch), kernel only, 16 SMs, "
         "EP 16-64 over IB (a 400 Gb/s NIC a GPU assumed)", "H100-SXM", LINK_CX7,
         lambda r: r["kernel"] == "Hybrid-EP" and r["device"] == "H100" and
         r["timing_scope"] == "kernel only" and r["num_sms"] == "16" and
         not (r["op"] == "dispatch" and r["precision"] == "BF16"), False),
        ("hybrid_ep_nvlink_gb200", "Hybrid-EP, kernel only, 32 SMs, EP 8-36 in a GB200 NVL72",
         "GB200", LINK_NVL72,
         lambda r: r["kernel"] == "Hybrid-EP" and r["device"] == "GB200" and
         r["timing_scope"] == "kernel only" and r["num_sms"] == "32" and
         not (r["op"] == "dispatch" and r["precision"] == "BF16"), False),
        ("trtllm_onesided_nvl72", "TensorRT-LLM NVLinkOneSided all-to-all, BF16, EP 8-64, "
         "1-2048 tokens a rank, GB200 NVL72", "GB200", LINK_NVL72,
         lambda r: r["kernel"] == "NVLinkOneSided AlltoAll" and r["line"] <= 386, False),
        ("pplx_ibgda", "pplx-kernels IBGDA, EP 16-128 (device, dtype and hidden not stated "
         "with the table: H800-class, FP8 dispatch, hidden 7168 assumed)", "H800", LINK_CX7,
         lambda r: r["kernel"] == "pplx-kernels IBGDA", False),
        ("pplx_nvlink", "pplx-kernels NVLink, EP 8 (same caveats)", "H800", LINK_H800_NVLINK,
         lambda r: r["kernel"] == "pplx-kernels NVLINK", False),
    ]
    for name, kernel, devname, link, pick, pooled in specs:
        fr = rowset(pick)
        weigh(fr, lambda r: r["bytes"] / 1024)
        af = lambda p, r, link=link: a2a_time(p, r, link)
        out = {}
        sizes = set(r["bytes"] for r in fr)
        groups = [("both", fr)] if pooled else [(op, [r for r in fr if r["op"] == op])
                                                 for op in ("dispatch", "combine")]
        for op, g in groups:
            if len(set(r["bytes"] for r in g)) > 1:
                p = fit_log(af, g, [2e-5, 0.8])
            else:  # one message size: alpha cannot be told from the bandwidth
                f1 = lambda q, r, link=link: a2a_time((0.0, q[0]), r, link)
                p = [0.0, fit_log(f1, g, [0.8])[0]]
            out[op] = (p, rms_relative(af, p, g), len(g))
        if pooled:
            out["dispatch"] = out["combine"] = out["both"]
        err = math.sqrt(  # each op with its own constants
            sum(r["w"] * (af(out[r["op"]][0], r) / r["t"] - 1) ** 2 for r in fr) /
            sum(r["w"] for r in fr))
        say("%-26s %s: dispatch alpha %.4g us e %.4g, combine alpha %.4g us e %.4g of %.0f GB/s; "
            "%d rows (%d sizes), RMS %.1f%%" % (name, "pooled" if pooled else "per op",
                                               out["dispatch"][0][0] * 1e6, out["dispatch"][0][1],
                                               out["combine"][0][0] * 1e6, out["combine"][0][1],
                                               link / 1e9, len(fr), len(sizes), 100 * err))
        fields = {"dispatch": out["dispatch"][0], "combine": out["combine"][0], "link": link}
        note = "" if len(sizes) > 1 else "; one message size, alpha 0 (not identifiable)"
        if pooled:
            note += "; one alpha and efficiency for dispatch and combine (each op has one size)"
        fams.append(Family(name, "KERNEL_ALLTOALL", kernel, devname, "PREC_BF16", 0, 0, fields,
                           fr, err, describe(fr, "moe_alltoall.csv", "(%s)" % kernel) + note))
    return fams


# ---- (e) collectives ------------------------------------------------------------------------------

def fit_collectives(data, dev, say):
    rows = read_rows(os.path.join(data, "collectives_scale.csv"))
    h200, b200 = dev["H200-SXM"], dev["B200"]

    def rowset(lines, n_of=None):
        out = []
        for r in rows:
            if r["line"] not in lines:
                continue
            # across nodes, a hierarchical all-reduce: each GPU's NIC carries 1/g of the
            # data between the nodes, so n is the node count and the link the node's NICs
            n = float(r["nodes"]) if float(r["nodes"]) > 1 else float(r["ranks"])
            size = float(r["size_bytes"])
            f = 2.0 * (n - 1) / n if r["collective"] == "all_reduce" else (n - 1) / n
            t = num(r["time_us"])
            if t:
                t *= 1e-6
            elif num(r["algbw_gbs"]):
                t = size / (float(r["algbw_gbs"]) * 1e9)
            else:  # nccl-tests' bus bandwidth counts every rank
                ranks = float(r["ranks"])
                share = 2.0 if r["collective"] == "all_reduce" else 1.0
                t = share * (ranks - 1) / ranks * size / (float(r["busbw_gbs"]) * 1e9)
            x = dict(r)
            x.update(n=n, f=f, bytes=size, t=t)
            out.append(x)
        return out

    fams = []
    specs = [
        ("nvls_allreduce_h200x8", "all-reduce, 8 H200 of a node, NCCL auto (ring LL to 1 MiB, "
         "NVLS from 2 MiB)", "H200-SXM", "all_reduce", h200[3], range(12, 32), None),
        ("ring_allreduce_h200x8", "all-reduce, 8 H200, ring: the auto sweep's ring-LL sizes "
         "(<= 1 MiB) and the NVLS-off large rows", "H200-SXM", "all_reduce", h200[3],
         list(range(12, 18)) + [32, 42, 54], None),
        ("ring_allgather_h200x8", "all-gather, 8 H200, ring (one 16 GiB row; alpha that of "
         "ring_allreduce_h200x8)", "H200-SXM", "all_gather", h200[3], [55], "ring"),
        ("ring_reducescatter_h200x8", "reduce-scatter, 8 H200, ring (one 16 GiB row; alpha "
         "that of ring_allreduce_h200x8)", "H200-SXM", "reduce_scatter", h200[3], [56], "ring"),
        ("nvls_allreduce_b200x8", "all-reduce, 8 B200 of an AWS p6-b200 node, NCCL auto",
         "B200", "all_reduce", b200[3], range(57, 97, 2), None),
        # 32-128 KiB (lines 58, 60, 62) dropped: busbw printed to 0.01 GB/s (0.01-0.45)
        # and the times it gives fall as the size grows (6.3 ms to 0.57 ms)
        ("allreduce_b200_4nodes_efa", "all-reduce, 4 nodes x 8 B200 over EFA v4, hierarchical: "
         "n = 4 nodes, link = the node's 8 x 50 GB/s", "B200", "all_reduce",
         8 * LINK_EFA_B200, range(64, 97, 2), None),
        ("allreduce_h100_2nodes_tcpxo", "all-reduce, 2 nodes x 8 H100 (GCP A3 Mega, GPUDirect-"
         "TCPXO), hierarchical: n = 2 nodes; NIC speed not stated: link = the fitted bandwidth "
         "between the nodes, efficiency 1", "H100-SXM", "all_reduce", None, range(99, 130), None),
    ]
    ring_alpha = None
    for name, kernel, devname, kind, link, lines, borrow in specs:
        fr = rowset(set(lines))
        weigh(fr, lambda r: r["bytes"] / 1024)
        if link is None:
            cf = lambda p, r: collective_time(p, r, 1.0)
            p = fit_log(cf, fr, [1e-4, 1e11])
            err = rms_relative(cf, p, fr)
            link_out, p = p[1], [p[0], 1.0]
        elif borrow:
            cf = lambda q, r, link=link: collective_time((ring_alpha, q[0]), r, link)
            p = [ring_alpha, fit_log(cf, fr, [0.8])[0]]
            err = rms_relative(lambda q, r, link=link: collective_time(q, r, link), p, fr)
            link_out = link
        else:
            cf = lambda q, r, link=link: collective_time(q, r, link)
            p = fit_log(cf, fr, [2e-5, 0.8])
            err = rms_relative(cf, p, fr)
            link_out = link
        if name == "ring_allreduce_h200x8":
            ring_alpha = p[0]
        n = int(fr[0]["n"])
        say("%-28s n %2d alpha %.4g us, e %.4g of %.0f GB/s; %d rows, RMS %.1f%%" %
            (name, n, p[0] * 1e6, p[1], link_out / 1e9, len(fr), 100 * err))
        fams.append(Family(name, "KERNEL_COLLECTIVE", kernel, devname, "PREC_BF16", 0, 0,
                           {"collective": {"kind": kind, "n": n, "alpha_s": p[0],
                                           "efficiency": p[1], "link": link_out}},
                           fr, err, describe(fr, "collectives_scale.csv", "(%s)" % kernel)))
    # checks against the maintainers' expected values (not measurement tables)
    nv = [f for f in fams if f.name == "nvls_allreduce_h200x8"][0].fields["collective"]
    rg = [f for f in fams if f.name == "ring_allreduce_h200x8"][0].fields["collective"]
    say("    checks: NVLS busbw at large sizes %.0f GB/s (maintainers: ~480 on 8 H100, lines "
        "130, 132); ring %.0f GB/s (maintainers: ~370, line 131); GB200 NVL72 850 vs 680 GB/s "
        "with/without SHARP (lines 97-98, from a slide: not fitted); 2 x 8 H20 (lines 2-11): "
        "dropped, the poster calls the run below expectation" %
        (nv["efficiency"] * nv["link"] / 1e9, rg["efficiency"] * rg["link"] / 1e9))
    return fams


# ---- (f) engine memory (report only) ------------------------------------------------------------

def report_memory(data, say):
    rows = read_rows(os.path.join(data, "engine_memory.csv"))
    say("\nengine memory (engine_memory.csv; reported, no C):")
    gib = 2.0 ** 30
    for r in rows:
        if r["engine"] != "vLLM" or not r["activation_peak_gib"]:
            continue
        act, nt = float(r["activation_peak_gib"]), float(r["non_torch_gib"])
        mml = r["max_model_len"] or "default"
        say("    line %d %s tp %s: weights %s GiB, non-torch %.2f GiB, activation peak %.2f GiB "
            "(max_model_len %s)" % (r["line"], r["model"], r["tp"], r["weights_gib"], nt, act, mml))
    l2, l3, l4 = rows[0], rows[1], rows[2]
    a = float(l2["activation_peak_gib"]) * gib
    say("    Llama-3-8B: the profile run's tokens are not printed; vLLM's default of the time "
        "(max(max_model_len, 2048) = 8192 without chunked prefill) is inferred, not stated: "
        "%.2f GiB / 8192 = %.0f KiB a token = %.1f hidden states of 4096 x 2 bytes" %
        (a / gib, a / 8192 / 1024, a / 8192 / (4096 * 2)))
    say("    the same peak at tp 2 (1.26 GiB, line 3): it does not shrink with tp, so it is not "
        "the sharded MLP's intermediate alone")
    say("    non-torch memory: %.2f GiB at tp 1, %.2f at tp 2: +%.2f GiB a GPU with tensor "
        "parallelism (NCCL and custom all-reduce buffers, per the row's notes)" %
        (float(l2["non_torch_gib"]), float(l3["non_torch_gib"]),
         float(l3["non_torch_gib"]) - float(l2["non_torch_gib"])))
    a4 = float(l4["activation_peak_gib"]) * gib
    say("    Llama-3.2-11B-Vision (line 4, eager, max_model_len 65536, 128 seqs): %.2f GiB "
        "activation peak, multimodal profiling dominates; / 65536 tokens = %.0f KiB a token "
        "(if the profile ran max_model_len tokens: not stated); non-torch %.2f GiB" %
        (a4 / gib, a4 / 65536 / 1024, float(l4["non_torch_gib"])))
    say("    lines 5-7 (SGLang, vLLM B200 CUDA-graph estimate, TensorRT-LLM workspace): "
        "text-only figures, see the file; the B200 line shows the graph-memory estimate cutting "
        "the KV cache 3.1x (245,840 -> 769,888 tokens without it)")


# ---- writing the C table ----------------------------------------------------------------------

def cbool(x):
    return "true" if x else "false"


def write_c(fams, ceilings, path, data_label):
    L = []
    w = L.append
    w("/* The kernel-family constants table (see models/kernel_constants.h).")
    w(" *")
    w(" * GENERATED by tools/fit_kernels.py from %s, the fit set's second" % data_label)
    w(" * part, and the datasheet peaks of ../shared/reference/devices.csv.  Change the data or")
    w(" * the fit, not this file, and run")
    w(" *     python3 tools/fit_kernels.py --c models/kernel_constants.c")
    w(" * RMS errors are relative (predicted / measured - 1), weighted as in the fit (trust of")
    w(" * the source x one share per power-of-two bucket of size).")
    w(" *")
    w(" * Credit for the figures:")
    for c in CREDITS:
        words = ("- " + c).split()
        line = " *"
        for word in words:
            if len(line) + 1 + len(word) > 92:
                w(line)
                line = " *  "
            line += " " + word
        w(line)
    w(" */")
    w('#include "models/kernel_constants.h"')
    w("")
    w("#include <stddef.h>")
    w("")
    for f in fams:
        ident = "KF_" + f.name.upper()
        w(comment("%s: %s, RMS %.1f%%" % (f.name, f.how, 100 * f.rms), ""))
        w("static const perf_kernel_family %s = {" % ident)
        w('    .name = "%s", .cls = %s,' % (f.name, f.cls))
        if len(f.kernel) + 17 <= 92:
            w('    .kernel = "%s",' % f.kernel.replace('"', "'"))
        else:
            w("    .kernel =")
            w(c_string(f.kernel, " " * 8) + ",")
        w('    .device = "%s", .precision = %s,' % (f.device, f.prec))
        w("    .peak_flops = %s, .bandwidth_bytes_per_s = %s, .rms_error = %s," %
          (cnum(f.peak), cnum(f.bw), cnum(f.rms)))
        x = f.fields
        if "gemm" in x:
            g = x["gemm"]
            w("    .gemm = { .efficiency = %s, .bandwidth_efficiency = %s, .overlap = %s," %
              (cnum(g["efficiency"]), cnum(g["bandwidth_efficiency"]), cnum(g["overlap"])))
            w("              .floor_s = %s, .tokens_half = %s }," %
              (cnum(g["floor_s"]), cnum(g["tokens_half"])))
        if "attn_prefill" in x:
            a = x["attn_prefill"]
            w("    .attn_prefill = { .cached_efficiency = %s, .new_efficiency = %s," %
              (cnum(a["cached_efficiency"]), cnum(a["new_efficiency"])))
            w("                      .floor_s = %s }," % cnum(a["floor_s"]))
        if "attn_backward" in x:
            a = x["attn_backward"]
            w("    .attn_backward = { .efficiency = %s, .tokens_half = %s, .floor_s = %s }," %
              (cnum(a["efficiency"]), cnum(a["tokens_half"]), cnum(a["floor_s"])))
        if "attn_decode" in x:
            a = x["attn_decode"]
            w("    .attn_decode = { .efficiency = %s, .width_half = %s, .floor_s = %s }," %
              (cnum(a["efficiency"]), cnum(a["width_half"]), cnum(a["floor_s"])))
        if "mla" in x:
            a = x["mla"]
            w("    .mla_decode = { .memory = { .efficiency = %s, .width_half = %s, .floor_s = %s },"
              % (cnum(a["efficiency"]), cnum(a["width_half"]), cnum(a["floor_s"])))
            w("                    .compute_efficiency = %s, .compute_is_ceiling = %s }," %
              (cnum(a["compute_efficiency"]), cbool(a["compute_is_ceiling"])))
        if "grouped" in x:
            t0, e, mh, em = x["grouped"]
            w("    .grouped_gemm = { .efficiency = %s, .tokens_half = %s," % (cnum(e), cnum(mh)))
            w("                      .bandwidth_efficiency = %s, .floor_s = %s }," %
              (cnum(em), cnum(t0)))
        if "dispatch" in x:
            for op in ("dispatch", "combine"):
                a, e = x[op]
                w("    .%s = { .alpha_s = %s, .efficiency = %s, .link_bytes_per_s = %s }," %
                  (op, cnum(a), cnum(e), cnum(x["link"])))
        if "collective" in x:
            c = x["collective"]
            w("    .collective_kind = COLLECTIVE_%s," % c["kind"].upper())
            w("    .collective = { .n = %d, .alpha_s = %s, .efficiency = %s," %
              (c["n"], cnum(c["alpha_s"]), cnum(c["efficiency"])))
            w("                    .link_bytes_per_s = %s }," % cnum(c["link"]))
        w("};")
        w("")
    w("const perf_kernel_family *const perf_kernel_families[] = {")
    for f in fams:
        w("    &KF_%s," % f.name.upper())
    w("    NULL,")
    w("};")
    w("")
    w("/* Maximum achievable matmul FLOP/s (Bekman's mamf-finder table, gemm_hopper.csv) over")
    w(" * the datasheet peak: devices.csv where it lists the device, else the peak the row's")
    w(" * notes quote. */")
    w("const perf_matmul_ceiling perf_matmul_ceilings[] = {")
    for d, p, tf, peak, share, line, whence in ceilings:
        w('    { "%s", %s, %s, %s, %s }, /* line %d; peak: %s */' %
          (d, p, cnum(tf), cnum(peak), cnum(share), line,
           "devices.csv" if whence.startswith("devices") else "row's notes"))
    w("    { NULL, PREC_BF16, 0, 0, 0 },")
    w("};")
    w("")
    w("const perf_constant_note perf_kernel_notes[] = {")
    for f in fams:
        cls = f.cls[len("KERNEL_"):].lower()
        w('    { "%s", "%s",' % (f.name, cls))
        w(c_string("set by tools/fit_kernels.py on %s, RMS error %.1f%%" % (f.how, 100 * f.rms),
                   " " * 6) + ", %s }," % cnum(f.rms))
    w("    { NULL, NULL, NULL, 0 },")
    w("};")
    with open(path, "w") as fh:
        fh.write("\n".join(L) + "\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "reference",
                                                   "kernels"))
    ap.add_argument("--c", help="write the C constants table here")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    for f in FILES + [os.path.join("..", "devices.csv")]:
        if not os.path.exists(os.path.join(a.data, f)):
            sys.exit("fit_kernels.py: %s not found in %s" % (f, a.data))
    say = (lambda s: None) if a.quiet else print
    say("fit set: %s\ncredit: %s\n" % (os.path.normpath(a.data), "; ".join(CREDITS)))
    dev = devices(a.data)
    say("H800 is not in devices.csv: it has H100 SXM's compute (989.5 / 1979 TFLOP/s dense "
        "BF16 / FP8) and memory bandwidth (3,350 GB/s), so its rows are fitted against "
        "H100-SXM's row\n")
    say("(a) dense GEMM (gemm_hopper.csv)")
    fams = fit_gemm(a.data, dev, say)
    ceilings = mamf_ceilings(a.data, dev, say)
    say("\n(b) attention (attention_hopper.csv)")
    fams += fit_attention(a.data, dev, say)
    say("\n(c) MoE grouped GEMMs (moe_gemm.csv)")
    fams += fit_grouped(a.data, dev, say)
    say("\n(d) MoE all-to-all (moe_alltoall.csv); bytes = tokens x topk x hidden x (1 + 4/128 "
        "FP8 with scales | 2 BF16), no deduplication (DeepEP low-latency's and TensorRT-LLM's "
        "convention at EP >= topk); a published GB/s without a time is read in the same "
        "convention")
    fams += fit_alltoall(a.data, say)
    say("\n(e) collectives (collectives_scale.csv); link = one direction")
    fams += fit_collectives(a.data, dev, say)
    report_memory(a.data, say)
    if a.c:
        write_c(fams, ceilings, a.c, "../shared/reference/kernels")


if __name__ == "__main__":
    main()
