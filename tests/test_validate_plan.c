/* A validation row's parallelism cell as data (models/validate_plan.h): whole tokens, not
 * substrings; every mistake refused with the token it is in; the stated DP and GA checked
 * against the row; `fleetsim validate` refusing a table with such a cell by file and line. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lua/validate_predict.h"
#include "models/catalog.h"
#include "models/validate_load.h"
#include "models/validate_plan.h"
#include "output/csv_table.h"
#include "support/catalog_fixture.h"
#include "support/cli.h"
#include "support/scratch.h"

TestSuite(validate_plan, .init = test_catalog_setup, .fini = test_catalog_teardown);

/* text parsed, asserted to parse */
static validate_plan parsed(const char *text)
{
    validate_plan p;
    char err[256];
    cr_assert_eq(validate_plan_parse(text, &p, err, sizeof err), 0, "'%s': %s", text, err);
    return p;
}

/* text refused; the message it gives */
static const char *refused(const char *text)
{
    static char err[256];
    validate_plan p;
    err[0] = 0;
    cr_assert_eq(validate_plan_parse(text, &p, err, sizeof err), -1, "'%s' parsed", text);
    return err;
}

Test(validate_plan, vpp_and_pp_are_separate_keys)
{
    /* "VPP=2 PP=8" is eight stages of two chunks (a substring search for "PP=" read 2) */
    validate_plan p = parsed("VPP=2 PP=8");
    cr_expect_eq(p.training.pp, 8);
    cr_expect_eq(p.training.virtual_stages, 2);
    cr_expect_eq(p.training.tp, 0, "TP not stated: free");
    cr_expect_eq(p.stated, 1u << PLAN_VPP | 1u << PLAN_PP);
    /* commas tolerated as separators; ETP is not TP, nor EP */
    p = parsed("TP=4, PP=12,ETP=2  EP=8");
    cr_expect_eq(p.training.tp, 4);
    cr_expect_eq(p.training.pp, 12);
    cr_expect_eq(p.training.etp, 2);
    cr_expect_eq(p.training.ep, 8);
    /* nothing stated: the planner's whole choice */
    p = parsed("");
    cr_expect_eq(p.stated, 0);
    cr_expect_eq(p.training.zero_stage, -1);
    cr_expect_eq(p.training.recompute_layers, -1);
    cr_expect_eq(p.training.selective, -1);
}

Test(validate_plan, an_unknown_key_is_refused_naming_the_known)
{
    cr_expect_str_eq(refused("TP=2 VP=2"),
                     "unknown key 'VP' in 'VP=2' (known: TP, PP, CP, EP, ETP, VPP, DP, MBS, GA, "
                     "ZERO, HSDP, SCHEDULE, RECOMPUTE, RECOMPUTE_LAYERS, REPLICAS, SP, "
                     "DP_OVERLAP, DISPATCHER, EP_OVERLAP, TP_OVERLAP)");
    cr_expect(strstr(refused("tp=2"), "unknown key 'tp' in 'tp=2'"), "keys are upper case");
    cr_expect_str_eq(refused("TP=2 TP=4"), "repeated key 'TP' in 'TP=4'");
    cr_expect_str_eq(refused("PP=16 (DualPipe)"),
                     "malformed token '(DualPipe)' (expected KEY=value)");
    cr_expect_str_eq(refused("=4"), "malformed token '=4' (expected KEY=value)");
}

