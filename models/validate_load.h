/* A validation row's load and measurement as data (tests/validation/README.md): the
 * `load` cell of tests/validation/published.csv, tokens separated by spaces, each at most
 * once, a flag or KEY=value:
 *   batch=N            a static batch of N sequences (one wave on every replica)
 *   concurrency=N      a benchmark client's N closed-loop users
 *   queued             every request queued at once (a best-throughput figure)
 *   requests=N         with queued: the requests the benchmark ran
 *   server             MLPerf's Server scenario: a latency-bounded Poisson load
 *   memory_share=X     the engine's share of memory, 0 < X <= 1 (vLLM's
 *                      gpu_memory_utilization, SGLang's mem-fraction-static, TensorRT-LLM's
 *                      kv_cache_free_gpu_mem_fraction)
 *   token_budget=N     the tokens of the engine's profiling step (max_num_batched_tokens)
 *   harness=NAME       the benchmark tool: trtllm-bench (its own batch limits)
 *   max_seqs=N         the engine's cap on the sequences it runs at once (vLLM's
 *                      max_num_seqs, SGLang's max_running_requests); 256 if not stated
 *   steady             with queued and max_seqs: measured only while the engine ran full
 *                      with more requests waiting (ML.ENERGY's steady-state window), which
 *                      is a closed loop of max_seqs users
 *   fp8_cache_when_needed  TensorRT-LLM's fp8 builds: an fp8 cache where the stated batch
 *                      does not fit a 16-bit one and the row states no cache precision
 *   ramp_tokens=N      training: the batch ramps from the global batch's first figure to
 *                      its second over the first N tokens (suffix K, M, B or T)
 * and the `measure` and `value_unit` cells, each one word of a fixed list (validate_measure,
 * validate_unit).  Parsing knows no model and no row. */
#ifndef FLEETSIM_MODELS_VALIDATE_LOAD_H
#define FLEETSIM_MODELS_VALIDATE_LOAD_H

#include <stdbool.h>
#include <stddef.h>

typedef struct validate_load {
    double batch, concurrency, requests;  /* 0: not stated */
    double memory_share, token_budget;    /* 0: the engine's */
    double ramp_tokens;                   /* 0: no ramp */
    double max_seqs;                      /* 0: the simulation's 256 */
    bool queued, server, fp8_cache_when_needed, trtllm_bench, steady;
} validate_load;

/* Parses text ("" states nothing) into *out.  0; -1 with a message in err (an unknown
 * token, a repeated one, a value out of range), which names no file. */
int validate_load_parse(const char *text, validate_load *out, char *err, size_t err_size);

/* What a row's value is. */
typedef enum validate_measure {
    MEASURE_NONE,               /* a training row's rate or time: its value_unit says which */
    MEASURE_TTFT, MEASURE_TPOT, MEASURE_E2E,
    MEASURE_TTFT_P99, MEASURE_TPOT_P99, MEASURE_E2E_P99,
    MEASURE_THROUGHPUT,
    MEASURE_WEIGHTS, MEASURE_KV_MEMORY, MEASURE_ACTIVATION_PEAK, MEASURE_KV_CAPACITY,
    MEASURE_MAX_POW2_BATCH, MEASURE_TRAINING_MEMORY,
    MEASURE_GPU_POWER, MEASURE_SYSTEM_POWER, MEASURE_ENERGY_PER_TOKEN,
    MEASURE_COUNT
} validate_measure;

/* The unit of a row's value. */
typedef enum validate_unit {
    UNIT_NONE, UNIT_MS, UNIT_S, UNIT_GPU_HOURS, UNIT_S_PER_ITERATION, UNIT_S_PER_STEPS,
    UNIT_SAMPLES_PER_S, UNIT_SAMPLES_PER_S_PER_GPU, UNIT_TOKENS_PER_S,
    UNIT_TOKENS_PER_S_PER_GPU, UNIT_TFLOPS_PER_GPU, UNIT_GB, UNIT_GIB, UNIT_TOKENS,
    UNIT_SEQUENCES, UNIT_W, UNIT_W_PER_GPU, UNIT_J_PER_TOKEN, UNIT_COUNT
} validate_unit;

/* The measure a cell names (its list's words: "ttft", "kv_capacity", ...; "" is
 * MEASURE_NONE): 0, or -1 with the words known in err. */
int validate_measure_parse(const char *text, validate_measure *out, char *err, size_t err_size);

/* The unit a cell names ("ms", "tokens/s/GPU", "s per N steps" with its N in *steps, ...;
 * "" is UNIT_NONE): 0, or -1 with the units known in err. */
int validate_unit_parse(const char *text, validate_unit *out, double *steps, char *err,
                        size_t err_size);

#endif
