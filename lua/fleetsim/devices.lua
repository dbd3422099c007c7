-- The device catalog: data-centre GPUs and two server CPUs.
--
-- Peak throughput is dense (no structured sparsity), in TFLOP/s (TOP/s for int8 and
-- int4), from NVIDIA's product datasheets (half the sparse figures where a datasheet
-- quotes sparsity; for B200, whose published figures disagree, 180 GB and 7.7 TB/s),
-- and for CPUs from AMD's and Intel's specification pages (fp32 derived at base clock:
-- cores x GHz x FLOP per cycle).  A precision a device lacks is absent: a model in that
-- precision then runs at the next wider one it has (int8 weights on a V100 compute in
-- fp16).  Bandwidths in GB/s (10^9 bytes/s).  nvlink_gbs is the datasheet's total
-- (both directions); pcie_gen sets the host link (x16).  Idle power is a typical reading
-- of an idle device, an estimate; TDP is the datasheet's.  CPUs list fp32 only (derived
-- as above); their memory is a typical configuration (12 or 8 channels of DDR5 at
-- 64 GB); Xeon's AMX bf16 units are not modelled.  Prices are on-demand dollars per
-- GPU-hour with their date and source (price_source names the offer, whose public price
-- page gave the price on price_date); prices move, so a scenario should name its own.
--
-- Change a device in a scenario before it returns:  fs.devices["H100-SXM"].memory = "94GB",
-- or add a whole new entry with the same fields:  fs.devices["my-gpu"] = { ... }.

return {
  ["T4"] = {
    kind = "gpu", tflops = { fp32 = 8.1, fp16 = 65, int8 = 130, int4 = 260 },
    memory = "16GB", bandwidth_gbs = 320, pcie_gen = 3, idle_w = 10, tdp_w = 70,
    usd_per_hour = 0.59, price_date = "2026-05", price_source = "Modal T4",
  },
  ["L4"] = {
    kind = "gpu", tflops = { fp32 = 30.3, tf32 = 60, fp16 = 121, bf16 = 121, fp8 = 242, int8 = 242 },
    memory = "24GB", bandwidth_gbs = 300, pcie_gen = 4, idle_w = 16, tdp_w = 72,
    usd_per_hour = 0.80, price_date = "2026-05", price_source = "Modal L4",
  },
  ["V100-SXM2-32GB"] = {
    kind = "gpu", tflops = { fp32 = 15.7, fp16 = 125 },
    memory = "32GB", bandwidth_gbs = 900, nvlink_gbs = 300, pcie_gen = 3, idle_w = 40, tdp_w = 300,
  },
  ["A100-40GB-SXM"] = {
    kind = "gpu", tflops = { fp32 = 19.5, tf32 = 156, fp16 = 312, bf16 = 312, int8 = 624, int4 = 1248 },
    memory = "40GB", bandwidth_gbs = 1555, nvlink_gbs = 600, pcie_gen = 4, idle_w = 50, tdp_w = 400,
    usd_per_hour = 2.74, price_date = "2026-11", price_source = "AWS p4d.24xlarge (8xA100-40GB)",
  },
  ["A100-80GB-SXM"] = {
    kind = "gpu", tflops = { fp32 = 19.5, tf32 = 156, fp16 = 312, bf16 = 312, int8 = 624, int4 = 1248 },
    memory = "80GB", bandwidth_gbs = 2039, nvlink_gbs = 600, pcie_gen = 4, idle_w = 55, tdp_w = 400,
    usd_per_hour = 2.79, price_date = "2026-09", price_source = "Lambda 8x A100-80GB",
  },
  ["H100-SXM"] = {
    kind = "gpu",
    tflops = { fp32 = 67, tf32 = 494.5, fp16 = 989.5, bf16 = 989.5, fp8 = 1979, int8 = 1979 },
    memory = "80GB", bandwidth_gbs = 3350, nvlink_gbs = 900, pcie_gen = 5, idle_w = 70, tdp_w = 700,
    usd_per_hour = 3.99, price_date = "2026-09", price_source = "Lambda 8x H100 SXM",
  },
  ["H100-PCIe"] = {
    kind = "gpu",
    tflops = { fp32 = 51, tf32 = 378, fp16 = 756.5, bf16 = 756.5, fp8 = 1513, int8 = 1513 },
    memory = "80GB", bandwidth_gbs = 2000, nvlink_gbs = 600, pcie_gen = 5, idle_w = 50, tdp_w = 350,
  },
  ["H200-SXM"] = {
    kind = "gpu",
    tflops = { fp32 = 67, tf32 = 494.5, fp16 = 989.5, bf16 = 989.5, fp8 = 1979, int8 = 1979 },
    memory = "141GB", bandwidth_gbs = 4800, nvlink_gbs = 900, pcie_gen = 5, idle_w = 75, tdp_w = 700,
    usd_per_hour = 4.50, price_date = "2026-09", price_source = "Nebius H200",
  },
  ["B200"] = {
    kind = "gpu",
    tflops = { fp32 = 75, tf32 = 1100, fp16 = 2250, bf16 = 2250, fp8 = 4500, int8 = 4500 },
    memory = "180GB", bandwidth_gbs = 7700, nvlink_gbs = 1800, pcie_gen = 5, idle_w = 120, tdp_w = 1000,
    usd_per_hour = 6.99, price_date = "2026-09", price_source = "Lambda B200",
  },
  ["EPYC-9654"] = {
    kind = "cpu", tflops = { fp32 = 7.4 }, cores = 96,
    memory = "768GB", bandwidth_gbs = 460.8, pcie_gen = 5, idle_w = 100, tdp_w = 360,
  },
  ["Xeon-8480+"] = {
    kind = "cpu", tflops = { fp32 = 7.2 }, cores = 56,
    memory = "512GB", bandwidth_gbs = 307.2, pcie_gen = 5, idle_w = 100, tdp_w = 350,
  },
}
