-- The engine catalog: serving engines and training frameworks as the performance and
-- memory models see them (models/engine.h).  A workload names one: fs.inference {
-- engine = "sglang" }, fs.training { engine = "megatron" }, estimate --engine; validate
-- maps each row's engine column to one.  Defaults: "vllm" for serving (current vLLM, the
-- engine a user starting today most likely runs; "vllm-2024", the engine the operator
-- set measured, was the default until 2026-12-05, as every figure of fleetsim's was
-- priced before engines had names), "deepspeed" for training (the ZeRO paper's 16 bytes
-- a parameter).
--
-- Each value says where it comes from.  "fit set" is ../shared/reference: operators/
-- (Vidur's profiling of a 2024 vLLM: "Vidur profiling data, Microsoft
-- (github.com/microsoft/vidur, MIT licence)") and kernels/ (engine_memory.csv: engines'
-- start-up memory lines, each row citing its thread).  A setting an engine documents
-- (a default in its code) names the file.  A figure no measurement sets is marked
-- "stated" and is a parameter: change it in a scenario before it returns, e.g.
--   fs.engines.sglang.host.overlap = 0.5
-- or add a whole engine with the same fields: fs.engines["my-engine"] = { ... }.
--
-- Fields:
--   kind       "serving" or "training"
--   describes  the engine and versions the profile stands for
--   kernels    the kernel family of each operator class, in words (estimate's breakdown):
--              gemm, attention_prefill, attention_decode, moe_gemm, alltoall, collectives;
--              "operators" is the fit set's 2024 engine
--   families   the fitted kernel families (models/kernel_constants.c, fitted by
--              tools/fit_kernels.py to the fit set's kernels/) that price a class in place
--              of the operator set's, on the devices the h100 table stands for (Hopper,
--              and Blackwell and the others as shares of their own peaks):
--              attention_prefill, moe_gemm, attention_backward (training: attention's
--              backward pass; without it 2.5 times the forward's FLOPs at its rate),
--              moe_wgrad (training: the routed experts' weight gradients, a grouped GEMM
--              summing over each expert's tokens; without it at moe_gemm's rate)
--   host       the host's work per iteration: from = "operators" (the fit set's measured
--              figures for the device's family: 1.28 ms + 63 us a sequence, with Ray's
--              worker traffic beyond one GPU unless ray = false: workers as local
--              processes, whose hand-off the fit set does not measure), or base, per_sequence, tp_base and
--              tp_per_sequence as durations; overlap, the share of it run while the GPU
--              computes the step (0: in series, the sum; 1: max(GPU, host)); measured,
--              whether a measurement set the figures; source, how they were set
--   cuda_graphs  max_batch: decode batches up to it replay a captured graph
--   batch      its defaults of sequences a batch and tokens an iteration, a workload's
--              max_batch and max_tokens where it gives none: { max_batch, max_tokens }
--              (256 and 8,192 when absent, fleetsim's defaults before engines had names),
--              and smaller = { max_batch, max_tokens, below_gib, named }: its defaults on
--              a CPU, a GPU of less than below_gib as CUDA reports it, or one whose name
--              contains `named`
--   alltoall   a mixture's expert-parallel all-to-all: dispatch_fp8 (the dispatch in fp8
--              with a 4-byte scale each 128 values, the combine 16-bit: DeepSeek-V3's
--              report, section 3.3.3, and DeepEP's low-latency dispatch, use_fp8 = True by
--              default in deep_ep/buffer.py), per_node (one copy a token for each remote
--              node, forwarded within it over NVLink, as DeepEP's kernels do; with a
--              model's routed_nodes, at most that many), two_batch_overlap (two
--              micro-batches hiding each other's all-to-all: off by default in SGLang,
--              enable_two_batch_overlap, and in vLLM; a parameter)
--   draft_steps  a draft model's steps in speculative decoding: "iterations" of their
--              own, each paying the host work in series (vLLM V0's proposer worker ran
--              each through its model runner: vllm/spec_decode/multi_step_worker.py), or
--              "in_round" (the default), GPU work inside the round's one iteration
--              (SGLang's EAGLE draft runner, vLLM V1's and TensorRT-LLM's drafters)
--   memory     rule ("share_of_total": vLLM's gpu_memory_utilization of the device holds
--              everything; "static_pool": SGLang's mem_fraction_static holds weights and
--              cache only, 0 for SGLang's own rule, the device less what it reserves;
--              "share_of_free": TensorRT-LLM's cache takes its share of what the weights
--              and the runtime leave), share, runtime_gib, runtime_tp_gib and
--              runtime_rank_gib (outside the allocator: CUDA context, library workspaces;
--              more with tensor parallelism, once or for each rank), graphs_gib,
--              token_budget (the profiling step's tokens), activation_bytes_per_token (a
--              flat figure), else activation_factor (the peak over token_budget x the live
--              bytes of one token) and activation_split (the peak splits over tensor
--              parallelism); at least sampler_seqs x the vocabulary x bytes_per_logit
--              (the sampler's peak, held whole); floor_gib and floor_above_gib (at least this reserved on a
--              device above that)
--   training   weight_bytes, gradient_bytes, optimizer_bytes a parameter; pipeline_zero,
--              the highest ZeRO stage it runs beside pipeline stages (3 unless given);
--              zero_stages, the ZeRO stages it runs (all unless given); tp_overlap, the
--              share of tensor parallelism's communication run under the products that
--              need or make it, as far as they last (0 unless given; on the devices
--              the families price); sequence_parallel, whether its tensor parallelism
--              runs with sequence parallelism unless a plan says (true unless given:
--              NeMo's recipes and torchtitan's TP plan do)

-- A table of its own for each engine that takes one of the shared settings below, so
-- that a scenario's edit of one engine (fs.engines.vllm.memory.share = 0.8) leaves the
-- others as they are.
local function copy(t)
  local out = {}
  for k, v in pairs(t) do out[k] = type(v) == "table" and copy(v) or v end
  return out
end

-- What the 2024 engine's host phases were, on the fit set's 26 single-GPU rows
-- (engine_overheads.csv lines 15-27 and 67-79): scheduling, preparing inputs, sampling
-- (its metadata built in Python, waiting for the GPU) and processing outputs
-- (detokenising, bookkeeping).  An engine that launches step n + 1 before step n's host
-- work is done, the sampled tokens staying on the GPU (SGLang's overlap scheduler,
-- TensorRT-LLM's overlap scheduler, vLLM's asynchronous scheduling), runs all of it
-- beside the GPU: overlap 1, a step max(GPU, host).
-- Processing outputs alone is 0.358 of the four phases' time summed: what an engine that
-- hands its outputs to another process or thread runs beside the GPU.
local OUTPUTS_AHEAD = 0.358

-- vLLM's start-up lines on an H100 for Llama-3-8B (engine_memory.csv rows 1-2, vLLM pull
-- request 10511, 2024-12-14): non-torch memory 1.79 GiB at tp 1 and 3.58 GiB a GPU at
-- tp 2 (NCCL and custom all-reduce buffers: 1.79 more with tensor parallelism), and an
-- activation peak of 1.26 GiB at both tp 1 and tp 2.  A peak that does not fall with
-- tensor parallelism is not the feed-forward's (its 8,192 tokens x 2 x 3 x 14,336 bytes
-- would halve, and come to 0.78 GiB with the residual stream at tp 1) but the sampler's:
-- the profiling step's 256 sequences (max_num_seqs) each with fp32 logits over the
-- 128,256-token vocabulary and the softmax, log-probabilities, sorted copies and indices
-- the sampler makes of them, 41.2 bytes a logit (1.26 GiB / (256 x 128,256): the one
-- figure these rows set).  So the peak is the larger of the two: the feed-forward's
-- live bytes at the token budget (split over tp) and the sampler's.
local VLLM_MEMORY = {
  rule = "share_of_total", share = 0.9, runtime_gib = 1.79, runtime_tp_gib = 1.79,
  graphs_gib = 0, token_budget = 8192, activation_factor = 1, activation_split = true,
  sampler_seqs = 256, bytes_per_logit = 41.2,
}

