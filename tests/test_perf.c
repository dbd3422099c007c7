/* The per-operator performance model (models/perf.h) and its constants table
 * (models/perf_constants.c): the fitted curves against a sample of the rows they were
 * fitted to ("Vidur profiling data, Microsoft (github.com/microsoft/vidur, MIT
 * licence)", tests/data/operators/sample.csv), a memory pass by hand, the cache's
 * precision in its size and its read time, precision as engines run it, and the fast
 * decode run against its iterations one by one. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lua/catalog.h"
#include "models/memory.h"
#include "models/perf.h"
#include "support/catalog_fixture.h"
#include "tests/support/scratch.h"

TestSuite(perf, .init = test_catalog_setup, .fini = test_catalog_teardown);

/* ---- the fitted curves against their rows -------------------------------------------- */

static const perf_family *family_named(const char *name)
{
    for (int i = 0; i < PERF_FAMILY_COUNT; i++)
        if (!strcmp(perf_families[i]->name, name))
            return perf_families[i];
    return NULL;
}

static const perf_node *node_named(const char *name)
{
    for (int i = 0; i < PERF_NODE_COUNT; i++)
        if (!strcmp(perf_nodes[i]->name, name))
            return perf_nodes[i];
    return NULL;
}

/* The table's stated RMS error for a class of a family, from its note. */
static double stated_error(const char *family, const char *cls)
{
    for (const perf_constant_note *n = perf_constant_notes; n->family; n++)
        if (!strcmp(n->family, family) && !strcmp(n->cls, cls))
            return n->rms_error;
    cr_assert_fail("no note for %s %s", family, cls);
    return NAN;
}

typedef struct sample_class {
    char cls[32], family[32];
    double sum_sq;
    unsigned n;
} sample_class;

/* Splits a CSV line of plain fields (the sample has no quoting) into at most max. */
static int fields(char *line, char **out, int max)
{
    int n = 0;
    for (char *p = line; n < max; p++) {
        out[n++] = p;
        p = strchr(p, ',');
        if (!p)
            break;
        *p = '\0';
    }
    return n;
}

Test(perf, each_fitted_curve_reproduces_its_sample_rows_within_the_stated_error)
{
    char *text = scratch_read("tests/data/operators/sample.csv");
    cr_assert_not_null(text, "tests/data/operators/sample.csv");
    cr_assert(strstr(text, "Vidur profiling data, Microsoft"), "the credit line");
    sample_class classes[64];
    int nclasses = 0;
    unsigned rows = 0;
    bool header = true;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        if (header) { /* class,family,line,T,K,N,bytes,work,cached_flops,new_flops,n,seconds */
            cr_assert(!strncmp(line, "class,family,line,T,K,N,bytes,work", 34), "%s", line);
            header = false;
            continue;
        }
        char *f[12];
        cr_assert_eq(fields(line, f, 12), 12, "a row of 12 fields");
        double T = atof(f[3]), K = atof(f[4]), N = atof(f[5]), bytes = atof(f[6]);
        double work = atof(f[7]), cached = atof(f[8]), fresh = atof(f[9]), measured = atof(f[11]);
        unsigned n = (unsigned)atoi(f[10]);
        char cls[32];
        double predicted;
        snprintf(cls, sizeof cls, "%s", f[0]);
        if (!strcmp(f[0], "allreduce")) {
            const perf_node *node = node_named(f[1]);
            cr_assert_not_null(node, "node %s", f[1]);
            const perf_allreduce_constants *c = &node->allreduce[n <= 2 ? 0 : n <= 4 ? 1 : 2];
            cr_assert_eq(c->n, n, "a measured group size");
            predicted = perf_node_allreduce_s(node, n, bytes, c->link_bytes_per_s);
            snprintf(cls, sizeof cls, "allreduce_%u", n);
        } else if (!strcmp(f[0], "p2p")) {
            const perf_node *node = node_named(f[1]);
            cr_assert_not_null(node, "node %s", f[1]);
            predicted = perf_node_p2p_s(node, bytes, node->p2p.link_bytes_per_s);
        } else {
            const perf_family *fam = family_named(f[1]);
            cr_assert_not_null(fam, "family %s", f[1]);
            static const struct { const char *name; perf_pass_kind kind; } passes[] = {
                { "norm", PASS_NORM }, { "rope", PASS_ROPE }, { "act", PASS_ACT },
                { "add", PASS_ADD }, { "embed", PASS_EMBED }, { "reshape", PASS_RESHAPE },
            };
            predicted = NAN;
            if (!strcmp(f[0], "gemm"))
                predicted = perf_family_gemm_s(fam, T, K, N);
            else if (!strcmp(f[0], "attn_decode"))
                predicted = perf_family_attn_decode_s(fam, work, bytes);
            else if (!strcmp(f[0], "attn_prefill"))
                predicted = perf_family_attn_prefill_s(fam, cached, fresh);
            for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++)
                if (!strcmp(f[0], passes[i].name))
                    predicted = perf_family_pass_s(fam, passes[i].kind, T, bytes);
            cr_assert(isfinite(predicted), "class %s", f[0]);
        }
        int k = 0;
        while (k < nclasses && (strcmp(classes[k].cls, cls) || strcmp(classes[k].family, f[1])))
            k++;
        if (k == nclasses) {
            cr_assert_lt(nclasses, 64);
            memset(&classes[k], 0, sizeof classes[k]);
            snprintf(classes[k].cls, sizeof classes[k].cls, "%s", cls);
            snprintf(classes[k].family, sizeof classes[k].family, "%s", f[1]);
            nclasses++;
        }
        double e = predicted / measured - 1;
        classes[k].sum_sq += e * e;
        classes[k].n++;
        rows++;
    }
    free(text);
    cr_expect_gt(rows, 1000, "a sample of %u rows", rows);
    cr_expect_geq(nclasses, 20, "every class of every family: %d", nclasses);
    for (int k = 0; k < nclasses; k++) {
        double rms = sqrt(classes[k].sum_sq / classes[k].n);
        double stated = stated_error(classes[k].family, classes[k].cls);
        /* a sample of the rows: within a quarter (and a point) of the whole set's error */
        cr_expect_leq(rms, 1.25 * stated + 0.01, "%s %s: RMS %.1f%% over %u sample rows, the "
                      "table states %.1f%%", classes[k].family, classes[k].cls, 100 * rms,
                      classes[k].n, 100 * stated);
    }
}

