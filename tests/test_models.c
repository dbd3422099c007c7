/* The device and model catalogs and the memory and performance models, against
 * published facts: datasheets, model cards and papers (each assertion names its source;
 * docs/accuracy.md lists them). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/catalog.h"
#include "lua/sandbox.h"
#include "models/estimate.h"
#include "models/memory.h"
#include "models/perf.h"
#include "models/perf_training.h"
#include "support/catalog_fixture.h"

TestSuite(models, .init = test_catalog_setup, .fini = test_catalog_teardown);

Test(models, parameter_counts_from_shapes_match_the_model_cards_within_2_percent)
{
    cr_assert_eq(test_catalog.nmodels, 41);
    for (size_t i = 0; i < test_catalog.nmodels; i++) {
        const model_spec *m = &test_catalog.models[i];
        double derived = model_params(m);
        cr_expect_leq(fabs(derived / m->published_params - 1), 0.02, "%s: %g vs published %g",
                      m->name, derived, m->published_params);
    }
}

Test(models, entries_after_2024_and_for_validation_keep_their_sources_counts)
{
    /* each count as its source prints it (lua/fleetsim/models.lua names the source) */
    static const struct { const char *name; double published; } cards[] = {
        { "bloom-176b", 176.247e9 },   /* bigscience/bloom model card: 176,247,271,424 */
        { "opt-175b", 175e9 },         /* arXiv:2205.01068 Table 1 */
        { "gpt-3-5b", 5e9 },           /* NeMo's name: its shapes give 5.05B */
        { "gpt-3-20b", 20e9 },         /* NeMo's name: its shapes give 20.25B */
        { "mpt-7b", 6658859008 },      /* llm-foundry benchmarking README */
        { "mpt-13b", 12853954560 },
        { "mpt-30b", 29975214080 },
        { "mpt-70b", 64862437376 },
        { "gpt-j-6b", 6053381344 },    /* EleutherAI model card */
        { "llama-3.2-1b", 1.23e9 },    /* Meta model cards */
        { "llama-3.2-3b", 3.21e9 },
        { "llama-3.3-70b", 70.6e9 },
        { "qwen2.5-7b", 7.61e9 },      /* Qwen model cards */
        { "qwen2.5-72b", 72.7e9 },
        { "qwen3-8b", 8.2e9 },         /* Qwen3 model cards */
        { "qwen3-32b", 32.8e9 },
        { "gemma-3-1b", 1.000e9 },     /* Gemma 3 report, Table 1: 302M + 698M */
        { "gemma-3-4b", 3.884e9 },     /* 675M + 3,209M */
        { "gemma-3-12b", 11.771e9 },   /* 1,012M + 10,759M */
        { "gemma-3-27b", 27.016e9 },   /* 1,416M + 25,600M */
        { "gpt-oss-20b", 20.91e9 },    /* gpt-oss model card */
        { "gpt-oss-120b", 116.83e9 },
        { "deepseek-r1", 671e9 },      /* DeepSeek-V3's shapes */
    };
    for (size_t i = 0; i < sizeof cards / sizeof cards[0]; i++) {
        const model_spec *m = test_model(cards[i].name);
        cr_expect_float_eq(m->published_params, cards[i].published, 1, "%s", m->name);
        cr_expect_leq(fabs(model_params(m) / cards[i].published - 1), 0.02, "%s: %g", m->name,
                      model_params(m));
    }
    /* MPT-7B by hand: 32 x (4 x 4096^2 + 2 x 4096 x 16384 + 2 x 4096) + 50368 x 4096 (tied,
     * no position table: ALiBi) + 4096 */
    cr_expect_float_eq(model_params(test_model("mpt-7b")), 6649024512.0, 0.5);
    /* Llama 3.2 1B ties its embeddings: one 128256 x 2048 table, 262,668,288 */
    const model_spec *l1 = test_model("llama-3.2-1b");
    cr_expect_float_eq(model_params_embedding(l1), 128256.0 * 2048 + 2048, 0.5);
    /* Llama 3.3 70B is Llama 3.1 70B's architecture */
    const model_spec *l33 = test_model("llama-3.3-70b"), *l31 = test_model("llama-3.1-70b");
    cr_expect_float_eq(model_params(l33), model_params(l31), 0.5);
    cr_expect_float_eq(model_kv_bytes_per_token(l33, PREC_FP16),
                       model_kv_bytes_per_token(l31, PREC_FP16), 1e-9);
    /* Qwen2.5 7B: 4 key-value heads of 128 over 28 layers, 2 x 28 x 4 x 128 x 2 bytes */
    cr_expect_float_eq(model_kv_bytes_per_token(test_model("qwen2.5-7b"), PREC_FP16), 57344,
                       1e-9);
}

Test(models, alibi_has_no_position_table_and_no_rotary)
{
    const model_spec *bloom = test_model("bloom-176b");
    cr_expect(bloom->alibi);
    cr_expect_eq(bloom->positions, 0);
    cr_expect_not(model_rotary(bloom));
    cr_expect_float_eq(model_params_embedding(bloom), 250880.0 * 14336 + 14336, 0.5);
    cr_expect_not(model_rotary(test_model("mpt-30b")));
    cr_expect_not(model_rotary(test_model("opt-175b")), "learned positions");
    cr_expect(model_rotary(test_model("gpt-j-6b")), "partial rotary, taken as rotary");
    cr_expect(model_rotary(test_model("qwen2.5-72b")));
}

