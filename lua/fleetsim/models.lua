-- The model catalog: transformer architectures by their published shapes.
--
-- layers, hidden (model width), heads, kv_heads (grouped-query attention: fewer key and
-- value heads), ffn (feed-forward width), gated (SwiGLU: three FFN matrices instead of
-- two), vocab, tied (input and output embeddings shared), positions (learned position
-- embeddings, 0 for rotary), alibi (positions as attention biases by distance: neither
-- rotary nor a learned table), experts and experts_active (mixture of experts: every
-- layer's FFN is replicated `experts` times and each token uses `experts_active`).
-- Biases (OPT, BLOOM, GPT-J, Qwen's QKV) are not counted: under 0.1% of any entry.
-- params is the published count; fleetsim derives its own from the shapes, and the
-- tests hold the two within 2%.  context is the trained context length.
--
-- Sources: the Llama 2 paper and model cards (Meta, 2023), the Llama 3 / 3.1 model
-- cards and "The Llama 3 Herd of Models" (Meta, 2024), Mistral 7B and Mixtral of
-- Experts (Mistral AI, 2023/2024), "Language Models are Few-Shot Learners" (GPT-3,
-- 2020); the entries below the first group name their own source and date.

local llama2 = { gated = true, vocab = 32000, context = 4096 }
local llama3 = { gated = true, vocab = 128256, context = 8192 }
-- MosaicML llm-foundry, scripts/train/yamls/pretrain/mpt-{7b,13b,30b,70b}.yaml (2023):
-- d_model, n_heads, n_layers, expansion_ratio 4, vocab_size 50368, max_seq_len 2048;
-- ALiBi, tied embeddings, GELU.  params as its scripts/train/benchmarking/README.md
-- prints them.  MPT-13B and MPT-70B are benchmark shapes, never released as models.
local mpt = { gated = false, vocab = 50368, tied = true, alibi = true, context = 2048 }
-- NVIDIA NeMo's GPT-3 family as its performance summary runs it: NeMo-Framework-Launcher
-- launcher_scripts/conf/training/gpt3/{5b,20b}.yaml and NeMo 2.0's GPTConfig5B and
-- GPTConfig20B (nemo/collections/llm/gpt/model/base.py, 2024): learned positions (2048),
-- tied embeddings, GELU, the GPT-2 BPE vocabulary (50257; Megatron pads it to a multiple
-- of 128 x tp).  Their published size is the name's (5B, 20B): the shapes give 0.9% and
-- 1.3% more.
local nemo_gpt3 = { gated = false, vocab = 50257, tied = true, positions = 2048, context = 2048 }
-- Qwen2.5 7B and 72B model cards and config.json (Qwen, huggingface.co/Qwen/Qwen2.5-7B
-- and /Qwen2.5-72B, 2024-09); "Qwen2.5 Technical Report" (arXiv:2412.15115): SwiGLU,
-- rotary, untied embeddings; 32768 in config.json (131072 with YaRN).
local qwen25 = { gated = true, vocab = 152064, context = 32768 }
-- Qwen team, Qwen3-8B and Qwen3-32B config.json (huggingface.co/Qwen, 2025-04) and the
-- Qwen3 technical report (arXiv 2505.09388): dense, head_dim 128, untied; 8.2B and 32.8B.
local qwen3 = { gated = true, vocab = 151936, head_dim = 128, context = 32768 }
-- Google, "Gemma 3 Technical Report" (arXiv 2503.19786, 2025-03), Table 1 (embedding and
-- non-embedding parameters; the 417M vision encoder is not counted here) and the
-- google/gemma-3-*-pt config.json: GeGLU, tied embeddings, head_dim 256 (128 at 27B),
-- five local layers (a 1024-token sliding window; 512 at 1B) for each global one.
local gemma3 = { gated = true, vocab = 262208, tied = true, head_dim = 256, window = 1024,
                 global_every = 6, context = 131072 }
-- OpenAI, gpt-oss-120b & gpt-oss-20b model card (2025-08) and config.json
-- (huggingface.co/openai/gpt-oss-120b, -20b): 2880 wide, 64 query and 8 key-value heads
-- of 64, every layer a mixture of experts 2880 wide with 4 routed per token, untied,
-- sliding-window (128) and full attention alternating.  The card's active counts (5.13B,
-- 3.61B) leave out the input embedding (a lookup); params_active adds it back (0.58B), as
-- the other entries count.  Released with the experts in MXFP4 (98% of the weights) and
-- the rest in bf16 (quantized = "mlp"; fp4 here is NVFP4's 4.5 bits a value, MXFP4's
-- 4.25: 3% more on the experts).  Not modelled: the attention sinks and biases (under 0.01%).
local gpt_oss = { layers = 36, hidden = 2880, heads = 64, kv_heads = 8, head_dim = 64, ffn = 2880,
                  gated = true, vocab = 201088, experts_active = 4, window = 128, global_every = 2,
                  precision = "fp4", quantized = "mlp", context = 131072 }

local function with(base, fields)
  local t = {}
  for k, v in pairs(base) do t[k] = v end
  for k, v in pairs(fields) do t[k] = v end
  return t
end

return {
  ["llama-2-7b"] = with(llama2, { layers = 32, hidden = 4096, heads = 32, kv_heads = 32, ffn = 11008, params = 6.74e9 }),
  ["llama-2-13b"] = with(llama2, { layers = 40, hidden = 5120, heads = 40, kv_heads = 40, ffn = 13824, params = 13.0e9 }),
  ["llama-2-70b"] = with(llama2, { layers = 80, hidden = 8192, heads = 64, kv_heads = 8, ffn = 28672, params = 69.0e9 }),
  ["llama-3-8b"] = with(llama3, { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn = 14336, params = 8.03e9 }),
  ["llama-3-70b"] = with(llama3, { layers = 80, hidden = 8192, heads = 64, kv_heads = 8, ffn = 28672, params = 70.6e9 }),
  ["llama-3.1-8b"] = with(llama3, { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn = 14336, params = 8.03e9, context = 131072 }),
  ["llama-3.1-70b"] = with(llama3, { layers = 80, hidden = 8192, heads = 64, kv_heads = 8, ffn = 28672, params = 70.6e9, context = 131072 }),
  ["llama-3.1-405b"] = with(llama3, { layers = 126, hidden = 16384, heads = 128, kv_heads = 8, ffn = 53248, params = 405e9, context = 131072 }),
  -- Meta's FP8 release of it (Llama-3.1-405B-Instruct-FP8; "The Llama 3 Herd of Models",
  -- section 6.2): the feed-forward layers' weights in fp8, row-wise; the self-attention
  -- layers, the first and the last transformer layers, the embeddings and the head in bf16.
  ["llama-3.1-405b-fp8"] = with(llama3, { layers = 126, hidden = 16384, heads = 128, kv_heads = 8, ffn = 53248, params = 405e9,
                                          context = 131072, precision = "fp8", quantized = "mlp",
                                          unquantized_edge_layers = 1 }),
  ["mistral-7b"] = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn = 14336, gated = true, vocab = 32000, params = 7.24e9, context = 32768 },
  ["mixtral-8x7b"] = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn = 14336, gated = true, vocab = 32000,
                       experts = 8, experts_active = 2, params = 46.7e9, params_active = 12.9e9, context = 32768 },
  ["gpt-3-175b"] = { layers = 96, hidden = 12288, heads = 96, kv_heads = 96, ffn = 49152, gated = false, vocab = 50257,
                     tied = true, positions = 2048, params = 175e9, context = 2048 },
  -- BigScience, bigscience/bloom model card and config.json (huggingface.co/bigscience/
  -- bloom, 2022-07) and arXiv:2211.05100: ALiBi, tied embeddings, GELU; 176,247,271,424.
  ["bloom-176b"] = { layers = 70, hidden = 14336, heads = 112, kv_heads = 112, ffn = 57344, gated = false,
                     vocab = 250880, tied = true, alibi = true, params = 176.247e9, context = 2048 },
  -- Zhang et al., "OPT: Open Pre-trained Transformer Language Models" (arXiv:2205.01068,
  -- 2022-05), Table 1: learned positions, ReLU, tied embeddings; vocab 50272 as the
  -- released OPT configs give it (huggingface.co/facebook/opt-66b config.json; their
  -- position table has 2050 rows, 2 of them an offset).
  ["opt-175b"] = { layers = 96, hidden = 12288, heads = 96, kv_heads = 96, ffn = 49152, gated = false,
                   vocab = 50272, tied = true, positions = 2048, params = 175e9, context = 2048 },
  ["gpt-3-5b"] = with(nemo_gpt3, { layers = 24, hidden = 4096, heads = 32, kv_heads = 32, ffn = 16384, params = 5e9 }),
  ["gpt-3-20b"] = with(nemo_gpt3, { layers = 44, hidden = 6144, heads = 48, kv_heads = 48, ffn = 24576, params = 20e9 }),
  ["mpt-7b"] = with(mpt, { layers = 32, hidden = 4096, heads = 32, kv_heads = 32, ffn = 16384, params = 6658859008 }),
  ["mpt-13b"] = with(mpt, { layers = 40, hidden = 5120, heads = 40, kv_heads = 40, ffn = 20480, params = 12853954560 }),
  ["mpt-30b"] = with(mpt, { layers = 48, hidden = 7168, heads = 56, kv_heads = 56, ffn = 28672, params = 29975214080 }),
  ["mpt-70b"] = with(mpt, { layers = 80, hidden = 8192, heads = 64, kv_heads = 64, ffn = 32768, params = 64862437376 }),
  -- EleutherAI, GPT-J-6B model card and config.json (huggingface.co/EleutherAI/gpt-j-6b,
  -- 2021-06): 6,053,381,344 parameters, n_ctx 2048, embedding rows 50400 (50257 used),
  -- untied.  Approximated: its rotary covers 64 of each head's 256 dimensions (taken as
  -- all), and its attention and MLP run in parallel from one norm (taken as in sequence).
  ["gpt-j-6b"] = { layers = 28, hidden = 4096, heads = 16, kv_heads = 16, ffn = 16384, gated = false,
                   vocab = 50400, params = 6053381344, context = 2048 },
  -- Meta, Llama 3.2 model card and config.json (huggingface.co/meta-llama/Llama-3.2-1B
  -- and -3B, 2024-09): 1.23B and 3.21B, tied embeddings.
  ["llama-3.2-1b"] = with(llama3, { layers = 16, hidden = 2048, heads = 32, kv_heads = 8, ffn = 8192, tied = true,
                                    params = 1.23e9, context = 131072 }),
  ["llama-3.2-3b"] = with(llama3, { layers = 28, hidden = 3072, heads = 24, kv_heads = 8, ffn = 8192, tied = true,
                                    params = 3.21e9, context = 131072 }),
  -- Meta, Llama 3.3 model card (huggingface.co/meta-llama/Llama-3.3-70B-Instruct,
  -- 2024-12): Llama 3.1 70B's architecture, retrained.
  ["llama-3.3-70b"] = with(llama3, { layers = 80, hidden = 8192, heads = 64, kv_heads = 8, ffn = 28672, params = 70.6e9,
                                     context = 131072 }),
  ["qwen2.5-7b"] = with(qwen25, { layers = 28, hidden = 3584, heads = 28, kv_heads = 4, ffn = 18944, params = 7.61e9 }),
  ["qwen2.5-72b"] = with(qwen25, { layers = 80, hidden = 8192, heads = 64, kv_heads = 8, ffn = 29568, params = 72.7e9 }),
  ["qwen3-8b"] = with(qwen3, { layers = 36, hidden = 4096, heads = 32, kv_heads = 8, ffn = 12288, params = 8.2e9 }),
  ["qwen3-32b"] = with(qwen3, { layers = 64, hidden = 5120, heads = 64, kv_heads = 8, ffn = 25600, params = 32.8e9 }),
  ["gemma-3-1b"] = with(gemma3, { layers = 26, hidden = 1152, heads = 4, kv_heads = 1, ffn = 6912, vocab = 262144,
                                  window = 512, params = 1.000e9, context = 32768 }),
  ["gemma-3-4b"] = with(gemma3, { layers = 34, hidden = 2560, heads = 8, kv_heads = 4, ffn = 10240, params = 3.884e9 }),
  ["gemma-3-12b"] = with(gemma3, { layers = 48, hidden = 3840, heads = 16, kv_heads = 8, ffn = 15360, params = 11.771e9 }),
  ["gemma-3-27b"] = with(gemma3, { layers = 62, hidden = 5376, heads = 32, kv_heads = 16, head_dim = 128, ffn = 21504,
                                   params = 27.016e9 }),
  -- Mixtures of experts and latent attention (issue 21): head_dim when it is not
  -- hidden / heads, expert_ffn (an expert's FFN width), shared_experts (used by every
  -- token besides its routed ones), dense_layers (leading layers with a dense FFN of ffn
  -- width), moe_every (after those, every moe_every-th layer a mixture, the others dense),
  -- and multi-head latent attention's kv_lora_rank, q_lora_rank, rope_head_dim,
  -- v_head_dim (head_dim then the non-rotary query and key part); precision, the weights'
  -- as released, when not 16-bit (estimate's and fs.inference's default).
  -- Mistral AI, Mixtral-8x22B-v0.1 config.json (huggingface.co/mistralai/Mixtral-8x22B-v0.1,
  -- 2024-04) and "Cheaper, Better, Faster, Stronger" (2024-04): 141B total, 39B active;
  -- vocab 32000 (the Instruct v0.1 tokenizer has 32768).
  ["mixtral-8x22b"] = { layers = 56, hidden = 6144, heads = 48, kv_heads = 8, ffn = 16384, gated = true, vocab = 32000,
                        experts = 8, experts_active = 2, params = 141e9, params_active = 39e9, context = 65536 },
  -- Qwen team, Qwen3-30B-A3B and Qwen3-235B-A22B config.json (huggingface.co/Qwen, 2025-04)
  -- and the Qwen3 technical report (arXiv 2505.09388): every layer a mixture of 128 experts,
  -- 8 routed, no shared expert, head_dim 128, untied; 30.5B / 3.3B and 235B / 22B.
  ["qwen3-30b-a3b"] = { layers = 48, hidden = 2048, heads = 32, kv_heads = 4, head_dim = 128, ffn = 6144, gated = true,
                        vocab = 151936, experts = 128, experts_active = 8, expert_ffn = 768,
                        params = 30.5e9, params_active = 3.3e9, context = 32768 },
  ["qwen3-235b-a22b"] = { layers = 94, hidden = 4096, heads = 64, kv_heads = 4, head_dim = 128, ffn = 12288, gated = true,
                          vocab = 151936, experts = 128, experts_active = 8, expert_ffn = 1536,
                          params = 235e9, params_active = 22e9, context = 32768 },
  -- Meta, Llama 4 Scout and Maverick model cards and config.json (huggingface.co/meta-llama/
  -- Llama-4-Scout-17B-16E and -Maverick-17B-128E, 2025-04): text model only, 1 routed
  -- expert and 1 shared (8192 wide), Maverick's mixtures on every other layer with dense
  -- layers 16384 wide between; 109B / 17B and 400B / 17B.  Its chunked attention (three
  -- layers of four attend within 8192-token chunks) is taken as a sliding window of 8192:
  -- the same cache bound; the reads past a chunk's start are overstated, up to twice.
  ["llama-4-scout"] = { layers = 48, hidden = 5120, heads = 40, kv_heads = 8, head_dim = 128, ffn = 16384, gated = true,
                        vocab = 202048, experts = 16, experts_active = 1, shared_experts = 1, expert_ffn = 8192,
                        window = 8192, global_every = 4, params = 109e9, params_active = 17e9,
                        context = 10485760 },
  ["llama-4-maverick"] = { layers = 48, hidden = 5120, heads = 40, kv_heads = 8, head_dim = 128, ffn = 16384, gated = true,
                           vocab = 202048, experts = 128, experts_active = 1, shared_experts = 1, expert_ffn = 8192,
                           moe_every = 2, window = 8192, global_every = 4, params = 400e9,
                           params_active = 17e9, context = 1048576 },
  -- DeepSeek-AI, DeepSeek-V3 config.json (huggingface.co/deepseek-ai/DeepSeek-V3, 2024-12)
  -- and the technical report (arXiv 2412.19437): 61 layers, the first 3 dense (18432
  -- wide), then 256 routed experts (8 per token) and 1 shared, 2048 wide; latent attention
  -- with a 512 key-value latent, a 1536 query latent, 128 + 64 (rotary) query and key
  -- dimensions and 128 value dimensions per head; 671B / 37B without the multi-token
  -- prediction module (R1 has the same shapes); released in fp8 (128 x 128 block scales).
  -- Node-limited routing: a token's 8 experts come from its top 4 of 8 expert groups
  -- (config.json n_group 8, topk_group 4), "at most 4 nodes" (the report, section 3.2.2).
  ["deepseek-v3"] = { layers = 61, hidden = 7168, heads = 128, kv_heads = 128, head_dim = 128, ffn = 18432, gated = true,
                      vocab = 129280, experts = 256, experts_active = 8, shared_experts = 1, expert_ffn = 2048, routed_nodes = 4,
                      dense_layers = 3, kv_lora_rank = 512, q_lora_rank = 1536, rope_head_dim = 64, v_head_dim = 128,
                      precision = "fp8", params = 671e9, params_active = 37e9, context = 163840 },
  -- DeepSeek-AI, DeepSeek-R1 (arXiv 2501.12948, 2025-01; huggingface.co/deepseek-ai/
  -- DeepSeek-R1 config.json): DeepSeek-V3's shapes, trained further.
  ["deepseek-r1"] = { layers = 61, hidden = 7168, heads = 128, kv_heads = 128, head_dim = 128, ffn = 18432, gated = true,
                      vocab = 129280, experts = 256, experts_active = 8, shared_experts = 1, expert_ffn = 2048, routed_nodes = 4,
                      dense_layers = 3, kv_lora_rank = 512, q_lora_rank = 1536, rope_head_dim = 64, v_head_dim = 128,
                      precision = "fp8", params = 671e9, params_active = 37e9, context = 163840 },
  ["gpt-oss-20b"] = with(gpt_oss, { layers = 24, experts = 32, params = 20.91e9, params_active = 4.19e9 }),
  ["gpt-oss-120b"] = with(gpt_oss, { experts = 128, params = 116.83e9, params_active = 5.71e9 }),
}
