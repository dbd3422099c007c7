-- The device catalog: data-centre GPUs and accelerators, and server CPUs.
--
-- Peak throughput is dense (no structured sparsity), in TFLOP/s (TOP/s for int8 and
-- int4), from the vendors' product datasheets (half the sparse figures where a datasheet
-- quotes sparsity; for B200, whose published figures disagree, 180 GB and 7.7 TB/s),
-- and for CPUs from AMD's, Intel's and NVIDIA's specification pages (fp32 derived at base
-- clock: cores x GHz x FLOP per cycle).  Each entry newer than the first eleven names its
-- source and month in a comment.  A precision a device lacks is absent: a model in that
-- precision then runs at the next wider one it has (int8 weights on a V100 compute in
-- fp16, fp4 weights on an H100 in fp8's place, as weight-only).  Bandwidths in GB/s
-- (10^9 bytes/s).  scale_up is the scale-up domain and its link: devices (8 on an HGX
-- board, 72 in an NVL72 rack, 2 for NVLink-bridged pairs, 1 for none) and gbs, the
-- datasheet's total a device (both directions; NVLink, Infinity Fabric, Gaudi's RoCE
-- mesh); network is the scale-out NIC a device has (400 Gb/s when absent; efficiency,
-- the share of its line rate collectives reach, 0.94 when absent).  pcie_gen sets
-- the host link (x16).  Idle power is a typical reading of an idle device, an estimate;
-- TDP is the datasheet's; loaded_w, where a reading exists, is a device holding a model
-- with no requests (clocks up; ../shared/reference/power/device_power.csv, the midpoint
-- of the readings), and models/power.c takes the others at 0.2036 of the TDP.  memory is the datasheet's ("80GB"); what CUDA reports, which
-- every memory figure uses, is memory_cuda where a source gives it, else the datasheet's
-- GB read as GiB (HBM and GDDR come in binary sizes) less the H100's 0.975% that the
-- driver keeps (models/device.h); a CPU's memory is taken as it is.  CPUs list fp32 only (derived as above); their memory is a
-- typical configuration (12 or 8 channels of DDR5 at 64 GB); Xeon's AMX bf16 units are
-- not modelled.  Prices are on-demand dollars per GPU-hour with their date and source
-- (price_source names the offer, whose public price page gave the price on price_date);
-- purchase_usd is a typical price of one device bought, with its own date and source.
-- A price no public page gave is absent, and the entry says so; prices move, so a
-- scenario should name its own.
--
-- Change a device in a scenario before it returns:  fs.devices["H100-SXM"].memory = "94GB",
-- or add a whole new entry with the same fields:  fs.devices["my-gpu"] = { ... }.