Test(models, a_catalog_entry_with_alibi_and_learned_positions_is_refused)
{
    sandbox *sb = sandbox_create(false);
    cr_assert_not_null(sb);
    lua_State *L = sandbox_state(sb);
    cr_assert_eq(luaL_dostring(L, "local fs = require 'fleetsim'\n"
                                  "fs.models.odd = { layers = 2, hidden = 64, heads = 4, "
                                  "kv_heads = 4, ffn = 256, vocab = 100, alibi = true, "
                                  "positions = 512 }"), LUA_OK, "%s", lua_tostring(L, -1));
    catalog cat;
    char err[512];
    cr_expect_eq(catalog_load_from(L, "odd.lua", &cat, err, sizeof err), -1);
    cr_expect(strstr(err, "alibi and positions (512) exclude each other") != NULL, "%s", err);
    cr_expect(strstr(err, "models.odd") != NULL, "names the entry: %s", err);
    sandbox_free(sb);
}

Test(models, mixtral_active_parameters_are_two_experts_of_eight)
{
    /* Mixtral of Experts (2024): 46.7B total, 12.9B active per token */
    const model_spec *m = test_model("mixtral-8x7b");
    cr_expect_leq(fabs(model_params_active(m) / 12.9e9 - 1), 0.02, "%g", model_params_active(m));
    cr_expect_leq(fabs(model_params(m) / 46.7e9 - 1), 0.02);
    cr_expect_float_eq(model_experts_touched(m, 1), 2, 1e-12, "one token uses two experts");
    cr_expect_gt(model_experts_touched(m, 64), 7.9, "a batch of 64 touches nearly all 8");
}

Test(models, active_parameters_match_the_model_cards_within_2_percent)
{
    /* every mixture whose card states its active count: Mixtral 8x7B/8x22B, Qwen3,
     * Llama 4, DeepSeek-V3 and R1, gpt-oss (with its input embedding) */
    unsigned n = 0;
    for (size_t i = 0; i < test_catalog.nmodels; i++) {
        const model_spec *m = &test_catalog.models[i];
        if (!(m->published_active_params > 0))
            continue;
        n++;
        double derived = model_params_active(m);
        cr_expect_leq(fabs(derived / m->published_active_params - 1), 0.02,
                      "%s: %g active vs published %g", m->name, derived,
                      m->published_active_params);
    }
    cr_expect_eq(n, 10);
}

Test(models, deepseek_v3_by_hand)
{
    /* 61 layers, 3 dense; latent attention caches 512 + 64 values a token and layer */
    const model_spec *m = test_model("deepseek-v3");
    cr_expect_eq(model_moe_layers(m), 58);
    cr_expect_eq(model_dense_layers(m), 3);
    cr_expect_float_eq(model_kv_bytes_per_token(m, PREC_FP16), 61.0 * 576 * 2, 0);
    cr_expect_float_eq(model_kv_bytes_per_token_per_device(m, PREC_FP16, 8), 61.0 * 576 * 2, 0,
                       "the latent is replicated, not split");
    /* attention a layer: q 7168 x 1536 + 1536 (norm) + 1536 x 128 x 192; kv down
     * 7168 x 576 + 512 (norm); kv up 512 x 128 x (128 + 128); output 128 x 128 x 7168 */
    double attn = 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512
                  + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
    cr_expect_float_eq(model_params_attention(m), attn, 0);
    /* a mixture layer: 256 routed + 1 shared experts of 3 x 7168 x 2048, the router */
    double expert = 3.0 * 7168 * 2048, dense = 3.0 * 7168 * 18432;
    double total = 61 * (attn + 2 * 7168.0) + 3 * dense + 58 * (257 * expert + 7168.0 * 256)
                   + 2 * 129280.0 * 7168 + 7168;
    cr_expect_float_eq(model_params(m), total, 1);
    double active = 61 * (attn + 2 * 7168.0) + 3 * dense + 58 * (9 * expert + 7168.0 * 256)
                    + 2 * 129280.0 * 7168 + 7168;
    cr_expect_float_eq(model_params_active(m), active, 1);
}

Test(models, maverick_alternates_mixtures_and_dense_layers)
{
    const model_spec *m = test_model("llama-4-maverick");
    cr_expect_eq(model_moe_layers(m), 24);
    cr_expect_eq(model_dense_layers(m), 24);
    cr_expect_eq(model_moe_layers(test_model("llama-4-scout")), 48);
    /* head_dim 128 with 40 heads: queries 5120 wide, keys and values 8 x 128 */
    cr_expect_float_eq(model_query_width(m), 5120, 0);
    cr_expect_float_eq(model_kv_bytes_per_token(m, PREC_BF16), 2.0 * 48 * 8 * 128 * 2, 0);
    /* Qwen3-235B: 64 heads of 128 are 8192 wide on a 4096-wide model */
    cr_expect_float_eq(model_query_width(test_model("qwen3-235b-a22b")), 8192, 0);
}

/* A catalog of the built-in entries plus `extra` (Lua run after require), loaded; the
 * status and the message. */
static int load_with(const char *extra, char *err, size_t size)
{
    sandbox *sb = sandbox_create(false);
    cr_assert_not_null(sb);
    lua_State *L = sandbox_state(sb);
    char code[1024];
    snprintf(code, sizeof code, "local fs = require 'fleetsim'\n%s", extra);
    cr_assert_eq(luaL_dostring(L, code), LUA_OK, "%s", lua_tostring(L, -1));
    catalog cat;
    int status = catalog_load_from(L, "odd.lua", &cat, err, size);
    if (status == 0)
        catalog_release(&cat);
    sandbox_free(sb);
    return status;
}