Test(validate_plan, values_are_whole_and_within_bounds)
{
    cr_expect_str_eq(refused("TP=0"),
                     "bad value '0' for TP in 'TP=0' (expected a whole number from 1 to 1000000)");
    cr_expect(strstr(refused("MBS=2.5"), "bad value '2.5' for MBS"));
    cr_expect(strstr(refused("PP=1000001"), "bad value '1000001' for PP"));
    cr_expect(strstr(refused("DP=99999999999"), "bad value '99999999999' for DP"));
    cr_expect(strstr(refused("TP="), "bad value '' for TP"));
    cr_expect(strstr(refused("TP=-2"), "bad value '-2'"));
    cr_expect_str_eq(refused("ZERO=4"),
                     "bad value '4' for ZERO in 'ZERO=4' (expected 0, 1, 2 or 3)");
    cr_expect_str_eq(refused("SCHEDULE=gpipe"),
                     "bad value 'gpipe' for SCHEDULE in 'SCHEDULE=gpipe' (expected 1f1b, "
                     "interleaved, zero-bubble or dualpipe)");
    cr_expect(strstr(refused("RECOMPUTE=True"), "expected none, selective or full"));
    cr_expect_eq(parsed("ZERO=0").training.zero_stage, 0);
    cr_expect_eq(parsed("PP=1000000").training.pp, 1000000);
}

Test(validate_plan, recompute_maps_onto_the_planners_two_knobs)
{
    validate_plan p = parsed("RECOMPUTE=selective");
    cr_expect_eq(p.training.selective, 1);
    cr_expect_eq(p.training.recompute_layers, 0);
    p = parsed("RECOMPUTE=none");
    cr_expect_eq(p.training.selective, 0);
    cr_expect_eq(p.training.recompute_layers, 0);
    /* full: every layer of the model, which the plan learns from validate_plan_training */
    p = parsed("RECOMPUTE=full");
    cr_expect(p.recompute_all);
    cr_expect_eq(p.training.selective, 0);
    cr_expect_eq(validate_plan_training(&p, 80).recompute_layers, 80);
    p = parsed("RECOMPUTE_LAYERS=4 RECOMPUTE=full");
    cr_expect_not(p.recompute_all);
    cr_expect_eq(validate_plan_training(&p, 80).recompute_layers, 4);
    cr_expect_str_eq(refused("RECOMPUTE_LAYERS=4"), "RECOMPUTE_LAYERS=4 goes with RECOMPUTE=full");
    cr_expect(strstr(refused("RECOMPUTE=selective RECOMPUTE_LAYERS=2"),
                     "goes with RECOMPUTE=full"));
    /* nothing said: free */
    cr_expect_eq(validate_plan_training(&(validate_plan){ .training = TRAINING_FREE }, 80)
                     .recompute_layers, -1);
}

Test(validate_plan, schedules_and_sharding)
{
    validate_plan p = parsed("TP=1 PP=16 SCHEDULE=dualpipe EP=64 ZERO=1");
    cr_expect(p.training.dualpipe);
    cr_expect_not(p.training.zero_bubble);
    cr_expect_eq(p.training.zero_stage, 1);
    cr_expect_eq(p.training.virtual_stages, 0, "DualPipe's chunks are the planner's rule");
    p = parsed("PP=8 VPP=4 SCHEDULE=interleaved");
    cr_expect_eq(p.training.virtual_stages, 4);
    cr_expect_not(p.training.dualpipe);
    cr_expect_eq(parsed("PP=8 SCHEDULE=1f1b").training.virtual_stages, 1);
    cr_expect(parsed("PP=8 SCHEDULE=zero-bubble").training.zero_bubble);
    cr_expect_str_eq(refused("PP=8 SCHEDULE=interleaved"),
                     "SCHEDULE=interleaved needs VPP of 2 or more");
    cr_expect_str_eq(refused("PP=8 VPP=2 SCHEDULE=dualpipe"),
                     "VPP=2 is the interleaved schedule, not SCHEDULE=dualpipe");
    p = parsed("HSDP=8");
    cr_expect_eq(p.training.shard_ranks, 8);
    cr_expect_eq(p.training.zero_stage, 3);
    cr_expect_str_eq(refused("HSDP=8 ZERO=1"), "HSDP=8 shards ZeRO-3's states, not ZERO=1");
    p = parsed("TP=2 REPLICAS=4");
    cr_expect_eq(p.replicas, 4);
    cr_expect_eq(p.training.tp, 2);
}