Test(perf, the_fit_is_redone_from_the_operator_files_when_they_are_here, .timeout = 300)
{
    /* The fit set lives beside the repository (../shared/reference/operators), not in
     * it; where it and python3 are present, the fit redone gives the committed table. */
    const char *data = "../shared/reference/operators/layer_ops.csv";
    if (access(data, R_OK) != 0)
        cr_skip_test("%s is not here (the fit set lives beside the repository)", data);
    if (!getenv("FLEETSIM_REFIT"))
        cr_skip_test("the fit takes about a minute: FLEETSIM_REFIT=1 runs it");
    char *dir = scratch_dir(), command[1024], path[512], *out = NULL, *err = NULL;
    snprintf(path, sizeof path, "%s/perf_constants.c", dir);
    snprintf(command, sizeof command, "python3 tools/fit_operators.py --quiet --c %s", path);
    cr_assert_eq(scratch_run(command, &out, &err), 0, "%s: %s", command, err);
    char *fresh = scratch_read(path), *committed = scratch_read("models/perf_constants.c");
    cr_assert(fresh && committed);
    cr_expect_str_eq(fresh, committed, "the table is what the fit gives");
    free(fresh);
    free(committed);
    free(out);
    free(err);
    scratch_remove_dir(dir);
}

Test(perf, every_catalog_device_has_measurements_that_stand_for_it)
{
    for (size_t i = 0; i < test_catalog.ndevices; i++) {
        const device_spec *d = &test_catalog.devices[i];
        const perf_family *f = perf_family_of(d);
        cr_assert_not_null(f);
        cr_expect_eq(d->is_cpu, f == perf_families[PERF_FAMILY_CPU], "%s", d->name);
        cr_expect(strlen(perf_family_reason(d)) > 10, "%s says why", d->name);
    }
    cr_expect_eq(perf_family_of(test_device("H100-SXM")), perf_families[PERF_FAMILY_H100]);
    cr_expect_eq(perf_family_of(test_device("H200-SXM")), perf_families[PERF_FAMILY_H100]);
    cr_expect_eq(perf_family_of(test_device("A100-40GB-SXM")), perf_families[PERF_FAMILY_A100]);
    cr_expect_eq(perf_family_of(test_device("L4")), perf_families[PERF_FAMILY_A40]);
    cr_expect_eq(perf_node_of(test_device("H100-PCIe")), perf_nodes[PERF_NODE_H100_PAIRS]);
}

