/* Engines as named profiles (models/engine.h, lua/fleetsim/engines.lua): host work that
 * overlaps the GPU's step up to it and no further, in one step and in a decode run's
 * closed form; an H100's cache from the 79.22 GiB CUDA reports and an engine's
 * reservations, against the start-up line they were set from; SGLang's and TensorRT-LLM's
 * rules; a training framework's bytes of state; and the catalog's checks. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/catalog.h"
#include "models/engine.h"
#include "models/memory.h"
#include "models/perf.h"
#include "support/catalog_fixture.h"
#include "support/cli.h"
#include "support/scratch.h"

TestSuite(engines, .init = test_catalog_setup, .fini = test_catalog_teardown);

static const double GIB = 1073741824.0;

/* ---- host work that overlaps ------------------------------------------------------------- */

Test(engines, overlap_hides_host_work_up_to_the_gpu_step_and_no_further)
{
    /* a 10 ms GPU step: all of 6 ms of host work hidden, 14 ms shows its excess; half of
     * it overlapped: max(10, 7) + 7; in series: the sum */
    cr_expect_float_eq(perf_step_s(10e-3, 6e-3, 1), 10e-3, 1e-15);
    cr_expect_float_eq(perf_step_s(10e-3, 14e-3, 1), 14e-3, 1e-15);
    cr_expect_float_eq(perf_step_s(10e-3, 14e-3, 0.5), 17e-3, 1e-15);
    cr_expect_float_eq(perf_step_s(10e-3, 14e-3, 0), 24e-3, 1e-15);
    cr_expect_float_eq(perf_step_s(10e-3, 6e-3, 0.5), 13e-3, 1e-15);
}