Test(validate_plan, dp_and_ga_are_checked_against_the_row)
{
    char why[160];
    /* 64 GPUs at TP=4 x PP=2 x CP=2: 4 data-parallel ranks */
    validate_plan p = parsed("TP=4 PP=2 CP=2 DP=4 MBS=2 GA=16");
    training_constraints c = validate_plan_training(&p, 32);
    cr_expect(validate_plan_check(&p, 64, 128, &c, why, sizeof why), "%s", why);
    cr_expect_not(validate_plan_check(&p, 64, 256, &c, why, sizeof why));
    cr_expect_str_eq(why, "GA=16 but a batch of 256 sequences over 4 data-parallel ranks of "
                          "MBS=2 is 32 micro-batches a rank");
    p = parsed("TP=4 PP=2 CP=2 DP=8");
    c = validate_plan_training(&p, 32);
    cr_expect_not(validate_plan_check(&p, 64, 128, &c, why, sizeof why));
    cr_expect_str_eq(why, "DP=8 but 64 GPUs over TP=4 x PP=2 x CP=2 are 4 data-parallel ranks");
    /* DP with the layout left free: its share of the GPUs must be whole */
    p = parsed("DP=48");
    c = validate_plan_training(&p, 32);
    cr_expect_not(validate_plan_check(&p, 64, 96, &c, why, sizeof why));
    cr_expect_str_eq(why, "DP=48 x TP x PP x CP as stated does not divide 64 GPUs");
    /* GA fixes the micro-batch where the ranks are known, and the ranks where MBS is */
    p = parsed("TP=1 PP=1 GA=4");
    c = validate_plan_training(&p, 32);
    cr_expect(validate_plan_check(&p, 8, 64, &c, why, sizeof why), "%s", why);
    cr_expect_eq(c.micro_batch, 2);
    p = parsed("MBS=2 GA=4");
    c = validate_plan_training(&p, 32);
    cr_expect(validate_plan_check(&p, 8, 64, &c, why, sizeof why), "%s", why);
    cr_expect_eq(c.dp, 8);
    cr_expect_eq(c.micro_batch, 2);
    p = parsed("GA=4");
    c = validate_plan_training(&p, 32);
    cr_expect_not(validate_plan_check(&p, 8, 64, &c, why, sizeof why));
}

/* A training row of Llama-3-8B on 8 H100s, 128 sequences of 4,096, with parallelism par. */
static validate_prediction training_row(const char *par)
{
    validate_row row = { .id = "X", .category = "training", .metric = "pretraining throughput",
                         .unit = "tokens/s per GPU", .model = "Meta-Llama-3-8B",
                         .device = "H100-SXM", .device_count = "8", .precision = "bf16",
                         .weights = "bf16", .kv_precision = "", .parallelism = par, .batch = "",
                         .input_tokens = "", .output_tokens = "", .seq_len = "4096",
                         .global_batch = "128", .train_tokens = "", .engine = "Megatron-LM",
                         .engine_profile = "megatron", .value_unit = "tokens/s/GPU" };
    validate_prediction v;
    validate_predict(&test_catalog, &row, &v);
    return v;
}

Test(validate_plan, a_stated_dp_that_does_not_hold_leaves_the_row_unpredicted)
{
    validate_prediction free_dp = training_row("TP=2 PP=1 MBS=1");
    cr_assert(free_dp.predicted, "%s", free_dp.reason);
    /* 8 GPUs over TP=2 are 4 ranks: DP=4 is the same plan, DP=2 a table's mistake */
    validate_prediction stated = training_row("TP=2 PP=1 MBS=1 DP=4");
    cr_assert(stated.predicted, "%s", stated.reason);
    cr_expect_eq(stated.value, free_dp.value);
    validate_prediction wrong = training_row("TP=2 PP=1 MBS=1 DP=2");
    cr_expect_not(wrong.predicted);
    cr_expect_str_eq(wrong.reason,
                     "DP=2 but 8 GPUs over TP=2 x PP=1 x CP=1 are 4 data-parallel ranks");
    /* 128 sequences on 4 ranks of 1: 32 micro-batches a rank */
    cr_expect(training_row("TP=2 PP=1 MBS=1 GA=32").predicted);
    wrong = training_row("TP=2 PP=1 MBS=1 GA=4");
    cr_expect_not(wrong.predicted);
    cr_expect(strstr(wrong.reason, "GA=4 but a batch of 128 sequences"), "%s", wrong.reason);
    /* a serving key on a training row, a cell that does not parse */
    cr_expect(strstr(training_row("REPLICAS=2").reason, "REPLICAS=2 is a serving row's key"));
    cr_expect_str_eq(training_row("VP=2").reason,
                     "parallelism: unknown key 'VP' in 'VP=2' (known: TP, PP, CP, EP, ETP, VPP, "
                     "DP, MBS, GA, ZERO, HSDP, SCHEDULE, RECOMPUTE, RECOMPUTE_LAYERS, REPLICAS, "
                     "SP, DP_OVERLAP, DISPATCHER, EP_OVERLAP, TP_OVERLAP)");
}

