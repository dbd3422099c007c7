-- The model catalog: transformer architectures by their published shapes.
--
-- layers, hidden (model width), heads, kv_heads (grouped-query attention: fewer key and
-- value heads), ffn (feed-forward width), gated (SwiGLU: three FFN matrices instead of
-- two), vocab, tied (input and output embeddings shared), positions (learned position
-- embeddings, 0 for rotary), experts and experts_active (mixture of experts: every
-- layer's FFN is replicated `experts` times and each token uses `experts_active`).
-- params is the published count; fleetsim derives its own from the shapes, and the
-- tests hold the two within 2%.  context is the trained context length.
--
-- Sources: the Llama 2 paper and model cards (Meta, 2023), the Llama 3 / 3.1 model
-- cards and "The Llama 3 Herd of Models" (Meta, 2024), Mistral 7B and Mixtral of
-- Experts (Mistral AI, 2023/2024), "Language Models are Few-Shot Learners" (GPT-3,
-- 2020).

local llama2 = { gated = true, vocab = 32000, context = 4096 }
local llama3 = { gated = true, vocab = 128256, context = 8192 }

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
  ["mistral-7b"] = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn = 14336, gated = true, vocab = 32000, params = 7.24e9, context = 32768 },
  ["mixtral-8x7b"] = { layers = 32, hidden = 4096, heads = 32, kv_heads = 8, ffn = 14336, gated = true, vocab = 32000,
                       experts = 8, experts_active = 2, params = 46.7e9, params_active = 12.9e9, context = 32768 },
  ["gpt-3-175b"] = { layers = 96, hidden = 12288, heads = 96, kv_heads = 96, ffn = 49152, gated = false, vocab = 50257,
                     tied = true, positions = 2048, params = 175e9, context = 2048 },
}
