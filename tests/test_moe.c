/* Mixtures of experts and latent attention in the operators (models/perf.c): the
 * busiest device under expert parallelism, and a latent cache's reads, by hand. */
#include <criterion/criterion.h>
#include <math.h>

#include "models/estimate.h"
#include "models/perf.h"
#include "support/catalog_fixture.h"

TestSuite(moe, .init = test_catalog_setup, .fini = test_catalog_teardown);

Test(moe, the_busiest_device_takes_the_mean_and_its_spread)
{
    const model_spec *m = test_model("deepseek-v3"); /* 256 experts, 8 a token */
    /* 64 tokens over 8 devices: 64 x 8 / 8 = 64 on average, 64 + sqrt(2 x 64 x ln 8) */
    cr_expect_float_eq(perf_expert_busiest_tokens(m, 64, 8, 1), 64 + sqrt(128 * log(8.0)), 1e-9);
    /* one token: 1 + sqrt(2 ln 8) = 3.04 of its 8 experts on one device */
    cr_expect_float_eq(perf_expert_busiest_tokens(m, 1, 8, 0), 1 + sqrt(2 * log(8.0)), 1e-9);
    /* a skew of 2 doubles the mean; one device holds everything */
    cr_expect_float_eq(perf_expert_busiest_tokens(m, 64, 8, 2), 128 + sqrt(256 * log(8.0)), 1e-9);
    cr_expect_float_eq(perf_expert_busiest_tokens(m, 64, 1, 1), 512, 1e-9);
    /* capped: 256 experts over 128 devices, 2 each: a device sees a token at most twice */
    cr_expect_float_eq(perf_expert_busiest_tokens(m, 4, 128, 50), 8, 1e-9);
}

Test(moe, expert_parallelism_waits_for_the_busiest_device)
{
    /* qwen3-235b on 8 H100s in fp8, a prefill of 4096 tokens: whole experts on each
     * device (16 of 128) cost more MLP time the more skewed the routing */
    const model_spec *m = test_model("qwen3-235b-a22b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup tp = { .model = m, .device = d, .profile = &p, .weights = PREC_FP8,
                      .kv = PREC_BF16, .tp = 8 };
    perf_setup ep = tp, skewed = tp;
    ep.expert_parallel = skewed.expert_parallel = true;
    skewed.expert_skew = 2;
    perf_breakdown a, b, c;
    perf_batch batch = { .prefill_tokens = 4096, .prefill_seqs = 1, .prefill_last = 1,
                         .prefill_new_pairs = 4096.0 * 4096 / 2 };
    perf_iteration(&tp, &batch, &a);
    perf_iteration(&ep, &batch, &b);
    perf_iteration(&skewed, &batch, &c);
    /* the products' FLOPs on a device: all T k token-expert pairs on 1/8 of each
     * expert's width, or the busiest device's pairs on whole experts */
    double ca = a.op[OP_MLP_UP].compute_s + a.op[OP_MLP_DOWN].compute_s;
    double cb = b.op[OP_MLP_UP].compute_s + b.op[OP_MLP_DOWN].compute_s;
    double cc = c.op[OP_MLP_UP].compute_s + c.op[OP_MLP_DOWN].compute_s;
    double busiest = perf_expert_busiest_tokens(m, 4096, 8, 1);
    cr_expect_float_eq(cb / ca, busiest / (4096.0 * 8 / 8), 1e-9, "tp %g ep %g", ca, cb);
    /* a skew of 2 doubles the busiest device's products, which then outweigh its
     * weight reads: the MLP's time grows by well over a third */
    double tb = b.op[OP_MLP_UP].time_s + b.op[OP_MLP_DOWN].time_s;
    double tc = c.op[OP_MLP_UP].time_s + c.op[OP_MLP_DOWN].time_s;
    cr_expect_gt(cc, 1.9 * cb / 1.0, "compute %g vs %g", cc, cb);
    cr_expect_gt(tc, 1.3 * tb, "time %g vs %g", tc, tb);
    /* and each device reads only its own pairs' inputs, not all T k of them */
    double ma = a.op[OP_MLP_UP].memory_s + a.op[OP_MLP_DOWN].memory_s;
    double mb = b.op[OP_MLP_UP].memory_s + b.op[OP_MLP_DOWN].memory_s;
    cr_expect_lt(mb, ma);
    /* attention and the rest do not move */
    cr_expect_float_eq(b.op[OP_QKV].time_s, a.op[OP_QKV].time_s, 1e-15);
}