/* A serving row: Llama-3-8B in bf16, 8 H100s, static batches of 8 of 128 + 128 tokens. */
static validate_prediction serving_row(const char *par)
{
    validate_row row = { .id = "X", .category = "throughput", .metric = "throughput",
                         .unit = "output tokens/s", .model = "Meta-Llama-3-8B",
                         .device = "H100-SXM", .device_count = "8", .precision = "bf16",
                         .weights = "bf16", .kv_precision = "", .parallelism = par,
                         .batch = "static batch 8", .load = "batch=8",
                         .measure = "throughput", .value_unit = "tokens/s",
                         .input_tokens = "128", .output_tokens = "128", .seq_len = "",
                         .global_batch = "", .train_tokens = "", .engine = "TensorRT-LLM v0.5.0",
                         .engine_profile = "tensorrt-llm-cpp" };
    validate_prediction v;
    validate_predict(&test_catalog, &row, &v);
    return v;
}

Test(validate_plan, serving_rows_read_tp_and_replicas)
{
    validate_prediction tp2 = serving_row("TP=2"), one = serving_row("TP=1");
    cr_assert(tp2.predicted && one.predicted, "%s %s", tp2.reason, one.reason);
    cr_expect_neq(tp2.value, one.value, "TP=2 is four replicas, TP=1 eight");
    validate_prediction v = serving_row("TP=2 REPLICAS=4");
    cr_assert(v.predicted, "%s", v.reason);
    cr_expect_eq(v.value, tp2.value);
    v = serving_row("REPLICAS=4");
    cr_assert(v.predicted, "%s", v.reason);
    cr_expect_eq(v.value, tp2.value, "four replicas of 8 GPUs are TP=2");
    v = serving_row("TP=2 REPLICAS=2");
    cr_expect_not(v.predicted);
    cr_expect_str_eq(v.reason, "REPLICAS=2 of TP=2 are 4 GPUs, not the row's 8");
    v = serving_row("TP=2 PP=2");
    cr_expect_not(v.predicted);
    cr_expect(strstr(v.reason, "PP= is not a serving row's key"), "%s", v.reason);
}

Test(validate_plan, a_table_with_an_unknown_key_is_refused_by_file_and_line)
{
    /* its bad row is on line 4 (a quoted note spans lines 2 and 3), in the fit half: the
     * whole table is refused whichever half is asked for, and nothing is printed */
    csv_table t;
    char err[256];
    cr_assert_eq(csv_table_read("tests/data/validation/bad_key.csv", &t, err, sizeof err), 0,
                 "%s", err);
    cr_expect_eq(csv_table_line(&t, 0), 2);
    cr_expect_eq(csv_table_line(&t, 1), 4);
    cr_expect_eq(csv_table_line(&t, 2), 0);
    csv_table_release(&t);
    char *out = NULL, *errs = NULL;
    cr_expect_eq(cli_run(&out, &errs, "validate --table tests/data/validation/bad_key.csv"), 2);
    cr_expect_str_eq(out, "");
    cr_expect(strstr(errs, "fleetsim validate: tests/data/validation/bad_key.csv:4: parallelism: "
                           "unknown key 'VP' in 'VP=2' (known: TP, PP, "),
              "%s", errs);
    free(out);
    free(errs);
}