/* Llama-3.1-8B's decode step on one H100 at `batch`, under engine `name`. */
static perf_time decode_under(const char *name, unsigned batch, perf_profile *p)
{
    const device_spec *d = test_device("H100-SXM");
    perf_profile base = perf_default_profile(d);
    *p = engine_apply_profile(test_engine(name), &base, d);
    perf_setup s = { .model = test_model("llama-3.1-8b"), .device = d, .profile = p,
                     .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    return perf_decode_step(&s, batch, 640);
}

Test(engines, an_engine_that_schedules_ahead_pays_the_larger_of_gpu_and_host)
{
    perf_profile serial, ahead;
    for (unsigned batch = 1; batch <= 1024; batch *= 4) {
        perf_time a = decode_under("vllm-2024", batch, &serial);
        perf_time b = decode_under("sglang", batch, &ahead);
        /* the same GPU work and host work; the operator set's engine adds them */
        cr_expect_float_eq(a.gpu_s, b.gpu_s, 1e-15 * a.gpu_s);
        cr_expect_float_eq(a.host_s, b.host_s, 1e-15 * a.host_s);
        cr_expect_float_eq(a.total_s, a.gpu_s + a.host_s, 1e-12 * a.total_s);
        cr_expect_float_eq(b.total_s, fmax(b.gpu_s, b.host_s), 1e-12 * b.total_s, "batch %u",
                           batch);
        cr_expect_float_eq(b.host_exposed_s, 0, 0);
    }
    /* at batch 1 the host's 1.34 ms hides under the step; at 1,024 sequences its 65 ms
     * of Python work (63 us a sequence) is longer than the GPU's step, which it sets */
    perf_time one = decode_under("sglang", 1, &ahead), many = decode_under("sglang", 1024, &ahead);
    cr_expect_gt(one.gpu_s, one.host_s);
    cr_expect_float_eq(one.total_s, one.gpu_s, 1e-15);
    cr_expect_gt(many.host_s, many.gpu_s);
    cr_expect_float_eq(many.total_s, many.host_s, 1e-15);
    /* the operator set's engine with tp: Ray's term; an engine of local workers, none
     * within a node (tp 8) and Ray's beyond it (tp 16) */
    const device_spec *d = test_device("H100-SXM");
    perf_profile base = perf_default_profile(d);
    perf_profile ray = engine_apply_profile(test_engine("vllm-2024"), &base, d);
    perf_profile local = engine_apply_profile(test_engine("vllm-0.5"), &base, d);
    cr_expect(local.host_tp_local);
    cr_expect_not(ray.host_tp_local);
    perf_setup s = { .model = test_model("llama-3.1-70b"), .device = d, .profile = &ray,
                     .weights = PREC_BF16, .kv = PREC_BF16, .tp = 8 };
    double tp_term = ray.host_tp_s + 64 * ray.host_tp_per_seq_s;
    double with_ray = perf_decode_step(&s, 64, 500).host_s;
    s.profile = &local;
    cr_expect_float_eq(with_ray - perf_decode_step(&s, 64, 500).host_s, tp_term, 1e-15);
    s.tp = 16;
    double across_local = perf_decode_step(&s, 64, 500).host_s;
    s.profile = &ray;
    cr_expect_float_eq(across_local, perf_decode_step(&s, 64, 500).host_s, 1e-15);
}

Test(engines, a_decode_run_in_closed_form_sums_its_overlapped_steps)
{
    /* a batch whose host work and GPU step cross within the run: the host's constant
     * sets the first steps, the GPU's growing attention the later ones */
    const device_spec *d = test_device("H100-SXM");
    perf_profile base = perf_default_profile(d);
    perf_profile p = engine_apply_profile(test_engine("sglang"), &base, d);
    perf_setup s = { .model = test_model("llama-3.1-8b"), .device = d, .profile = &p,
                     .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    unsigned seqs = 160;
    double context = 160.0 * 200; /* 200 tokens each, one more each step */
    perf_decode_shape shape = perf_decode_shape_of(&s, seqs);
    cr_assert_gt(shape.host_hidden_s, 0);
    decode_cost c = perf_decode_cost_of(&shape, seqs, context);
    double n = 3000, sum = 0, first = 0, last = 0;
    for (double k = 0; k < n; k++) {
        perf_batch b = { .decode_seqs = seqs, .decode_context = context + seqs * k };
        double t = perf_iteration(&s, &b, NULL).total_s;
        sum += t;
        first = k == 0 ? t : first;
        last = t;
    }
    cr_expect_float_eq(first, shape.host_hidden_s, 1e-12, "host-bound at first");
    cr_expect_gt(last, shape.host_hidden_s * 1.05, "GPU-bound at the end");
    cr_expect_float_eq(decode_cost_sum(&c, n), sum, 1e-9 * sum);
}

/* ---- memory as engines account for it ---------------------------------------------------- */

Test(engines, an_h100s_cache_from_79_22_gib_and_the_engines_reservations)
{
    /* vLLM's start-up line for Llama-3-8B on an H100 (../shared/reference/kernels/
     * engine_memory.csv row 1): total 79.22 GiB, x 0.9 = 71.29 GiB, less 14.96 GiB of
     * weights, 1.79 of non-torch memory and a 1.26 GiB activation peak: 53.29 GiB of
     * cache, 436,568 tokens of 128 KiB.  The catalog's H100 is what CUDA reports, and the
     * operator set's engine keeps what that line says (the sampler's 256 x 128,256 logits
     * at 41.2 bytes: 1.259 GiB) */
    const device_spec *d = test_device("H100-SXM");
    const model_spec *m = test_model("llama-3-8b");
    cr_expect_float_eq(d->memory_bytes, 79.22 * GIB, 1);
    cr_expect_float_eq(d->memory_datasheet_bytes, 80e9, 1);
    memory_reserve r = engine_memory_reserve(test_engine("vllm-2024"), m);
    cr_expect_float_eq(memory_activation_bytes(&r, 1) / GIB, 1.26, 0.005);
    cr_expect_float_eq(memory_reserved_bytes(&r, 1, d->memory_bytes) / GIB, 1.79 + 1.26, 0.005);
    inference_memory mem = memory_inference_reserved(m, d, PREC_BF16, PREC_BF16, 1, &r);
    cr_expect_float_eq((mem.usable_bytes - mem.weights_bytes) / GIB, 53.29, 0.02);
    cr_expect_float_eq(mem.kv_capacity_tokens, 436568, 0.001 * 436568);
    /* at tp 2 (row 2): 3.58 GiB of non-torch memory a GPU, the same activation peak */
    cr_expect_float_eq(memory_reserved_bytes(&r, 2, d->memory_bytes) / GIB, 3.58 + 1.26, 0.005);
    /* no engine: 0.9 of the device for weights and cache, as before engines had names */
    inference_memory plain = memory_inference(m, d, PREC_BF16, PREC_BF16, 1);
    cr_expect_float_eq(plain.usable_bytes, 0.9 * 79.22 * GIB, 1);
    /* a GPU without memory_cuda: its datasheet's GB read as GiB less 0.975% */
    const device_spec *a100 = test_device("A100-80GB-SXM");
    cr_expect_float_eq(a100->memory_bytes, 80 * GIB * 79.22 / 80, 1);
}

Test(engines, sglang_reserves_by_its_own_rule)
{
    /* mem_fraction_static = (M - reserved) / M, reserved 512 MiB + 1.5 MiB x 8,192 tokens
     * + 128 MiB a rank + 2 MiB x 256 graphs, at least 10 GiB above 60 GiB of device */
    const device_spec *d = test_device("H100-SXM");
    const model_spec *m = test_model("llama-3-8b");
    memory_reserve r = engine_memory_reserve(test_engine("sglang"), m);
    double one = (512 + 1.5 * 8192 + 128 + 512) / 1024.0, eight = one + 7 * 0.125;
    cr_expect_float_eq(memory_reserved_bytes(&r, 1, d->memory_bytes) / GIB, one, 1e-9);
    cr_expect_float_eq(memory_reserved_bytes(&r, 8, d->memory_bytes) / GIB, eight, 1e-9);
    cr_expect_float_eq(memory_usable_bytes(&r, 1, d->memory_bytes, 16e9),
                       d->memory_bytes - one * GIB, 1);
    /* the 10 GiB floor on a device above 60 GiB, none on a 24 GB one */
    memory_reserve small = r;
    small.activation_whole_bytes = 0;
    cr_expect_float_eq(memory_reserved_bytes(&small, 1, d->memory_bytes) / GIB, 10, 1e-12);
    cr_expect_float_eq(memory_reserved_bytes(&small, 1, 24e9) / GIB, 1.125, 1e-12);
    /* a stated share: the static pool is that share of the device */
    r.share = 0.93;
    cr_expect_float_eq(memory_usable_bytes(&r, 1, d->memory_bytes, 16e9), 0.93 * d->memory_bytes,
                       1);
}

Test(engines, tensorrt_llm_keeps_its_workspace_and_caches_a_share_of_what_is_free)
{
    /* the workspace line it was set from (engine_memory.csv row 6, TensorRT-LLM issue
     * 2683): 2,265.58 MiB a rank for DeepSeek-V3 at tp 8 */
    const model_spec *m = test_model("deepseek-v3");
    memory_reserve r = engine_memory_reserve(test_engine("tensorrt-llm"), m);
    cr_expect_float_eq(memory_activation_bytes(&r, 8) / 1048576, 2265.58, 2.5);
    /* the cache: 0.9 of what the weights, the runtime and the workspace leave */
    const device_spec *d = test_device("H100-SXM");
    const model_spec *small = test_model("llama-3-8b");
    memory_reserve s = engine_memory_reserve(test_engine("tensorrt-llm"), small);
    double w = model_weight_bytes(small, PREC_BF16);
    double left = d->memory_bytes - w - memory_reserved_bytes(&s, 1, d->memory_bytes);
    cr_expect_float_eq(memory_usable_bytes(&s, 1, d->memory_bytes, w), w + 0.9 * left, 1);
}

Test(engines, a_training_framework_states_its_bytes_a_parameter)
{
    /* Megatron's distributed optimizer: bf16 weights and fp32 gradients unsharded (6
     * bytes), fp32 master weights and moments sharded (12 / d): 18 a parameter at d = 1;
     * FSDP2: 16, all sharded; the default, ZeRO's 2 + 2 + 12 */
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    training_constraints mega = TRAINING_FREE, fsdp = TRAINING_FREE, zero = TRAINING_FREE;
    engine_training_state(test_engine("megatron"), &mega);
    engine_training_state(test_engine("pytorch-fsdp"), &fsdp);
    engine_training_state(test_engine("deepspeed"), &zero);
    training_setup s = { .tp = 1, .pp = 1, .dp = 8, .zero_stage = 1, .micro_batch = 1,
                         .seq_len = 4096, .microbatches = 1, .recompute_layers = 32 };
    double n = model_params(m);
    s.weight_bytes = mega.weight_bytes;
    s.gradient_bytes = mega.gradient_bytes;
    s.optimizer_bytes = mega.optimizer_bytes;
    training_memory a = memory_training(m, d, &s);
    cr_expect_float_eq(a.gradient_bytes, 4 * n, 1e-6 * n);
    cr_expect_float_eq(a.optimizer_bytes, 12 * n / 8, 1e-6 * n);
    s.weight_bytes = zero.weight_bytes;
    s.gradient_bytes = zero.gradient_bytes;
    s.optimizer_bytes = zero.optimizer_bytes;
    training_memory b = memory_training(m, d, &s);
    cr_expect_float_eq(b.gradient_bytes, 2 * n, 1e-6 * n);
    cr_expect_float_eq(a.total_bytes - b.total_bytes, 2 * n, 1e-6 * n);
    s.zero_stage = 3;
    s.weight_bytes = fsdp.weight_bytes;
    s.gradient_bytes = fsdp.gradient_bytes;
    s.optimizer_bytes = fsdp.optimizer_bytes;
    training_memory c = memory_training(m, d, &s);
    cr_expect_float_eq(c.optimizer_bytes, 8 * n / 8, 1e-6 * n);
    cr_expect_float_eq(c.gradient_bytes, 4 * n / 8, 1e-6 * n);
}

/* ---- the catalog and the scenario's engine ----------------------------------------------- */

Test(engines, the_catalog_has_each_kind_and_its_defaults)
{
    const engine_spec *serve = test_engine(CATALOG_DEFAULT_SERVING_ENGINE);
    const engine_spec *train = test_engine(CATALOG_DEFAULT_TRAINING_ENGINE);
    cr_expect_not(serve->training);
    cr_expect(train->training);
    const char *serving[] = { "vllm-2024", "vllm-0.5", "vllm-2025", "vllm", "sglang",
                              "tensorrt-llm", "tensorrt-llm-cpp" };
    for (size_t i = 0; i < sizeof serving / sizeof serving[0]; i++) {
        const engine_spec *e = test_engine(serving[i]);
        cr_expect_not(e->training, "%s", serving[i]);
        cr_expect(e->host_source && *e->host_source, "%s states how its host work was set",
                  serving[i]);
        cr_expect(e->host_overlap >= 0 && e->host_overlap <= 1, "%s", serving[i]);
        for (int k = 0; k < ENGINE_CLASS_COUNT; k++)
            cr_expect(e->kernels[k] && *e->kernels[k], "%s %s", serving[i],
                      engine_class_name((engine_class)k));
    }
    cr_expect(test_engine("megatron")->training);
    cr_expect(test_engine("pytorch-fsdp")->training);
    /* a profile measured on the user's own engine keeps its host work */
    perf_profile measured = perf_default_profile(test_device("H100-SXM"));
    measured.has_operators = true;
    measured.host_s = 5e-3;
    perf_profile kept = engine_apply_profile(test_engine("sglang"), &measured, test_device("H100-SXM"));
    cr_expect_float_eq(kept.host_s, 5e-3, 0);
    cr_expect_float_eq(kept.host_overlap, 0, 0);
}

static char *out, *err;

static char *scenario_with(const char *workload)
{
    char *dir = scratch_dir(), *path = malloc(strlen(dir) + 16);
    cr_assert_not_null(path);
    sprintf(path, "%s/s.lua", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "local fs = require \"fleetsim\"\n"
               "return fs.scenario { name = \"e\", duration = \"1m\",\n"
               "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 8 } },\n"
               "  workloads = {\n    w = %s,\n  },\n}\n", workload);
    fclose(f);
    free(dir);
    return path;
}

Test(engines, a_workload_names_its_engine_or_runs_the_default_said_so)
{
    char *path = scenario_with("fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1, "
                               "arrivals = fs.poisson { rate = 1 }, prompt = 100, output = 10 }");
    cr_assert_eq(cli_run(&out, &err, "check %s", path), 0, "%s", err);
    cr_expect(strstr(out, "engine vllm (the default)") != NULL, "%s", out);
    free(path);
    path = scenario_with("fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1, "
                         "engine = \"sglang\", arrivals = fs.poisson { rate = 1 }, prompt = 100, "
                         "output = 10 }");
    cr_assert_eq(cli_run(&out, &err, "check %s", path), 0, "%s", err);
    cr_expect(strstr(out, "engine sglang: SGLang") != NULL, "%s", out);
    cr_expect(strstr(out, "100% of it run while the GPU computes (stated)") != NULL, "%s", out);
    cr_expect(strstr(out, "batch up to 256 sequences and 8192 tokens") != NULL, "%s", out);
    free(path);
    /* the engine's own batch defaults where the workload gives none (vLLM 0.14 on an
     * H100: max_num_seqs 1024), the workload's where it does */
    path = scenario_with("fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1, "
                         "engine = \"vllm\", arrivals = fs.poisson { rate = 1 }, prompt = 100, "
                         "output = 10 }");
    cr_assert_eq(cli_run(&out, &err, "check %s", path), 0, "%s", err);
    cr_expect(strstr(out, "batch up to 1024 sequences and 8192 tokens") != NULL, "%s", out);
    free(path);
    path = scenario_with("fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1, "
                         "engine = \"tensorrt-llm\", max_batch = 64, arrivals = fs.poisson { "
                         "rate = 1 }, prompt = 100, output = 10 }");
    cr_assert_eq(cli_run(&out, &err, "check %s", path), 0, "%s", err);
    cr_expect(strstr(out, "batch up to 64 sequences and 8192 tokens") != NULL, "%s", out);
    free(path);
    /* a misspelt engine, and one of the other kind: refused, file:line and the key */
    path = scenario_with("fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1, "
                         "engine = \"sglan\", arrivals = fs.poisson { rate = 1 }, prompt = 100, "
                         "output = 10 }");
    cr_expect_eq(cli_run(&out, &err, "check %s", path), 2);
    cr_expect(strstr(err, "s.lua:5: workloads.w.engine: unknown engine \"sglan\" (did you mean "
                          "\"sglang\"?)") != NULL, "%s", err);
    free(path);
    path = scenario_with("fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1, "
                         "engine = \"megatron\", arrivals = fs.poisson { rate = 1 }, prompt = 100, "
                         "output = 10 }");
    cr_expect_eq(cli_run(&out, &err, "check %s", path), 2);
    cr_expect(strstr(err, "workloads.w.engine: \"megatron\" is a training engine") != NULL, "%s",
              err);
    free(path);
    path = scenario_with("fs.training { model = \"llama-3-8b\", pool = \"p\", gpus = 8, "
                         "tokens = 1e9, engine = \"sglang\" }");
    cr_expect_eq(cli_run(&out, &err, "check %s", path), 2);
    cr_expect(strstr(err, "workloads.w.engine: \"sglang\" is a serving engine") != NULL, "%s",
              err);
    free(path);
}

Test(engines, estimate_names_the_engine_and_the_host_time_hidden_and_exposed)
{
    cr_assert_eq(cli_run(&out, &err, "estimate --model llama-3.1-8b --gpu H100-SXM --batch 256 "
                         "--engine sglang"), 0, "%s", err);
    cr_expect(strstr(out, "engine              sglang: SGLang") != NULL, "%s", out);
    cr_expect(strstr(out, "training engine     deepspeed (the default)") != NULL, "%s", out);
    cr_expect(strstr(out, "host work: prefill") != NULL, "%s", out);
    cr_expect(strstr(out, "hidden under the GPU's") != NULL, "%s", out);
    /* the host row's share is what the GPU's step leaves exposed: none of the default
     * engine's 3.3 ms at a decode batch of 32, where the GPU's step takes 8.2 ms; the
     * 2024 engine's, in series, a share of its own */
    cr_assert_eq(cli_run(&out, &err, "estimate --model llama-3-8b --gpu H100-SXM --batch 32"), 0,
                 "%s", err);
    const char *host = strstr(out, "\n  host ");
    cr_assert_not_null(host, "%s", out);
    const char *first = strstr(host, "   0.0%  host"), *end = strchr(host + 1, '\n');
    cr_expect(first && first < end && strstr(first + 1, "   0.0%  host") < end, "%.160s", host);
    cr_assert_eq(cli_run(&out, &err, "estimate --model llama-3-8b --gpu H100-SXM --batch 32 "
                         "--engine vllm-2024"), 0, "%s", err);
    host = strstr(out, "\n  host ");
    cr_assert_not_null(host, "%s", out);
    end = strchr(host + 1, '\n');
    first = strstr(host, "   0.0%  host");
    cr_expect(!first || first > end, "%.160s", host);
    cr_assert_eq(cli_run(&out, &err, "estimate --model llama-3.1-8b --gpu H100-SXM --csv "
                         "--engine megatron"), 0, "%s", err);
    /* a training engine named alone: serving runs the default, which overlaps its host
     * work */
    cr_expect(strstr(out, "engine_host_overlap,1,1\n") != NULL, "%s", out);
    cr_expect(strstr(out, "tpot_host_exposed_s,") != NULL, "%s", out);
    cr_expect_eq(cli_run(&out, &err, "estimate --model llama-3.1-8b --gpu H100-SXM --engine "
                         "sglang --engine vllm"), 2);
    cr_expect(strstr(err, "two serving engines") != NULL, "%s", err);
    cr_expect_eq(cli_run(&out, &err, "estimate --model llama-3.1-8b --gpu H100-SXM --engine "
                         "sglangg"), 2);
    cr_expect(strstr(err, "did you mean 'sglang'?") != NULL, "%s", err);
}

/* ---- fitted kernel families -------------------------------------------------------------- */

Test(engines, a_hopper_engine_prices_prompt_attention_and_experts_with_its_fitted_families)
{
    /* Llama-3.1-8B's prefill of one 4,096-token prompt on an H100 under SGLang: each of
     * 32 layers one FlashAttention-3 launch over the causal pairs, t = floor + F / (P e)
     * with the family's constants (F = 4 x 128 x 32 heads a pair, 4,096^2 / 2 pairs) */
    const device_spec *h100 = test_device("H100-SXM");
    const model_spec *m = test_model("llama-3.1-8b");
    const perf_kernel_family *fa3 = perf_kernel_family_named("fa3_bf16_h100");
    cr_assert_not_null(fa3);
    cr_expect_eq(test_engine("sglang")->families[ENGINE_ATTN_PREFILL], fa3);
    perf_profile base = perf_default_profile(h100);
    perf_profile p = engine_apply_profile(test_engine("sglang"), &base, h100);
    perf_setup s = { .model = m, .device = h100, .profile = &p, .weights = PREC_BF16,
                     .kv = PREC_BF16, .tp = 1 };
    double cached, fresh;
    model_attention_pairs(m, 0, 4096, &cached, &fresh);
    perf_batch b = { .prefill_tokens = 4096, .prefill_seqs = 1, .prefill_last = 1,
                     .prefill_new_pairs = fresh };
    perf_breakdown ops;
    perf_iteration(&s, &b, &ops);
    double flops = 4.0 * 128 * 32 * fresh;
    /* the launch floor at most the table's (the fit's intercept is its small rows' shortfall) */
    double floor = fmin(fa3->attn_prefill.floor_s, perf_family_of(h100)->attn_prefill.floor_s);
    double want = 32 * (floor + flops / (h100->peak_flops[PREC_BF16]
                                         * fa3->attn_prefill.new_efficiency));
    cr_expect_float_eq(ops.op[OP_ATTN_PREFILL].time_s, want, 1e-9 * want);
    /* the operator set's engine keeps the table's FlashAttention-2-era share: slower */
    perf_profile old = engine_apply_profile(test_engine("vllm-2024"), &base, h100);
    s.profile = &old;
    perf_breakdown slow;
    perf_iteration(&s, &b, &slow);
    cr_expect_gt(slow.op[OP_ATTN_PREFILL].time_s, 2 * want);
    /* an A100 takes the a100 table: no Hopper family there */
    const device_spec *a100 = test_device("A100-80GB-SXM");
    perf_profile on_a100 = perf_default_profile(a100);
    on_a100 = engine_apply_profile(test_engine("sglang"), &on_a100, a100);
    cr_expect_null(on_a100.prefill_family);
    cr_expect_null(on_a100.moe_family);
}

Test(engines, the_training_frameworks_run_a_mixtures_experts_as_grouped_gemms)
{
    /* Megatron and FSDP2 (NeMo AutoModel's Transformer Engine GroupedLinear, torchtitan's
     * grouped_mm) price the experts by the grouped family and their weight gradients by
     * the k-grouped one, on the devices the h100 table stands for; DeepSpeed keeps the
     * operator set's products, and an A100 the a100 table's */
    const perf_kernel_family *fwd = perf_kernel_family_named("deepgemm_grouped_fp8_h800");
    const perf_kernel_family *wgrad = perf_kernel_family_named("deepgemm_wgrad_fp8_h200");
    cr_assert(fwd && wgrad);
    const device_spec *h100 = test_device("H100-SXM"), *a100 = test_device("A100-80GB-SXM");
    const char *grouped[] = { "megatron", "pytorch-fsdp" };
    for (int i = 0; i < 2; i++) {
        const engine_spec *e = test_engine(grouped[i]);
        cr_expect_eq(e->families[ENGINE_MOE_GEMM], fwd, "%s", grouped[i]);
        cr_expect_eq(e->moe_wgrad_family, wgrad, "%s", grouped[i]);
        perf_profile base = perf_default_profile(h100);
        perf_profile p = engine_apply_profile(e, &base, h100);
        cr_expect_eq(p.moe_family, fwd, "%s", grouped[i]);
        cr_expect_eq(p.moe_wgrad_family, wgrad, "%s", grouped[i]);
        base = perf_default_profile(a100);
        p = engine_apply_profile(e, &base, a100);
        cr_expect_null(p.moe_wgrad_family, "%s on an A100", grouped[i]);
    }
    cr_expect_null(test_engine("deepspeed")->families[ENGINE_MOE_GEMM]);
    cr_expect_null(test_engine("deepspeed")->moe_wgrad_family);
}

Test(engines, a_mixtures_experts_run_as_one_grouped_gemm_a_layer)
{
    /* Qwen3-30B-A3B (128 experts of 768, 8 a token, hidden 2,048, gated) in fp8 on one
     * H100, 256 tokens: every expert touched, 16 tokens each; up and down one launch a
     * layer each, floor + max(C, M) at DeepGEMM's grouped shares of the fp8 peak */
    const device_spec *h100 = test_device("H100-SXM");
    const model_spec *m = test_model("qwen3-30b-a3b");
    const perf_kernel_family *g = perf_kernel_family_named("deepgemm_grouped_fp8_h800");
    cr_assert_not_null(g);
    perf_profile base = perf_default_profile(h100);
    perf_profile p = engine_apply_profile(test_engine("sglang"), &base, h100);
    cr_assert_eq(p.moe_family, g);
    perf_setup s = { .model = m, .device = h100, .profile = &p, .weights = PREC_FP8,
                     .kv = PREC_BF16, .tp = 1 };
    double T = 256, touched = model_experts_touched(m, T), per = T * 8 / touched;
    perf_batch b = { .decode_seqs = T, .decode_context = T * 100 };
    perf_breakdown ops;
    perf_iteration(&s, &b, &ops);
    const perf_grouped_gemm_constants *c = &g->grouped_gemm;
    double e = 768, h = 2048, peak = h100->peak_flops[PREC_FP8], bw = h100->bandwidth_bytes_per_s;
    double sat = per / (per + c->tokens_half);
    double compute = 2 * touched * per * 2 * e * h / (peak * c->efficiency * sat);
    double memory = (touched * 2 * e * h * 1 + 2 * touched * per * (h + 2 * e))
                    / (bw * c->bandwidth_efficiency);
    double layer = c->floor_s + fmax(compute, memory);
    cr_expect_float_eq(ops.op[OP_MLP_UP].time_s, m->layers * layer, 1e-9 * m->layers * layer);
}

/* ---- speculative decoding priced per engine ----------------------------------------------- */

/* Time per output token of Llama-3.1-70B on 4 H100s under engine `name`: plain decoding,
 * and rounds of 4 tokens drafted by Llama-3.2-1B, 2.77 kept a round (acceptance 0.7). */
static void speculate(const char *name, unsigned batch, double *plain, double *spec,
                      perf_time *verify)
{
    const device_spec *d = test_device("H100-SXM");
    perf_profile base = perf_default_profile(d);
    static perf_profile p;
    p = engine_apply_profile(test_engine(name), &base, d);
    static perf_setup target, draft;
    target = (perf_setup){ .model = test_model("llama-3.1-70b"), .device = d, .profile = &p,
                           .weights = PREC_BF16, .kv = PREC_BF16, .tp = 4 };
    draft = target;
    draft.model = test_model("llama-3.2-1b");
    perf_speculation sp = { &draft, 4, 0.7, 0 };
    double context = 1000;
    *plain = perf_decode_step(&target, batch, context).total_s;
    *spec = perf_speculative_round_s(&target, &sp, batch, context) / perf_speculative_tokens(0.7, 4);
    perf_batch b = { 0 };
    perf_speculative_verify_add(&b, target.model, 4, batch, context);
    *verify = perf_iteration(&target, &b, NULL);
}

Test(engines, speculation_slows_decoding_where_verification_saturates_compute)
{
    double plain, spec;
    perf_time verify;
    /* one sequence: the round's five positions cost little more than one, a gain */
    speculate("sglang", 1, &plain, &spec, &verify);
    cr_expect_lt(spec, plain / 1.5, "batch 1: %g vs %g ms", 1e3 * spec, 1e3 * plain);
    cr_expect_not(verify.compute_bound);
    /* 512 sequences: the verification's 2,560 positions are compute-bound, and five
     * positions a sequence for 2.77 tokens lose to plain decoding */
    speculate("sglang", 512, &plain, &spec, &verify);
    cr_expect(verify.compute_bound);
    cr_expect_gt(spec, plain, "batch 512: %g vs %g ms", 1e3 * spec, 1e3 * plain);
}

Test(engines, a_proposer_worker_pays_each_draft_steps_host_work)
{
    /* vLLM V0's draft steps are iterations of their own: k = 4 more host works a round
     * (1.28 ms + 63 us a sequence, and Ray's 4.7 ms + 9.9 us a sequence at tp 4) than
     * an engine whose draft runs inside the round */
    double plain, spec, in_round;
    perf_time verify;
    speculate("vllm-2024", 8, &plain, &spec, &verify);
    const device_spec *d = test_device("H100-SXM");
    perf_profile base = perf_default_profile(d);
    perf_profile p = engine_apply_profile(test_engine("vllm-2024"), &base, d);
    cr_assert(p.draft_iterations);
    double host = p.host_s + 8 * p.host_per_seq_s + p.host_tp_s + 8 * p.host_tp_per_seq_s;
    perf_profile quiet = p;
    quiet.draft_iterations = false;
    perf_setup target = { .model = test_model("llama-3.1-70b"), .device = d, .profile = &quiet,
                          .weights = PREC_BF16, .kv = PREC_BF16, .tp = 4 };
    perf_setup draft = target;
    draft.model = test_model("llama-3.2-1b");
    perf_speculation sp = { &draft, 4, 0.7, 0 };
    in_round = perf_speculative_round_s(&target, &sp, 8, 1000) / perf_speculative_tokens(0.7, 4);
    cr_expect_float_eq((spec - in_round) * perf_speculative_tokens(0.7, 4), 4 * host, 1e-9);
}

/* ---- a mixture's all-to-all as engines run it --------------------------------------------- */

/* DeepSeek-V3's all-to-all time in one step of T tokens on 16 H100s over 2 nodes
 * (attention data parallel: experts spread whole), under profile p. */
static double alltoall_of(perf_profile *p, unsigned n, double T)
{
    perf_setup s = { .model = test_model("deepseek-v3"), .device = test_device("H100-SXM"),
                     .profile = p, .weights = PREC_FP8, .kv = PREC_BF16, .tp = n,
                     .attention_dp = true };
    perf_batch b = { .prefill_tokens = T * n, .prefill_seqs = n, .prefill_last = n,
                     .prefill_new_pairs = n * T * T / 2 };
    perf_breakdown ops;
    perf_iteration(&s, &b, &ops);
    return ops.op[OP_ALLTOALL].time_s;
}

Test(engines, fp8_dispatch_halves_the_dispatchs_bytes)
{
    /* within an 8-GPU node, 4,096 tokens a device: T k h (n - 1) / n states each way;
     * the dispatch at 1 + 4/128 bytes a value against 2, the combine 2 either way: the
     * bandwidth part of the two falls from 4 to 3.03 bytes a value; the dispatch alone
     * halves (0.516) */
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    double wide = alltoall_of(&p, 8, 4096), narrow;
    p.dispatch_fp8 = true;
    narrow = alltoall_of(&p, 8, 4096);
    const perf_node *node = perf_node_of(d);
    double link = device_link_bytes_per_s(d), layers = model_moe_layers(test_model("deepseek-v3"));
    double states = 4096.0 * 8 * 7168 * 7 / 8;
    double alpha = node->p2p.alpha_s, rate = node->p2p.efficiency * link;
    cr_expect_float_eq(wide, layers * 2 * (alpha + states * 2 / rate), 1e-9 * wide);
    cr_expect_float_eq(narrow, layers * (2 * alpha + states * (2 + 1 + 4.0 / 128) / rate),
                       1e-9 * narrow);
    /* the model's own: less their start-ups, the fp8 round trip over the 16-bit one is
     * (2 + 1.03125) / 4 */
    cr_expect_float_eq((narrow - 2 * layers * alpha) / (wide - 2 * layers * alpha),
                       (2 + 1 + 4.0 / 128) / 4, 1e-9);
}

Test(engines, node_limited_routing_and_per_node_dispatch_cut_the_networks_copies)
{
    /* 64 GPUs, 8 nodes: a token's 8 experts cross the network 8 x 7/8 = 7 times as
     * copies an expert; once a node, the distinct nodes of 8 picks of 8, 8 (1 - (7/8)^8)
     * = 5.25, 7/8 of them remote; limited to DeepSeek-V3's 4 nodes, 3.5 */
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    double each = alltoall_of(&p, 64, 512);
    p.per_node_dispatch = true;
    double limited = alltoall_of(&p, 64, 512);
    const double alpha = perf_node_of(d)->allreduce[2].alpha_s;
    double layers = model_moe_layers(test_model("deepseek-v3"));
    double bytes_each = 512.0 * 7 * 7168 * 2, bytes_limited = 512.0 * 3.5 * 7168 * 2;
    double net = 47e9; /* the 400 Gb/s NIC at the 0.94 of it traffic reaches */
    cr_assert_float_eq(p.network_bytes_per_s * p.network_efficiency, net, 1);
    cr_expect_float_eq(each, layers * 2 * (alpha + bytes_each / net), 1e-9 * each);
    cr_expect_float_eq(limited, layers * 2 * (alpha + bytes_limited / net), 1e-9 * limited);
    /* two micro-batches hide the all-to-all under the rest of the step's work */
    p.two_batch_overlap = true;
    cr_expect_lt(alltoall_of(&p, 64, 512), limited);
}

Test(engines, the_modern_engines_send_fp8_once_a_node)
{
    const char *deepep[] = { "vllm", "sglang", "tensorrt-llm" };
    for (size_t i = 0; i < 3; i++) {
        const engine_spec *e = test_engine(deepep[i]);
        cr_expect(e->dispatch_fp8 && e->per_node_dispatch, "%s", deepep[i]);
        cr_expect_not(e->two_batch_overlap, "%s: off by default", deepep[i]);
    }
    cr_expect_not(test_engine("vllm-2024")->dispatch_fp8);
    cr_expect_eq(test_model("deepseek-v3")->routed_nodes, 4);
}

Test(engines, an_edit_of_one_engine_leaves_the_others_and_estimate_fills_its_cache_alone)
{
    /* a scenario's edit of one engine's shared-looking settings stays its own */
    char *dir = scratch_dir(), path[512];
    snprintf(path, sizeof path, "%s/e.lua", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("local fs = require \"fleetsim\"\n"
          "fs.engines[\"vllm-2025\"].memory.share = 0.5\n"
          "fs.engines.sglang.alltoall.two_batch_overlap = true\n"
          "return fs.scenario { name = \"e\", duration = \"1m\",\n"
          "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 8 } },\n"
          "  workloads = { w = fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1,\n"
          "    arrivals = fs.poisson { rate = 1 }, prompt = 100, output = 10 } } }\n", f);
    fclose(f);
    cr_assert_eq(cli_run(&out, &err, "check %s", path), 0, "%s", err);
    cr_expect(strstr(out, "memory: share_of_total, share 0.9,") != NULL, "%s", out);
    cr_expect_not(test_engine("tensorrt-llm")->two_batch_overlap);
    scratch_remove_dir(dir);
    /* estimate's best throughput runs no batch the engine's cache cannot hold */
    const char *engines[] = { "vllm-2024", "sglang", "tensorrt-llm" };
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(cli_run(&out, &err, "estimate --model llama-3.1-70b --gpu H100-SXM --gpus 2 "
                             "--engine %s --csv", engines[i]), 0, "%s", err);
        const char *b = strstr(out, "\nthroughput_batch,"), *n = strstr(out, "\nmax_batch,");
        cr_assert(b && n, "%s", out);
        double batch = strtod(strchr(b + 1, ',') + 1, NULL), most = strtod(strchr(n + 1, ',') + 1, NULL);
        const char *tp = strstr(out, "\nthroughput_tp,");
        cr_assert_not_null(tp);
        if (strtod(strchr(tp + 1, ',') + 1, NULL) == 2)
            cr_expect_leq(batch, most, "%s: batch %g, the cache holds %g", engines[i], batch, most);
    }
}

/* vLLM's defaults follow the device (vllm/engine/arg_utils.py): 1,024 sequences and 8,192
 * tokens an iteration on a GPU of 70 GiB or more, 256 and 2,048 on a smaller one and on
 * an A100 whatever its memory; an engine without smaller defaults keeps its own */
Test(engines, an_engines_batch_defaults_follow_the_device)
{
    const engine_spec *v = test_engine("vllm");
    unsigned seqs, tokens;
    engine_batch_defaults(v, test_device("H100-SXM"), &seqs, &tokens);
    cr_expect(seqs == 1024 && tokens == 8192, "H100: %u, %u", seqs, tokens);
    engine_batch_defaults(v, test_device("A100-80GB-SXM"), &seqs, &tokens);
    cr_expect(seqs == 256 && tokens == 2048, "A100 80GB: %u, %u", seqs, tokens);
    engine_batch_defaults(v, test_device("L4"), &seqs, &tokens);
    cr_expect(seqs == 256 && tokens == 2048, "L4: %u, %u", seqs, tokens);
    engine_batch_defaults(test_engine("tensorrt-llm"), test_device("L4"), &seqs, &tokens);
    cr_expect(seqs == 2048 && tokens == 8192, "TensorRT-LLM keeps its own: %u, %u", seqs, tokens);
}