Test(models, mixture_and_latent_keys_need_their_base)
{
    char err[512];
    cr_expect_eq(load_with("fs.models.odd = { layers = 2, hidden = 64, heads = 4, kv_heads = 4, "
                           "ffn = 256, vocab = 100, shared_experts = 1 }", err, sizeof err), -1);
    cr_expect(strstr(err, "describe a mixture of experts: set experts too"), "%s", err);
    cr_expect_eq(load_with("fs.models.odd = { layers = 2, hidden = 64, heads = 4, kv_heads = 4, "
                           "ffn = 256, vocab = 100, experts = 4, experts_active = 1, "
                           "dense_layers = 2 }", err, sizeof err), -1);
    cr_expect(strstr(err, "dense_layers (2) must be fewer than layers (2)"), "%s", err);
    cr_expect_eq(load_with("fs.models.odd = { layers = 2, hidden = 64, heads = 4, kv_heads = 4, "
                           "ffn = 256, vocab = 100, kv_lora_rank = 32 }", err, sizeof err), -1);
    cr_expect(strstr(err, "needs rope_head_dim"), "%s", err);
    /* a released precision is one of the precisions; a window's pattern needs a window */
    cr_expect_eq(load_with("fs.models.odd = { layers = 2, hidden = 64, heads = 4, kv_heads = 4, "
                           "ffn = 256, vocab = 100, precision = 'fp7' }", err, sizeof err), -1);
    cr_expect(strstr(err, "models.odd.precision") != NULL, "%s", err);
    cr_expect_eq(load_with("fs.models.odd = { layers = 2, hidden = 64, heads = 4, kv_heads = 4, "
                           "ffn = 256, vocab = 100, global_every = 2 }", err, sizeof err), -1);
    cr_expect(strstr(err, "set window too") != NULL, "%s", err);
        /* head_dim lets hidden be other than heads x head size */
    cr_expect_eq(load_with("fs.models.odd = { layers = 2, hidden = 100, heads = 3, kv_heads = 1, "
                           "head_dim = 32, ffn = 256, vocab = 100 }", err, sizeof err), 0, "%s", err);
}