/* ---- a memory pass by hand ---------------------------------------------------------- */

Test(perf, residual_adds_move_three_hidden_states_a_token)
{
    /* Llama-3-8B on an H100-SXM, a prefill of 4096 tokens: each residual add reads two
     * hidden states and writes one, 3 x 2 bytes x 4096 x 4096 = 100,663,296 bytes, at the
     * table's effective share of 3.35 TB/s for 4096 tokens; two a layer, 32 layers: 64 */
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup s = { .model = m, .device = d, .profile = &p, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    perf_batch b = { .prefill_tokens = 4096, .prefill_seqs = 1, .prefill_last = 1,
                     .prefill_new_pairs = 4096.0 * 4096 / 2 };
    perf_breakdown ops;
    perf_iteration(&s, &b, &ops);
    const perf_pass_constants *add = &perf_families[PERF_FAMILY_H100]->pass[PASS_ADD];
    double one = 100663296 / (3.35e12 * add->efficiency * 4096 / (4096 + add->tokens_half));
    cr_assert_gt(one, add->floor_s, "bandwidth-bound at this size");
    cr_expect_float_eq(ops.op[OP_ADD].time_s, 64 * one, 1e-12 * one);
    cr_expect_eq(ops.op[OP_ADD].bound, BOUND_MEMORY);
    cr_expect_eq(ops.op[OP_ADD].count, 64);
    /* one token: each add is its kernel's floor */
    perf_batch t1 = { .decode_seqs = 1, .decode_context = 100 };
    perf_iteration(&s, &t1, &ops);
    cr_expect_float_eq(ops.op[OP_ADD].time_s, 64 * add->floor_s, 1e-15);
    cr_expect_eq(ops.op[OP_ADD].bound, BOUND_LAUNCH);
}

Test(perf, only_rotary_models_pay_the_rotary_pass)
{
    /* ALiBi (BLOOM, MPT) biases the scores inside attention and learned positions (OPT)
     * are added once at the embedding: neither rotates queries and keys each layer */
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    perf_batch b = { .prefill_tokens = 2048, .prefill_seqs = 1, .prefill_last = 1,
                     .prefill_new_pairs = 2048.0 * 2048 / 2 };
    perf_breakdown ops;
    static const struct { const char *name; bool rotary; } cases[] = {
        { "bloom-176b", false }, { "mpt-7b", false }, { "opt-175b", false },
        { "gpt-j-6b", true }, { "llama-3.2-1b", true },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const model_spec *m = test_model(cases[i].name);
        perf_setup s = { .model = m, .device = d, .profile = &p, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 8 };
        perf_iteration(&s, &b, &ops);
        cr_expect_eq(ops.op[OP_ROPE].count > 0, cases[i].rotary, "%s", m->name);
        cr_expect_eq(ops.op[OP_ROPE].time_s > 0, cases[i].rotary, "%s", m->name);
        if (cases[i].rotary)
            cr_expect_float_eq(ops.op[OP_ROPE].count, m->layers, 0, "one a layer: %s", m->name);
    }
}

Test(perf, a_step_is_the_sum_of_its_operators)
{
    const model_spec *m = test_model("llama-2-70b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup s = { .model = m, .device = d, .profile = &p, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 4 };
    perf_batch b = { .decode_seqs = 24, .decode_context = 24 * 900, .prefill_tokens = 300,
                     .prefill_seqs = 1, .prefill_last = 1, .prefill_cached_pairs = 300 * 200,
                     .prefill_new_pairs = 300 * 300 / 2 };
    perf_breakdown ops;
    perf_time t = perf_iteration(&s, &b, &ops);
    double sum = 0;
    for (int i = 0; i < OP_COUNT; i++)
        sum += ops.op[i].time_s;
    cr_expect_float_eq(sum, t.total_s, 1e-12 * t.total_s);
    cr_expect_float_eq(t.compute_s + t.memory_s + t.launch_s + t.comm_s + t.host_s, t.total_s,
                       1e-12 * t.total_s);
    cr_expect_gt(t.comm_s, 0, "tp 4: two all-reduces a layer");
    cr_expect_float_eq(ops.op[OP_ALLREDUCE].count, 2 * 80 + 1, 0);
    cr_expect_float_eq(t.host_s, p.host_s + p.host_per_seq_s * 25 + p.host_tp_s
                                     + p.host_tp_per_seq_s * 25, 1e-15);
    cr_expect_gt(ops.op[OP_ATTN_PREFILL].time_s, 0);
    cr_expect_gt(ops.op[OP_ATTN_DECODE].time_s, 0);
}

/* ---- the cache's precision ---------------------------------------------------------------- */

Test(perf, kv_precision_drives_both_the_cache_size_and_its_read_time)
{
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    inference_memory m16 = memory_inference(m, d, PREC_FP16, PREC_FP16, 1);
    inference_memory m8 = memory_inference(m, d, PREC_FP16, PREC_FP8, 1);
    cr_expect_float_eq(m8.kv_bytes_per_token, m16.kv_bytes_per_token / 2, 1e-9);
    cr_expect_float_eq(m8.kv_capacity_tokens, 2 * m16.kv_capacity_tokens, 2);
    perf_profile p = perf_default_profile(d);
    perf_setup s16 = { .model = m, .device = d, .profile = &p, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 }, s8 = s16, q4 = s16;
    s8.kv = PREC_FP8;
    q4.weights = PREC_INT4; /* int4 weights, 16-bit cache */
    perf_batch b = { .decode_seqs = 64, .decode_context = 64 * 4096.0 };
    perf_breakdown o16, o8, o4;
    perf_time t16 = perf_iteration(&s16, &b, &o16);
    perf_time t8 = perf_iteration(&s8, &b, &o8);
    perf_iteration(&q4, &b, &o4);
    const perf_op_time *a16 = &o16.op[OP_ATTN_DECODE], *a8 = &o8.op[OP_ATTN_DECODE];
    cr_expect_eq(a16->bound, BOUND_MEMORY);
    cr_expect_float_eq(a8->memory_s, a16->memory_s / 2, 1e-12 * a16->memory_s,
                       "an fp8 cache reads in half the time");
    cr_expect_float_eq(t16.total_s - t8.total_s, a16->time_s - a8->time_s, 1e-12 * t16.total_s,
                       "nothing else moves");
    /* the cache is read at its own precision, not the weights' (issue 15) */
    cr_expect_float_eq(o4.op[OP_ATTN_DECODE].time_s, a16->time_s, 1e-15);
    cr_expect_lt(o4.op[OP_MLP_UP].time_s, o16.op[OP_MLP_UP].time_s);
}

/* One long sequence on one kv head a device reads its cache at the fitted share of the
 * bandwidth, as split-KV kernels fill the GPU from its partitions.  Llama-3.1-70B at tp 8
 * (one of 8 kv heads a device, 128 wide, 16-bit K and V: 512 bytes a token a layer) at
 * 131,072 tokens on an H100 (3.35 TB/s): 80 x (14.5 us + 67.1 MB / (3.35 TB/s x 0.7556))
 * = 80 x (14.5 + 26.51) us = 3.281 ms.  Until 2026-12-07 the share also saturated on
 * sequences x kv heads (5.7 at half), which read it at 15% of that share: 14.9 ms. */
Test(perf, one_long_sequence_reads_its_cache_at_the_fitted_share)
{
    const model_spec *m = test_model("llama-3.1-70b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup s = { .model = m, .device = d, .profile = &p, .weights = PREC_FP16,
                     .kv = PREC_FP16, .tp = 8 };
    perf_batch one = { .decode_seqs = 1, .decode_context = 131072 };
    perf_breakdown o;
    perf_iteration(&s, &one, &o);
    double layer = 14.5e-6 + 131072.0 * 512 / (3.35e12 * 0.7556);
    cr_expect_float_eq(o.op[OP_ATTN_DECODE].time_s, 80 * layer, 1e-9, "%.9g s against %.9g",
                       o.op[OP_ATTN_DECODE].time_s, 80 * layer);
    /* the same context over 64 sequences reads no faster a token */
    perf_batch many = { .decode_seqs = 64, .decode_context = 131072 };
    perf_breakdown o64;
    perf_iteration(&s, &many, &o64);
    cr_expect_float_eq(o64.op[OP_ATTN_DECODE].time_s, o.op[OP_ATTN_DECODE].time_s,
                       1e-12, "%.9g against %.9g", o64.op[OP_ATTN_DECODE].time_s,
                       o.op[OP_ATTN_DECODE].time_s);
}

/* ---- precision as engines run it --------------------------------------------------------- */

static double decode_s(const perf_setup *s, unsigned batch)
{
    return perf_decode_step(s, batch, 1024).total_s;
}

Test(perf, fp8_speeds_up_less_than_twice_at_every_batch)
{
    const char *models[] = { "llama-3-8b", "llama-2-70b" };
    const unsigned tps[] = { 1, 2 };
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    for (int k = 0; k < 2; k++) {
        perf_setup s16 = { .model = test_model(models[k]), .device = d, .profile = &p, .weights = PREC_BF16, .kv = PREC_FP16, .tp = tps[k] }, s8 = s16;
        s8.weights = PREC_FP8;
        for (unsigned batch = 1; batch <= 1024; batch *= 2) {
            double speedup = decode_s(&s16, batch) / decode_s(&s8, batch);
            cr_expect(speedup > 1 && speedup < 2, "%s decode batch %u: %g", models[k], batch,
                      speedup);
        }
        for (double prompt = 64; prompt <= 16384; prompt *= 4) {
            double speedup = perf_prefill(&s16, 1, prompt).total_s / perf_prefill(&s8, 1, prompt).total_s;
            cr_expect(speedup > 1 && speedup < 2, "%s prefill %g: %g", models[k], prompt, speedup);
        }
    }
    /* where a device has no fp8, fp8 weights are weight-only: no faster compute */
    const device_spec *a100 = test_device("A100-80GB-SXM");
    perf_profile pa = perf_default_profile(a100);
    perf_setup a16 = { .model = test_model("llama-3-8b"), .device = a100, .profile = &pa, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 }, a8 = a16;
    a8.weights = PREC_FP8;
    cr_expect_geq(perf_prefill(&a8, 1, 8192).total_s, perf_prefill(&a16, 1, 8192).total_s);
}

Test(perf, int4_gains_shrink_as_batch_grows)
{
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("A100-80GB-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup s16 = { .model = m, .device = d, .profile = &p, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 }, s4 = s16, s8 = s16;
    s4.weights = PREC_INT4;
    s8.weights = PREC_INT8;
    double last = INFINITY;
    for (unsigned batch = 1; batch <= 512; batch *= 2) {
        double speedup = decode_s(&s16, batch) / decode_s(&s4, batch);
        cr_expect_lt(speedup, last, "batch %u: %g after %g", batch, speedup, last);
        cr_expect_lt(speedup, 4, "a quarter of the weight bytes at most");
        cr_expect_lt(decode_s(&s4, batch), decode_s(&s8, batch), "int4 under int8 at %u", batch);
        last = speedup;
    }
    cr_expect_gt(decode_s(&s16, 1) / decode_s(&s4, 1), 1.5, "a clear gain for one user");
    cr_expect_lt(last, 1.3, "little left at batch 512: %g", last);
    /* compute-bound work dequantises and multiplies in 16-bit: a long prefill is no faster */
    cr_expect_geq(perf_prefill(&s4, 1, 8192).total_s, perf_prefill(&s16, 1, 8192).total_s);
}

/* ---- the fast path ---------------------------------------------------------------------- */

/* The largest n <= max_n whose run ends within `elapsed`, found by testing every n: what
 * decode_cost_iterations_within must return, however it finds it. */
static double iterations_within_by_scan(const decode_cost *c, double elapsed, double max_n)
{
    double best = 0;
    for (double n = 1; n <= max_n; n++)
        if (decode_cost_sum(c, n) <= elapsed)
            best = n;
    return best;
}

static double draw_unit(unsigned long long *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) * 0x1p-53;
}

Test(perf, the_iterations_within_a_time_are_the_largest_whole_run_that_fits)
{
    /* costs as decode runs have them (a millisecond or so an iteration, a line's slope
     * from nothing to as much), with rooflines that cross anywhere in the run or not at
     * all, zero coefficients, and times before, at and past each iteration's end */
    unsigned long long state = 42;
    unsigned checked = 0;
    for (int trial = 0; trial < 4000; trial++) {
        double scale = 1e-3 * pow(10, 2 * draw_unit(&state) - 1);
        decode_cost c = { .compute0 = scale * draw_unit(&state),
                          .compute1 = scale * 1e-2 * draw_unit(&state),
                          .memory0 = scale * draw_unit(&state),
                          .memory1 = scale * 1e-2 * draw_unit(&state),
                          .fixed = scale * draw_unit(&state) };
        double max_n = 1 + floor(300 * draw_unit(&state));
        switch (trial % 6) { /* some with nothing on one side */
        case 1: c.compute0 = c.compute1 = 0; break;
        case 2: c.fixed = 0; c.memory1 = 0; break;
        case 3: c.compute1 = c.memory1; break; /* parallel lines */
        case 4: /* a line that falls (no run has one), every iteration still costing */
            c.memory1 = -c.memory0 / (2 * max_n);
            break;
        default: break;
        }
        double total = decode_cost_sum(&c, max_n);
        double elapsed = trial % 7 == 0 ? decode_cost_sum(&c, floor(max_n * draw_unit(&state)))
                                        : total * (1.1 * draw_unit(&state) - 0.05);
        double want = elapsed >= total ? max_n : iterations_within_by_scan(&c, elapsed, max_n);
        double got = decode_cost_iterations_within(&c, elapsed, max_n);
        cr_expect_eq(got, want, "trial %d: %.17g s in at most %g: %g iterations, want %g", trial,
                     elapsed, max_n, got, want);
        double next, cut = decode_cost_cut(&c, elapsed, max_n, total, &next);
        cr_expect_eq(cut, want, "trial %d: cut after %g, want %g", trial, cut, want);
        if (want < max_n) /* the run cut after the iteration in progress, as summed anew */
            cr_expect_eq(next, decode_cost_sum(&c, want + 1), "trial %d: %.17g s", trial, next);
        /* its crossing worked out once, the same bit for bit */
        decode_cost settled = decode_cost_settled(c);
        for (double n = 0; n <= max_n; n += 1 + floor(max_n / 7))
            cr_expect_eq(decode_cost_sum(&settled, n), decode_cost_sum(&c, n), "trial %d: n %g",
                         trial, n);
        double next_settled, cut_settled = decode_cost_cut(&settled, elapsed, max_n, total,
                                                           &next_settled);
        cr_expect_eq(cut_settled, cut, "trial %d", trial);
        if (want < max_n)
            cr_expect_eq(next_settled, next, "trial %d", trial);
        checked++;
    }
    cr_expect_eq(checked, 4000);
    /* no cost at all: every run fits; a time before the run: none does */
    decode_cost zero = { 0 };
    cr_expect_eq(decode_cost_iterations_within(&zero, 0, 50), 50);
    decode_cost one = { .fixed = 1e-3 };
    cr_expect_eq(decode_cost_iterations_within(&one, -1e-3, 50), 0);
    cr_expect_eq(decode_cost_iterations_within(&one, 0.0105, 50), 10);
    cr_expect_eq(decode_cost_iterations_within(&one, NAN, 50), 0);
}

Test(perf, a_decode_run_in_closed_form_equals_its_iterations_one_by_one)
{
    const struct { const char *model, *device; precision w, kv; unsigned tp, seqs; } cases[] = {
        { "llama-3-8b", "H100-SXM", PREC_FP16, PREC_FP16, 1, 1 },
        { "llama-3-8b", "H100-SXM", PREC_FP8, PREC_FP8, 1, 64 },
        { "llama-2-70b", "A100-80GB-SXM", PREC_FP16, PREC_FP16, 4, 200 },
        { "mixtral-8x7b", "H100-SXM", PREC_INT4, PREC_FP16, 2, 32 },
        { "llama-2-7b", "EPYC-9654", PREC_FP32, PREC_FP32, 1, 4 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const device_spec *d = test_device(cases[i].device);
        perf_profile p = perf_default_profile(d);
        perf_setup s = { .model = test_model(cases[i].model), .device = d, .profile = &p, .weights = cases[i].w, .kv = cases[i].kv, .tp = cases[i].tp };
        double seqs = cases[i].seqs, context = seqs * 700, n = 500, one_by_one = 0;
        for (double k = 0; k < n; k++) {
            perf_batch b = { .decode_seqs = seqs, .decode_context = context + seqs * k };
            one_by_one += perf_iteration(&s, &b, NULL).total_s;
        }
        decode_cost c = perf_decode_cost(&s, seqs, context);
        double closed = decode_cost_sum(&c, n);
        cr_expect_leq(fabs(closed / one_by_one - 1), 1e-9, "%s on %s: %.12g vs %.12g",
                      cases[i].model, cases[i].device, closed, one_by_one);
    }
}

/* ---- an iteration's token-count costs, kept ------------------------------------------ */

/* perf_iteration_memo is perf_iteration bit for bit: dense and mixture models, tensor
 * parallel (the all-reduce kept too), quantized, latent attention, a profile with its
 * host overlapped; batches of decoders and chunks whose counts repeat (read from the
 * table), counts past its size and not whole (evaluated afresh), and none at all. */
Test(perf, kept_token_counts_give_the_iteration_bit_for_bit)
{
    struct { const char *model, *device; precision w; unsigned tp; bool ep; } cases[] = {
        { "llama-3-8b", "H100-SXM", PREC_FP16, 1, false },
        { "llama-2-70b", "A100-80GB-SXM", PREC_FP16, 4, false },
        { "llama-3.1-70b", "H100-SXM", PREC_INT4, 2, false },
        { "mixtral-8x7b", "H100-SXM", PREC_FP8, 2, true },
        { "qwen3-30b-a3b", "H200-SXM", PREC_FP16, 1, false },
        { "deepseek-v3", "H200-SXM", PREC_FP8, 8, true },
        { "gemma-3-27b", "L40S", PREC_FP16, 2, false },
    };
    srand(37);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const device_spec *d = test_device(cases[k].device);
        perf_profile p = perf_default_profile(d);
        p.host_overlap = k % 2 ? 0.7 : 0;
        perf_setup s = { .model = test_model(cases[k].model), .device = d, .profile = &p,
                         .weights = cases[k].w, .kv = PREC_FP16, .tp = cases[k].tp,
                         .expert_parallel = cases[k].ep, .expert_skew = cases[k].ep ? 1.2 : 0 };
        perf_token_memo *m = perf_token_memo_create(&s, 2048);
        cr_assert_not_null(m);
        for (int i = 0; i < 3000; i++) {
            double seqs = rand() % 40, chunk = rand() % 3 ? rand() % 2200 : 0;
            if (i % 97 == 0)
                chunk += 0.5; /* not a whole count */
            perf_batch b = { .decode_seqs = seqs, .decode_context = seqs * (rand() % 3000),
                             .prefill_tokens = chunk, .prefill_seqs = chunk > 0,
                             .prefill_last = chunk > 0 && rand() % 2,
                             .prefill_cached_pairs = chunk * (rand() % 500),
                             .prefill_new_pairs = chunk * chunk / 2 };
            perf_time want = perf_iteration(&s, &b, NULL);
            perf_time got = perf_iteration_memo(m, &b);
            double w[] = { want.total_s, want.compute_s, want.memory_s, want.launch_s,
                           want.comm_s, want.host_s, want.gpu_s, want.host_hidden_s,
                           want.host_exposed_s, want.compute_bound };
            double g[] = { got.total_s, got.compute_s, got.memory_s, got.launch_s,
                           got.comm_s, got.host_s, got.gpu_s, got.host_hidden_s,
                           got.host_exposed_s, got.compute_bound };
            cr_assert(!memcmp(w, g, sizeof w),
                      "%s, %g decoders and %g prompt tokens: %.17g s kept, %.17g s evaluated",
                      cases[k].model, seqs, chunk, got.total_s, want.total_s);
        }
        cr_expect_gt(perf_token_memo_bytes(m), 100 * sizeof(double), "counts were kept");
        perf_token_memo_free(m);
    }
    perf_profile p = perf_default_profile(test_device("H100-SXM"));
    perf_setup dp = { .model = test_model("deepseek-v3"), .device = test_device("H100-SXM"),
                      .profile = &p, .weights = PREC_FP8, .kv = PREC_FP16, .tp = 8,
                      .attention_dp = true };
    cr_expect_null(perf_token_memo_create(&dp, 2048), "attention data parallel: a share each");
    perf_token_memo_free(NULL);
}
