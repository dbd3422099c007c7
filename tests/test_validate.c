/* `fleetsim validate`: the error and MAPE arithmetic on hand-computed rows, a tiny table
 * whose predictions can be checked by hand, and the shipped table running through.  No
 * test holds the shipped table's errors under a threshold: docs/accuracy.md says where
 * the model stands. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/catalog.h"
#include "lua/validate_predict.h"
#include "lua/validate_serving.h"
#include "lua/validate_trtllm.h"
#include "models/memory.h"
#include "models/perf.h"
#include "models/perf_training.h"
#include "models/power.h"
#include "models/validate.h"
#include "output/csv_table.h"
#include "support/cli.h"
#include "support/scratch.h"

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1, fabs(b)); }

/* The shipped catalog, or the test fails with the loader's message. */
static void load_catalog(catalog *cat)
{
    char msg[512];
    cr_assert_eq(catalog_load(cat, msg, sizeof msg), 0, "%s", msg);
}

Test(validate, error_is_predicted_over_published_less_one)
{
    cr_expect(close_to(validate_error(110, 100), 0.10));
    cr_expect(close_to(validate_error(90, 100), -0.10));
    cr_expect(close_to(validate_error(300, 200), 0.50));
    cr_expect(isnan(validate_error(1, 0)));
    cr_expect(isnan(validate_error(NAN, 1)));
}

Test(validate, summary_counts_mape_bias_and_worst)
{
    validate_result rows[] = {
        { "A1", "latency", "m", "ms", 100, true, 110, 0.10, NULL, "sglang" },
        { "B1", "memory", "m", "GB", 10, true, 10, 0, NULL, "vllm" },
        { "A2", "latency", "m", "ms", 200, true, 140, -0.30, NULL, "vllm" },
        { "A3", "latency", "m", "ms", 50, false, 0, 0, "no catalog device for 'H300'", "vllm" },
        { "A4", "latency", "m", "ms", 100, true, 105, 0.05, NULL, "sglang" },
    };
    validate_summary s[4];
    size_t n = validate_summarize(rows, 5, false, s, 4);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(s[0].category, "latency");
    cr_expect_str_eq(s[0].engine, "");
    cr_expect_eq(s[0].rows, 4);
    cr_expect_eq(s[0].predicted, 3);
    cr_expect(close_to(validate_summary_mape(&s[0]), 0.15)); /* (0.10 + 0.30 + 0.05) / 3 */
    cr_expect(close_to(validate_summary_bias(&s[0]), -0.05)); /* (0.10 - 0.30 + 0.05) / 3 */
    cr_expect_str_eq(s[0].worst_id, "A2");
    cr_expect(close_to(s[0].worst_error, -0.30));
    cr_expect_eq(s[1].predicted, 1);
    cr_expect(close_to(validate_summary_mape(&s[1]), 0));
    /* by category and engine: latency/sglang, memory/vllm, latency/vllm */
    n = validate_summarize(rows, 5, true, s, 4);
    cr_assert_eq(n, 3);
    cr_expect_str_eq(s[0].engine, "sglang");
    cr_expect_eq(s[0].predicted, 2);
    cr_expect(close_to(validate_summary_bias(&s[0]), 0.075));
    cr_expect_str_eq(s[2].category, "latency");
    cr_expect_str_eq(s[2].engine, "vllm");
    cr_expect_eq(s[2].rows, 2);
    cr_expect(close_to(validate_summary_bias(&s[2]), -0.30));
    /* past max: groups left out, the rows of those kept counted */
    cr_expect_eq(validate_summarize(rows, 5, true, s, 2), 2);
    validate_summary empty = { 0 };
    cr_expect(isnan(validate_summary_mape(&empty)));
    cr_expect(isnan(validate_summary_bias(&empty)));
}

/* The figure the CSV output gives row `id` (predicted column), NaN when not predicted. */
static double predicted_of(const char *csv, const char *id)
{
    char key[16];
    snprintf(key, sizeof key, "\n%s,", id);
    const char *p = strstr(csv, key);
    cr_assert_not_null(p, "no row %s in:\n%s", id, csv);
    for (int commas = 0; commas < 5; p++)
        if (*p == ',')
            commas++;
    return *p == ',' ? NAN : strtod(p, NULL);
}

Test(validate, tiny_table_by_hand)
{
    char *out = NULL, *err = NULL;
    cr_assert_eq(cli_run(&out, &err, "validate --table tests/data/validation/tiny.csv --csv"), 0,
                 "%s", err);
    catalog cat;
    load_catalog(&cat);
    /* fp16 weights: 2 bytes a parameter, in GB and GiB */
    double w7 = 2 * model_params(catalog_model(&cat, "llama-2-7b"));
    double w8 = 2 * model_params(catalog_model(&cat, "llama-3-8b"));
    catalog_release(&cat);
    cr_expect(w7 > 13.0e9 && w7 < 14.0e9, "llama-2-7b weights %g bytes", w7);
    cr_expect(close_to(predicted_of(out, "X01"), w7 / 1e9), "%s", out);
    cr_expect(close_to(predicted_of(out, "X02"), w8 / 1073741824.0), "%s", out);
    cr_expect(strstr(out, "X03,latency") && strstr(out, "no catalog device for 'H300'"), "%s", out);
    cr_expect_null(strstr(out, "X04"), "a fit row printed under --half check:\n%s", out);
    cr_expect(strstr(out, "summary,memory,2,2,"), "%s", out);
    cr_expect(strstr(out, "summary,latency,1,0,"), "%s", out);

    cr_assert_eq(cli_run(&out, &err, "validate --table tests/data/validation/tiny.csv --half all"),
                 0, "%s", err);
    cr_expect(strstr(out, "X03  latency") && strstr(out, "not predicted: no catalog device"), "%s", out);
    cr_expect(strstr(out, "not predicted: no catalog model for 'Unlisted-LM-9B'"), "%s", out);
    free(out);
    free(err);
}

/* Every row of a table is of one half; `quotes` (may be NULL) collects the quotes. */
static void expect_one_half(const char *path, const char *half, csv_table *t)
{
    char err[512];
    cr_assert_eq(csv_table_read(path, t, err, sizeof err), 0, "%s", err);
    cr_assert_gt(t->rows, 0, "%s is empty", path);
    int h = csv_table_column(t, "half");
    for (size_t i = 0; i < t->rows; i++)
        cr_expect_str_eq(csv_table_cell(t, i, h), half, "%s:%zu", path, csv_table_line(t, i));
}

/* The fit half's rows (tests/validation/fit.csv) are what `--half fit` reads by default,
 * apart from the check half's: no row of one is a row of the other (the same quote). */