/* The engine, the weights and LoRA are data too (tests/validation/README.md): a weights
 * cell that names no precision, or a lora cell other than yes, is the table's mistake and
 * refused by file and line; an engine the catalog lacks refuses its row; a row with no
 * engine_profile takes the default engine whatever its engine cell says. */
Test(validate_plan, the_engine_weights_and_lora_cells_are_data)
{
    validate_row row = { .category = "throughput", .metric = "", .parallelism = "TP=1",
                         .engine = "vLLM V1 engine on SGLang's kernels", .engine_profile = "",
                         .weights = "fp8", .lora = "" };
    char err[256];
    cr_expect_str_eq(validate_engine_of(&row), CATALOG_DEFAULT_SERVING_ENGINE,
                     "the words are not read");
    row.category = "training";
    cr_expect_str_eq(validate_engine_of(&row), "deepspeed");
    row.engine_profile = "sglang";
    cr_expect_str_eq(validate_engine_of(&row), "sglang");
    cr_expect_eq(validate_row_check(&row, err, sizeof err), 0, "%s", err);
    row.weights = "fp8 (ModelOpt)";
    cr_expect_eq(validate_row_check(&row, err, sizeof err), -1);
    cr_expect_str_eq(err, "weights: expected a precision such as fp8 or bf16 (empty: not "
                          "stated), got 'fp8 (ModelOpt)'");
    row.weights = "";
    row.lora = "rank 16";
    cr_expect_eq(validate_row_check(&row, err, sizeof err), -1);
    cr_expect_str_eq(err, "lora: expected yes or nothing, got 'rank 16'");

    char *dir = scratch_dir(), *out = NULL, *errs = NULL;
    char *table = scratch_file(dir, "t.csv",
        "id,half,category,metric,unit,value,model,device,device_count,precision,"
        "kv_cache_precision,parallelism,batch_or_concurrency,input_tokens,output_tokens,"
        "seq_len,global_batch,train_tokens,engine,engine_profile,weights,lora\n"
        "X01,check,memory,weights per GPU,GB,14.0,Llama-2-7B,A100-80GB,1,fp16,,TP=1,,,,,,,"
        "vLLM,vllm-9,fp16,\n"
        "X02,check,memory,weights per GPU,GB,14.0,Llama-2-7B,A100-80GB,1,half,,TP=1,,,,,,,"
        "vLLM,,half,\n");
    cr_expect_eq(cli_run(&out, &errs, "validate --table %s", table), 2);
    cr_expect_str_eq(out, "");
    cr_expect(strstr(errs, "t.csv:3: weights: expected a precision such as fp8 or bf16"),
              "%s", errs);
    free(table);
    table = scratch_file(dir, "u.csv",
        "id,half,category,metric,unit,value,model,device,device_count,precision,"
        "kv_cache_precision,parallelism,batch_or_concurrency,input_tokens,output_tokens,"
        "seq_len,global_batch,train_tokens,engine,engine_profile,weights,lora\n"
        "X01,check,memory,weights per GPU,GB,14.0,Llama-2-7B,A100-80GB,1,fp16,,TP=1,,,,,,,"
        "vLLM,vllm-9,fp16,\n");
    cr_expect_eq(cli_run(&out, &errs, "validate --table %s --csv", table), 0, "%s", errs);
    cr_expect(strstr(out, "no catalog engine 'vllm-9'"), "%s", out);
    free(table);
    free(out);
    free(errs);
    scratch_remove_dir(dir);
}

/* The load cell, the measure and the unit as data (models/validate_load.h): each token
 * read as its key says, an unknown or repeated one refused naming it. */
