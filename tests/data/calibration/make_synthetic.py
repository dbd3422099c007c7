#!/usr/bin/env python3
"""Writes synthetic.csv: calibration samples drawn from known parameters with +-2%
deterministic noise, which tests/test_calibrate.c checks the fits recover:
  h2d_pinned   time = 10 us + bytes / 25 GB/s
  d2h_pinned   time =  8 us + bytes / 20 GB/s
  allreduce    4 devices, time = 30 us + bytes / 100 GB/s
               (ring: link latency 30/6 = 5 us, link 2*3/4 * 100 = 150 GB/s)
  gemm bf16    rate = 800 TFLOP/s * m / (m + 48), m tokens at n = k = 8192, and squares
  triad        time = 3 us + bytes / 4 TB/s
  launch 2.5 us, launch_sync 8 us, fma fp32 60 TFLOP/s
Run it from this folder: python3 make_synthetic.py > synthetic.csv"""
import math

rows = []
def add(kind, prec, threads, m, n, k, size, moved, flops, seconds_of):
    for r in range(5):
        noise = 1 + 0.02 * math.sin(7 * len(rows) + r)
        rows.append((kind, prec, threads, m, n, k, size, moved, flops, r, seconds_of() * noise))

sizes = [4096 * 4 ** i for i in range(12)]  # 4 KB .. 16 GB
for s in sizes[:10]:
    add("h2d_pinned", "-", 1, 0, 0, 0, s, s, 0, lambda: 10e-6 + s / 25e9)
    add("d2h_pinned", "-", 1, 0, 0, 0, s, s, 0, lambda: 8e-6 + s / 20e9)
    add("allreduce", "fp32", 4, 0, 0, 0, s, s, 0, lambda: 30e-6 + s / 100e9)
    add("triad", "fp32", 1, 0, 0, 0, s, 3 * s, 0, lambda: 3e-6 + 3 * s / 4e12)
for m in [1, 2, 4, 8, 16, 32, 64, 128, 256]:
    f = 2.0 * m * 8192 * 8192
    add("gemm", "bf16", 1, m, 8192, 8192, 0, 0, f, lambda: f / (800e12 * m / (m + 48)))
for side in [1024, 2048, 4096, 8192, 16384]:
    f = 2.0 * side ** 3
    add("gemm", "bf16", 1, side, side, side, 0, 0, f, lambda: f / (800e12 * side / (side + 48)))
add("launch", "-", 1, 0, 0, 0, 0, 0, 0, lambda: 2.5e-6)
add("launch_sync", "-", 1, 0, 0, 0, 0, 0, 0, lambda: 8e-6)
add("fma", "fp32", 1, 0, 0, 0, 0, 0, 1e12, lambda: 1e12 / 60e12)

print("# synthetic samples with known parameters (make_synthetic.py)")
print("# device: Synthetic NVIDIA H200\n# kind: gpu\n# host: none\n# date: 2026-01-01T00:00:00Z")
print("# threads: 4\n# quick: false")
print("kind,precision,threads,m,n,k,size_bytes,bytes,flops,repeat,seconds")
for row in rows:
    print(",".join(str(x) if not isinstance(x, float) else "%.17g" % x for x in row))