Test(validate, the_fit_table_stands_apart_from_the_check_table, .timeout = 60)
{
    csv_table fit, check;
    expect_one_half("tests/validation/fit.csv", "fit", &fit);
    expect_one_half("tests/validation/published.csv", "check", &check);
    int fq = csv_table_column(&fit, "quote"), cq = csv_table_column(&check, "quote");
    for (size_t i = 0; i < fit.rows; i++)
        for (size_t j = 0; j < check.rows; j++)
            cr_expect(strcmp(csv_table_cell(&fit, i, fq), csv_table_cell(&check, j, cq)),
                      "fit.csv:%zu repeats published.csv:%zu", csv_table_line(&fit, i),
                      csv_table_line(&check, j));
    csv_table_release(&fit);
    csv_table_release(&check);
    char *out = NULL, *err = NULL, *named = NULL;
    cr_assert_eq(cli_run(&out, &err, "validate --half fit --csv"), 0, "%s", err);
    cr_assert_eq(cli_run(&named, &err, "validate --table tests/validation/fit.csv --half fit "
                         "--csv"), 0, "%s", err);
    cr_expect_str_eq(out, named, "--half fit reads fit.csv");
    cr_expect(strstr(out, "\nPT29,training") && !strstr(out, "\nT30,training"), "%s", out);
    cr_assert_eq(cli_run(&named, &err, "validate --half all --csv"), 0, "%s", err);
    cr_expect(strstr(named, "\nPT29,training") && strstr(named, "\nT30,training"),
              "--half all reads both tables:\n%s", named);
    free(out);
    free(named);
    free(err);
}

/* fit.csv's header and its row `id` (both without their line ends), from a copy the
 * caller frees. */
static char *fit_row(const char *id, char **header, char **row)
{
    char *all = scratch_read("tests/validation/fit.csv");
    cr_assert_not_null(all);
    *header = all;
    char *end = strchr(all, '\n'), key[16];
    *end = '\0';
    snprintf(key, sizeof key, "\n%s,", id);
    *end = '\n';
    char *at = strstr(all, key);
    cr_assert_not_null(at, "no row %s in fit.csv", id);
    *end = '\0';
    *row = at + 1;
    *strchr(*row, '\n') = '\0';
    return all;
}

/* The network column: a node's bandwidth between nodes replaces the catalog device's NICs
 * (a fully sharded run over 1 Gb/s a node waits on its gathers), and a cell that is not a
 * positive number is the table's mistake, refused with its line. */
Test(validate, a_rows_network_prices_its_collectives_and_a_bad_one_is_refused, .timeout = 60)
{
    char *header, *row, *all = fit_row("PT40", &header, &row);
    cr_assert(strlen(header) > 8 && !strcmp(header + strlen(header) - 8, ",network"), "%s",
              header);
    cr_assert(!strcmp(row + strlen(row) - 4, ",400"), "%s", row);
    size_t keep = strlen(row) - 3; /* up to the comma */
    char *dir = scratch_dir(), *out = NULL, *err = NULL, table[16384];
    double predicted[2];
    const char *cells[] = { "400", "1" };
    for (int k = 0; k < 2; k++) {
        snprintf(table, sizeof table, "%s\n%.*s%s\n", header, (int)keep, row, cells[k]);
        char *path = scratch_file(dir, k ? "slow.csv" : "stated.csv", table);
        cr_assert_eq(cli_run(&out, &err, "validate --table %s --half fit --csv", path), 0,
                     "%s", err);
        predicted[k] = predicted_of(out, "PT40");
        free(path);
    }
    cr_expect(predicted[0] > 0 && predicted[1] < 0.5 * predicted[0], "%g at 400 Gb/s, %g at 1",
              predicted[0], predicted[1]);
    snprintf(table, sizeof table, "%s\n%.*sfast\n", header, (int)keep, row);
    char *bad = scratch_file(dir, "bad.csv", table);
    cr_expect_eq(cli_run(&out, &err, "validate --table %s --half fit", bad), 2);
    char expected[1024];
    snprintf(expected, sizeof expected, "fleetsim validate: %s:2: network: expected a node's "
             "Gb/s between nodes, a positive number (empty: the catalog device's NICs), got "
             "'fast'\n", bad);
    cr_expect_str_eq(err, expected);
    free(bad), free(all), free(out), free(err);
    scratch_remove_dir(dir);
}

/* The engines table's predictions (CSV), and the H100 family's default profile. */
static char *engines_table(void)
{
    char *out = NULL, *err = NULL;
    cr_assert_eq(cli_run(&out, &err, "validate --table tests/data/validation/engines.csv --csv"),
                 0, "%s", err);
    free(err);
    return out;
}

static perf_profile h100_profile(void)
{
    catalog cat;
    load_catalog(&cat);
    perf_profile p = perf_default_profile(catalog_device(&cat, "H100-SXM"));
    catalog_release(&cat);
    return p;
}

Test(validate, tensorrt_llm_rows_are_the_gpu_work_alone)
{
    /* the same TTFT row from a Python engine (the profiled host work) and from
     * TensorRT-LLM (no host work): they differ by exactly one iteration's host time at
     * one sequence, base + per sequence, on the H100 family's table */
    char *out = engines_table();
    perf_profile p = h100_profile();
    double host_ms = 1e3 * (p.host_s + p.host_per_seq_s);
    cr_expect_gt(host_ms, 0.5, "the profiled engine's host work is about a millisecond");
    double python = predicted_of(out, "E01"), cpp = predicted_of(out, "E02");
    cr_expect(fabs(python - cpp - host_ms) <= 1e-9 * python, "%g - %g != %g", python, cpp,
              host_ms);
    free(out);
}

Test(validate, vllm_rows_pay_no_ray_term_from_0_5_on)
{
    /* at tp 2 a vLLM row of 0.4 pays the profiled engine's Ray workers' communication
     * (host_tp, once a step, plus per sequence); one of an unstated (later) version does
     * not; one that says it runs Ray workers does, whatever its version */
    char *out = engines_table();
    perf_profile p = h100_profile();
    double ray_ms = 1e3 * (p.host_tp_s + p.host_tp_per_seq_s);
    cr_expect_gt(ray_ms, 1, "the profiled Ray term is milliseconds");
    double old = predicted_of(out, "E03"), later = predicted_of(out, "E04");
    cr_expect(fabs(old - later - ray_ms) <= 1e-9 * old, "%g - %g != %g", old, later, ray_ms);
    cr_expect(close_to(predicted_of(out, "E05"), old), "%s", out);
    free(out);
}