-- TensorRT-LLM: the cache takes free_gpu_memory_fraction 0.9 of what the weights and the
-- buffers leave (docs/source/features/kvcache.md), max_num_tokens 8,192 (its tuning
-- guide); the activation workspace from engine_memory.csv row 6 (TensorRT-LLM issue
-- 2683: 2,265.58 MiB a rank for DeepSeek-V3 int4 at tp 8, at the default 8,192 tokens,
-- stated) over the live bytes of a rank the same arithmetic gives (8,192 x (2 x 3 x 9 x
-- 2,048 / 8 + 4 x 7,168 + 4 x 8 x 7,168) bytes = 2,124 MiB): factor 1.067; the runtime
-- outside it taken as vLLM's measured non-torch memory (stated: the same CUDA context,
-- NCCL and cuBLAS workspaces)
local TRTLLM_MEMORY = {
  rule = "share_of_free", share = 0.9, runtime_gib = 1.79, runtime_tp_gib = 1.79,
  graphs_gib = 0, token_budget = 8192, activation_factor = 1.067, activation_split = true,
}

local OPERATORS = {
  gemm = "operators", attention_prefill = "operators", attention_decode = "operators",
  moe_gemm = "operators", alltoall = "operators", collectives = "operators",
}
-- FSDP2's kernels: the operator set's, but for a mixture's experts, one grouped GEMM a
-- layer (pytorch-fsdp below)
local FSDP_KERNELS = copy(OPERATORS)
FSDP_KERNELS.moe_gemm = "grouped GEMM (DeepGEMM's shares; weight gradients at its k-grouped kernel's)"