return {
  ["T4"] = {
    kind = "gpu", tflops = { fp32 = 8.1, fp16 = 65, int8 = 130, int4 = 260 },
    memory = "16GB", bandwidth_gbs = 320, scale_up = { devices = 1 }, pcie_gen = 3, idle_w = 10, tdp_w = 70,
    usd_per_hour = 0.59, price_date = "2026-05", price_source = "Modal T4",
  },
  ["L4"] = {
    kind = "gpu", tflops = { fp32 = 30.3, tf32 = 60, fp16 = 121, bf16 = 121, fp8 = 242, int8 = 242 },
    memory = "24GB", bandwidth_gbs = 300, scale_up = { devices = 1 }, pcie_gen = 4, idle_w = 16, loaded_w = 35.5, tdp_w = 72,
    usd_per_hour = 0.80, price_date = "2026-05", price_source = "Modal L4",
  },
  ["V100-SXM2-32GB"] = {
    kind = "gpu", tflops = { fp32 = 15.7, fp16 = 125 },
    memory = "32GB", bandwidth_gbs = 900, scale_up = { devices = 8, gbs = 300 }, pcie_gen = 3, idle_w = 40, tdp_w = 300,
  },
  ["A100-40GB-SXM"] = {
    kind = "gpu", tflops = { fp32 = 19.5, tf32 = 156, fp16 = 312, bf16 = 312, int8 = 624, int4 = 1248 },
    memory = "40GB", bandwidth_gbs = 1555, scale_up = { devices = 8, gbs = 600 }, pcie_gen = 4, idle_w = 50, tdp_w = 400,
    usd_per_hour = 2.74, price_date = "2026-11", price_source = "AWS p4d.24xlarge (8xA100-40GB)",
  },
  ["A100-80GB-SXM"] = {
    kind = "gpu", tflops = { fp32 = 19.5, tf32 = 156, fp16 = 312, bf16 = 312, int8 = 624, int4 = 1248 },
    memory = "80GB", bandwidth_gbs = 2039, scale_up = { devices = 8, gbs = 600 }, pcie_gen = 4, idle_w = 55, tdp_w = 400,
    usd_per_hour = 2.79, price_date = "2026-09", price_source = "Lambda 8x A100-80GB",
  },
  ["H100-SXM"] = {
    kind = "gpu",
    tflops = { fp32 = 67, tf32 = 494.5, fp16 = 989.5, bf16 = 989.5, fp8 = 1979, int8 = 1979 },
    -- memory_cuda: what CUDA reports (vLLM's start-up line "total_gpu_memory 79.22GiB",
    -- vLLM pull request 10511, ../shared/reference/kernels/engine_memory.csv)
    memory = "80GB", memory_cuda = "79.22GiB", bandwidth_gbs = 3350, scale_up = { devices = 8, gbs = 900 }, pcie_gen = 5, idle_w = 70, loaded_w = 142.5, tdp_w = 700,
    usd_per_hour = 3.99, price_date = "2026-09", price_source = "Lambda 8x H100 SXM",
    -- purchase: RunLocalAI Pulse, "NVIDIA B200 production ramps" (Q1 2026): used H100 SXM
    -- $22-25k with documented service history, the market's price once B200 shipped
    purchase_usd = 23500, purchase_date = "2026-Q1",
    purchase_source = "RunLocalAI Pulse: used H100 SXM $22-25k, midpoint",
  },
  ["H100-PCIe"] = {
    kind = "gpu",
    tflops = { fp32 = 51, tf32 = 378, fp16 = 756.5, bf16 = 756.5, fp8 = 1513, int8 = 1513 },
    memory = "80GB", bandwidth_gbs = 2000, scale_up = { devices = 2, gbs = 600 }, pcie_gen = 5, idle_w = 50, tdp_w = 350,
  },
  ["H200-SXM"] = {
    kind = "gpu",
    tflops = { fp32 = 67, tf32 = 494.5, fp16 = 989.5, bf16 = 989.5, fp8 = 1979, int8 = 1979 },
    memory = "141GB", bandwidth_gbs = 4800, scale_up = { devices = 8, gbs = 900 }, pcie_gen = 5, idle_w = 75, loaded_w = 115, tdp_w = 700,
    usd_per_hour = 4.50, price_date = "2026-09", price_source = "Nebius H200",
    purchase_usd = 29500, purchase_date = "2026-Q1",
    purchase_source = "RunLocalAI Pulse: H200 SXM retail $28-31k, midpoint",
  },
  -- fp4: NVIDIA DGX B200 datasheet (2024), 144 PFLOPS fp4 for 8 GPUs with sparsity:
  -- 9 dense a GPU, twice its fp8 (72 PFLOPS sparse, 4.5 dense), as on every Blackwell.
  ["B200"] = {
    kind = "gpu",
    tflops = { fp32 = 75, tf32 = 1100, fp16 = 2250, bf16 = 2250, fp8 = 4500, int8 = 4500,
               fp4 = 9000 },
    memory = "180GB", bandwidth_gbs = 7700, scale_up = { devices = 8, gbs = 1800 }, pcie_gen = 5, idle_w = 120, loaded_w = 194, tdp_w = 1000,
    usd_per_hour = 6.99, price_date = "2026-09", price_source = "Lambda B200",
    purchase_usd = 41500, purchase_date = "2026-Q1",
    purchase_source = "RunLocalAI Pulse: B200 retail $40-43k, midpoint",
  },
  -- NVIDIA L40S datasheet (2023): 48 GB GDDR6, 864 GB/s, PCIe gen 4, no NVLink, 350 W.
  ["L40S"] = {
    kind = "gpu",
    tflops = { fp32 = 91.6, tf32 = 183, fp16 = 362, bf16 = 362, fp8 = 733, int8 = 733 },
    memory = "48GB", bandwidth_gbs = 864, scale_up = { devices = 1 }, pcie_gen = 4,
    idle_w = 35, tdp_w = 350,
    usd_per_hour = 1.861, price_date = "2025-08",
    price_source = "AWS g6e.xlarge (1xL40S) us-east-1, as tabled by Modal's L40S price article",
    purchase_usd = 9000, purchase_date = "2026-06", purchase_source = "rentgpu.org L40S page (MSRP)",
  },
  -- NVIDIA HGX H20 (China-market Hopper, 2024), figures as published by willitrunai.com's H20
  -- page and the Geekbench-era reports (148 TFLOPS fp16, 296 fp8/int8, 44 fp32, 74 tf32):
  -- 96 GB HBM3 at 4.0 TB/s, NVLink 900 GB/s on an 8-GPU board, 400 W.  No public on-demand
  -- price outside China: none given.
  ["H20"] = {
    kind = "gpu", tflops = { fp32 = 44, tf32 = 74, fp16 = 148, bf16 = 148, fp8 = 296, int8 = 296 },
    memory = "96GB", bandwidth_gbs = 4000, scale_up = { devices = 8, gbs = 900 }, pcie_gen = 5,
    idle_w = 60, tdp_w = 400,
  },
  -- NVIDIA H800 SXM datasheet (China-market H100, 2023): H100 SXM's compute and memory with
  -- NVLink cut to 400 GB/s.  No public on-demand price outside China: none given.
  ["H800"] = {
    kind = "gpu",
    tflops = { fp32 = 67, tf32 = 494.5, fp16 = 989.5, bf16 = 989.5, fp8 = 1979, int8 = 1979 },
    memory = "80GB", bandwidth_gbs = 3350, scale_up = { devices = 8, gbs = 400 }, pcie_gen = 5,
    idle_w = 70, tdp_w = 700,
  },
  -- NVIDIA H100 NVL product brief (2024): 94 GB HBM3 at 3.9 TB/s, PCIe cards bridged in
  -- pairs by NVLink at 600 GB/s, 400 W (350-400 configurable); dense = half the sparse
  -- 835/1671/3341 TFLOPS.  No public on-demand price found (2026-06): none given.
  ["H100-NVL"] = {
    kind = "gpu",
    tflops = { fp32 = 60, tf32 = 417.5, fp16 = 835.5, bf16 = 835.5, fp8 = 1670.5, int8 = 1670.5 },
    memory = "94GB", bandwidth_gbs = 3900, scale_up = { devices = 2, gbs = 600 }, pcie_gen = 5,
    idle_w = 50, tdp_w = 400,
  },
  -- NVIDIA GH200 Grace Hopper Superchip datasheet (2023): the H100 SXM GPU with 96 GB HBM3
  -- at 4.0 TB/s and NVLink 900 GB/s; TDP of the GPU share taken as H100 SXM's 700 W (the
  -- module is 450-1000 W configurable, Grace included).  The domain is not stated: systems
  -- range from one superchip a node to 32 in an NVL32 rack, so the family's 8 stands.  No
  -- public on-demand price found (2026-06): none given.
  ["GH200"] = {
    kind = "gpu",
    tflops = { fp32 = 67, tf32 = 494.5, fp16 = 989.5, bf16 = 989.5, fp8 = 1979, int8 = 1979 },
    memory = "96GB", bandwidth_gbs = 4000, nvlink_gbs = 900, pcie_gen = 5, idle_w = 80, tdp_w = 700,
  },
  -- NVIDIA GB200 NVL72 (2024-25), one GPU of the rack: NVIDIA's rack figures over 72
  -- (1,440 PFLOPS fp4 and 720 fp8 sparse, so 10 and 5 PFLOPS dense a GPU; 13.4 TB of HBM3e,
  -- 186 GB a GPU; 576 TB/s, 8 TB/s a GPU; NVLink 5 at 1.8 TB/s a GPU across all 72, as
  -- aiwiki.ai's GB200 NVL72 page quotes them); 1,200 W a GPU (Verda's GB300 article's
  -- table); one 400 Gb/s ConnectX-7 NIC a GPU (NVIDIA DGX GB200 datasheet).  Price per GPU:
  -- half of Spheron's $9.08 an hour per GB200 superchip (2 GPUs), 2026-03-17; purchase: the
  -- rack's $3.0-3.9M (Ornn, "NVIDIA B200 vs B300", 2026), midpoint over its 72 GPUs, CPUs
  -- and switches included.
  ["GB200"] = {
    kind = "gpu",
    tflops = { fp32 = 80, tf32 = 1250, fp16 = 2500, bf16 = 2500, fp8 = 5000, int8 = 5000,
               fp4 = 10000 },
    memory = "186GB", bandwidth_gbs = 8000, scale_up = { devices = 72, gbs = 1800 },
    network = { gbit_per_s = 400 }, pcie_gen = 5, idle_w = 130, tdp_w = 1200,
    usd_per_hour = 4.54, price_date = "2026-03", price_source = "Spheron GB200 superchip, per GPU",
    purchase_usd = 47900, purchase_date = "2026",
    purchase_source = "Ornn: GB200 NVL72 rack $3.0-3.9M, midpoint / 72",
  },
  -- NVIDIA HGX B300 (Blackwell Ultra, 2025), per GPU as tabled dense in Verda's "NVIDIA GB300
  -- NVL72" article: 14 PFLOPS fp4, 4.5 fp8, 2.25 bf16, 1.1 tf32, 75 TFLOPS fp32, int8 cut to
  -- 0.15 POPS; 270 GB HBM3e at 7.7 TB/s; 1,100 W; NVLink 5 at 1.8 TB/s on an 8-GPU board;
  -- one 800 Gb/s ConnectX-8 NIC a GPU (NVIDIA HGX B300 page).  Price: the low end of the
  -- neocloud range $5.00-7.25 an hour, purchase about $53,000 a module (Ornn, 2026).
  ["B300"] = {
    kind = "gpu",
    tflops = { fp32 = 75, tf32 = 1100, fp16 = 2250, bf16 = 2250, fp8 = 4500, int8 = 150,
               fp4 = 14000 },
    memory = "270GB", bandwidth_gbs = 7700, scale_up = { devices = 8, gbs = 1800 },
    network = { gbit_per_s = 800 }, pcie_gen = 6, idle_w = 140, tdp_w = 1100,
    usd_per_hour = 5.00, price_date = "2026", price_source = "Ornn GPU rental benchmark, neocloud low end",
    purchase_usd = 53000, purchase_date = "2026", purchase_source = "Ornn, B300 module (reported)",
  },
  -- NVIDIA GB300 NVL72 (2025), one GPU of the rack, dense as tabled in Verda's "NVIDIA GB300
  -- NVL72" article: 15 PFLOPS fp4, 5 fp8, 2.5 bf16, 1.25 tf32, 80 TFLOPS fp32, int8 0.165
  -- POPS; 279 GB HBM3e at 8 TB/s; 1,400 W; NVLink 5 at 1.8 TB/s across all 72; one
  -- 800 Gb/s ConnectX-8 NIC a GPU.  No public on-demand price found (2026-06): none given;
  -- purchase: the rack's $3.7-5.0M (Ornn, 2026), midpoint over 72.
  ["GB300"] = {
    kind = "gpu",
    tflops = { fp32 = 80, tf32 = 1250, fp16 = 2500, bf16 = 2500, fp8 = 5000, int8 = 165,
               fp4 = 15000 },
    memory = "279GB", bandwidth_gbs = 8000, scale_up = { devices = 72, gbs = 1800 },
    network = { gbit_per_s = 800 }, pcie_gen = 6, idle_w = 150, tdp_w = 1400,
    purchase_usd = 60400, purchase_date = "2026",
    purchase_source = "Ornn: GB300 NVL72 rack $3.7-5.0M, midpoint / 72",
  },
  -- AMD Instinct MI300X datasheet (2023): 163.4 TFLOPS fp32 matrix, 653.7 tf32, 1307.4
  -- fp16/bf16, 2614.9 fp8/int8 (dense); 192 GB HBM3 at 5.3 TB/s; 750 W; Infinity Fabric:
  -- 7 links of 128 GB/s, 896 GB/s to the other seven of an 8-GPU platform.  Price: Vultr's
  -- $1.85 an hour, as compared in cliffcenter.com's "AMD inference economics" (2026-05-18).
  -- No purchase price found.
  ["MI300X"] = {
    kind = "gpu",
    tflops = { fp32 = 163.4, tf32 = 653.7, fp16 = 1307.4, bf16 = 1307.4, fp8 = 2614.9,
               int8 = 2614.9 },
    memory = "192GB", bandwidth_gbs = 5300, scale_up = { devices = 8, gbs = 896 }, pcie_gen = 5,
    idle_w = 90, loaded_w = 191, tdp_w = 750,
    usd_per_hour = 1.85, price_date = "2026-05", price_source = "Vultr MI300X (cliffcenter.com note)",
  },
  -- AMD Instinct MI325X datasheet (2024): MI300X's compute with 256 GB HBM3E at 6 TB/s,
  -- 1,000 W, the same Infinity Fabric.  Price: TensorWave's $1.95 an hour (cliffcenter.com,
  -- 2026-05-18).  No purchase price found.
  ["MI325X"] = {
    kind = "gpu",
    tflops = { fp32 = 163.4, tf32 = 653.7, fp16 = 1307.4, bf16 = 1307.4, fp8 = 2614.9,
               int8 = 2614.9 },
    memory = "256GB", bandwidth_gbs = 6000, scale_up = { devices = 8, gbs = 896 }, pcie_gen = 5,
    idle_w = 100, tdp_w = 1000,
    usd_per_hour = 1.95, price_date = "2026-05", price_source = "TensorWave MI325X (cliffcenter.com note)",
  },
  -- AMD Instinct MI355X (CDNA 4, 2025): 2.5 PFLOPS fp16/bf16, 5 fp8, 10 fp4 (MXFP4) dense,
  -- 157.3 TFLOPS fp32; 288 GB HBM3E at 8 TB/s; 1,400 W (The Register, 2025-06-12; ISSCC
  -- 2026 as reported: 5 PFLOPS fp8); Infinity Fabric 7 links of 153.6 GB/s (1075 GB/s) in
  -- an 8-GPU platform.  tf32 and int8 not listed (they compute in fp32 and fp16).  No
  -- public on-demand or purchase price found (2026-06): none given.
  ["MI355X"] = {
    kind = "gpu", tflops = { fp32 = 157.3, fp16 = 2500, bf16 = 2500, fp8 = 5000, fp4 = 10000 },
    memory = "288GB", bandwidth_gbs = 8000, scale_up = { devices = 8, gbs = 1075 }, pcie_gen = 5,
    idle_w = 130, tdp_w = 1400,
  },
  -- Intel Gaudi 3 (HL-325L OAM), Intel's Hot Chips 2024 presentation (R. Kaplan): 1835
  -- TFLOPS bf16 and fp8 matrix, 28.7 bf16 vector; 128 GB HBM2e at 3.67 TB/s; 900 W (air);
  -- 24 x 200 GbE RoCE on chip, of which 21 join the eight of a server (21 x 25 GB/s each way,
  -- 1050 GB/s both directions) and 3 leave it (600 Gb/s).  fp32 is not stated: half the bf16
  -- vector rate is assumed.  fp16 computes at the bf16 rate.  No public on-demand price
  -- found (2026-06); purchase: Intel's 8-accelerator kit at $125,000 (2024, as reported by
  -- y-ic.de), an eighth of it.
  ["Gaudi3"] = {
    kind = "gpu", tflops = { fp32 = 14.35, bf16 = 1835, fp8 = 1835 },
    memory = "128GB", bandwidth_gbs = 3670, scale_up = { devices = 8, gbs = 1050 },
    network = { gbit_per_s = 600 }, pcie_gen = 5, idle_w = 100, tdp_w = 900,
    purchase_usd = 15625, purchase_date = "2024", purchase_source = "Intel 8-accelerator kit $125,000 / 8",
  },
  ["EPYC-9654"] = {
    kind = "cpu", tflops = { fp32 = 7.4 }, cores = 96,
    memory = "768GB", bandwidth_gbs = 460.8, pcie_gen = 5, idle_w = 100, tdp_w = 360,
  },
  ["Xeon-8480+"] = {
    kind = "cpu", tflops = { fp32 = 7.2 }, cores = 56,
    memory = "512GB", bandwidth_gbs = 307.2, pcie_gen = 5, idle_w = 100, tdp_w = 350,
  },
  -- Intel Xeon 6 6980P (Granite Rapids, 2024), Intel's specification page: 128 cores at
  -- 2.0 GHz base, two AVX-512 FMA units (64 fp32 FLOP a cycle): 16.4 TFLOPS; 12 channels of
  -- DDR5-6400 (614.4 GB/s); 500 W.  No price given (a server CPU is bought with its server).
  ["Xeon-6980P"] = {
    kind = "cpu", tflops = { fp32 = 16.4 }, cores = 128,
    memory = "768GB", bandwidth_gbs = 614.4, pcie_gen = 5, idle_w = 120, tdp_w = 500,
  },
  -- AMD EPYC 9965 (Turin dense, 2024), AMD's specification page: 192 Zen 5c cores at 2.25 GHz
  -- base with a full 512-bit FMA data path (64 fp32 FLOP a cycle): 27.6 TFLOPS; 12 channels
  -- of DDR5-6000 (576 GB/s); 500 W.  No price given.
  ["EPYC-9965"] = {
    kind = "cpu", tflops = { fp32 = 27.6 }, cores = 192,
    memory = "768GB", bandwidth_gbs = 576, pcie_gen = 5, idle_w = 120, tdp_w = 500,
  },
  -- NVIDIA Grace CPU Superchip datasheet (2023): 144 Neoverse V2 cores, 7.1 TFLOPS fp64
  -- (14.2 fp32); 480 GB LPDDR5X at up to 1 TB/s; 500 W with its memory.  No price given.
  ["Grace"] = {
    kind = "cpu", tflops = { fp32 = 14.2 }, cores = 144,
    memory = "480GB", bandwidth_gbs = 1000, pcie_gen = 5, idle_w = 100, tdp_w = 500,
  },
}
