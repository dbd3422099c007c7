#!/usr/bin/env python3
"""Fits the per-operator constants of fleetsim's performance model (models/perf.h) to
measured operator times, and writes them as the constants table models/perf_constants.c.

    python3 tools/fit_operators.py [--data DIR] [--c FILE] [--sample FILE] [--quiet]

DIR (default ../shared/reference/operators) holds the fit set: layer_ops.csv,
attention_a100.csv, collectives.csv and engine_overheads.csv, "Vidur profiling data,
Microsoft (github.com/microsoft/vidur, MIT licence)" (see DIR/README.md).  The report
(stdout) gives every constant with the rows it was fitted to and the fit's RMS relative
error; --c writes the C table, --sample a small stratified sample of the fit rows that
tests/test_perf.c replays through the C model.  Only python3's standard library; the
fit is deterministic (Nelder-Mead from fixed starts, rows in file order), so the same
files give the same table byte for byte.

Each operator class has one formula, the same one models/perf.c evaluates:

  gemm      t = t0 + max(C, M) + overlap x min(C, M), C = 2 T K N / (P e),
                         M = 2 (K N + T K + T N) / (BW e_mem)   (the smaller side is
                                                      exposed in part)
  pass      t = max(t0, bytes / (BW e sat(T, T_half)))   (norms, rotary, activation,
                                                      adds, embedding, attention layout
                                                      copies; T tokens: their kernels run
                                                      a token or a few per block)
  decode    t = t0 + kv_bytes / (BW e)               (attention over the cache, one
                                                      token per sequence: split-KV kernels
                                                      cut each sequence's cache into
                                                      partitions, so the blocks grow with
                                                      the context, not with the batch)
  prefill   t = t0 + F_cached / (P e_cached) + F_new / (P e_new)       (flash attention:
                                                      F = 4 hd q_heads pairs, pairs of a new
                                                      and a cached token, chunk x cached,
                                                      and of two new ones, chunk^2 / 2)
  allreduce t = alpha + 2 (n - 1) / n x bytes / (e link), link the profiled node's
                                                      (per direction; PCIe where the group
                                                      crosses it)
  p2p       t = alpha + bytes / (e link)            (send/recv between two devices of
                                                      the node: one direction)
  host      t = a + b x sequences (+ c + d x sequences when tp > 1)

with sat(x, h) = x / (x + h), P and BW the profiled device's datasheet 16-bit peak and
memory bandwidth, e the achieved fraction of them.  Fits minimise the mean squared log
error (a relative error), each power-of-two bucket of the shape's token count (message
size for collectives) weighted alike so that the few decode-sized rows count as much as
the many prefill-sized ones; the RMS relative errors reported weigh the buckets the
same way (the host's fit, a straight line, is plain least squares).
"""
import argparse
import csv
import math
import os
import sys

CREDIT = "Vidur profiling data, Microsoft (github.com/microsoft/vidur, MIT licence)"

# The profiled devices and the datasheet figures the fit divides by.  a100: A100 80GB
# (the DGX A100's SXM part: 312 TFLOP/s dense fp16, 2,039 GB/s; devices.csv); h100: H100
# 80GB, SXM-class per the data's README (989.5 TFLOP/s, 3,350 GB/s; devices.csv); a40:
# A40 48GB (149.7 TFLOP/s dense fp16 tensor, 696 GB/s GDDR6; NVIDIA's A40 datasheet).
PROFILED = {
    "a100": ("A100 80GB SXM", 312e12, 2039e9, "devices.csv A100-80GB-SXM"),
    "h100": ("H100 80GB SXM", 989.5e12, 3350e9, "devices.csv H100-SXM"),
    "a40": ("A40 48GB", 149.7e12, 696e9, "NVIDIA A40 datasheet"),
}
FAMILIES = ["a100", "h100", "a40"]

# The link of each profiled node, one direction: NVLink 3 (600 GB/s total) in a DGX A100
# and between the A100 PCIe pairs' bridges, NVLink 4 (900 GB/s) in a DGX H100, 600 GB/s
# between H100 PCIe pairs; a group of 4 on a pairwise node crosses PCIe (gen 4 x16,
# 32 GB/s, for A100; gen 5, 64 GB/s, for H100).
NODE_LINKS = {"a100_dgx": 300e9, "h100_dgx": 450e9, "a100_pairwise_nvlink": 300e9,
              "h100_pairwise_nvlink": 300e9}
NODE_PCIE = {"a100_pairwise_nvlink": 32e9, "h100_pairwise_nvlink": 64e9}
NODES = [("PERF_NODE_A100_DGX", "a100_dgx"), ("PERF_NODE_A100_PAIRS", "a100_pairwise_nvlink"),
         ("PERF_NODE_H100_DGX", "h100_dgx"), ("PERF_NODE_H100_PAIRS", "h100_pairwise_nvlink")]


def node_link(node, n):
    if node in NODE_PCIE and n > 2:
        return NODE_PCIE[node]
    return NODE_LINKS[node]
PASSES = ["norm", "rope", "act", "add", "embed", "reshape"]


def sat(x, half):
    return x / (x + half)


# ---- a deterministic Nelder-Mead ----------------------------------------------------

