/* A validation row's load, measure and unit as data (see validate_load.h). */
#include "models/validate_load.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum load_key {
    LOAD_BATCH, LOAD_CONCURRENCY, LOAD_REQUESTS, LOAD_MEMORY_SHARE, LOAD_TOKEN_BUDGET,
    LOAD_HARNESS, LOAD_RAMP_TOKENS, LOAD_QUEUED, LOAD_SERVER, LOAD_FP8_CACHE, LOAD_MAX_SEQS,
    LOAD_STEADY, LOAD_KEYS
};

static const struct {
    const char *name;
    bool flag;          /* a word alone, no value */
    double max;         /* a value's largest; past it the table is refused, not cast (a
                         * row's own limits, which refuse the row, are the model's) */
} keys[LOAD_KEYS] = {
    [LOAD_BATCH] = { "batch", false, 1e15 }, [LOAD_CONCURRENCY] = { "concurrency", false, 1e15 },
    [LOAD_REQUESTS] = { "requests", false, 1e15 }, [LOAD_MEMORY_SHARE] = { "memory_share", false, 1 },
    [LOAD_TOKEN_BUDGET] = { "token_budget", false, 1e8 }, [LOAD_HARNESS] = { "harness", false, 0 },
    [LOAD_RAMP_TOKENS] = { "ramp_tokens", false, 1e16 }, [LOAD_QUEUED] = { "queued", true, 0 },
    [LOAD_SERVER] = { "server", true, 0 }, [LOAD_FP8_CACHE] = { "fp8_cache_when_needed", true, 0 },
    [LOAD_MAX_SEQS] = { "max_seqs", false, 1e15 }, [LOAD_STEADY] = { "steady", true, 0 },
};

static void known_keys(char *out, size_t size)
{
    size_t used = 0;
    for (int k = 0; k < LOAD_KEYS && used < size; k++)
        used += (size_t)snprintf(out + used, size - used, "%s%s%s", k ? ", " : "", keys[k].name,
                                 keys[k].flag ? "" : "=");
}

/* A positive number filling the value, with a K, M, B or T suffix where suffix. */
static int read_number(const char *v, size_t len, bool suffix, double *out)
{
    char text[64], *end;
    if (len == 0 || len >= sizeof text)
        return -1;
    memcpy(text, v, len);
    text[len] = '\0';
    double x = strtod(text, &end);
    if (suffix && *end && !end[1]) {
        const char *units = "KMBT";
        const char *u = strchr(units, *end);
        if (u) {
            x *= pow(1e3, (double)(u - units + 1));
            end++;
        }
    }
    if (end == text || *end || !isfinite(x) || x <= 0)
        return -1;
    *out = x;
    return 0;
}

int validate_load_parse(const char *text, validate_load *out, char *err, size_t err_size)
{
    *out = (validate_load){ 0 };
    unsigned seen = 0;
    for (const char *s = text ? text : ""; *s;) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        const char *token = s;
        while (*s && *s != ' ')
            s++;
        size_t len = (size_t)(s - token);
        const char *eq = memchr(token, '=', len);
        size_t klen = eq ? (size_t)(eq - token) : len;
        int k = 0;
        while (k < LOAD_KEYS && (strlen(keys[k].name) != klen || memcmp(keys[k].name, token, klen)))
            k++;
        if (k == LOAD_KEYS) {
            char known[256];
            known_keys(known, sizeof known);
            snprintf(err, err_size, "unknown token '%.*s' (known: %s)", (int)len, token, known);
            return -1;
        }
        if (keys[k].flag && eq) {
            snprintf(err, err_size, "'%s' is a word alone, got '%.*s'", keys[k].name, (int)len,
                     token);
            return -1;
        }
        if (!keys[k].flag && !eq) {
            snprintf(err, err_size, "'%s' takes a value (%s=...), got '%.*s'", keys[k].name,
                     keys[k].name, (int)len, token);
            return -1;
        }
        if (seen & 1u << k) {
            snprintf(err, err_size, "repeated token '%s' in '%.*s'", keys[k].name, (int)len, token);
            return -1;
        }
        seen |= 1u << k;
        const char *v = eq ? eq + 1 : "";
        size_t vlen = eq ? len - klen - 1 : 0;
        double x = 0;
        if (k == LOAD_HARNESS) {
            if (vlen != strlen("trtllm-bench") || memcmp(v, "trtllm-bench", vlen)) {
                snprintf(err, err_size, "bad value '%.*s' for harness (expected trtllm-bench)",
                         (int)vlen, v);
                return -1;
            }
            out->trtllm_bench = true;
            continue;
        }
        if (!keys[k].flag && (read_number(v, vlen, k == LOAD_RAMP_TOKENS, &x) != 0
                              || x > keys[k].max)) {
            snprintf(err, err_size, "bad value '%.*s' for %s (expected a number above 0, at "
                     "most %g)", (int)vlen, v, keys[k].name, keys[k].max);
            return -1;
        }
        switch ((enum load_key)k) {
        case LOAD_BATCH: out->batch = x; break;
        case LOAD_CONCURRENCY: out->concurrency = x; break;
        case LOAD_REQUESTS: out->requests = x; break;
        case LOAD_MEMORY_SHARE: out->memory_share = x; break;
        case LOAD_TOKEN_BUDGET: out->token_budget = x; break;
        case LOAD_RAMP_TOKENS: out->ramp_tokens = x; break;
        case LOAD_QUEUED: out->queued = true; break;
        case LOAD_SERVER: out->server = true; break;
        case LOAD_FP8_CACHE: out->fp8_cache_when_needed = true; break;
        case LOAD_MAX_SEQS: out->max_seqs = x; break;
        case LOAD_STEADY: out->steady = true; break;
        default: break;
        }
    }
    if (out->batch && out->concurrency) {
        snprintf(err, err_size, "batch and concurrency both stated: a row runs one load");
        return -1;
    }
    /* a steady state is that of a backlog: the engine holds max_seqs requests while more
     * wait (the queue) */
    if (out->steady && !(out->queued && out->max_seqs)) {
        snprintf(err, err_size, "steady needs queued and max_seqs= (the engine full, more "
                 "waiting)");
        return -1;
    }
    if (out->steady && out->requests && out->requests < out->max_seqs) {
        snprintf(err, err_size, "steady with requests=%g under max_seqs=%g: the engine never "
                 "runs full", out->requests, out->max_seqs);
        return -1;
    }
    return 0;
}

