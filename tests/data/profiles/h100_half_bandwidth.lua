-- A made-up calibration of an H100-SXM whose memory streams at half the default
-- achieved rate (0.85 x 3.35 TB/s / 2), for the test that a profile slows decode.
return {
  format = 1,
  device = "H100-SXM", kind = "gpu", catalog = "H100-SXM",
  achieved = {
    flops = { fp16 = 0.70 * 989e12, bf16 = 0.70 * 989e12 },
    bandwidth_bytes_per_s = 0.85 * 3.35e12 / 2,
    launch_s = 4e-6,
  },
  perf = {
    compute_efficiency = 0.70,
    tokens_half = 32,
    bandwidth_efficiency = 0.85 / 2,
    kernel_launch_s = 4e-6,
  },
}