Test(validate_plan, the_load_measure_and_unit_cells_are_data)
{
    validate_load l;
    char err[400];
    cr_assert_eq(validate_load_parse("queued requests=3000 harness=trtllm-bench "
                                     "fp8_cache_when_needed", &l, err, sizeof err), 0, "%s", err);
    cr_expect(l.queued && l.trtllm_bench && l.fp8_cache_when_needed && !l.server);
    cr_expect_eq(l.requests, 3000);
    cr_assert_eq(validate_load_parse("memory_share=0.93 token_budget=8192", &l, err, sizeof err),
                 0, "%s", err);
    cr_expect_eq(l.memory_share, 0.93);
    cr_expect_eq(l.token_budget, 8192);
    cr_assert_eq(validate_load_parse("ramp_tokens=469B", &l, err, sizeof err), 0, "%s", err);
    cr_expect_eq(l.ramp_tokens, 469e9);
    cr_assert_eq(validate_load_parse("", &l, err, sizeof err), 0, "%s", err);
    cr_expect(l.batch == 0 && l.concurrency == 0 && !l.queued);
    cr_expect_eq(validate_load_parse("static batch 8", &l, err, sizeof err), -1);
    cr_expect(strstr(err, "unknown token 'static' (known: batch=, concurrency=, requests=, "),
              "%s", err);
    cr_expect_eq(validate_load_parse("batch=8 batch=16", &l, err, sizeof err), -1);
    cr_expect_str_eq(err, "repeated token 'batch' in 'batch=16'");
    cr_expect_eq(validate_load_parse("memory_share=1.5", &l, err, sizeof err), -1);
    cr_expect_str_eq(err, "bad value '1.5' for memory_share (expected a number above 0, at "
                          "most 1)");
    cr_expect_eq(validate_load_parse("server=yes", &l, err, sizeof err), -1);
    cr_expect_str_eq(err, "'server' is a word alone, got 'server=yes'");
    cr_expect_eq(validate_load_parse("harness=vllm-bench", &l, err, sizeof err), -1);
    cr_expect_eq(validate_load_parse("batch=8 concurrency=8", &l, err, sizeof err), -1);
    /* ML.ENERGY's load: a backlog, vLLM's max_num_seqs, measured while the engine ran full */
    cr_assert_eq(validate_load_parse("queued requests=1024 max_seqs=64 token_budget=8192 steady",
                                     &l, err, sizeof err), 0, "%s", err);
    cr_expect(l.queued && l.steady && l.max_seqs == 64 && l.requests == 1024);
    cr_expect_eq(validate_load_parse("max_seqs=64 steady", &l, err, sizeof err), -1);
    cr_expect_str_eq(err, "steady needs queued and max_seqs= (the engine full, more waiting)");
    cr_expect_eq(validate_load_parse("queued requests=32 max_seqs=64 steady", &l, err,
                                     sizeof err), -1);
    cr_expect_str_eq(err, "steady with requests=32 under max_seqs=64: the engine never runs "
                          "full");

    validate_measure m;
    cr_expect_eq(validate_measure_parse("kv_capacity", &m, err, sizeof err), 0);
    cr_expect_eq(m, MEASURE_KV_CAPACITY);
    cr_expect_eq(validate_measure_parse("", &m, err, sizeof err), 0);
    cr_expect_eq(m, MEASURE_NONE);
    cr_expect_eq(validate_measure_parse("time to first token", &m, err, sizeof err), -1);
    cr_expect(strstr(err, "unknown measure 'time to first token' (known: ttft, tpot, e2e, "),
              "%s", err);
    validate_unit u;
    double steps;
    cr_expect_eq(validate_unit_parse("s per 11 steps", &u, &steps, err, sizeof err), 0);
    cr_expect(u == UNIT_S_PER_STEPS && steps == 11);
    cr_expect_eq(validate_unit_parse("tokens/s/GPU", &u, &steps, err, sizeof err), 0);
    cr_expect_eq(u, UNIT_TOKENS_PER_S_PER_GPU);
    cr_expect_eq(validate_unit_parse("output tokens/s per GPU", &u, &steps, err, sizeof err), -1);
    cr_expect_eq(validate_unit_parse("s per 11 steps!", &u, &steps, err, sizeof err), -1);

    /* a table whose load cell does not read is refused by file and line, nothing printed */
    char *dir = scratch_dir(), *out = NULL, *errs = NULL;
    char *table = scratch_file(dir, "t.csv",
        "id,half,category,metric,unit,value,model,device,device_count,precision,"
        "kv_cache_precision,parallelism,batch_or_concurrency,input_tokens,output_tokens,"
        "seq_len,global_batch,train_tokens,engine,engine_profile,weights,lora,measure,load,"
        "value_unit\n"
        "X01,check,latency,time to first token,ms,10,Llama-2-7B,H100-SXM,1,fp16,,TP=1,batch 1,"
        "128,1,,,,vLLM 0.4,vllm-2024,fp16,,ttft,batch 1,ms\n");
    cr_expect_eq(cli_run(&out, &errs, "validate --table %s", table), 2);
    cr_expect_str_eq(out, "");
    cr_expect(strstr(errs, "t.csv:2: load: 'batch' takes a value (batch=...), got 'batch'"),
              "%s", errs);
    free(table);
    free(out);
    free(errs);
    scratch_remove_dir(dir);
}