Test(moe, a_latent_cache_is_read_whole_on_every_device)
{
    /* deepseek-v3 decode, 32 sequences of 2000 tokens on 8 H200s: the attention reads
     * 61 layers x 64000 tokens x (512 + 64) x 2 bytes on each device, at the decode
     * attention's share of the bandwidth for 32 x 16 heads */
    const model_spec *m = test_model("deepseek-v3");
    const device_spec *d = test_device("H200-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup s = { .model = m, .device = d, .profile = &p, .weights = PREC_FP8,
                     .kv = PREC_BF16, .tp = 8 };
    perf_breakdown ops;
    perf_batch b = { .decode_seqs = 32, .decode_context = 32 * 2000.0 };
    perf_iteration(&s, &b, &ops);
    const perf_attn_decode_constants *c = &p.family->attn_decode;
    double width = 32 * 16.0; /* 128 heads over 8 devices */
    double bw = d->bandwidth_bytes_per_s * c->efficiency * width / (width + c->width_half);
    double bytes = 61 * 64000.0 * 576 * 2;
    const perf_op_time *o = &ops.op[OP_ATTN_DECODE];
    double expect = bytes / bw;
    cr_expect_gt(o->memory_s, o->compute_s, "reading the cache bounds it at batch 32");
    cr_expect_float_eq(o->memory_s, expect, 1e-9 * expect, "memory %g, expected %g",
                       o->memory_s, expect);
}

#include <stdlib.h>
#include <string.h>

#include "support/cli.h"
#include "support/scratch.h"

Test(moe, expert_parallelism_on_a_dense_model_is_refused)
{
    char *dir = scratch_dir();
    char *path = scratch_file(dir, "dense.lua",
        "local fs = require 'fleetsim'\n"
        "return fs.scenario { duration = '1m',\n"
        "  pools = { p = fs.dedicated { gpu = 'H100-SXM', count = 8 } },\n"
        "  workloads = { chat = fs.inference { model = 'llama-3-8b', pool = 'p', tp = 8,\n"
        "    expert_parallel = true, arrivals = fs.poisson { rate = '1/s' },\n"
        "    prompt = 100, output = 10 } } }\n");
    char *out = NULL, *err = NULL;
    cr_expect_eq(cli_run(&out, &err, "check %s", path), 2);
    cr_expect(strstr(err, "dense.lua:4") && strstr(err, "workloads.chat.expert_parallel")
              && strstr(err, "expert_parallel is for a mixture of experts; \"llama-3-8b\" is dense"),
              "%s", err);
    free(out);
    free(err);
    free(path);
    scratch_remove_dir(dir);
}

#include "models/memory.h"

Test(moe, attention_data_parallel_keeps_a_cache_per_device)
{
    /* deepseek-v3 in fp8 on 8 H200s: each device holds everything but the routed
     * experts whole and 1/8 of those, and its own sequences' latent cache */
    const model_spec *m = test_model("deepseek-v3");
    const device_spec *d = test_device("H200-SXM");
    double routed = 58.0 * 256 * 3 * 7168 * 2048;
    /* its embeddings and head (129,280 x 7,168 each, untied) stay bf16, 2 bytes */
    double embed = 2 * 129280.0 * 7168 + 7168;
    inference_memory dp = memory_inference_dp(m, d, PREC_FP8, PREC_BF16, 8, NULL);
    cr_expect_float_eq(dp.weights_bytes, model_params(m) - routed + routed / 8 + embed, 1);
    cr_expect_float_eq(dp.kv_bytes_per_token, 61.0 * 576 * 2, 0);
    double free_bytes = d->memory_bytes * MEMORY_USABLE_FRACTION - dp.weights_bytes;
    cr_expect_float_eq(dp.kv_capacity_tokens, 8 * floor(free_bytes / (61.0 * 576 * 2)), 0);
    /* tensor parallel: the weights split 8 ways, the latent cache on every device */
    inference_memory tp = memory_inference(m, d, PREC_FP8, PREC_BF16, 8);
    cr_expect_float_eq(tp.weights_bytes, (model_params(m) + embed) / 8, 1);
    cr_expect_lt(tp.kv_capacity_tokens, dp.kv_capacity_tokens / 4);
    /* a dense model has nothing to spread: tensor parallel's figures */
    const model_spec *dense = test_model("llama-3-70b");
    inference_memory a = memory_inference_dp(dense, d, PREC_FP8, PREC_BF16, 8, NULL);
    inference_memory b = memory_inference(dense, d, PREC_FP8, PREC_BF16, 8);
    cr_expect_float_eq(a.kv_capacity_tokens, b.kv_capacity_tokens, 0);
}