Test(validate, a_concurrency_past_the_bound_is_refused_not_run)
{
    char *out = engines_table();
    cr_expect(strstr(out, "E06,latency") && strstr(out, "a batch of 1e+12"),
              "%s", out);
    free(out);
}

/* Llama-3-8B in fp16 on one H100 at its default profile (p must outlive the setup). */
static perf_setup llama_8b_h100(catalog *cat, perf_profile *p)
{
    load_catalog(cat);
    const device_spec *d = catalog_device(cat, "H100-SXM");
    *p = perf_default_profile(d);
    return (perf_setup){ .model = catalog_model(cat, "llama-3-8b"), .device = d, .profile = p,
                         .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
}

Test(validate, one_closed_loop_user_by_hand)
{
    /* one user asking again as each answer ends finds the replica idle every time: a
     * prefill of its prompt alone, then output - 1 decode steps of one sequence, step j
     * at a context of prompt + j; the closed form of the runs matches the steps summed
     * one by one */
    catalog cat;
    perf_profile p;
    perf_setup s = llama_8b_h100(&cat, &p);
    char err[256];
    double capacity =
        memory_inference(s.model, s.device, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens;
    unsigned prompt = 1000, output = 200;
    closed_loop_result r;
    cr_assert(validate_closed_loop(&s, capacity, 1, 1, prompt, output, 0, 0, &r, err,
                                   sizeof err), "%s", err);
    double ttft = perf_prefill(&s, 1, prompt).total_s, decode = 0;
    for (unsigned j = 1; j < output; j++)
        decode += perf_decode_step(&s, 1, prompt + (double)j).total_s;
    double tpot = decode / (output - 1), e2e = ttft + decode;
    cr_expect(fabs(r.ttft_s - ttft) <= 1e-9 * ttft, "ttft %.12g, by hand %.12g", r.ttft_s, ttft);
    cr_expect(fabs(r.tpot_s - tpot) <= 1e-6 * tpot, "tpot %.12g, by hand %.12g", r.tpot_s, tpot);
    cr_expect(fabs(r.e2e_s - e2e) <= 1e-6 * e2e, "e2e %.12g, by hand %.12g", r.e2e_s, e2e);
    cr_expect(fabs(r.tokens_per_s - output / e2e) <= 1e-6 * r.tokens_per_s, "%g", r.tokens_per_s);
    cr_expect(r.requests >= 9 && r.requests <= 11, "ten cycles measured, got %g requests",
              r.requests);
    catalog_release(&cat);
}

/* A row at its own size limits, 65,536 users on 65,536 replicas, ran for about an hour
 * (each request routed over every replica), and all at once ran out of memory (issue 40,
 * item 6): both are refused at once, with the bound, by the work the run would do. */
Test(validate, a_row_is_bounded_by_the_work_it_would_take, .timeout = 30)
{
    catalog cat;
    perf_profile p;
    perf_setup s = llama_8b_h100(&cat, &p);
    char err[512];
    double capacity =
        memory_inference(s.model, s.device, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens;
    closed_loop_result r;
    cr_expect_not(validate_closed_loop(&s, capacity, 65536, 65536, 128, 128, 0, 0, &r, err,
                                       sizeof err));
    cr_expect_str_eq(err, "65536 replicas are more than a row's simulation runs (at most 4096)");
    cr_expect_not(validate_all_at_once(&s, capacity, 65536, 65536, 128, 128, 256, 8192, &r,
                                       err, sizeof err));
    cr_expect_str_eq(err, "65536 replicas are more than a row's simulation runs (at most 4096)");
    /* within the replicas, the routing: 12 requests a user over 4,096 replicas */
    cr_expect_not(validate_closed_loop(&s, capacity, 4096, 65536, 128, 128, 0, 0, &r, err,
                                       sizeof err));
    cr_expect(strstr(err, "route 7.9e+05 requests over 4096 replicas: past what a row runs "
                          "(2e+08 iterations, 2e+09 routing steps)") != NULL, "%s", err);
    /* and a long output's iterations: 4,096 replicas decoding 8,000 tokens for 12 cycles */
    cr_expect_not(validate_closed_loop(&s, capacity, 4096, 4096, 100, 8000, 0, 0, &r, err,
                                       sizeof err));
    cr_expect(strstr(err, "iterations") && strstr(err, "past what a row runs"), "%s", err);
    catalog_release(&cat);
}

Test(validate, closed_loop_users_beyond_the_cache_wait)
{
    /* a cache that holds 4 requests: 8 users get no more tokens a second than 4, and
     * each waits for the others' wave (its response time about doubles) */
    catalog cat;
    perf_profile p;
    perf_setup s = llama_8b_h100(&cat, &p);
    char err[256];
    closed_loop_result four, eight;
    cr_assert(validate_closed_loop(&s, 4 * 1200, 1, 4, 1000, 200, 0, 0, &four, err,
                                   sizeof err), "%s", err);
    cr_assert(validate_closed_loop(&s, 4 * 1200, 1, 8, 1000, 200, 0, 0, &eight, err,
                                   sizeof err), "%s", err);
    cr_expect(fabs(eight.tokens_per_s / four.tokens_per_s - 1) < 0.02, "%g vs %g",
              eight.tokens_per_s, four.tokens_per_s);
    cr_expect(fabs(eight.e2e_s / four.e2e_s - 2) < 0.05, "%g vs %g", eight.e2e_s, four.e2e_s);
    /* the engine's cap on running sequences (max_seqs) holds them back as the cache did:
     * 8 users under a cap of 4 in a cache for 8 run as the 8 in the cache for 4 */
    closed_loop_result capped;
    cr_assert(validate_closed_loop(&s, 8 * 1200, 1, 8, 1000, 200, 4, 0, &capped, err,
                                   sizeof err), "%s", err);
    cr_expect(fabs(capped.tokens_per_s / eight.tokens_per_s - 1) < 1e-9, "%g vs %g",
              capped.tokens_per_s, eight.tokens_per_s);
    cr_expect(fabs(capped.e2e_s / eight.e2e_s - 1) < 1e-9, "%g vs %g", capped.e2e_s,
              eight.e2e_s);
    cr_expect_not(validate_closed_loop(&s, 1000, 1, 1, 1000, 200, 0, 0, &four, err, sizeof err));
    cr_expect(strstr(err, "does not fit the cache"), "%s", err);
    cr_expect_not(validate_closed_loop(&s, 4 * 1200, 1, VALIDATE_CLOSED_LOOP_MAX_USERS + 1, 1000,
                                       200, 0, 0, &four, err, sizeof err));
    cr_expect(strstr(err, "more users than a row's simulation runs"), "%s", err);
    /* llama-3-8b's 8,192-token context: a request past it is not the row's request (an
     * engine refuses the prompt or cuts the answer), refused before any simulation */
    cr_expect_not(validate_closed_loop(&s, 1e6, 1, 1, 8192, 10, 0, 0, &four, err, sizeof err));
    cr_expect(strstr(err, "exceed the model's 8192-token context"), "%s", err);
    cr_expect_not(validate_closed_loop(&s, 1e6, 1, 1, 7000, 2000, 0, 0, &four, err, sizeof err));
    cr_expect(strstr(err, "exceed the model's 8192-token context"), "%s", err);
    cr_expect_not(validate_closed_loop(&s, 1e6, 1, 0, 1000, 10, 0, 0, &four, err, sizeof err));
    cr_expect(strstr(err, "none to simulate"), "%s", err);
    catalog_release(&cat);
}

Test(validate, trtllm_bench_limits_by_hand)
{
    /* Llama-3-8B (8.03e9 parameters, 32 layers, 8 kv heads of 128) in fp8 with an fp8
     * cache on the catalog's H100 (80e9 bytes = 74.506 GiB): the engine 7.478 GiB, a token
     * 2 x 32 x 8 x 128 = 65,536 B = 6.1035e-5 GiB; 0.95 x 67.03 GiB / (6.1035e-5 x 2,000)
     * = 521.6 requests of 1,000 + 1,000.  The raw batch 521.6 rounds up to 640 (a multiple
     * of 128 under 1,024), the raw tokens 521.6 x 2 = 1,043 to the floor of 2,048 */
    catalog cat;
    load_catalog(&cat);
    const model_spec *m = catalog_model(&cat, "llama-3.1-8b");
    const device_spec *d = catalog_device(&cat, "H100-SXM");
    const double gib = 1073741824.0;
    double engine = model_params(m) / gib, token = 2.0 * 32 * 8 * 128 / gib;
    double want = 0.95 * (d->memory_bytes / gib - engine) / (token * 2000);
    trtllm_limits l = trtllm_bench_limits(m, d, PREC_FP8, PREC_FP8, 1, 1, 1000, 1000, 0.95);
    cr_expect(fabs(l.kv_requests / want - 1) < 1e-12, "%g vs %g", l.kv_requests, want);
    cr_expect(want > 512 && want < 640, "%g", want);
    cr_expect_eq(l.max_batch, 640);
    cr_expect_eq(l.max_tokens, 2048);
    /* prompts of 2,048 and answers of 128: 17 tokens a request an iteration, so 30 requests
     * want 510 tokens (2,048, the floor) and a batch of 64 (the floor); 8,151 requests of
     * 64 + 64 are capped at a batch of 4,096, and want 8,192 tokens */
    l = trtllm_bench_limits(m, d, PREC_FP8, PREC_FP8, 1, 1, 2048, 128,
                            30.0 / want * 0.95 * 2176 / 2000);
    cr_expect(fabs(l.kv_requests - 30) < 1e-9, "%g", l.kv_requests);
    cr_expect_eq(l.max_batch, 64);
    cr_expect_eq(l.max_tokens, 2048);
    l = trtllm_bench_limits(m, d, PREC_FP8, PREC_FP8, 1, 1, 64, 64, 0.95);
    cr_expect_gt(l.kv_requests, 4096);
    cr_expect_eq(l.max_batch, 4096);
    cr_expect_eq(l.max_tokens, 8192);
    catalog_release(&cat);
}

Test(validate, requests_all_at_once_by_hand)
{
    /* one request alone: a prefill and output - 1 decode steps of one sequence, its end the
     * makespan; two requests that a batch of one must take in turn end at twice that */
    catalog cat;
    perf_profile p;
    perf_setup s = llama_8b_h100(&cat, &p);
    char err[256];
    unsigned prompt = 1000, output = 200;
    double e2e = perf_prefill(&s, 1, prompt).total_s;
    for (unsigned j = 1; j < output; j++)
        e2e += perf_decode_step(&s, 1, prompt + (double)j).total_s;
    closed_loop_result one, two;
    cr_assert(validate_all_at_once(&s, 1e6, 1, 1, prompt, output, 16, 4096, &one, err,
                                   sizeof err), "%s", err);
    cr_expect(fabs(one.makespan_s / e2e - 1) < 1e-6, "%.12g vs %.12g", one.makespan_s, e2e);
    cr_expect(fabs(one.tokens_per_s - output / e2e) < 1e-6 * one.tokens_per_s);
    cr_expect_eq(one.requests, 1);
    cr_assert(validate_all_at_once(&s, 1e6, 1, 2, prompt, output, 1, 4096, &two, err,
                                   sizeof err), "%s", err);
    cr_expect(fabs(two.makespan_s / (2 * e2e) - 1) < 1e-6, "%.12g vs %.12g", two.makespan_s,
              2 * e2e);
    cr_expect(fabs(two.tokens_per_s - one.tokens_per_s) < 1e-6 * one.tokens_per_s);
    /* a token budget under the prompt: the prompt goes in chunks, one an iteration */
    closed_loop_result chunked;
    cr_assert(validate_all_at_once(&s, 1e6, 1, 1, prompt, output, 16, 256, &chunked, err,
                                   sizeof err), "%s", err);
    cr_expect_gt(chunked.ttft_s, one.ttft_s);
    cr_expect_not(validate_all_at_once(&s, 1000, 1, 1, prompt, output, 16, 4096, &one, err,
                                       sizeof err));
    cr_expect(strstr(err, "does not fit the cache"), "%s", err);
    /* 65,536 prompts of 7,000 tokens one token an iteration: refused, not run */
    cr_expect_not(validate_all_at_once(&s, 1e9, 1, 65536, 7000, 10, 16, 1, &one, err,
                                       sizeof err));
    cr_expect(strstr(err, "more iterations than a row's simulation runs"), "%s", err);
    catalog_release(&cat);
}

Test(validate, a_stated_memory_share_sets_the_cache)
{
    /* Llama-3-8B in bf16 on one H100 (79.22 GiB as CUDA reports it), an SGLang row:
     * mem-fraction-static 0.93 (or a share given as gpu_memory_utilization 0.8) leaves
     * that share of the device, less the weights, for the cache (131,072 bytes a token);
     * a row that states none gets SGLang's own rule, the device less what it reserves:
     * 512 MiB, 1.5 MiB a token of its 8,192-token chunk, 128 MiB for its one rank and
     * 2 MiB for each of 256 graphs, 13.125 GiB in all (above its 10 GiB floor) */
    catalog cat;
    load_catalog(&cat);
    const model_spec *m = catalog_model(&cat, "llama-3-8b");
    double weights = model_weight_bytes(m, PREC_BF16), token = 2.0 * 32 * 8 * 128 * 2;
    validate_row row = { .id = "X", .category = "memory", .metric = "KV cache capacity at startup",
                         .unit = "tokens", .model = "Meta-Llama-3-8B", .device = "H100-SXM",
                         .device_count = "1", .precision = "bf16", .weights = "bf16", .kv_precision = "",
                         .parallelism = "TP=1", .batch = "mem-fraction-static 0.93",
                         .input_tokens = "", .output_tokens = "", .seq_len = "",
                         .global_batch = "", .train_tokens = "", .engine = "SGLang",
                         .engine_profile = "sglang", .measure = "kv_capacity",
                         .value_unit = "tokens" };
    const double gib = 1073741824.0, device = 79.22 * gib;
    const double pools[] = { 0.93 * device, 0.8 * device, device - 13.125 * gib };
    const char *cells[] = { "memory_share=0.93", "memory_share=0.8", "" };
    for (size_t i = 0; i < 3; i++) {
        row.load = cells[i];
        validate_prediction p;
        validate_predict(&cat, &row, &p);
        cr_assert(p.predicted, "%s", p.reason);
        cr_expect_float_eq(p.value, floor((pools[i] - weights) / token), 0.5,
                           "'%s': %g", cells[i], p.value);
    }
    catalog_release(&cat);
}

Test(validate, an_unstated_cache_is_fp8_only_where_the_batch_needs_it)
{
    /* Llama-2-13B in fp8 on one H200, static batches of 128 + 128 tokens: 409,600 bytes a
     * token in a 16-bit cache, half in fp8.  A TensorRT-LLM row that states no cache
     * precision runs at 16 bits where its batch fits that cache, and at fp8 where only
     * the fp8 cache holds it; a row that states its cache, or another engine's, is
     * refused when the batch does not fit. */
    catalog cat;
    load_catalog(&cat);
    const model_spec *m = catalog_model(&cat, "llama-2-13b");
    const device_spec *d = catalog_device(&cat, "H200-SXM");
    cr_assert(m && d);
    /* the rows' engine, TensorRT-LLM's C++ runtime: its memory and no host work */
    const engine_spec *e = catalog_engine(&cat, validate_engine_of(&(validate_row){
        .category = "throughput", .metric = "", .engine = "TensorRT-LLM v0.5.0",
        .engine_profile = "tensorrt-llm-cpp" }));
    cr_assert_not_null(e);
    cr_assert_str_eq(e->name, "tensorrt-llm-cpp");
    memory_reserve r = engine_memory_reserve(e, m);
    inference_memory bf = memory_inference_reserved(m, d, PREC_FP8, PREC_BF16, 1, &r);
    inference_memory f8 = memory_inference_reserved(m, d, PREC_FP8, PREC_FP8, 1, &r);
    cr_assert_float_eq(f8.kv_bytes_per_token, 2.0 * 40 * 5120, 1e-6);
    cr_assert_float_eq(bf.kv_bytes_per_token, 4.0 * 40 * 5120, 1e-6);
    unsigned fits16 = (unsigned)(bf.kv_capacity_tokens / 256);
    unsigned fits8 = (unsigned)(f8.kv_capacity_tokens / 256);
    cr_assert_gt(fits8, fits16 + 1);
    perf_profile p = perf_default_profile(d);
    p.host_s = p.host_per_seq_s = p.host_tp_s = p.host_tp_per_seq_s = 0; /* TensorRT-LLM */
    char cell[64], load[96];
    validate_row row = { .id = "X", .category = "throughput", .metric = "max throughput",
                         .unit = "output tokens/s per GPU", .model = "Llama-2-13B",
                         .device = "H200-SXM", .device_count = "1", .precision = "fp8", .weights = "fp8",
                         .kv_precision = "", .parallelism = "TP=1", .batch = cell,
                         .input_tokens = "128", .output_tokens = "128", .seq_len = "",
                         .global_batch = "", .train_tokens = "", .engine = "TensorRT-LLM v0.5.0",
                         .engine_profile = "tensorrt-llm-cpp", .measure = "throughput",
                         .load = load, .value_unit = "tokens/s/GPU" };
    const unsigned batches[] = { fits16, fits8 };
    const precision caches[] = { PREC_BF16, PREC_FP8 };
    for (size_t i = 0; i < 2; i++) {
        snprintf(cell, sizeof cell, "static batch %u", batches[i]);
        snprintf(load, sizeof load, "batch=%u fp8_cache_when_needed", batches[i]);
        perf_setup s = { .model = m, .device = d, .profile = &p, .weights = PREC_FP8,
                         .kv = caches[i], .tp = 1, .reserve = &r };
        double t = perf_prefill(&s, batches[i], 128).total_s
                   + 127 * perf_decode_step(&s, batches[i], 128 + 64).total_s;
        validate_prediction v;
        validate_predict(&cat, &row, &v);
        cr_assert(v.predicted, "%s: %s", cell, v.reason);
        cr_expect_float_eq(v.value, batches[i] * 128 / t, 1e-9 * v.value, "%s", cell);
    }
    /* past the fp8 cache: refused */
    snprintf(cell, sizeof cell, "static batch %u", fits8 + 1);
    snprintf(load, sizeof load, "batch=%u fp8_cache_when_needed", fits8 + 1);
    validate_prediction v;
    validate_predict(&cat, &row, &v);
    cr_expect_not(v.predicted);
    cr_expect(strstr(v.reason, "exceeds the model's cache"), "%s", v.reason);
    /* a stated 16-bit cache, or vLLM: the fp8-only batch is refused */
    snprintf(cell, sizeof cell, "static batch %u", fits8);
    snprintf(load, sizeof load, "batch=%u fp8_cache_when_needed", fits8);
    row.kv_precision = "fp16";
    validate_predict(&cat, &row, &v);
    cr_expect_not(v.predicted, "a stated cache is kept");
    row.kv_precision = "";
    row.engine = "vLLM 0.6";
    row.engine_profile = "vllm-0.5";
    snprintf(load, sizeof load, "batch=%u", fits8); /* no fp8 build of vLLM's to read */
    validate_predict(&cat, &row, &v);
    cr_expect_not(v.predicted, "only TensorRT-LLM's fp8 builds are read as fp8 caches");
    catalog_release(&cat);
}

/* The planner's step for `model` on `gpus` H100s within c (tp and pp 1 unless c says),
 * asserted to fit: what a training row's prediction stands on. */
static training_estimate h100_plan(const catalog *cat, const char *model, precision prec,
                                   unsigned gpus, unsigned seq, unsigned batch,
                                   training_constraints c)
{
    const model_spec *m = catalog_model(cat, model);
    const device_spec *d = catalog_device(cat, "H100-SXM");
    cr_assert(m && d, "%s on H100-SXM", model);
    perf_profile base = perf_default_profile(d);
    c.tp = c.tp ? c.tp : 1;
    c.pp = c.pp ? c.pp : 1;
    /* the rows below ran under Megatron (Megatron-LM, NeMo): its bytes a parameter, the
     * ZeRO stages it runs and its kernels, as validate takes them */
    const engine_spec *e = catalog_engine(cat, "megatron");
    engine_training_state(e, &c);
    perf_profile p = engine_apply_profile(e, &base, d);
    training_estimate t;
    cr_assert(perf_training_plan_within(m, d, &p, prec, gpus, seq, batch, c, &t),
              "%s: %u sequences of %u on %u GPUs", model, batch, seq, gpus);
    return t;
}

Test(validate, a_batch_ramp_is_planned_along_its_tokens)
{
    /* Llama-3-8B on 8 H100s, TP=1, PP=1 (dp 8), 10B tokens of 4,096-token sequences, the
     * batch ramping from 64 to 256 sequences over the first 2B tokens: 8B tokens at 256,
     * and the ramp's 2B in 16 equal shares, each at its middle batch rounded to whole
     * sequences for the 8 ranks; GPU-hours are the seconds x 8 / 3600 */
    catalog cat;
    load_catalog(&cat);
    training_estimate t = h100_plan(&cat, "llama-3-8b", PREC_BF16, 8, 4096, 256, TRAINING_FREE);
    double seconds = 8e9 / t.tokens_per_step * t.step_s;
    for (int i = 0; i < 16; i++) {
        double batch = 8 * round((64 + 192 * (i + 0.5) / 16) / 8);
        t = h100_plan(&cat, "llama-3-8b", PREC_BF16, 8, 4096, (unsigned)batch, TRAINING_FREE);
        seconds += 2e9 / 16 / t.tokens_per_step * t.step_s;
    }
    validate_row row = { .id = "X", .category = "training", .metric = "pretraining GPU time",
                         .unit = "GPU-hours", .model = "Meta-Llama-3-8B", .device = "H100-SXM",
                         .device_count = "8", .precision = "bf16", .weights = "bf16", .kv_precision = "",
                         .parallelism = "TP=1 PP=1", .batch = "", .input_tokens = "",
                         .output_tokens = "", .seq_len = "4096",
                         .global_batch = "64 -> 256 sequences (ramp over first 2B tokens)",
                         .train_tokens = "10B", .engine = "Megatron-LM",
                         .engine_profile = "megatron", .load = "ramp_tokens=2B",
                         .value_unit = "GPU-hours" };
    validate_prediction v;
    validate_predict(&cat, &row, &v);
    cr_assert(v.predicted, "%s", v.reason);
    cr_expect_float_eq(v.value, seconds * 8 / 3600, 1e-9 * v.value);
    /* between the whole run at the first batch and the whole run at the last (larger
     * batches run more tokens a second here) */
    double ramped = v.value;
    row.global_batch = "64";
    row.load = "";
    validate_predict(&cat, &row, &v);
    cr_assert(v.predicted, "%s", v.reason);
    cr_expect_gt(v.value, ramped);
    row.global_batch = "256";
    validate_predict(&cat, &row, &v);
    cr_assert(v.predicted, "%s", v.reason);
    cr_expect_lt(v.value, ramped);
    /* the same ramp in millions of tokens a step: 0.25M and 1M tokens are 64 and 256
     * sequences of 4,096 */
    row.global_batch = "0.25M tokens -> 1M tokens";
    row.load = "ramp_tokens=2B";
    validate_predict(&cat, &row, &v);
    cr_assert(v.predicted, "%s", v.reason);
    cr_expect_float_eq(v.value, ramped, 1e-12 * ramped);
    row.global_batch = "64 -> 256 sequences (ramp over first 2B tokens)";
    /* a rate of such a run is refused: it depends on where in the ramp */
    row.unit = "tokens/s per GPU";
    row.value_unit = "tokens/s/GPU";
    validate_predict(&cat, &row, &v);
    cr_expect_not(v.predicted);
    /* a ramp that does not say over how many tokens, or over none, or over more than
     * were trained, or a ramp's tokens with no ramp, is refused */
    row.unit = row.value_unit = "GPU-hours";
    const char *bad[][2] = { { "64 -> 256 sequences", "" }, { "64 -> 256", "ramp_tokens=nan" },
                             { "64 -> nan", "ramp_tokens=2B" }, { "64 -> 256", "ramp_tokens=20B" },
                             { "64", "ramp_tokens=2B" } };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        row.global_batch = bad[i][0];
        row.load = bad[i][1];
        validate_predict(&cat, &row, &v);
        cr_expect_not(v.predicted, "%s with %s", bad[i][0], bad[i][1]);
    }
    catalog_release(&cat);
}

Test(validate, a_training_runs_memory_is_its_plans)
{
    /* Llama-3-8B on 8 H100s, TP=1, PP=1, 128 sequences of 4,096, every layer recomputed
     * (RECOMPUTE=full, Megatron's --checkpoint-activations): the memory per GPU is what
     * the plan holds, in GB; a training row with the same setup plans the same step */
    catalog cat;
    load_catalog(&cat);
    training_constraints c = TRAINING_FREE;
    c.recompute_layers = 32;
    /* a Megatron-LM row: Megatron's bf16 weights, fp32 gradients and optimizer state */
    engine_training_state(catalog_engine(&cat, "megatron"), &c);
    cr_expect_float_eq(c.gradient_bytes, 4, 0);
    training_estimate t = h100_plan(&cat, "llama-3-8b", PREC_BF16, 8, 4096, 128, c);
    cr_assert_eq(t.setup.recompute_layers, 32, "every layer of llama-3-8b");
    validate_row row = { .id = "X", .category = "memory",
                         .metric = "GPU memory used per GPU during training", .unit = "GB",
                         .model = "Meta-Llama-3-8B", .device = "H100-SXM", .device_count = "8",
                         .precision = "bf16", .weights = "bf16", .kv_precision = "",
                         .parallelism = "TP=1 PP=1 RECOMPUTE=full", .batch = "",
                         .input_tokens = "", .output_tokens = "", .seq_len = "4096",
                         .global_batch = "128", .train_tokens = "", .engine = "Megatron-LM",
                         .engine_profile = "megatron", .measure = "training_memory",
                         .value_unit = "GB" };
    validate_prediction v;
    validate_predict(&cat, &row, &v);
    cr_assert(v.predicted, "%s", v.reason);
    cr_expect_float_eq(v.value, t.memory.total_bytes / 1e9, 1e-9 * v.value);
    /* RECOMPUTE=none recomputes nothing: more memory */
    row.parallelism = "TP=1 PP=1 RECOMPUTE=none";
    validate_predict(&cat, &row, &v);
    cr_assert(v.predicted, "%s", v.reason);
    cr_expect_gt(v.value, t.memory.total_bytes / 1e9);
    row.unit = row.value_unit = "tokens";
    validate_predict(&cat, &row, &v);
    cr_expect_not(v.predicted, "not a memory unit");
    catalog_release(&cat);
}

Test(validate, a_lora_row_plans_adapters_on_the_frozen_base)
{
    /* "Llama-2-70B LoRA (...)" in fp8 on 8 H100s at TP=4: the base model's plan with
     * setup.lora, in sequences a second for the whole system */
    catalog cat;
    load_catalog(&cat);
    training_constraints c = TRAINING_FREE;
    c.tp = 4;
    c.micro_batch = 1;
    c.lora = true;
    training_estimate t = h100_plan(&cat, "llama-2-70b", PREC_FP8, 8, 8192, 8, c);
    validate_row row = { .id = "X", .category = "training", .metric = "fine-tuning throughput",
                         .unit = "samples/s (8192-token samples)",
                         .model = "Llama-2-70B LoRA (rank 16)", .device = "H100-SXM",
                         .device_count = "8", .precision = "fp8", .weights = "fp8", .kv_precision = "",
                         .parallelism = "TP=4 PP=1 MBS=1", .batch = "", .input_tokens = "",
                         .output_tokens = "", .seq_len = "8192", .global_batch = "8",
                         .train_tokens = "", .engine = "NeMo",
                         .engine_profile = "megatron", .lora = "yes",
                         .value_unit = "samples/s" };
    validate_prediction v;
    validate_predict(&cat, &row, &v);
    cr_assert(v.predicted, "%s", v.reason);
    cr_expect_float_eq(v.value, t.tokens_per_step / t.step_s / 8192, 1e-9 * v.value);
    /* the same row without LoRA trains every weight: 16 bytes a parameter do not fit 8
     * GPUs at TP=4 (the lora column decides, not the model's words) */
    row.lora = "";
    validate_predict(&cat, &row, &v);
    cr_expect_not(v.predicted);
    cr_expect(strstr(v.reason, "no training plan: llama-2-70b does not fit on 8 H100-SXM: the "
                     "closest setup (tp 4, pp 1, dp 2, ZeRO-3 (FSDP)"), "%s", v.reason);
    cr_expect(strstr(v.reason, "of 76.6 GB usable"), "%s", v.reason);
    catalog_release(&cat);
}

Test(validate, shipped_table_runs)
{
    char *out = NULL, *err = NULL;
    cr_assert_eq(cli_run(&out, &err, "validate"), 0, "%s", err);
    cr_expect(strstr(out, "T09 ") && strstr(out, "M08 ") && strstr(out, "MAPE"), "%s", out);
    cr_expect_eq(cli_run(&out, &err, "validate --half both"), 2);
    cr_expect_eq(cli_run(&out, &err, "validate --table tests/data/validation/none.csv"), 2);
    free(out);
    free(err);
}

/* scratch_run, freeing what *out and *err held (scratch_run replaces them). */
static int shell(const char *command, char **out, char **err)
{
    free(*out);
    free(*err);
    *out = *err = NULL;
    return scratch_run(command, out, err);
}

/* An installed fleetsim (PREFIX/bin/fleetsim) run from a folder with no source tree reads
 * PREFIX/share/fleetsim/validation/published.csv; with neither, the message names both
 * places and --table.  The binary is copied, not linked: its own path decides. */
Test(validate, an_installed_binary_finds_the_installed_table, .timeout = 60)
{
    char *prefix = scratch_dir(), *elsewhere = scratch_dir();
    char command[4096];
    char *out = NULL, *err = NULL;
    snprintf(command, sizeof command,
             "mkdir -p %s/bin %s/share/fleetsim/validation && cp %s %s/bin/fleetsim && "
             "cp tests/data/validation/tiny.csv %s/share/fleetsim/validation/published.csv && "
             "cp tests/data/validation/tiny.csv %s/share/fleetsim/validation/fit.csv",
             prefix, prefix, FLEETSIM_BIN, prefix, prefix, prefix);
    cr_assert_eq(shell(command, &out, &err), 0, "%s", err);
    char *tiny = NULL;
    static const char *const halves[] = { "check", "fit" };
    for (int k = 0; k < 2; k++) { /* published.csv for the check half, fit.csv for the fit */
        snprintf(command, sizeof command, "cd %s && %s/bin/fleetsim validate --half %s",
                 elsewhere, prefix, halves[k]);
        cr_assert_eq(shell(command, &out, &err), 0, "%s", err);
        cr_expect(strstr(out, "MAPE") != NULL, "%s", out);
        cr_assert_eq(cli_run(&tiny, &err, "validate --table tests/data/validation/tiny.csv "
                             "--half %s", halves[k]), 0, "%s", err);
        cr_expect_str_eq(out, tiny, "the installed table is the one read");
    }
    snprintf(command, sizeof command, "rm %s/share/fleetsim/validation/published.csv && "
             "cd %s && %s/bin/fleetsim validate", prefix, elsewhere, prefix);
    cr_expect_eq(shell(command, &out, &err), 2);
    cr_expect(strstr(err, "fleetsim validate: no table of published measurements: neither "
                          "'tests/validation/published.csv' (a source tree's) nor '")
                  && strstr(err, "/bin/../share/fleetsim/validation/published.csv' (make "
                                 "install's) exists; name one with --table FILE"), "%s", err);
    free(tiny);
    free(out);
    free(err);
    scratch_remove_dir(prefix);
    scratch_remove_dir(elsewhere);
}

/* A table as a spreadsheet saves it (a byte-order mark) reads as the same table; a NUL
 * in a cell (C read the cell cut) and a published figure that is not positive (the error
 * divides by it) are refused with their line (issue 40). */
Test(validate, a_bom_is_skipped_and_a_nul_or_a_negative_figure_refused, .timeout = 60)
{
    char *tiny = scratch_read("tests/data/validation/tiny.csv");
    cr_assert_not_null(tiny);
    char *dir = scratch_dir(), *out = NULL, *err = NULL, *plain = NULL;
    size_t n = strlen(tiny);
    char *with_bom = malloc(n + 4);
    memcpy(with_bom, "\xef\xbb\xbf", 3);
    memcpy(with_bom + 3, tiny, n + 1);
    char *bom = scratch_file(dir, "bom.csv", with_bom);
    cr_assert_eq(cli_run(&plain, &err, "validate --table tests/data/validation/tiny.csv "
                         "--half all"), 0, "%s", err);
    cr_assert_eq(cli_run(&out, &err, "validate --table %s --half all", bom), 0, "%s", err);
    cr_expect_str_eq(out, plain);
    /* the first data row's value made negative */
    char *line2 = strchr(tiny, '\n') + 1, *comma = line2;
    const char *header = tiny;
    int column = 0;
    for (const char *c = header; c < line2 && strncmp(c, "value,", 6); c++)
        column += *c == ',';
    for (int k = 0; k < column; k++)
        comma = strchr(comma, ',') + 1;
    char negative[8192];
    snprintf(negative, sizeof negative, "%.*s-%s", (int)(comma - tiny), tiny, comma);
    char *neg = scratch_file(dir, "neg.csv", negative);
    cr_expect_eq(cli_run(&out, &err, "validate --table %s --half all", neg), 2);
    char expected[1024];
    snprintf(expected, sizeof expected, "fleetsim validate: %s:2: value: expected a positive "
             "number, got '-", neg);
    cr_expect(strstr(err, expected) == err, "%s", err);
    /* a NUL inside the first data row */
    char path[1024];
    snprintf(path, sizeof path, "%s/nul.csv", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fwrite(tiny, 1, (size_t)(line2 - tiny) + 2, f);
    fputc('\0', f);
    fputs(line2 + 2, f);
    fclose(f);
    cr_expect_eq(cli_run(&out, &err, "validate --table %s --half all", path), 2);
    snprintf(expected, sizeof expected, "fleetsim validate: %s:2: a NUL byte in a cell (a "
             "table is text)\n", path);
    cr_expect_str_eq(err, expected);
    free(tiny), free(with_bom), free(bom), free(neg), free(out), free(err), free(plain);
    scratch_remove_dir(dir);
}

/* A power row (lua/validate_predict.c, predict_power): a static batch's GPU draw is the
 * energy of its prefill and its decode steps over their time (models/power.h); a system
 * adds the default host power a GPU; energy a token is the GPUs' draw over the output
 * rate.  A backlog measured in its steady state (queued max_seqs=N steady) is the closed
 * loop of N users capped at N running: loaded power plus the loop's work over its
 * window. */
Test(validate, power_rows_price_the_load_they_state, .timeout = 120)
{
    catalog cat;
    load_catalog(&cat);
    const model_spec *m = catalog_model(&cat, "llama-3.1-8b");
    const device_spec *d = catalog_device(&cat, "H100-SXM");
    const engine_spec *e = catalog_engine(&cat, "tensorrt-llm-cpp");
    cr_assert(m && d && e);
    memory_reserve r = engine_memory_reserve(e, m);
    perf_profile p = perf_default_profile(d);
    p.host_s = p.host_per_seq_s = p.host_tp_s = p.host_tp_per_seq_s = 0; /* a C++ runtime */
    perf_setup s = { .model = m, .device = d, .profile = &p, .weights = PREC_BF16,
                     .kv = PREC_BF16, .tp = 1, .reserve = &r };
    power_model pm;
    char err[320];
    cr_assert_eq(power_model_of(d, NULL, &pm, err, sizeof err), 0, "%s", err);
    const unsigned batch = 32, in = 512, out = 128;
    perf_time prefill = perf_prefill(&s, batch, in);
    perf_time decode = perf_decode_step(&s, batch, in + out / 2.0);
    double t = prefill.total_s + (out - 1) * decode.total_s;
    double joules = power_step_w(&pm, &prefill) * prefill.total_s
                    + (out - 1) * power_step_w(&pm, &decode) * decode.total_s;
    double gpu_w = joules / t, tokens_per_s = 2.0 * batch * out / t; /* two replicas */
    cr_assert(gpu_w > pm.loaded_w && gpu_w < pm.tdp_w, "%g W", gpu_w);

    char load[96], measure[32], unit[32];
    validate_row row = { .id = "X", .category = "power", .metric = "power", .unit = "",
                         .model = "Llama-3.1-8B", .device = "H100-SXM", .device_count = "2",
                         .precision = "bf16", .weights = "bf16", .kv_precision = "",
                         .parallelism = "TP=1", .batch = "", .input_tokens = "512",
                         .output_tokens = "128", .seq_len = "", .global_batch = "",
                         .train_tokens = "", .engine = "TensorRT-LLM",
                         .engine_profile = "tensorrt-llm-cpp", .measure = measure,
                         .load = load, .value_unit = unit };
    const struct { const char *measure, *unit; double want; } rows[] = {
        { "gpu_power", "W/GPU", gpu_w },
        { "system_power", "W", 2 * (gpu_w + POWER_DEFAULT_HOST_W) },
        { "energy_per_token", "J/token", 2 * gpu_w / tokens_per_s },
    };
    snprintf(load, sizeof load, "batch=%u", batch);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        snprintf(measure, sizeof measure, "%s", rows[i].measure);
        snprintf(unit, sizeof unit, "%s", rows[i].unit);
        validate_prediction v;
        validate_predict(&cat, &row, &v);
        cr_assert(v.predicted, "%s: %s", measure, v.reason);
        cr_expect(close_to(v.value, rows[i].want), "%s: %.9g, want %.9g", measure, v.value,
                  rows[i].want);
    }

    /* the steady state of a backlog under a cap of 16 running sequences */
    inference_memory mem = memory_inference_reserved(m, d, PREC_BF16, PREC_BF16, 1, &r);
    closed_loop_result loop;
    cr_assert(validate_closed_loop(&s, mem.kv_capacity_tokens, 2, 16, in, out, 16, 4096, &loop,
                                   err, sizeof err), "%s", err);
    double steady_w = pm.loaded_w + power_work_joules(&pm, &loop.work) / (2 * loop.window_s);
    snprintf(load, sizeof load, "queued requests=1000 max_seqs=16 token_budget=4096 steady");
    snprintf(measure, sizeof measure, "gpu_power");
    snprintf(unit, sizeof unit, "W/GPU");
    validate_prediction v;
    validate_predict(&cat, &row, &v);
    cr_assert(v.predicted, "%s", v.reason);
    cr_expect(close_to(v.value, steady_w), "%.9g, want %.9g", v.value, steady_w);
    /* 16 running on each replica draw less than the static batch of 32 */
    cr_expect_lt(steady_w, gpu_w);
    catalog_release(&cat);
}