Test(models, every_reference_device_is_in_the_catalog_with_its_datasheet_figures)
{
    /* NVIDIA's datasheets: name, fp16 TFLOPS (dense), memory GB, bandwidth GB/s, TDP W */
    const struct { const char *name; double fp16, mem_gb, bw, tdp; } rows[] = {
        { "T4", 65, 16, 320, 70 }, { "L4", 121, 24, 300, 72 },
        { "A100-40GB-SXM", 312, 40, 1555, 400 }, { "A100-80GB-SXM", 312, 80, 2039, 400 },
        { "H100-SXM", 989.5, 80, 3350, 700 }, { "H100-PCIe", 756.5, 80, 2000, 350 },
        { "H200-SXM", 989.5, 141, 4800, 700 }, { "B200", 2250, 180, 7700, 1000 },
        { "V100-SXM2-32GB", 125, 32, 900, 300 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const device_spec *d = test_device(rows[i].name);
        cr_expect_float_eq(d->peak_flops[PREC_FP16], rows[i].fp16 * 1e12, 1, "%s", rows[i].name);
        cr_expect_float_eq(d->memory_datasheet_bytes, rows[i].mem_gb * 1e9, 1, "%s", rows[i].name);
        cr_expect_float_eq(d->bandwidth_bytes_per_s, rows[i].bw * 1e9, 1, "%s", rows[i].name);
        cr_expect_float_eq(d->tdp_w, rows[i].tdp, 0, "%s", rows[i].name);
    }
    const device_spec *epyc = test_device("EPYC-9654"), *xeon = test_device("Xeon-8480+");
    cr_expect(epyc->is_cpu && xeon->is_cpu);
    cr_expect_float_eq(epyc->peak_flops[PREC_FP32], 7.4e12, 1); /* 96 x 2.4 GHz x 32 */
    cr_expect_float_eq(xeon->bandwidth_bytes_per_s, 307.2e9, 1); /* 8 x DDR5-4800 */
}

Test(models, missing_precisions_compute_at_the_next_wider_one)
{
    precision used;
    cr_expect_float_eq(device_peak_flops(test_device("V100-SXM2-32GB"), PREC_INT8, &used), 125e12,
                       1);
    cr_expect_eq(used, PREC_FP16, "V100 has no int8 tensor cores: int8 weights compute in fp16");
    cr_expect_float_eq(device_peak_flops(test_device("H100-SXM"), PREC_INT4, &used), 1979e12, 1);
    cr_expect_eq(used, PREC_INT8, "H100 has no int4: it computes in int8");
    cr_expect_float_eq(device_peak_flops(test_device("H100-SXM"), PREC_FP4, &used), 1979e12, 1);
    cr_expect_eq(used, PREC_FP8, "H100 has no fp4: the next wider is fp8");
    cr_expect_float_eq(device_peak_flops(test_device("EPYC-9654"), PREC_BF16, &used), 7.4e12, 1);
    cr_expect_eq(used, PREC_FP32);
}

Test(models, a_7b_model_is_14_gb_in_fp16_and_28_in_fp32)
{
    /* arithmetic: 7B parameters x 2 bytes = 14 GB; the common "28 GB" is the fp32 size */
    const model_spec *m = test_model("llama-2-7b");
    const device_spec *d = test_device("H100-SXM");
    double fp16 = memory_inference(m, d, PREC_FP16, PREC_FP16, 1).weights_bytes;
    double fp32 = memory_inference(m, d, PREC_FP32, PREC_FP16, 1).weights_bytes;
    double int4 = memory_inference(m, d, PREC_INT4, PREC_FP16, 1).weights_bytes;
    cr_expect_leq(fabs(fp16 / 13.48e9 - 1), 0.01, "%g", fp16);
    cr_expect_float_eq(fp32, 2 * fp16, 1);
    /* a quantized checkpoint keeps its embedding table and LM head (32,000 x 4,096 each,
     * untied) and the final norm 16-bit: 262.15M parameters at 2 bytes, the rest at its
     * own width */
    double embed = 2 * 32000.0 * 4096 + 4096;
    cr_expect_float_eq(model_params_embedding(m), embed, 0.5);
    cr_expect_float_eq(int4, (model_params(m) - embed) * 0.5 + embed * 2, 1);
    cr_expect_float_eq(int4, (fp16 - embed * 2) / 4 + embed * 2, 1);
    double fp4 = memory_inference(m, d, PREC_FP4, PREC_FP16, 1).weights_bytes;
    cr_expect_float_eq(fp4, (fp16 - embed * 2) / 4 * 1.125 + embed * 2, 1,
                       "fp4: half a byte a weight and an fp8 scale a block of 16 (NVFP4)");
}

Test(models, fp4_is_a_precision_of_its_own_that_no_cache_takes)
{
    precision p;
    cr_expect_eq(precision_parse("fp4", &p), 0);
    cr_expect_eq(p, PREC_FP4);
    cr_expect_str_eq(precision_name(PREC_FP4), "fp4");
    cr_expect_float_eq(precision_bytes(PREC_FP4), (4 + 8.0 / 16) / 8, 0, "NVFP4: 4 bits and an fp8 scale a block of 16");
    cr_expect_eq(precision_parse_cache("fp4", &p), -1, "no fp4 key-value cache");
}

Test(models, kv_cache_per_token_follows_layers_and_kv_heads)
{
    /* 2 (K and V) x layers x kv_heads x head size x 2 bytes: Llama-2-70B 320 KB per token
     * (2 x 80 x 8 x 128 x 2 bytes), Llama-2-7B 512 KB (no grouped query) */
    cr_expect_float_eq(model_kv_bytes_per_token(test_model("llama-2-70b"), PREC_FP16), 327680, 0);
    cr_expect_float_eq(model_kv_bytes_per_token(test_model("llama-2-7b"), PREC_FP16), 524288, 0);
}

Test(models, mixed_precision_adam_is_16_bytes_per_parameter)
{
    /* ZeRO (arXiv 1910.02054): 2 + 2 + 12 bytes per parameter; stage 3 over 8 ranks: 2 */
    const model_spec *m = test_model("llama-2-7b");
    const device_spec *d = test_device("H100-SXM");
    training_setup s = { .tp = 1, .pp = 1, .dp = 1, .micro_batch = 1, .seq_len = 4096, .microbatches = 1 };
    training_memory mem = memory_training(m, d, &s);
    double states = mem.weights_bytes + mem.gradient_bytes + mem.optimizer_bytes;
    cr_expect_float_eq(states / model_params(m), 16, 1e-9);
    /* 6.74B x 16 = 108 GB of states; with the activations of one 4096-token sequence
     * (Korthikanti et al. with flash attention, no scores kept: 4096 x 4096 x 34 bytes
     * per layer at tp 1) and its fp32 logits (4 x 4096 x 32000) it is over 112 GB */
    cr_expect_float_eq(mem.activation_bytes, 32.0 * 4096 * 4096 * 34 + 4.0 * 4096 * 32000, 1);
    cr_expect_float_eq(mem.logits_bytes, 4.0 * 4096 * 32000, 1);
    cr_expect_gt(mem.total_bytes, 112e9, "a 7B model needs over 112 GB to train");
    s.dp = 8;
    s.zero_stage = 3;
    mem = memory_training(m, d, &s);
    states = mem.weights_bytes + mem.gradient_bytes + mem.optimizer_bytes;
    /* and two layers' weights gathered at a time, 2 x 2 bytes a parameter of a layer */
    cr_expect_float_eq(states, 2 * model_params(m) + 4 * model_params_layer(m), 1);
}

Test(models, tensor_parallelism_divides_per_device_memory)
{
    const model_spec *m = test_model("llama-2-70b");
    const device_spec *d = test_device("H100-SXM");
    inference_memory one = memory_inference(m, d, PREC_FP16, PREC_FP16, 1);
    inference_memory four = memory_inference(m, d, PREC_FP16, PREC_FP16, 4);
    cr_expect_float_eq(four.weights_bytes, one.weights_bytes / 4, 1);
    cr_expect_float_eq(four.kv_bytes_per_token, one.kv_bytes_per_token / 4, 1e-9);
    cr_expect_not(one.fits, "138 GB of fp16 weights do not fit in 80 GB");
    cr_expect(four.fits);
    cr_expect_eq(memory_min_tp(m, d, PREC_FP16, PREC_FP16, 4096, 8, NULL), 2);
}

Test(models, gpt3_training_flops)
{
    /* public estimate of GPT-3's training: 3.14e23 FLOPs for 175B parameters and 300B
     * tokens (6 N T, Kaplan et al. 2020) */
    const model_spec *m = test_model("gpt-3-175b");
    double flops = 6 * model_params_active(m) * 300e9;
    cr_expect_leq(fabs(flops / 3.14e23 - 1), 0.01, "%g", flops);
}

Test(models, llama_3_1_405b_gpu_hours_within_25_percent)
{
    /* Meta's Llama 3.1 model card: 30.84M H100 GPU-hours for ~15T tokens; Llama 3 report:
     * 38-43% MFU on 16K GPUs.  First the arithmetic at the published utilisation, then
     * the model's own plan (tp, pp, micro-batches, communication) on 16,384 GPUs. */
    const model_spec *m = test_model("llama-3.1-405b");
    const device_spec *d = test_device("H100-SXM");
    double flops = 6 * model_params(m) * 15e12;
    double at_published = flops / (0.40 * 989.5e12) / 3600;
    cr_expect_leq(fabs(at_published / 30.84e6 - 1), 0.25, "%g GPU-hours", at_published);
    estimate_request req = { .gpus = 16384, .prec = PREC_BF16, .batch = 1, .prompt = 512,
                             .output = 256, .train_tokens = 15e12, .seq_len = 8192,
                             .global_batch = 2048 };
    estimate_result r;
    char err[512];
    cr_assert_eq(estimate_run(m, d, &req, &r, err, sizeof err), 0, "%s", err);
    cr_assert(r.train_fits);
    /* the model card's hours are the whole run's, failures and restarts included (the
     * Llama 3 report's 419 interruptions in 54 days): the expected figure, not the
     * productive one (which is below it) */
    cr_expect_lt(r.train_gpu_hours, r.goodput.gpu_hours);
    cr_expect_leq(fabs(r.goodput.gpu_hours / 30.84e6 - 1), 0.25, "%g GPU-hours",
                  r.goodput.gpu_hours);
    cr_expect(r.train.mfu >= 0.30 && r.train.mfu <= 0.50, "MFU %g", r.train.mfu);
}

Test(models, decode_is_bandwidth_bound_at_batch_1_and_compute_bound_at_large_batch)
{
    /* roofline: at batch 1 a token costs about weight bytes / bandwidth */
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup s = { .model = m, .device = d, .profile = &p, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    perf_time one = perf_decode_step(&s, 1, 128);
    perf_time many = perf_decode_step(&s, 2048, 128);
    cr_expect_not(one.compute_bound);
    cr_expect(many.compute_bound);
    /* between the bandwidth ceiling and half of it (engines reach 60-90% of it); the
     * GPU's part alone, the engine's host work apart */
    double ceiling = d->bandwidth_bytes_per_s / (model_params(m) * 2);
    double speed = 1 / (one.total_s - one.host_s);
    cr_expect(speed < ceiling && speed > 0.5 * ceiling, "%g tokens/s, ceiling %g", speed, ceiling);
}

Test(models, quantized_weights_decode_faster)
{
    const model_spec *m = test_model("llama-2-70b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup s16 = { .model = m, .device = d, .profile = &p, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 4 }, s8 = s16, s4 = s16;
    s8.weights = PREC_INT8;
    s4.weights = PREC_INT4;
    double fp16 = perf_decode_step(&s16, 1, 512).total_s;
    double int8 = perf_decode_step(&s8, 1, 512).total_s;
    double int4 = perf_decode_step(&s4, 1, 512).total_s;
    cr_expect(int8 < fp16 && int4 < int8, "%g %g %g", fp16, int8, int4);
    cr_expect_lt(fp16 / int4, 4, "fixed costs keep the speed-up under the byte ratio");
}

Test(models, tensor_parallel_allreduce_alpha_beta)
{
    /* ring: 2 (n-1)/n of the message over the link plus 2 (n-1) latencies */
    cr_expect_float_eq(perf_allreduce_s(1e9, 8, 450e9, 1e-5), 2 * 7.0 / 8 * 1e9 / 450e9 + 14e-5, 1e-12);
    cr_expect_float_eq(perf_allreduce_s(1e9, 1, 450e9, 1e-5), 0, 0);
}

Test(models, estimate_plans_the_global_batch_stated_even_below_the_gpus)
{
    /* 128 sequences of 8,192 tokens on 1,024 H100s: at most 128 data-parallel ranks, so
     * tp x pp x cp covers 8 GPUs or more; the step is of 128 sequences, not 1,024 (the
     * estimate once raised a stated batch to a sequence a GPU) */
    const model_spec *m = test_model("llama-3.1-70b");
    const device_spec *d = test_device("H100-SXM");
    estimate_request req = { .gpus = 1024, .prec = PREC_BF16, .batch = 1, .prompt = 512,
                             .output = 256, .train_tokens = 1e12, .seq_len = 8192,
                             .global_batch = 128, .halves = ESTIMATE_TRAINING };
    estimate_result small, large;
    char err[512];
    cr_assert_eq(estimate_run(m, d, &req, &small, err, sizeof err), 0, "%s", err);
    cr_assert(small.train_fits, "%s", small.train_refusal);
    const training_setup *t = &small.train.setup;
    cr_expect_eq(t->dp * t->micro_batch * t->microbatches, 128, "dp %u x %u x %u", t->dp,
                 t->micro_batch, t->microbatches);
    cr_expect_geq(t->tp * t->pp * (t->cp ? t->cp : 1), 8);
    /* a step of 128 sequences moves 1/8 of 1,024's tokens: the run takes more steps */
    req.global_batch = 1024;
    cr_assert_eq(estimate_run(m, d, &req, &large, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(small.train.step_s * 1024 / 128 / large.train.step_s,
                       small.train_s / large.train_s, 1e-9);
    cr_expect_neq(small.train_s, large.train_s);
}

Test(models, training_in_fp8_needs_fp8_units_and_int4_is_no_training_precision)
{
    /* an A100 has no fp8 matrix units: estimate trains in bf16, says why, and times
     * exactly bf16's step (it once priced fp8 as weight-only products, slower than bf16);
     * an H100 trains in fp8 */
    const model_spec *m = test_model("llama-3.1-70b");
    estimate_request req = { .gpus = 256, .prec = PREC_FP8, .batch = 1, .prompt = 512,
                             .output = 256, .halves = ESTIMATE_TRAINING };
    estimate_result fp8, bf16, h100;
    char err[512];
    cr_assert_eq(estimate_run(m, test_device("A100-80GB-SXM"), &req, &fp8, err, sizeof err), 0);
    cr_expect_eq(fp8.train_precision, PREC_BF16);
    cr_expect_str_eq(fp8.train_precision_why, "A100-80GB-SXM has no fp8 matrix units (fp8 "
                     "training runs on Hopper and later)");
    req.prec = PREC_BF16;
    cr_assert_eq(estimate_run(m, test_device("A100-80GB-SXM"), &req, &bf16, err, sizeof err), 0);
    cr_expect_eq(fp8.train.step_s, bf16.train.step_s);
    cr_expect_str_eq(bf16.train_precision_why, "");
    req.prec = PREC_FP8;
    cr_assert_eq(estimate_run(m, test_device("H100-SXM"), &req, &h100, err, sizeof err), 0);
    cr_expect_eq(h100.train_precision, PREC_FP8);
    /* a V100 has fp16's units and not bf16's: it trains in fp16 (loss scaling), at its
     * 125 TFLOP/s, where bf16 once ran at its fp32 peak of 15.7 and read 72% MFU */
    estimate_result v100;
    req.prec = PREC_BF16;
    req.gpus = 64;
    cr_assert_eq(estimate_run(test_model("llama-2-7b"), test_device("V100-SXM2-32GB"), &req,
                              &v100, err, sizeof err), 0, "%s", err);
    cr_expect_eq(v100.train_precision, PREC_FP16);
    cr_expect_str_eq(v100.train_precision_why, "V100-SXM2-32GB has no bf16 matrix units");
    cr_expect(v100.train.mfu > 0.2 && v100.train.mfu < 0.7, "MFU %g", v100.train.mfu);
    char why[200];
    cr_expect_eq(perf_training_precision_check(test_device("V100-SXM2-32GB"), PREC_BF16, why,
                                               sizeof why), -1);
    cr_expect_eq(perf_training_precision_check(test_device("H100-SXM"), PREC_INT4, why,
                                               sizeof why), -1);
    cr_expect_str_eq(why, "int4 is a serving precision: training runs in bf16, fp16, tf32, "
                     "fp32 or fp8");
}

Test(models, best_throughput_goes_past_the_node_only_when_no_node_holds_the_model)
{
    /* Llama 3.1 405B in bf16, 811 GB of weights: no 8 H100s (80 GB each) hold it, 16 do,
     * at tp 16 over two nodes; 70B fits a node, and its best stays within one */
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup s = { .model = test_model("llama-3.1-405b"), .device = d, .profile = &p,
                     .weights = PREC_BF16, .kv = PREC_BF16, .tp = 1 };
    throughput_plan big = perf_best_throughput(&s, 16, 512, 256);
    cr_expect_eq(big.tp, 16);
    cr_expect_eq(big.replicas, 1);
    cr_expect_gt(big.tokens_per_s, 0);
    cr_expect_eq(perf_best_throughput(&s, 8, 512, 256).tp, 0, "8 H100s hold no replica");
    s.model = test_model("llama-3.1-70b");
    throughput_plan dense = perf_best_throughput(&s, 16, 512, 256);
    cr_expect(dense.tp >= 2 && dense.tp <= 8, "tp %u", dense.tp);
}

Test(models, tensor_parallelism_past_the_node_pays_the_networks_latency)
{
    /* tp 16 of H100s spans two nodes: each all-reduce adds 2 (2 - 1) network steps, so a
     * decode step's all-reduces (2 a layer and the embedding's: 2 x 80 + 1 for 70B) move
     * by 161 x 2 x the change of latency, and those of tp 8 not at all */
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d), slow = p;
    slow.link_latency_s = p.link_latency_s + 1e-3;
    perf_setup s = { .model = test_model("llama-3-70b"), .device = d, .profile = &p,
                     .weights = PREC_BF16, .kv = PREC_BF16, .tp = 16 }, t = s;
    t.profile = &slow;
    double moved = perf_decode_step(&t, 8, 1024).total_s - perf_decode_step(&s, 8, 1024).total_s;
    cr_expect_float_eq(moved, 161 * 2 * 1e-3, 1e-9);
    s.tp = t.tp = 8;
    cr_expect_float_eq(perf_decode_step(&t, 8, 1024).total_s,
                       perf_decode_step(&s, 8, 1024).total_s, 1e-15);
}

Test(models, estimate_refuses_what_does_not_fit_with_the_numbers)
{
    const model_spec *m = test_model("llama-2-70b");
    const device_spec *d = test_device("A100-80GB-SXM");
    estimate_request req = { .gpus = 1, .prec = PREC_FP16, .batch = 1, .prompt = 512, .output = 256 };
    estimate_result r;
    char err[1024];
    cr_assert_eq(estimate_run(m, d, &req, &r, err, sizeof err), -1);
    cr_expect_str_eq(err, "llama-2-70b in fp16 does not fit on 1 x A100-80GB-SXM: a replica "
                     "needs 138.2 GB per device (138.0 GB of weights and 0.25 GB of cache for "
                     "768 tokens) and each A100-80GB-SXM has 76.6 GB usable (90% of the 85.1 GB "
                     "CUDA reports); "
                     "the smallest tensor parallelism that fits is 2 (--tp 2 --gpus 2)");
    /* training on one A100 does not fit either: both halves refused, each with its cause */
    cr_expect_eq(r.refused, ESTIMATE_BOTH);
    cr_expect_str_eq(r.serving_refusal, err);
    cr_expect(strstr(r.train_refusal, "llama-2-70b does not fit on 1 A100-80GB-SXM")
              == r.train_refusal, "%s", r.train_refusal);
}

Test(models, estimate_answers_each_half_apart_and_takes_a_stated_plan)
{
    const model_spec *m = test_model("llama-3-70b");
    const device_spec *d = test_device("H100-SXM");
    estimate_request req = { .gpus = 16, .tp = 1, .prec = PREC_FP16, .batch = 1, .prompt = 512,
                             .output = 256 };
    estimate_result r;
    char err[1024];
    /* no replica of one H100 holds 70B, which does not keep training from its plan */
    cr_assert_eq(estimate_run(m, d, &req, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.halves, ESTIMATE_BOTH);
    cr_expect_eq(r.refused, ESTIMATE_SERVING);
    cr_expect(strstr(r.serving_refusal, "does not fit on 1 x H100-SXM") != NULL, "%s",
              r.serving_refusal);
    cr_expect(r.train_fits && r.train.step_s > 0);
    /* the training half alone, its plan stated in full: the planner times just that, so
     * the step is perf_training_step's for it */
    req.halves = ESTIMATE_TRAINING;
    req.train_stated = true;
    req.train_within = TRAINING_FREE;
    training_constraints *c = &req.train_within;
    c->tp = 4;
    c->pp = 4;
    c->micro_batch = 1;
    c->zero_stage = 1;
    c->recompute_layers = 20;
    c->selective = 0;
    req.schedule = TRAINING_SCHEDULE_1F1B;
    cr_assert_eq(estimate_run(m, d, &req, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.halves, ESTIMATE_TRAINING);
    cr_expect_eq(r.refused, 0);
    cr_expect_eq(r.decode.total_s, 0, "no serving half computed");
    const training_setup *s = &r.train.setup;
    cr_expect(s->tp == 4 && s->pp == 4 && s->dp == 1 && s->micro_batch == 1
              && s->zero_stage == 1 && s->recompute_layers == 20 && s->virtual_stages == 1,
              "tp %u pp %u dp %u mbs %u zero %u recompute %u v %u", s->tp, s->pp, s->dp,
              s->micro_batch, s->zero_stage, s->recompute_layers, s->virtual_stages);
    perf_profile p = perf_default_profile(d);
    training_setup by_hand = { .tp = 4, .pp = 4, .cp = 1, .ep = 1, .etp = 4, .zero_stage = 1,
                               .recompute_layers = 20, .virtual_stages = 1, .micro_batch = 1,
                               .seq_len = 4096 };
    training_estimate e = perf_training_step(m, d, &p, PREC_BF16, by_hand, 16, 1024);
    cr_expect_float_eq(r.train.step_s, e.step_s, 1e-12 * e.step_s);
    /* stated too far: tp 3 splits no head evenly; the training half was all that was asked */
    c->tp = 3;
    cr_expect_eq(estimate_run(m, d, &req, &r, err, sizeof err), -1);
    cr_expect_eq(r.refused, ESTIMATE_TRAINING);
    cr_expect_str_eq(err, r.train_refusal);
    cr_expect(strstr(err, "tp 3 does not divide the 64 attention heads of llama-3-70b") == err,
              "%s", err);
}

Test(models, every_catalog_pair_has_an_estimate)
{
    for (size_t i = 0; i < test_catalog.nmodels; i++) {
        for (size_t j = 0; j < test_catalog.ndevices; j++) {
            estimate_request req = { .gpus = 8, .prec = PREC_FP16, .batch = 8, .prompt = 512,
                                     .output = 256 };
            estimate_result r;
            char err[1024];
            int status = estimate_run(&test_catalog.models[i], &test_catalog.devices[j], &req,
                                      &r, err, sizeof err);
            if (status != 0) { /* only when the weights fit on no 8 devices */
                cr_expect(strstr(err, "does not fit"), "%s on %s: %s", test_catalog.models[i].name,
                          test_catalog.devices[j].name, err);
                continue;
            }
            cr_expect(r.decode.total_s > 0 && isfinite(r.decode.total_s), "%s on %s",
                      test_catalog.models[i].name, test_catalog.devices[j].name);
            cr_expect(r.throughput.tokens_per_s > 0);
        }
    }
}

Test(models, sliding_windows_by_hand)
{
    /* Gemma 3 27B: 62 layers, every sixth global (10), 52 local with a 1024-token window */
    const model_spec *g = test_model("gemma-3-27b");
    cr_expect_eq(model_local_layers(g), 52);
    cr_expect_float_eq(model_attended_tokens(g, 800), 800, 0, "inside the window: every token");
    cr_expect_float_eq(model_attended_tokens(g, 4096), (10 * 4096.0 + 52 * 1024.0) / 62, 1e-9);
    cr_expect_float_eq(model_attended_growth(g, 1000), 1, 0);
    cr_expect_float_eq(model_attended_growth(g, 5000), 10.0 / 62, 1e-12);
    /* gpt-oss-120b: 36 layers alternating, a 128-token window: at 1000 tokens a mean layer
     * holds (18 x 1000 + 18 x 128) / 36 = 564 */
    const model_spec *o = test_model("gpt-oss-120b");
    cr_expect_eq(model_local_layers(o), 18);
    cr_expect_float_eq(model_attended_tokens(o, 1000), 564, 1e-9);
    /* a 512-token prompt from scratch: global layers 512^2 / 2 pairs, local ones
     * 128^2 / 2 + (512 - 128) x 128; a 64-token chunk after 1000 cached tokens: global
     * 64 x 1000 cached, local 64 x 128 in sight less the chunk's own 64^2 / 2 */
    double cached, fresh;
    model_attention_pairs(o, 0, 512, &cached, &fresh);
    cr_expect_float_eq(cached, 0, 0);
    cr_expect_float_eq(fresh, (512.0 * 512 / 2 + 128.0 * 128 / 2 + 384.0 * 128) / 2, 1e-9);
    model_attention_pairs(o, 1000, 64, &cached, &fresh);
    cr_expect_float_eq(cached, (64.0 * 1000 + (64.0 * 128 - 64.0 * 64 / 2)) / 2, 1e-9);
    cr_expect_float_eq(fresh, 64.0 * 64 / 2, 1e-9);
    /* a dense model without a window: the causal square and the rectangle */
    model_attention_pairs(test_model("llama-3-8b"), 300, 100, &cached, &fresh);
    cr_expect_float_eq(cached, 30000, 0);
    cr_expect_float_eq(fresh, 5000, 0);
}

Test(models, a_window_cuts_long_context_decode_and_its_cache)
{
    /* Gemma 3 27B at 32k tokens: its local layers read a 1024-token window, so a decode
     * step is faster and a replica holds more such sequences than the same shapes with
     * every layer global */
    const model_spec *g = test_model("gemma-3-27b");
    model_spec whole = *g;
    whole.window = whole.global_every = 0;
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup s = { .model = g, .device = d, .profile = &p, .weights = PREC_FP16,
                     .kv = PREC_FP16, .tp = 1 };
    perf_setup w = s;
    w.model = &whole;
    double windowed = perf_decode_step(&s, 16, 32768).total_s;
    double full = perf_decode_step(&w, 16, 32768).total_s;
    cr_expect_lt(windowed, 0.6 * full, "%g s vs %g s", windowed, full);
    estimate_request req = { .gpus = 1, .prec = PREC_FP16, .batch = 1, .prompt = 30000,
                             .output = 2768, .train_tokens = 1e9 };
    estimate_result a, b;
    char err[256];
    cr_assert_eq(estimate_run(g, d, &req, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(estimate_run(&whole, d, &req, &b, err, sizeof err), 0, "%s", err);
    /* (10 x 32768 + 52 x 1024) / 62 = 6144 tokens of every layer instead of 32768 */
    cr_expect_float_eq(a.max_batch, floor(a.memory.kv_capacity_tokens / 6144.0), 0,
                       "%g sequences", a.max_batch);
    cr_expect_gt(a.max_batch, 4 * b.max_batch, "%g vs %g", a.max_batch, b.max_batch);
}

/* Meta's FP8 release of Llama 3.1 405B ("The Llama 3 Herd of Models", section 6.2): the
 * feed-forward weights of every layer but the first and the last in fp8, everything else
 * in bf16.  By hand: 124 x 3 x 16,384 x 53,248 fp8 weights (1 byte), and at 2 bytes the
 * two edge layers' feed-forward, every layer's attention (2 x 16,384 x 16,384 + 2 x 16,384 x
 * 1,024) and norms (2 x 16,384), the embedding and head (2 x 128,256 x 16,384) and the
 * final norm. */
Test(models, meta_fp8_405b_keeps_attention_and_edge_layers_16_bit)
{
    const model_spec *m = test_model("llama-3.1-405b-fp8");
    const device_spec *d = test_device("H100-SXM");
    cr_assert(m->quantize_mlp_only && m->unquantized_edge_layers == 1);
    double h = 16384, ffn = 3 * h * 53248, attn = 2 * h * h + 2 * h * 1024 + 2 * h;
    double embed = 2 * 128256.0 * h + h;
    double want = 124 * ffn + 2 * (2 * ffn + 126 * attn + embed);
    cr_expect(fabs(model_weight_bytes(m, PREC_FP8) / want - 1) < 1e-12, "%.6g vs %.6g",
              model_weight_bytes(m, PREC_FP8), want);
    cr_expect(fabs(memory_inference(m, d, PREC_FP8, PREC_FP16, 8).weights_bytes / (want / 8) - 1)
              < 1e-12);
    /* the same shapes quantized whole: only the embeddings and head stay 16-bit */
    const model_spec *plain = test_model("llama-3.1-405b");
    cr_expect(fabs(model_weight_bytes(plain, PREC_FP8) / (126 * (ffn + attn) + 2 * embed) - 1)
              < 1e-12);
    /* and in 16-bit every scope weighs the same */
    cr_expect_float_eq(model_weight_bytes(m, PREC_BF16), model_weight_bytes(plain, PREC_BF16), 1);
    /* decode at batch 1 reads the bf16 attention and edge layers: slower than the plain
     * fp8 checkpoint, faster than bf16 */
    perf_profile p = perf_default_profile(d);
    perf_setup meta = { .model = m, .device = d, .profile = &p, .weights = PREC_FP8,
                        .kv = PREC_FP16, .tp = 8 };
    perf_setup all = meta, wide = meta;
    all.model = plain;
    wide.weights = PREC_BF16;
    double t_meta = perf_decode_step(&meta, 1, 1000).total_s;
    double t_all = perf_decode_step(&all, 1, 1000).total_s;
    double t_wide = perf_decode_step(&wide, 1, 1000).total_s;
    cr_expect(t_all < t_meta && t_meta < t_wide, "%g %g %g", t_all, t_meta, t_wide);
}