Test(moe, attention_data_parallel_pays_two_all_to_alls_a_mixture_layer)
{
    /* 64 sequences decoding over 8 devices: 8 each; every mixture layer (58) sends 8
     * tokens x 8 experts x 7168 x 2 bytes x 7/8 each way over NVLink, a device's share at
     * the node's measured send/recv rate and start-up (h100_dgx: 0.7702 of the 450 GB/s
     * link, 6.983 us) */
    const model_spec *m = test_model("deepseek-v3");
    const device_spec *d = test_device("H200-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup s = { .model = m, .device = d, .profile = &p, .weights = PREC_FP8,
                     .kv = PREC_BF16, .tp = 8, .attention_dp = true };
    perf_breakdown ops;
    perf_batch b = { .decode_seqs = 64, .decode_context = 64 * 1000.0 };
    perf_iteration(&s, &b, &ops);
    double bytes = 8.0 * 8 * 7168 * 2 * 7 / 8;
    cr_assert_float_eq(p.node->p2p.efficiency, 0.7702, 1e-12);
    double expect = 2 * 58 * (6.983e-6 + bytes / (0.7702 * device_link_bytes_per_s(d)));
    cr_expect_float_eq(ops.op[OP_ALLTOALL].time_s, expect, 1e-12 * expect + 1e-15);
    cr_expect_eq(ops.op[OP_ALLREDUCE].time_s, 0, "no tensor-parallel all-reduce");
    /* the closed form of a decode run equals its iterations one by one */
    perf_decode_shape shape = perf_decode_shape_of(&s, 64);
    decode_cost cost = perf_decode_cost_of(&shape, 64, 64 * 1000.0);
    double sum = 0;
    for (int k = 0; k < 50; k++)
        sum += perf_decode_step(&s, 64, 1000.0 + k).total_s;
    cr_expect_float_eq(decode_cost_sum(&cost, 50), sum, 1e-9 * sum);
}

Test(moe, a_mixture_layer_permutes_its_tokens_as_two_memory_passes)
{
    /* Qwen3-30B-A3B on one H100, a prefill of 4096 tokens: each of 48 mixture layers
     * copies 4096 x 8 routed states of 2048 values (bf16) into expert order (read and
     * write) and sums them back (read, then write 4096 states): (3 x 32768 + 4096) x 2048
     * x 2 bytes over its two kernels */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup s = { .model = m, .device = d, .profile = &p, .weights = PREC_BF16,
                     .kv = PREC_BF16, .tp = 1 };
    perf_batch b = { .prefill_tokens = 4096, .prefill_seqs = 1, .prefill_last = 1,
                     .prefill_new_pairs = 4096.0 * 4096 / 2 };
    perf_breakdown ops;
    perf_iteration(&s, &b, &ops);
    const perf_pass_constants *c = &perf_families[PERF_FAMILY_H100]->pass[PASS_RESHAPE];
    double pairs = 4096.0 * 8, bytes = (3 * pairs + 4096) * 2048 * 2 / 2;
    double one = bytes / (3.35e12 * c->efficiency * pairs / (pairs + c->tokens_half));
    cr_assert_gt(one, c->floor_s);
    cr_expect_float_eq(ops.op[OP_MOE_PERMUTE].time_s, 96 * one, 1e-12 * one);
    cr_expect_eq(ops.op[OP_MOE_PERMUTE].count, 96);
    /* a dense model permutes nothing */
    s.model = test_model("llama-3-8b");
    perf_iteration(&s, &b, &ops);
    cr_expect_eq(ops.op[OP_MOE_PERMUTE].count, 0);
}

Test(moe, estimate_serves_a_mixture_the_fastest_of_three_layouts)
{
    /* DeepSeek-V3 on 8 H200s, released in fp8: tensor parallel, expert parallel and
     * attention data parallel are each planned, the fastest served unless asked */
    const model_spec *m = test_model("deepseek-v3");
    const device_spec *d = test_device("H200-SXM");
    cr_expect(m->has_released);
    cr_expect_eq(m->released, PREC_FP8);
    estimate_request req = { .gpus = 8, .prec = m->released, .batch = 1, .prompt = 512,
                             .output = 256, .train_tokens = 1e9 };
    estimate_result r;
    char err[512];
    cr_assert_eq(estimate_run(m, d, &req, &r, err, sizeof err), 0, "%s", err);
    cr_assert(r.layouts_compared);
    double best = 0;
    for (int l = ESTIMATE_LAYOUT_TP; l <= ESTIMATE_LAYOUT_DP; l++)
        best = fmax(best, r.layout_tokens_per_s[l]);
    cr_expect_float_eq(r.layout_tokens_per_s[r.layout], best, 0);
    cr_expect_float_eq(r.throughput.tokens_per_s, best, 1e-9 * best);
    /* a latent cache is replicated under tensor parallelism and split under data-parallel
     * attention, so attention data parallel holds more sequences and serves the most */
    cr_expect_eq(r.layout, ESTIMATE_LAYOUT_DP);
    cr_expect_gt(r.layout_tokens_per_s[ESTIMATE_LAYOUT_DP],
                 2 * r.layout_tokens_per_s[ESTIMATE_LAYOUT_TP]);
    /* asked for, a layout is served as asked */
    req.layout = ESTIMATE_LAYOUT_TP;
    cr_assert_eq(estimate_run(m, d, &req, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.layout, ESTIMATE_LAYOUT_TP);
    cr_expect_float_eq(r.throughput.tokens_per_s, r.layout_tokens_per_s[ESTIMATE_LAYOUT_TP],
                       1e-9 * r.throughput.tokens_per_s);
    /* a dense model has one layout */
    req.layout = ESTIMATE_LAYOUT_BEST;
    cr_assert_eq(estimate_run(test_model("llama-3-70b"), d, &req, &r, err, sizeof err), 0, "%s",
                 err);
    cr_expect_not(r.layouts_compared);
    cr_expect_not(test_model("llama-3-70b")->has_released);
}