-- The Hopper engines' kernels.  Attention over a prompt: FlashAttention-3, the default
-- backend of vLLM V1 and SGLang on Hopper (SGLang's docs/advanced_features/
-- attention_backend.md: "FlashAttention 3 (Default for Hopper Machines)"); TensorRT-LLM's
-- and Megatron's own fused attention kernels are not in the fit set, and FA3's shares
-- stand for them (stated).  A mixture's experts: one grouped GEMM a layer, at DeepGEMM's
-- shares (its grouped FP8 kernel, the fit set's official table; SGLang runs it for
-- block-FP8 mixtures); the Triton fused-MoE and CUTLASS grouped kernels the engines run
-- otherwise take its shares too (stated: the fit set's fused-MoE rows are Python
-- benchmarks whose 60-80 us floors a launch include what CUDA graphs remove).  Decode
-- attention keeps the operator set's share: the fit set's FA3 decode rows are one user's,
-- below the kernel's author's own by that user's account.
local HOPPER = {
  gemm = "operators (cuBLAS, CUTLASS fp8)", attention_prefill = "FlashAttention-3",
  attention_decode = "operators (paged decode)", moe_gemm = "grouped GEMM (DeepGEMM's shares)",
  alltoall = "operators (NCCL point-to-point)", collectives = "operators (NCCL)",
}
local HOPPER_FAMILIES = { attention_prefill = "fa3_bf16_h100", moe_gemm = "deepgemm_grouped_fp8_h800" }

-- Expert parallelism across nodes as the modern engines deploy it with DeepEP (SGLang's
-- moe_a2a_backend = "deepep", vLLM's DeepEP backends; TensorRT-LLM's wide-EP kernels
-- likewise send fp8): fp8 dispatch, one copy a node
local DEEPEP = { dispatch_fp8 = true, per_node = true, two_batch_overlap = false }