def nelder_mead(f, x0, step=0.3, iters=3000, tol=1e-12):
    n = len(x0)
    pts = [list(x0)]
    for i in range(n):
        p = list(x0)
        p[i] += step
        pts.append(p)
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: (vals[i], i))
        pts = [pts[i] for i in order]
        vals = [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) <= tol * (abs(vals[0]) + 1e-30):
            break
        c = [sum(p[i] for p in pts[:-1]) / n for i in range(n)]
        xr = [c[i] + (c[i] - pts[-1][i]) for i in range(n)]
        fr = f(xr)
        if fr < vals[0]:
            xe = [c[i] + 2 * (c[i] - pts[-1][i]) for i in range(n)]
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = [c[i] + 0.5 * (pts[-1][i] - c[i]) for i in range(n)]
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                for j in range(1, n + 1):
                    pts[j] = [pts[0][i] + 0.5 * (pts[j][i] - pts[0][i]) for i in range(n)]
                    vals[j] = f(pts[j])
    i = min(range(n + 1), key=lambda i: (vals[i], i))
    return pts[i]


def fit_log(predict, rows, x0, rounds=3):
    """Parameters (as logs) minimising the weighted mean squared log error of
    predict(params, row) against row['t']."""
    total = sum(r["w"] for r in rows)

    def loss(x):
        p = [math.exp(v) for v in x]
        s = 0.0
        for r in rows:
            e = math.log(predict(p, r) / r["t"])
            s += r["w"] * e * e
        return s / total

    x = [math.log(v) for v in x0]
    step = 0.5
    for _ in range(rounds):
        x = nelder_mead(loss, x, step=step, iters=4000)
        step /= 3
    return [float("%.4g" % math.exp(v)) for v in x]


def rms_relative(predict, params, rows, weighted=True):
    """RMS of predicted / measured - 1 over the rows, each bucket weighing alike (as in
    the fit) unless weighted is false."""
    if not rows:
        return float("nan")
    w = [r["w"] if weighted else 1.0 for r in rows]
    s = sum(wi * (predict(params, r) / r["t"] - 1) ** 2 for wi, r in zip(w, rows))
    return math.sqrt(s / sum(w))


def stratified(rows, per_bucket=8):
    """Up to per_bucket rows of each bucket, evenly spread through it, in file order."""
    groups = {}
    for r in rows:
        groups.setdefault(r["bucket"], []).append(r)
    out = []
    for b in sorted(groups):
        g = groups[b]
        step = max(len(g) / per_bucket, 1.0)
        out += [g[int(i * step)] for i in range(min(per_bucket, len(g)))]
    return sorted(out, key=lambda r: r["line"])


def bucket_weights(rows, key):
    """Each power-of-two bucket of key(row) weighs the same in all."""
    count = {}
    for r in rows:
        b = int(math.log2(max(key(r), 1)))
        r["bucket"] = b
        count[b] = count.get(b, 0) + 1
    for r in rows:
        r["w"] = 1.0 / count[r["bucket"]]


# ---- the formulas (models/perf.c evaluates the same) --------------------------------

def gemm_time(p, r, peak, bw):
    t0, e, em, overlap = p
    T, K, N = r["T"], r["K"], r["N"]
    compute = 2.0 * T * K * N / (peak * min(e, 1.0))
    memory = 2.0 * (K * N + T * K + T * N) / (bw * min(em, 1.0))
    return t0 + max(compute, memory) + overlap * min(compute, memory)


def pass_time(p, r, bw):
    t0, e, th = p
    return max(t0, r["bytes"] / (bw * e * sat(r["T"], th)))


def decode_time(p, r, bw):
    t0, e = p
    return t0 + r["bytes"] / (bw * min(e, 1.0))


def prefill_time(p, r, peak):
    t0, e_cached, e_new = p
    return t0 + r["cached_flops"] / (peak * min(e_cached, 1.0)) + r["new_flops"] / (peak * min(e_new, 1.0))


def allreduce_time(p, r):
    alpha, busbw = p
    n = r["n"]
    return alpha + 2.0 * (n - 1) / n * r["bytes"] / busbw


def p2p_time(p, r):
    alpha, bw = p
    return alpha + r["bytes"] / bw


# ---- reading the fit set -------------------------------------------------------------