static const char *const measures[MEASURE_COUNT] = {
    [MEASURE_NONE] = "", [MEASURE_TTFT] = "ttft", [MEASURE_TPOT] = "tpot", [MEASURE_E2E] = "e2e",
    [MEASURE_TTFT_P99] = "ttft_p99", [MEASURE_TPOT_P99] = "tpot_p99",
    [MEASURE_E2E_P99] = "e2e_p99", [MEASURE_THROUGHPUT] = "throughput",
    [MEASURE_WEIGHTS] = "weights", [MEASURE_KV_MEMORY] = "kv_memory",
    [MEASURE_ACTIVATION_PEAK] = "activation_peak", [MEASURE_KV_CAPACITY] = "kv_capacity",
    [MEASURE_MAX_POW2_BATCH] = "max_pow2_batch", [MEASURE_TRAINING_MEMORY] = "training_memory",
    [MEASURE_GPU_POWER] = "gpu_power", [MEASURE_SYSTEM_POWER] = "system_power",
    [MEASURE_ENERGY_PER_TOKEN] = "energy_per_token",
};

static const char *const units[UNIT_COUNT] = {
    [UNIT_NONE] = "", [UNIT_MS] = "ms", [UNIT_S] = "s", [UNIT_GPU_HOURS] = "GPU-hours",
    [UNIT_S_PER_ITERATION] = "s/iteration", [UNIT_S_PER_STEPS] = "s per N steps",
    [UNIT_SAMPLES_PER_S] = "samples/s", [UNIT_SAMPLES_PER_S_PER_GPU] = "samples/s/GPU",
    [UNIT_TOKENS_PER_S] = "tokens/s", [UNIT_TOKENS_PER_S_PER_GPU] = "tokens/s/GPU",
    [UNIT_TFLOPS_PER_GPU] = "TFLOP/s/GPU", [UNIT_GB] = "GB", [UNIT_GIB] = "GiB",
    [UNIT_TOKENS] = "tokens", [UNIT_SEQUENCES] = "sequences", [UNIT_W] = "W",
    [UNIT_W_PER_GPU] = "W/GPU", [UNIT_J_PER_TOKEN] = "J/token",
};

/* The words of a list, for a message. */
static void list_of(const char *const *words, int n, char *out, size_t size)
{
    size_t used = 0;
    for (int i = 1; i < n && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", i > 1 ? ", " : "", words[i]);
}

int validate_measure_parse(const char *text, validate_measure *out, char *err, size_t err_size)
{
    for (int i = 0; i < MEASURE_COUNT; i++)
        if (!strcmp(text ? text : "", measures[i])) {
            *out = (validate_measure)i;
            return 0;
        }
    char known[256];
    list_of(measures, MEASURE_COUNT, known, sizeof known);
    snprintf(err, err_size, "unknown measure '%s' (known: %s, or nothing)", text, known);
    return -1;
}

int validate_unit_parse(const char *text, validate_unit *out, double *steps, char *err,
                        size_t err_size)
{
    const char *t = text ? text : "";
    *steps = 0;
    for (int i = 0; i < UNIT_COUNT; i++)
        if (i != UNIT_S_PER_STEPS && !strcmp(t, units[i])) {
            *out = (validate_unit)i;
            return 0;
        }
    double n;
    int used = 0;
    if (sscanf(t, "s per %lf steps%n", &n, &used) == 1 && used > 0 && !t[used] && isfinite(n)
        && n >= 1 && n <= 1e9) {
        *out = UNIT_S_PER_STEPS;
        *steps = n;
        return 0;
    }
    char known[256];
    list_of(units, UNIT_COUNT, known, sizeof known);
    snprintf(err, err_size, "unknown unit '%s' (known: %s, or nothing)", t, known);
    return -1;
}