return {
  ["vllm-2024"] = {
    kind = "serving",
    describes = "vLLM of 2024 (0.3-0.4, Sarathi-Serve): the engine the operator set measured; "
      .. "Python scheduler in series with the GPU, Ray workers with tensor parallelism",
    draft_steps = "iterations",
    kernels = {
      gemm = "operators (cuBLAS, 16-bit)", attention_prefill = "operators (FlashAttention-2)",
      attention_decode = "operators (vLLM paged attention)", moe_gemm = "operators (cuBLAS per expert)",
      alltoall = "operators (NCCL point-to-point)", collectives = "operators (NCCL ring)",
    },
    host = { from = "operators", overlap = 0, measured = true,
             source = "fit set: engine_overheads.csv, fitted by tools/fit_operators.py" },
    -- vLLM V0 captured decode batches 1, 2, 4 and 8 to 256 in steps of 8
    -- (vllm/worker/model_runner.py, _BATCH_SIZES_TO_CAPTURE); the graphs took memory after
    -- the cache was sized, out of what gpu_memory_utilization left
    cuda_graphs = { max_batch = 256 },
    memory = copy(VLLM_MEMORY),
  },
  ["vllm-0.5"] = {
    kind = "serving",
    describes = "vLLM 0.5 (mid 2024): the 2024 engine's host work, its tensor-parallel workers "
      .. "local processes on one node (no Ray)",
    draft_steps = "iterations",
    kernels = copy(OPERATORS),
    host = { from = "operators", ray = false, overlap = 0, measured = true,
             source = "fit set: engine_overheads.csv without its Ray term (vLLM pull request "
               .. "5230, 0.5.1: multiprocessing by default on one node; the local hand-off is "
               .. "not measured, 0)" },
    cuda_graphs = { max_batch = 256 },
    memory = copy(VLLM_MEMORY),
  },
  ["vllm-2025"] = {
    kind = "serving",
    describes = "vLLM 0.6 to 0.13: V0's asynchronous output processing (0.6.0) and V1 before "
      .. "asynchronous scheduling was on by default: outputs processed beside the GPU, "
      .. "scheduling and inputs in series",
    draft_steps = "iterations",
    kernels = copy(OPERATORS),
    host = { from = "operators", ray = false, overlap = OUTPUTS_AHEAD, measured = false,
             source = "stated: the 2024 engine's measured work with its output phase run "
               .. "beside the GPU (the rest in series); local workers, not measured (0)" },
    cuda_graphs = { max_batch = 512 },
    memory = copy(VLLM_MEMORY),
  },
  ["vllm"] = {
    kind = "serving",
    describes = "vLLM V1, 0.14 on: an engine core that schedules the next step while the GPU "
      .. "runs this one (asynchronous scheduling, on by default since 0.14.0), tensor-parallel "
      .. "workers as local processes",
    kernels = copy(HOPPER), families = copy(HOPPER_FAMILIES), alltoall = copy(DEEPEP),
    host = { from = "operators", ray = false, overlap = 1, measured = false,
             source = "stated: the 2024 engine's measured work (the same Python lineage), all of "
               .. "it beside the GPU (vLLM 0.14.0 release notes: 'Async scheduling is now "
               .. "enabled by default'); no Ray on one node, the local hand-off not measured (0)" },
    -- vllm/config/compilation.py: max_cudagraph_capture_size = min(max_num_seqs x 2, 512)
    -- max_num_seqs 1024 and max_num_batched_tokens 8192 for the OpenAI server on a GPU of
    -- 70 GiB or more but an A100, 256 and 2,048 on the others (vllm/engine/arg_utils.py,
    -- _set_default_args: device memory and "a100" in the device's name); a CPU taken as a
    -- smaller device (stated: vLLM's CPU backend sets its own)
    batch = { max_batch = 1024, max_tokens = 8192,
              smaller = { max_batch = 256, max_tokens = 2048, below_gib = 70, named = "A100" } },
    cuda_graphs = { max_batch = 512 },
    -- gpu_memory_utilization 0.9 (vllm/config/cache.py), the cache what is left of it
    -- after weights, non-torch memory and the activation peak of a profiling step of
    -- max_num_batched_tokens (vllm/v1/worker/gpu_worker.py, vllm/utils/mem_utils.py):
    -- 8,192 for the OpenAI server on a GPU of 70 GiB or more (vllm/engine/arg_utils.py;
    -- 2,048 on smaller ones, stated here as 8,192 for all).  Since 0.21 an estimate of the
    -- CUDA graphs' memory is taken out too; nothing in the fit set sizes it but one
    -- over-estimate (engine_memory.csv row 5): 0, stated
    memory = copy(VLLM_MEMORY),
  },
  ["sglang"] = {
    kind = "serving",
    describes = "SGLang 0.4 on: the overlap scheduler (the next batch scheduled while the GPU "
      .. "runs this one, on by default), a static pool of weights and cache",
    kernels = copy(HOPPER), families = copy(HOPPER_FAMILIES), alltoall = copy(DEEPEP),
    host = { from = "operators", ray = false, overlap = 1, measured = false,
             source = "stated: the 2024 engine's measured work (a Python scheduler too), all of "
               .. "it beside the GPU: the overlap scheduler 'overlaps the CPU scheduler with GPU "
               .. "model worker' (python/sglang/srt/arg_groups/fields/schedule.py, on by "
               .. "default); tensor-parallel workers as local processes, not measured (0)" },
    -- cuda_graph_max_bs 256 below tp 4 on GPUs of 60-160 GB (python/sglang/srt/arg_groups/
    -- memory_hook.py)
    cuda_graphs = { max_batch = 256 },
    -- mem_fraction_static = (M - reserved) / M, reserved in MiB (memory_hook.py): 512, 1.5
    -- a token of max(chunked_prefill_size, 2,048) (8,192 on 60-160 GB GPUs: stated for
    -- all), 1,024 x tp x pp / 8, 2 a captured batch size (256), at least 10 GiB on a GPU of
    -- more than 60 GiB
    memory = { rule = "static_pool", share = 0, runtime_gib = 0.5, runtime_rank_gib = 0.125,
               graphs_gib = 0.5, token_budget = 8192, activation_bytes_per_token = 1572864,
               floor_gib = 10, floor_above_gib = 60 },
  },
  ["tensorrt-llm"] = {
    kind = "serving",
    describes = "TensorRT-LLM 0.20 on, PyTorch backend (1.0's default): a Python executor "
      .. "with the overlap scheduler (step n + 1 launched before step n's host work ends)",
    kernels = copy(HOPPER), families = copy(HOPPER_FAMILIES), alltoall = copy(DEEPEP),
    host = { from = "operators", ray = false, overlap = 1, measured = false,
             source = "stated: the 2024 engine's measured work (a Python executor too), all of "
               .. "it beside the GPU: the overlap scheduler launches step n + 1 before step n's "
               .. "'checking sampling stop criteria, updating responses, scheduling the next "
               .. "batch' (docs/source/features/overlap-scheduler.md: 'Enabled by default', "
               .. "pull request 4174)" },
    -- CudaGraphConfig: 128 when no size is given (tensorrt_llm/llmapi/llm_args.py)
    -- max_batch_size 2048 and max_num_tokens 8192 (its tuning guide's defaults:
    -- docs/source/legacy/performance/performance-tuning-guide/
    -- tuning-max-batch-size-and-max-num-tokens.md)
    batch = { max_batch = 2048, max_tokens = 8192 },
    cuda_graphs = { max_batch = 128 },
    memory = copy(TRTLLM_MEMORY),
  },
  ["tensorrt-llm-cpp"] = {
    kind = "serving",
    describes = "TensorRT-LLM 0.5-0.19 with TensorRT engines (and the NIM containers and "
      .. "MLPerf harnesses built on them): a C++ runtime that schedules, samples and launches",
    kernels = copy(OPERATORS),
    host = { base = "0ms", per_sequence = "0us", tp_base = "0ms", tp_per_sequence = "0us",
             overlap = 0, measured = false,
             source = "stated: a C++ runtime's work is not in the fit set, whose host figures "
               .. "are a Python engine's; 0" },
    cuda_graphs = { max_batch = 0 },
    memory = copy(TRTLLM_MEMORY),
  },
  ["deepspeed"] = {
    kind = "training",
    describes = "mixed-precision Adam as ZeRO (DeepSpeed) keeps it: 16-bit weights and "
      .. "gradients, fp32 master weights and moments",
    kernels = copy(OPERATORS),
    -- pipeline_zero: deepspeed/runtime/pipe/engine.py asserts "ZeRO-2 and ZeRO-3 are
    -- incompatible with pipeline parallelism".  sequence_parallel: Megatron-DeepSpeed's
    -- tensor parallelism runs without it unless --sequence-parallel is given (enabled by
    -- its 2023 rebase on Megatron-LM: examples_deepspeed/deepspeed4science/
    -- long_seq_support/README.md); a plan states sp to have it
    training = { weight_bytes = 2, gradient_bytes = 2, optimizer_bytes = 12, pipeline_zero = 1,
                 sequence_parallel = false },
  },
  ["megatron"] = {
    kind = "training",
    describes = "Megatron-LM / NeMo with its distributed optimizer: bf16 weights, fp32 "
      .. "gradients (main_grad), fp32 master weights and moments sharded",
    -- attention on Hopper and later as Transformer Engine runs it (cuDNN's fused
    -- attention, or FlashAttention-3): the fit set's FA3 forward and backward families
    -- (attention_hopper.csv lines 97-113; the backward, lines 101-104, at 2.5 times the
    -- forward's FLOPs with an efficiency that grows with the sequence); elsewhere the
    -- operator set's, its backward 2.5 times the forward's FLOPs at the forward's rate
    kernels = {
      gemm = "operators (Transformer Engine where fp8)",
      attention_prefill = "FlashAttention-3 forward and backward (cuDNN fused attention) on Hopper",
      attention_decode = "operators",
      moe_gemm = "grouped GEMM (DeepGEMM's shares; weight gradients at its k-grouped kernel's)",
      alltoall = "operators (NCCL all-to-all)", collectives = "operators (NCCL, overlapped with backward)",
    },
    families = { attention_prefill = "fa3_bf16_h100", attention_backward = "fa3_bwd_bf16_h100",
                 moe_gemm = "deepgemm_grouped_fp8_h800", moe_wgrad = "deepgemm_wgrad_fp8_h200" },
    -- pipeline_zero: its distributed optimizer shards the optimizer's states (ZeRO-1)
    -- beside pipelines; its FSDP runs without them (stated).  zero_stages: data
    -- parallelism plain (0), the distributed optimizer (1: its gradient buffer is whole
    -- on every rank, reduce-scattered in place) and Megatron-FSDP (3); no stage 2
    -- tp_overlap: the share of tensor parallelism's communication run under the
    -- products.  From the fit set's MegaScale ablation (parallelism_throughput.csv PT09
    -- and PT10: GPT-3 175B, 256 A100, TP 8, PP 8, VPP 6): TP/SP overlap raised MFU from
    -- 53.3% to 55.5%, a step 3.96% shorter.  fleetsim prices that setup (PT07's) at 13.18
    -- s with 2.0 s of TP communication; with MegaScale's parallel transformer block
    -- (steps 1 and 2) one all-gather and one reduce-scatter a layer instead of two, 1.0 s
    -- of 12.18: 0.0396 x 12.18 / 1.0 = 0.48 of it hidden.  Charged, as the families
    -- are, on the devices the h100 table stands for (Transformer Engine's overlap, on in
    -- NeMo's Hopper recipes); the fit set's A100 runs of Megatron-LM (PT01-PT07) ran
    -- without it
    training = { weight_bytes = 2, gradient_bytes = 4, optimizer_bytes = 12, pipeline_zero = 1,
                 zero_stages = { 0, 1, 3 }, tp_overlap = 0.48 },
  },
  ["pytorch-fsdp"] = {
    kind = "training",
    describes = "PyTorch FSDP2 (fully_shard) with bf16 compute: fp32 parameters, gradients and "
      .. "moments sharded, layers gathered in bf16",
    kernels = copy(FSDP_KERNELS),
    -- a mixture's routed experts as one grouped GEMM a layer, as FSDP2's MoE stacks run
    -- them (NeMo AutoModel's Transformer Engine GroupedLinear, torchtitan's
    -- torch._grouped_mm), at the fitted grouped family's shares like Megatron's, and the
    -- experts' weight gradients at the k-grouped kernel's; everything else the operator
    -- set's
    families = { moe_gemm = "deepgemm_grouped_fp8_h800", moe_wgrad = "deepgemm_wgrad_fp8_h200" },
    -- FSDP2 runs beside pipeline stages (torchtitan's composition): any ZeRO stage
    training = { weight_bytes = 4, gradient_bytes = 4, optimizer_bytes = 8, pipeline_zero = 3 },
  },
}