def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def layer_rows(data):
    """GEMM and memory-pass rows of layer_ops.csv, per device: (gemm rows, {pass: rows}),
    each row with its line number in the file."""
    gemms = {d: [] for d in FAMILIES}
    passes = {d: {k: [] for k in PASSES} for d in FAMILIES}
    for line, r in enumerate(read_csv(os.path.join(data, "layer_ops.csv")), start=2):
        dev = r["device"]
        h, heads, kvh = int(r["hidden"]), int(r["heads"]), int(r["kv_heads"])
        ffn, tp, T = int(r["ffn"]), int(r["tp"]), int(r["tokens"])
        gated = r["gated"] == "True"
        hd = h // heads
        qkv = (heads + 2 * kvh) * hd // tp
        shapes = (("attn_pre_proj_ms", h, qkv), ("attn_post_proj_ms", heads * hd // tp, h),
                  ("mlp_up_proj_ms", h, (2 if gated else 1) * ffn // tp),
                  ("mlp_down_proj_ms", ffn // tp, h))
        for col, K, N in shapes:
            if r[col]:
                gemms[dev].append({"T": T, "K": K, "N": N, "t": float(r[col]) * 1e-3,
                                   "line": line, "op": col[:-3], "model": r["model"],
                                   "tp": tp})
        act_bytes = (6.0 if gated else 4.0) * T * ffn / tp
        pass_cols = (("norm", "input_layernorm_ms", 4.0 * T * h),
                     ("norm", "post_attention_layernorm_ms", 4.0 * T * h),
                     ("rope", "attn_rope_ms", 4.0 * T * (heads + kvh) * hd / tp),
                     ("act", "mlp_act_ms", act_bytes), ("add", "add_ms", 6.0 * T * h),
                     ("embed", "emb_ms", 4.0 * T * h))
        for kind, col, nbytes in pass_cols:
            if r[col]:
                passes[dev][kind].append({"T": T, "bytes": nbytes, "t": float(r[col]) * 1e-3,
                                          "line": line, "op": col[:-3], "model": r["model"],
                                          "tp": tp})
    return gemms, passes


def attention_rows(data):
    """Decode and prefill rows of attention_a100.csv (per GPU: q_heads / tp query heads,
    kv_heads / tp key-value heads), and the layout copies as memory passes."""
    decode, prefill, reshape = [], [], []
    for line, r in enumerate(read_csv(os.path.join(data, "attention_a100.csv")), start=2):
        tp = int(r["tp"])
        qh, kvh = int(r["q_heads"]) // tp, int(r["kv_heads"]) // tp
        hd = int(r["hidden"]) // int(r["q_heads"])
        kv = int(r["kv_tokens"])
        if r["phase"] == "decode":
            b = int(r["batch"])
            decode.append({"T": b, "batch": b, "work": b * kvh, "t": float(r["attn_ms"]) * 1e-3,
                           "bytes": 2.0 * b * kv * kvh * hd * 2, "kv": kv, "line": line})
            new = b
        else:
            c = int(r["prefill_chunk"])
            prefill.append({"T": c, "chunk": c, "kv": kv, "cached_flops": 4.0 * hd * qh * c * kv,
                            "new_flops": 4.0 * hd * qh * c * c / 2.0,
                            "t": float(r["attn_ms"]) * 1e-3, "line": line})
            new = c
        reshape.append({"T": new, "bytes": 4.0 * new * (qh + 2 * kvh) * hd,
                        "t": max(float(r["reshape_ms"]), 0.0005) * 1e-3, "line": line})
    return decode, prefill, reshape


def collective_rows(data, collective="all_reduce"):
    """Rows of a collective within one node (every worker on the node), per (node, n)."""
    out = {}
    for line, r in enumerate(read_csv(os.path.join(data, "collectives.csv")), start=2):
        if r["collective"] != collective or r["workers"] != r["devices_per_node"]:
            continue
        key = (r["node"], int(r["workers"]))
        out.setdefault(key, []).append({"T": int(r["bytes"]) // 1024, "n": int(r["workers"]),
                                        "bytes": float(r["bytes"]),
                                        "t": float(r["time_ms"]) * 1e-3, "line": line})
    return out


def host_rows(data):
    rows = []
    for line, r in enumerate(read_csv(os.path.join(data, "engine_overheads.csv")), start=2):
        base = sum(float(r[c]) for c in ("schedule_ms", "sampler_e2e_ms",
                                         "prepare_inputs_e2e_ms", "process_model_outputs_ms"))
        rows.append({"device": r["device"], "batch": int(r["batch"]), "tp": int(r["tp"]),
                     "base": base * 1e-3, "ray": float(r["ray_comm_ms"]) * 1e-3, "line": line})
    return rows


def linear_fit(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return float("%.4g" % (my - b * mx)), float("%.4g" % b)


def line_ranges(rows):
    """'2-3401, 6000-6100' for the rows' line numbers."""
    lines = sorted(set(r["line"] for r in rows))
    spans, start, prev = [], lines[0], lines[0]
    for x in lines[1:]:
        if x != prev + 1:
            spans.append((start, prev))
            start = x
        prev = x
    spans.append((start, prev))
    text = ", ".join("%d-%d" % s if s[0] != s[1] else "%d" % s[0] for s in spans[:3])
    return text + (", ..." if len(spans) > 3 else "")


# ---- the fits --------------------------------------------------------------------------

def fit_all(data, say):
    out = {"families": {}, "notes": [], "samples": []}
    gemms, passes = layer_rows(data)
    for fam in FAMILIES:
        name, peak, bw, sheet = PROFILED[fam]
        res = {}
        rows = gemms[fam]
        bucket_weights(rows, lambda r: r["T"])
        g = lambda p, r: gemm_time(p, r, peak, bw)
        params = fit_log(g, rows, [5e-6, 0.75, 0.8, 0.5])
        err = rms_relative(g, params, rows)
        dec = [r for r in rows if r["T"] <= 16]
        pre = [r for r in rows if r["T"] >= 512]
        res["gemm"] = (params, err, rms_relative(g, params, dec, False),
                       rms_relative(g, params, pre, False))
        out["notes"].append((fam, "gemm", "layer_ops.csv", "device=%s: QKV, output, up and down "
                             "projections, %d rows (lines %s)" % (fam, len(rows), line_ranges(rows)),
                             err))
        say("%s gemm: t0 %.3g s, e %.4g, e_mem %.4g, overlap %.4g; RMS %.1f%% "
            "(tokens <= 16: %.1f%%, >= 512: %.1f%%) over %d rows" %
            ((fam,) + tuple(params) + (100 * err, 100 * res["gemm"][2], 100 * res["gemm"][3],
                                       len(rows))))
        out["samples"] += [dict(r, cls="gemm", fam=fam) for r in stratified(rows, 16)]
        for kind in PASSES:
            if kind == "reshape":
                continue
            prow = passes[fam][kind]
            bucket_weights(prow, lambda r: r["T"])
            pf = lambda p, r: pass_time(p, r, bw)
            pp = fit_log(pf, prow, [3e-6, 0.5, 30])
            perr = rms_relative(pf, pp, prow)
            res[kind] = (pp, perr)
            out["notes"].append((fam, kind, "layer_ops.csv", "device=%s, %s, %d rows (lines %s)" %
                                 (fam, ", ".join(sorted(set(r["op"] for r in prow))), len(prow),
                                  line_ranges(prow)), perr))
            say("%s %s: t0 %.3g s, e %.4g, T_half %.4g; RMS %.1f%% over %d rows" %
                (fam, kind, pp[0], pp[1], pp[2], 100 * perr, len(prow)))
            out["samples"] += [dict(r, cls=kind, fam=fam) for r in stratified(prow, 6)]
        out["families"][fam] = res

    # attention, measured on A100 only
    decode, prefill, reshape = attention_rows(data)
    _, peak, bw, _ = PROFILED["a100"]
    bucket_weights(decode, lambda r: r["batch"] * max(r["kv"], 1) / 32)
    # No width term.  The profiled kernels split each sequence's cache into partitions
    # (FlashAttention's split-KV, paged attention v2's 512 tokens), so the blocks that
    # fill the GPU grow with the context: at 131k tokens one sequence on one kv head is
    # some 256 partitions.  A saturation on batch x kv heads alone (this fit until
    # 2026-12-07: RMS 17.9% here, this form 18.3%) read that sequence at 15% of its
    # bandwidth, 7x the time; one on batch x kv heads x 512-token partitions fits these
    # rows best (16.7%) but is not linear in the context, which a decode run's closed
    # form (models/decode_cost.c) needs, and with the partitions taken as continuous it
    # is this form.  The rows' smallest batches at 288-4,032 tokens (17 us, flat) are
    # the launch, which t0 holds.
    df = lambda p, r: decode_time(p, r, bw)
    dp = fit_log(df, decode, [1.5e-5, 0.8])
    derr = rms_relative(df, dp, decode)
    say("attention decode (a100): t0 %.3g s, e %.4g (no width term); RMS %.1f%% over %d rows"
        % (dp[0], dp[1], 100 * derr, len(decode)))
    bucket_weights(prefill, lambda r: r["chunk"])
    pf = lambda p, r: prefill_time(p, r, peak)
    pp = fit_log(pf, prefill, [1e-5, 0.4, 0.2])
    perr = rms_relative(pf, pp, prefill)
    say("attention prefill (a100): t0 %.3g s, e_cached %.4g, e_new %.4g; RMS %.1f%% over %d rows" %
        (pp[0], pp[1], pp[2], 100 * perr, len(prefill)))
    bucket_weights(reshape, lambda r: r["T"])
    rf = lambda p, r: pass_time(p, r, bw)
    rp = fit_log(rf, reshape, [1e-6, 0.5, 30])
    rerr = rms_relative(rf, rp, reshape)
    say("attention layout copies (a100): t0 %.3g s, e %.4g, T_half %.4g; RMS %.1f%% over %d rows" %
        (rp[0], rp[1], rp[2], 100 * rerr, len(reshape)))
    out["attention"] = {"decode": (dp, derr), "prefill": (pp, perr), "reshape": (rp, rerr)}
    for cls, rows, err in (("attn_decode", decode, derr), ("attn_prefill", prefill, perr),
                           ("reshape", reshape, rerr)):
        out["notes"].append(("a100", cls, "attention_a100.csv", "phase=%s, %d rows (lines %s)" %
                             ({"attn_decode": "decode", "attn_prefill": "prefill"}.get(cls, "both"),
                              len(rows), line_ranges(rows)), err))
    out["samples"] += [dict(r, cls="attn_decode", fam="a100") for r in stratified(decode, 6)]
    out["samples"] += [dict(r, cls="attn_prefill", fam="a100") for r in stratified(prefill, 8)]

    # all-reduce within a node
    coll = collective_rows(data)
    out["allreduce"] = {}
    for key in sorted(coll):
        rows = coll[key]
        bucket_weights(rows, lambda r: r["bytes"] / 2048)
        ap = fit_log(allreduce_time, rows, [2e-5, 1e11])
        aerr = rms_relative(allreduce_time, ap, rows)
        ap = [ap[0], float("%.4g" % (ap[1] / node_link(key[0], key[1])))]
        out["allreduce"][key] = (ap, aerr)
        out["notes"].append((key[0], "allreduce_%d" % key[1], "collectives.csv",
                             "all_reduce, node=%s, workers=%d, %d rows (lines %s)" %
                             (key[0], key[1], len(rows), line_ranges(rows)), aerr))
        say("all-reduce %s n=%d: alpha %.3g s, %.4g of the %.0f GB/s link; RMS %.1f%% over %d rows" %
            (key[0], key[1], ap[0], ap[1], node_link(*key) / 1e9, 100 * aerr, len(rows)))
        out["samples"] += [dict(r, cls="allreduce", fam=key[0]) for r in stratified(rows, 6)]

    # point to point within a node: two of its devices, one direction
    out["p2p"] = {}
    for key, rows in sorted(collective_rows(data, "send_recv").items()):
        if key[0] not in NODE_LINKS:  # a node the model does not stand a device on
            continue
        bucket_weights(rows, lambda r: r["bytes"] / 2048)
        pp = fit_log(p2p_time, rows, [1e-5, 1e11])
        perr = rms_relative(p2p_time, pp, rows)
        pp = [pp[0], float("%.4g" % (pp[1] / node_link(key[0], 2)))]
        out["p2p"][key[0]] = (pp, perr)
        out["notes"].append((key[0], "p2p", "collectives.csv",
                             "send_recv, node=%s, workers=2, %d rows (lines %s)" %
                             (key[0], len(rows), line_ranges(rows)), perr))
        say("send/recv %s: alpha %.3g s, %.4g of the %.0f GB/s link; RMS %.1f%% over %d rows" %
            (key[0], pp[0], pp[1], node_link(key[0], 2) / 1e9, 100 * perr, len(rows)))
        out["samples"] += [dict(r, cls="p2p", fam=key[0]) for r in stratified(rows, 6)]

    # host work per iteration
    host = host_rows(data)
    one = [r for r in host if r["tp"] == 1]
    many = [r for r in host if r["tp"] > 1]
    a, b = linear_fit([r["batch"] for r in one], [r["base"] for r in one])
    c, d = linear_fit([r["batch"] for r in many], [r["ray"] for r in many])
    herr = math.sqrt(sum(((a + b * r["batch"]) / r["base"] - 1) ** 2 for r in one) / len(one))
    rerr2 = math.sqrt(sum(((c + d * r["batch"]) / r["ray"] - 1) ** 2 for r in many) / len(many))
    out["host"] = (a, b, c, d, herr, rerr2)
    out["notes"].append(("host", "host", "engine_overheads.csv",
                         "tp=1, schedule + sampler_e2e + prepare_inputs_e2e + process_model_outputs, "
                         "%d rows (lines %s)" % (len(one), line_ranges(one)), herr))
    out["notes"].append(("host", "host_tp", "engine_overheads.csv",
                         "tp>1, ray_comm, %d rows (lines %s)" % (len(many), line_ranges(many)),
                         rerr2))
    say("host per iteration: %.4g s + %.4g s per sequence (RMS %.1f%%, %d rows); tp > 1 adds "
        "%.4g s + %.4g s per sequence (RMS %.1f%%, %d rows)" %
        (a, b, 100 * herr, len(one), c, d, 100 * rerr2, len(many)))
    return out


# ---- writing the C table ----------------------------------------------------------------

def cnum(x):
    return "%.4g" % x


def c_string(text, indent, width=90):
    """text as adjacent C string literals, each line within width columns."""
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(indent) + len(line) + len(word) + 4 > width:
            lines.append(line + " ")
            line = word
        else:
            line = line + " " + word if line else word
    lines.append(line)
    return "\n".join(indent + '"%s"' % x.replace('"', "'") for x in lines)


def comment(text, indent="    ", width=92):
    """text as a C comment wrapped to width columns."""
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(indent) + 3 + len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = line + " " + word if line else word
    lines.append(line)
    if len(lines) == 1:
        return indent + "/* " + lines[0] + " */"
    out = [indent + "/* " + lines[0]] + [indent + " * " + x for x in lines[1:]]
    out[-1] += " */"
    return "\n".join(out)


def write_c(fit, path, data_label):
    fams, att, ar, host = fit["families"], fit["attention"], fit["allreduce"], fit["host"]
    notes = {(n[0], n[1]): n for n in fit["notes"]}

    def how(fam, cls):
        n = notes[(fam, cls)]
        return "set by tools/fit_operators.py on %s, %s, RMS error %.1f%%" % (n[2], n[3], 100 * n[4])

    L = []
    w = L.append
    w("/* The constants table of the performance model (see models/perf_constants.h).")
    w(" *")
    w(" * GENERATED by tools/fit_operators.py from %s, the fit set:" % data_label)
    w(" * \"%s\"." % CREDIT)
    w(" * Change the data or the fit, not this file, and run")
    w(" *     python3 tools/fit_operators.py --c models/perf_constants.c \\")
    w(" *             --sample tests/data/operators/sample.csv")
    w(" * The precision rows, the CPU family and the links between nodes are sourced constants of")
    w(" * that script (SOURCED there), copied here by the same run.  RMS errors are relative")
    w(" * (predicted / measured - 1), each power-of-two bucket of tokens (of bytes, for")
    w(" * collectives) weighing alike, as in the fit; the splits by tokens are unweighted. */")
    w('#include "models/perf_constants.h"')
    w("")
    w("#include <stddef.h>")
    w("")
    w("/* Precision as engines run it, relative to the 16-bit figures:")
    for line in SOURCED_PRECISION_COMMENT:
        w(" * " + line)
    w(" */")
    w("static const perf_precision_row PRECISION_GPU = {")
    w("    .compute = { [PREC_FP32] = 1, [PREC_TF32] = 1, [PREC_FP16] = 1, [PREC_BF16] = 1,")
    w("                 [PREC_FP8] = %s, [PREC_INT8] = 1, [PREC_INT4] = 1, [PREC_FP4] = %s },"
      % (FP8_COMPUTE, FP4_COMPUTE))
    w("    .weight_only_compute = %s, .weight_only_stream = %s," %
      (WEIGHT_ONLY_COMPUTE, WEIGHT_ONLY_STREAM))
    w("};")
    w("")
    w("/* CPUs: no quantised kernels modelled apart; every precision at its own peak. */")
    w("static const perf_precision_row PRECISION_CPU = {")
    w("    .compute = { [PREC_FP32] = 1, [PREC_TF32] = 1, [PREC_FP16] = 1, [PREC_BF16] = 1,")
    w("                 [PREC_FP8] = 1, [PREC_INT8] = 1, [PREC_INT4] = 1, [PREC_FP4] = 1 },")
    w("    .weight_only_compute = 1, .weight_only_stream = 1,")
    w("};")
    w("")
    w(comment("Links between nodes (training's data and pipeline parallelism, tensor "
              "parallelism beyond a node): %s." % SOURCED_CLUSTER, ""))
    w("#define CLUSTER_GPU { .link_latency_s = 10e-6, .network_bytes_per_s = 50e9, \\")
    w("                     .devices_per_node = 8 }")
    w("")
    dp, derr = att["decode"]
    pp, perr = att["prefill"]
    rp, rerr = att["reshape"]
    for fam in FAMILIES:
        name, peak, bw, sheet = PROFILED[fam]
        g, gerr, gdec, gpre = fams[fam]["gemm"]
        other = fam != "a100"
        w("/* %s: the profiled %s; its datasheet figures from %s. */" % (fam, name, sheet))
        w("static const perf_family FAMILY_%s = {" % fam.upper())
        w('    .name = "%s", .profiled = "%s, Vidur profiling data",' % (fam, name))
        w("    .peak_flops = %s, .bandwidth_bytes_per_s = %s," % (cnum(peak), cnum(bw)))
        w(comment("%s (tokens <= 16: %.1f%%; tokens >= 512: %.1f%%)" %
                  (how(fam, "gemm"), 100 * gdec, 100 * gpre)))
        w("    .gemm = { .efficiency = %s, .bandwidth_efficiency = %s, .overlap = %s," %
          (cnum(g[1]), cnum(g[2]), cnum(g[3])))
        w("              .floor_s = %s }," % cnum(g[0]))
        w("    .pass = {")
        for kind in PASSES:
            if kind == "reshape":
                w(comment("%s%s" % (how("a100", "reshape"),
                                    "; the same share of bandwidth assumed" if other else ""),
                          " " * 8))
                p = rp
            else:
                w(comment(how(fam, kind), " " * 8))
                p = fams[fam][kind][0]
            w("        [PASS_%s] = { .efficiency = %s, .tokens_half = %s, .floor_s = %s }," %
              (kind.upper(), cnum(p[1]), cnum(p[2]), cnum(p[0])))
        w("    },")
        w(comment("%s%s" % (how("a100", "attn_decode"),
                            "; the same share of bandwidth assumed" if other else "")))
        w("    .attn_decode = { .efficiency = %s, .width_half = 0, .floor_s = %s }," %
          (cnum(dp[1]), cnum(dp[0])))
        w(comment("%s%s" % (how("a100", "attn_prefill"),
                            "; the same share of peak assumed (FlashAttention-2 on Hopper "
                            "reaches a smaller one, FlashAttention-3 a larger)" if other else "")))
        w("    .attn_prefill = { .cached_efficiency = %s, .new_efficiency = %s," %
          (cnum(pp[1]), cnum(pp[2])))
        w("                      .floor_s = %s }," % cnum(pp[0]))
        w(comment("%s; %s" % (how("host", "host"), how("host", "host_tp"))))
        w("    .host = { .base_s = %s, .per_seq_s = %s," % (cnum(host[0]), cnum(host[1])))
        w("              .tp_base_s = %s, .tp_per_seq_s = %s }," % (cnum(host[2]), cnum(host[3])))
        w("    .cluster = CLUSTER_GPU,")
        w("    .precision = &PRECISION_GPU,")
        w("};")
        w("")
    for line in SOURCED_CPU:
        w(line)
    w("")
    for ident, node in NODES:
        w(comment("%s: send/recv and all-reduce within the node (collectives.csv, "
                  "devices_per_node = workers)%s" % (node, "; groups of 8 take the measured "
                                                     "group of 4"
                                  if node in NODE_PCIE else ""), ""))
        w("static const perf_node NODE_%s = {" % ident[len("PERF_NODE_"):])
        w('    .name = "%s", .pairs = %s,' % (node, "true" if node in NODE_PCIE else "false"))
        p, e = fit["p2p"][node]
        w(comment(how(node, "p2p"), " " * 4))
        w("    .p2p = { .alpha_s = %s, .efficiency = %s, .link_bytes_per_s = %s }," %
          (cnum(p[0]), cnum(p[1]), cnum(node_link(node, 2))))
        w("    .allreduce = {")
        for n in (2, 4, 8):
            key = (node, n) if (node, n) in ar else max((k for k in ar if k[0] == node),
                                                       key=lambda k: k[1])
            p, e = ar[key]
            w(comment(how(key[0], "allreduce_%d" % key[1]), " " * 8))
            w("        { .n = %d, .alpha_s = %s, .efficiency = %s, .link_bytes_per_s = %s }," %
              (n, cnum(p[0]), cnum(p[1]), cnum(node_link(node, key[1]))))
        w("    },")
        w("};")
        w("")
    w("const perf_family *const perf_families[PERF_FAMILY_COUNT] = {")
    w("    [PERF_FAMILY_A100] = &FAMILY_A100, [PERF_FAMILY_H100] = &FAMILY_H100,")
    w("    [PERF_FAMILY_A40] = &FAMILY_A40, [PERF_FAMILY_CPU] = &FAMILY_CPU,")
    w("};")
    w("")
    w("const perf_node *const perf_nodes[PERF_NODE_COUNT] = {")
    w("    " + ", ".join("[%s] = &NODE_%s" % (i, i[len("PERF_NODE_"):]) for i, _ in NODES[:2]) + ",")
    w("    " + ", ".join("[%s] = &NODE_%s" % (i, i[len("PERF_NODE_"):]) for i, _ in NODES[2:]) + ",")
    w("};")
    w("")
    w("const perf_constant_note perf_constant_notes[] = {")
    for n in fit["notes"]:
        w('    { "%s", "%s",' % (n[0], n[1]))
        w(c_string(how(n[0], n[1]), " " * 6) + ", %s }," % cnum(n[4]))
    for fam, cls, text in SOURCED_NOTES:
        w('    { "%s", "%s",' % (fam, cls))
        w(c_string(text, " " * 6) + ", 0 },")
    w("    { NULL, NULL, NULL, 0 },")
    w("};")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def write_sample(fit, path):
    cols = ["class", "family", "line", "T", "K", "N", "bytes", "work", "cached_flops",
            "new_flops", "n", "seconds"]
    num = lambda r, k: "%.9g" % r[k] if k in r else ""
    with open(path, "w", newline="") as f:
        f.write("# A stratified sample of the operator fit set, replayed by tests/test_perf.c\n")
        f.write("# through the C model; written by tools/fit_operators.py --sample.\n")
        f.write("# Source: %s.\n" % CREDIT)
        f.write("# line: the row's line in layer_ops.csv (gemm, passes), attention_a100.csv\n")
        f.write("# (attn_*) or collectives.csv (allreduce, family = the node).\n")
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(cols)
        for r in fit["samples"]:
            wr.writerow([r["cls"], r["fam"], r["line"], r.get("T", ""), r.get("K", ""),
                         r.get("N", ""), num(r, "bytes"), r.get("work", ""),
                         num(r, "cached_flops"), num(r, "new_flops"), r.get("n", ""),
                         "%.9g" % r["t"]])


# ---- the sourced (not fitted) constants -------------------------------------------------

# fp8 GEMMs on Hopper reach 1.75x the bf16 rate for large matmuls, at least 1.25x for most
# other shapes (NVIDIA technical blog, "Boosting Matrix Multiplication Speed and
# Flexibility with NVIDIA cuBLAS 12.9", 2025): the achieved fraction of the fp8 peak,
# which is twice the bf16 one, is 1.75 / 2 = 0.875 of bf16's.  Used wherever a device has
# an fp8 peak; where it has none, fp8 weights run as weight-only ones.
FP8_COMPUTE = "0.875"
# fp4 (NVFP4, MXFP4) on a device with an fp4 peak (Blackwell): no fp4 GEMM measurement in
# the table, so assumed at fp8's share of its own (twice as high) peak; on a device
# without one, fp4 weights are weight-only like int4.
FP4_COMPUTE = "0.875"
# int8 and int4 weights (and fp8 ones on a device without fp8) are weight-only: the GEMM
# dequantises them and multiplies in 16-bit.  MARLIN (Frantar et al., arXiv 2408.11743,
# GEMM micro-benchmarks): within 5% of the ideal bandwidth speed-up up to batch 32, and
# large-batch (>= 1024 tokens) products about 10% slower than fp16: compute at 0.90 of
# the 16-bit rate, weights streamed at 0.95 of the 16-bit kernels' share of bandwidth.
# The int8 kernels of the same design are assumed alike.
WEIGHT_ONLY_COMPUTE = "0.9"
WEIGHT_ONLY_STREAM = "0.95"
SOURCED_PRECISION_COMMENT = [
    "fp8: 0.875 = 1.75 / 2, fp8 GEMMs at 1.75x bf16 for large matmuls on Hopper (NVIDIA,",
    "  \"Boosting Matrix Multiplication Speed and Flexibility with NVIDIA cuBLAS 12.9\", 2025);",
    "  on a device without an fp8 peak, fp8 weights are weight-only.",
    "fp4: assumed at fp8's share of its own peak (no fp4 GEMM measured); weight-only, like",
    "  int4, on a device without an fp4 peak.",
    "int8, int4: weight-only (dequantised, multiplied in 16-bit): compute 0.90 of 16-bit and",
    "  weights streamed at 0.95 of the 16-bit share, from MARLIN's GEMM micro-benchmarks",
    "  (arXiv 2408.11743: within 5% of the ideal speed-up to batch 32, large batches ~10%",
    "  slower than fp16); int8 kernels assumed alike.",
    "Attention, norms, activations and the other memory passes stay 16-bit; the cache is",
    "  read at its own precision (kv_precision).",
]
SOURCED_CLUSTER = ("400 Gb/s per GPU (one 400 Gb/s InfiniBand or Ethernet NIC a GPU, as in "
                   "NVIDIA's DGX H100 and HGX designs: NVIDIA DGX H100 datasheet), 8 GPUs a "
                   "node, 10 us a collective step (an assumed alpha: a few microseconds of "
                   "network latency and NCCL's per-step work; not measured here)")
SOURCED_CPU = [
    "/* CPUs: no operator measurements; the figures of the model before the per-operator",
    " * one: BLAS near 60% of the fp32 peak, small products less efficient, STREAM near 70%",
    " * of the memory bandwidth; no kernel floors, no engine host work apart from the",
    " * computation. */",
    "static const perf_family FAMILY_CPU = {",
    '    .name = "cpu", .profiled = "none: datasheet shares",',
    "    .peak_flops = 0, .bandwidth_bytes_per_s = 0,",
    "    .gemm = { .efficiency = 0.6, .bandwidth_efficiency = 0.7, .overlap = 0, .floor_s = 0 },",
    "    .pass = {",
    "        [PASS_NORM] = { 0.7, 0, 0 }, [PASS_ROPE] = { 0.7, 0, 0 }, [PASS_ACT] = { 0.7, 0, 0 },",
    "        [PASS_ADD] = { 0.7, 0, 0 }, [PASS_EMBED] = { 0.7, 0, 0 },",
    "        [PASS_RESHAPE] = { 0.7, 0, 0 },",
    "    },",
    "    .attn_decode = { .efficiency = 0.7, .width_half = 0, .floor_s = 0 },",
    "    .attn_prefill = { .cached_efficiency = 0.6, .new_efficiency = 0.6, .floor_s = 0 },",
    "    .host = { 0, 0, 0, 0 },",
    "    .cluster = { .link_latency_s = 5e-6, .network_bytes_per_s = 12.5e9,",
    "                 .devices_per_node = 1 },",
    "    .precision = &PRECISION_CPU,",
    "};",
]
SOURCED_NOTES = [
    ("gpu", "precision_fp8", "0.875 of the fp8 peak's share: fp8 GEMMs at 1.75x bf16 for large "
     "matmuls on Hopper (NVIDIA, Boosting Matrix Multiplication Speed and Flexibility with "
     "NVIDIA cuBLAS 12.9, 2025)"),
    ("gpu", "precision_fp4", "0.875 of the fp4 peak's share: assumed as fp8's (no fp4 GEMM "
     "measured); weight-only on a device without an fp4 peak"),
    ("gpu", "precision_weight_only", "int8/int4 weight-only: compute 0.90 of 16-bit, weights "
     "streamed at 0.95 of the 16-bit share (MARLIN, arXiv 2408.11743, GEMM micro-benchmarks)"),
    ("gpu", "cluster", SOURCED_CLUSTER),
    ("cpu", "all", "BLAS 60% of fp32 peak, STREAM 70% of bandwidth: the model before the "
     "per-operator one"),
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(here, "..", "..", "shared", "reference",
                                                   "operators"))
    ap.add_argument("--c", help="write the C constants table here")
    ap.add_argument("--sample", help="write the sample of fit rows here")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    for f in ("layer_ops.csv", "attention_a100.csv", "collectives.csv", "engine_overheads.csv"):
        if not os.path.exists(os.path.join(a.data, f)):
            sys.exit("fit_operators.py: %s not found in %s (the fit set: %s)" % (f, a.data, CREDIT))
    say = (lambda s: None) if a.quiet else print
    say("fit set: %s\n%s\n" % (os.path.normpath(a.data), CREDIT))
    fit = fit_all(a.data, say)
    if a.c:
        write_c(fit, a.c, "../shared/reference/operators")
    if a.sample:
        write_sample(fit, a.sample)


if __name__ == "__main__":
    main()