Test(validate_plan, sequence_parallelism_is_stated_or_the_engines)
{
    cr_expect_eq(parsed("TP=4 SP=off").training.sequence_parallel, 0);
    cr_expect_eq(parsed("TP=4 SP=on").training.sequence_parallel, 1);
    cr_expect_eq(parsed("TP=4").training.sequence_parallel, -1, "not stated: the engine's way");
    cr_expect_str_eq(refused("TP=4 SP=yes"),
                     "bad value 'yes' for SP in 'SP=yes' (expected off or on)");
}

Test(validate_plan, data_parallel_overlap_is_stated_or_on)
{
    cr_expect_eq(parsed("TP=8 DP_OVERLAP=off").training.dp_overlap, 0);
    cr_expect_eq(parsed("TP=8 DP_OVERLAP=on").training.dp_overlap, 1);
    cr_expect_eq(parsed("TP=8").training.dp_overlap, -1, "not stated: under the passes");
    cr_expect_str_eq(refused("DP_OVERLAP=1"),
                     "bad value '1' for DP_OVERLAP in 'DP_OVERLAP=1' (expected off or on)");
}

Test(validate_plan, the_token_dispatcher_and_its_overlap_are_stated_or_the_engines)
{
    validate_plan p = parsed("EP=32 DISPATCHER=deepep EP_OVERLAP=on");
    cr_expect_eq(p.training.dispatcher, TRAINING_DISPATCH_DEEPEP);
    cr_expect_eq(p.training.ep_overlap, 1);
    cr_expect_eq(parsed("EP=8 DISPATCHER=alltoall").training.dispatcher,
                 TRAINING_DISPATCH_ALLTOALL);
    cr_expect_eq(parsed("EP=8 DISPATCHER=hybridep EP_OVERLAP=off").training.dispatcher,
                 TRAINING_DISPATCH_HYBRIDEP);
    cr_expect_eq(parsed("EP=8 EP_OVERLAP=off").training.ep_overlap, 0);
    p = parsed("EP=8");
    cr_expect_eq(p.training.dispatcher, TRAINING_DISPATCH_ENGINE, "not stated: the engine's");
    cr_expect_eq(p.training.ep_overlap, -1);
    cr_expect_str_eq(refused("DISPATCHER=nccl"),
                     "bad value 'nccl' for DISPATCHER in 'DISPATCHER=nccl' (expected alltoall, "
                     "deepep or hybridep)");
    cr_expect_eq(parsed("TP=2 TP_OVERLAP=off").training.tp_overlap, 0);
    cr_expect_eq(parsed("TP=2").training.tp_overlap, -1, "not stated: the engine's share");
    cr_expect_str_eq(refused("EP_OVERLAP=yes"),
                     "bad value 'yes' for EP_OVERLAP in 'EP_OVERLAP=yes' (expected off or on)");
}
