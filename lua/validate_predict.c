/* The row-to-prediction mapping of `fleetsim validate`.  Every figure comes from the
 * model with the device's default profile; nothing here is fitted to the rows.  A row
 * whose model or device has no catalog entry, or whose configuration the model cannot
 * express, gets a reason instead of a number. */
#include "lua/validate_predict.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lua/validate_serving.h"
#include "lua/validate_trtllm.h"
#include "models/engine.h"
#include "models/memory.h"
#include "models/perf.h"
#include "models/perf_training.h"
#include "models/power.h"
#include "models/validate_load.h"
#include "models/validate_plan.h"
#include "output/csv_table.h"

/* Names as the sources write them -> catalog names.  Only exact architectural matches:
 * Llama 3.3 70B has Llama 3.1 70B's shapes (same layers, widths, heads, vocabulary);
 * a chat or instruct tune has its base model's.  The 80 GB H100s of the sources are SXM
 * parts in 8-GPU servers (DGX/HGX, the clouds' H100 nodes), so "H100-80GB" is taken for
 * the SXM part; A100 "SXM4" is the SXM part the catalog's A100 entries are. */
static const struct { const char *source, *catalog; } model_aliases[] = {
    { "Llama-2-7B", "llama-2-7b" }, { "Llama-2-13B", "llama-2-13b" },
    { "Llama-2-70B", "llama-2-70b" }, { "Llama-2-70B-chat", "llama-2-70b" },
    { "Llama-2-70B LoRA", "llama-2-70b" }, /* the frozen base (the lora column) */
    { "Llama-3-8B", "llama-3-8b" }, { "Meta-Llama-3-8B", "llama-3-8b" },
    { "Llama-3-70B", "llama-3-70b" }, { "Llama-3-70B-Instruct", "llama-3-70b" },
    { "Llama-3.1-8B", "llama-3.1-8b" }, { "Llama-3.1-8B-Instruct", "llama-3.1-8b" },
    { "Llama-3.1-70B-Instruct", "llama-3.1-70b" }, { "Llama-3.3-70B", "llama-3.1-70b" },
    { "Llama-3.3-70B-Instruct", "llama-3.1-70b" }, { "Llama-3.1-405B", "llama-3.1-405b" },
    { "Meta-Llama-3.1-405B-Instruct-FP8", "llama-3.1-405b-fp8" },
    { "Llama-3.1-405B-Instruct-FP8", "llama-3.1-405b-fp8" }, { "Qwen3-32B", "qwen3-32b" },
    { "GPT3-175B", "gpt-3-175b" }, { "GPT-3 175B", "gpt-3-175b" },
    { "Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b" },
    { "Qwen3-235B-A22B-FP8", "qwen3-235b-a22b" }, { "DeepSeek-V3", "deepseek-v3" },
    { "Qwen3-30B-A3B", "qwen3-30b-a3b" }, { "Qwen3-235B-A22B", "qwen3-235b-a22b" },
    { "BLOOM-176B", "bloom-176b" }, { "OPT-175B", "opt-175b" },
    { "GPT3-5B", "gpt-3-5b" }, { "GPT3-20B", "gpt-3-20b" },
    { "MPT-7B", "mpt-7b" }, { "MPT-13B", "mpt-13b" },
    { "MPT-30B", "mpt-30b" }, { "MPT-70B", "mpt-70b" },
    { "GPT-J-6B", "gpt-j-6b" },
};
static const struct { const char *source, *catalog; } device_aliases[] = {
    { "A100-80GB", "A100-80GB-SXM" }, { "A100-SXM-80GB", "A100-80GB-SXM" },
    { "A100-SXM4-80GB", "A100-80GB-SXM" }, { "A100-40GB", "A100-40GB-SXM" },
    { "H100-SXM-80GB", "H100-SXM" }, { "H100-SXM5-80GB", "H100-SXM" },
    { "H100-80GB", "H100-SXM" }, { "H200-SXM-141GB", "H200-SXM" },
    { "B200-SXM-180GB", "B200" },
};

/* The name part of a cell: up to " (" (the sources' notes), trimmed. */
static void cell_name(const char *cell, char *buf, size_t size)
{
    const char *end = strstr(cell, " (");
    size_t n = end ? (size_t)(end - cell) : strlen(cell);
    while (n && isspace((unsigned char)cell[n - 1]))
        n--;
    if (n >= size)
        n = size - 1;
    memcpy(buf, cell, n);
    buf[n] = 0;
}

static __attribute__((format(printf, 2, 3))) void refuse(validate_prediction *out,
                                                         const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vsnprintf(out->reason, sizeof out->reason, format, ap);
    va_end(ap);
    out->predicted = false;
}

/* A whole positive number at the start of a cell ("8", "384 (48 per model)"); 0 if none. */
static double leading_number(const char *cell)
{
    char *end;
    double x = strtod(cell, &end);
    return end != cell && x > 0 ? x : 0;
}

/* A LoRA row: the lora column says so. */
static bool lora_row(const validate_row *row)
{
    return row->lora && !strcmp(row->lora, "yes");
}

/* A row's load, measure and unit, read from their cells (validate_row_check refuses a
 * table where one does not read). */
typedef struct row_data {
    validate_load load;
    validate_measure measure;
    validate_unit unit;
    double steps;                /* UNIT_S_PER_STEPS's */
    double network_gbit;         /* a node's bandwidth between nodes; 0: the catalog's */
} row_data;

static int row_data_of(const validate_row *row, row_data *out, char *err, size_t err_size)
{
    char why[320];
    if (validate_load_parse(row->load, &out->load, why, sizeof why) != 0) {
        snprintf(err, err_size, "load: %s", why);
        return -1;
    }
    if (validate_measure_parse(row->measure, &out->measure, why, sizeof why) != 0) {
        snprintf(err, err_size, "measure: %s", why);
        return -1;
    }
    if (validate_unit_parse(row->value_unit, &out->unit, &out->steps, why, sizeof why) != 0) {
        snprintf(err, err_size, "value_unit: %s", why);
        return -1;
    }
    out->network_gbit = 0;
    if (row->network && *row->network) {
        char *end;
        out->network_gbit = strtod(row->network, &end);
        if (end == row->network || *end || !isfinite(out->network_gbit)
            || !(out->network_gbit > 0)) {
            snprintf(err, err_size, "network: expected a node's Gb/s between nodes, a positive "
                     "number (empty: the catalog device's NICs), got '%s'", row->network);
            return -1;
        }
    }
    return 0;
}

/* A batch-size ramp is planned in this many equal shares of its tokens: the step time
 * is smooth in the batch, and 16 plans keep the sum within a fraction of a percent of the
 * integral for a linear ramp. */
#define VALIDATE_RAMP_SEGMENTS 16u

static double one_or(unsigned x) { return x ? x : 1; }

/* "2.0T", "1231110144", "about 180B" -> tokens; 0 if none. */
static double parse_tokens(const char *cell)
{
    char *end;
    double x = strtod(cell, &end);
    if (end == cell || !isfinite(x) || x <= 0)
        return 0;
    return *end == 'T' ? x * 1e12 : *end == 'B' ? x * 1e9 : *end == 'M' ? x * 1e6 : x;
}

/* A global batch as the table writes it, in sequences of `seq` tokens: "2048", "4M tokens"
 * (4 x 2^20 tokens); *rest is set to what follows.  NAN without a finite number. */
static double batch_sequences(const char *cell, double seq, const char **rest)
{
    char *end;
    double x = strtod(cell, &end);
    *rest = end;
    if (end == cell || !isfinite(x))
        return NAN;
    while (*end == ' ')
        end++;
    if (!strncmp(end, "M tokens", 8)) {
        x = x * 1048576 / seq;
        *rest = end + 8;
    }
    return x;
}

static void predict_training(const model_spec *m, const device_spec *d, const perf_profile *p,
                             const engine_spec *e, precision prec, const validate_row *row,
                             const row_data *data, const validate_plan *plan,
                             validate_prediction *out)
{
    double gpus = leading_number(row->device_count);
    double seq = leading_number(row->seq_len);
    const char *rest;
    double global = batch_sequences(row->global_batch, seq, &rest);
    if (gpus < 1)
        return refuse(out, "GPU count not stated");
    if (seq < 1)
        return refuse(out, "sequence length not stated");
    if (!(global >= 1))
        return refuse(out, "global batch not stated");
    /* a batch-size ramp, "3072 -> 15360 sequences" with load ramp_tokens=469B: the batch
     * grows from `global` to `final` over the first `ramp` tokens */
    double final = global, ramp = data->load.ramp_tokens;
    while (*rest == ' ')
        rest++;
    if (!strncmp(rest, "->", 2) || ramp > 0) {
        final = !strncmp(rest, "->", 2) ? batch_sequences(rest + 2, seq, &rest) : NAN;
        if (!(final >= 1) || ramp <= 0)
            return refuse(out, "batch-size ramp without its final batch or its tokens (%s)",
                          row->global_batch);
    }
    /* a table is a user's file: sizes past these are refused, not cast */
    if (gpus > 1e7 || seq > 1e8 || global > 1e9 || final > 1e9)
        return refuse(out, "%g GPUs, %g-token sequences, a batch of %g: past what the training "
                      "model plans (1e7, 1e8, 1e9)", gpus, seq, fmax(global, final));
    /* The setup the row states (its parallelism cell, models/validate_plan.h:
     * configuration, not results), the planner's choice for the rest */
    if (validate_plan_has(plan, PLAN_REPLICAS))
        return refuse(out, "REPLICAS=%u is a serving row's key (a training row states DP)",
                      plan->replicas);
    training_constraints c = validate_plan_training(plan, m->layers);
    engine_training_state(e, &c); /* the framework's bytes a parameter */
    c.lora = lora_row(row); /* adapters on a frozen base */
    double devices = one_or(c.tp) * one_or(c.pp) * one_or(c.cp);
    if (devices > gpus)
        return refuse(out, "TP x PP x CP as stated spans %g devices, more than the row's %g GPUs",
                      devices, gpus);
    if (plan->accumulation && ramp > 0)
        return refuse(out, "GA=%u with a batch that ramps (%s): no one accumulation count",
                      plan->accumulation, row->global_batch);
    char why[160];
    if (!validate_plan_check(plan, gpus, final, &c, why, sizeof why))
        return refuse(out, "%s", why);
    precision trained = prec == PREC_FP8 ? PREC_FP8 : PREC_BF16;
    training_estimate t;
    if (!perf_training_plan_within(m, d, p, trained, (unsigned)gpus, (unsigned)seq,
                                   (unsigned)final, c, &t))
        return refuse(out, "no training plan: %s", t.refusal);
    validate_unit unit = data->unit;
    if (!strcmp(row->category, "memory")) {
        /* a training run's memory per device: what memory_training holds for the plan
         * (weights, gradients, optimizer states, activations in flight, logits), no
         * allocator cache, communication buffers or runtime */
        if (unit != UNIT_GB)
            return refuse(out, "unit '%s' is not one the training memory model gives",
                          row->unit);
        out->value = t.memory.total_bytes / 1e9;
    } else if (unit == UNIT_GPU_HOURS || unit == UNIT_S) {
        /* the time to train the stated tokens (no evaluation time): steps x step time,
         * the ramp's tokens at their batches; GPU-hours that times GPUs / 3600 */
        double tokens = parse_tokens(row->train_tokens);
        if (tokens <= 0)
            return refuse(out, "tokens trained not stated");
        if (ramp > tokens)
            return refuse(out, "a batch-size ramp over more tokens than were trained");
        double seconds = (tokens - ramp) / t.tokens_per_step * t.step_s;
        /* a ramp linear in tokens, in VALIDATE_RAMP_SEGMENTS equal shares of its tokens,
         * each planned at its middle batch, rounded to a whole number of sequences for
         * each data-parallel rank where the stated setup fixes their count (two for
         * DualPipe's even micro-batches): the batches a real ramp steps through.  A share
         * below the smallest batch the stated schedule runs (DualPipe: 2 pp micro-batches
         * a rank) is planned at that batch */
        double granule = 1, smallest = 1;
        if (c.tp && c.pp && fmod(gpus, (double)c.tp * c.pp * one_or(c.cp)) == 0) {
            double dp = gpus / ((double)c.tp * c.pp * one_or(c.cp));
            granule = dp * (c.dualpipe ? 2 : 1);
            smallest = c.dualpipe ? dp * 2 * c.pp * one_or(c.micro_batch) : granule;
        }
        for (unsigned i = 0; ramp > 0 && i < VALIDATE_RAMP_SEGMENTS; i++) {
            double batch = global + (final - global) * (i + 0.5) / VALIDATE_RAMP_SEGMENTS;
            batch = fmax(smallest, granule * round(batch / granule));
            training_estimate r;
            if (!perf_training_plan_within(m, d, p, trained, (unsigned)gpus, (unsigned)seq,
                                           (unsigned)lround(batch), c, &r))
                return refuse(out, "no training plan at a batch of %.0f: %s", batch,
                              r.refusal);
            seconds += ramp / VALIDATE_RAMP_SEGMENTS / r.tokens_per_step * r.step_s;
        }
        out->value = unit == UNIT_S ? seconds : seconds * gpus / 3600;
    } else if (ramp > 0) {
        return refuse(out, "a rate of a run whose batch ramps (%s)", row->global_batch);
    } else if (unit == UNIT_S_PER_ITERATION) {
        out->value = t.step_s;
    } else if (unit == UNIT_S_PER_STEPS) {
        out->value = t.step_s * data->steps;
    } else if (unit == UNIT_SAMPLES_PER_S || unit == UNIT_SAMPLES_PER_S_PER_GPU) {
        /* sequences of seq_len tokens a second, all GPUs together (or per GPU) */
        out->value = t.tokens_per_step / t.step_s / seq
                     / (unit == UNIT_SAMPLES_PER_S_PER_GPU ? gpus : 1);
    } else if (unit == UNIT_TOKENS_PER_S_PER_GPU) {
        out->value = t.tokens_per_step / t.step_s / gpus;
    } else if (unit == UNIT_TFLOPS_PER_GPU) {
        /* model FLOPs per GPU: MFU x the peak the MFU is of */
        out->value = t.mfu * device_peak_flops(d, prec == PREC_FP8 ? PREC_FP8 : PREC_BF16, NULL) / 1e12;
    } else {
        return refuse(out, "unit '%s' is not one the training model gives", row->unit);
    }
    out->predicted = true;
}

/* Tokens per second of one replica that prefills `batch` prompts of `in` tokens, then
 * runs out - 1 decode steps (the prefill gives the first token) at the mean context
 * in + out / 2: a static batch, or a closed loop of `batch` users taken as one. */
static double wave_tokens_per_s(const perf_setup *s, unsigned batch, double in, double out)
{
    double t = perf_prefill(s, batch, in).total_s
               + (out - 1) * perf_decode_step(s, batch, in + out / 2).total_s;
    return batch * out / t;
}

/* The engine's memory for the row: its reservations, with the share the row states
 * (vLLM's gpu_memory_utilization, SGLang's mem-fraction-static, TensorRT-LLM's
 * kv_cache_free_gpu_mem_fraction) and the profiling step's tokens it states
 * (max_num_batched_tokens) in place of the engine's defaults. */
static memory_reserve row_reserve(const engine_spec *e, const model_spec *m,
                                  const validate_load *load)
{
    memory_reserve r = engine_memory_reserve(e, m);
    if (load->memory_share > 0) /* at most 1: validate_load_parse */
        r.share = load->memory_share;
    double budget = load->token_budget;
    if (budget > 0 && e->token_budget > 0) {
        engine_spec stated = *e;
        stated.token_budget = budget;
        memory_reserve again = engine_memory_reserve(&stated, m);
        r.activation_split_bytes = again.activation_split_bytes;
        r.activation_whole_bytes = again.activation_whole_bytes;
    }
    return r;
}

/* Mean draw of a device over a static batch's wave: the prefill of `batch` prompts, then
 * out - 1 decode steps at the mean context (models/power.h, no cap). */
static double wave_power_w(const power_model *pm, const perf_setup *s, unsigned batch,
                           double in, double out)
{
    perf_time prefill = perf_prefill(s, batch, in), decode = perf_decode_step(s, batch, in + out / 2);
    double t = prefill.total_s + (out - 1) * decode.total_s;
    return (power_step_w(pm, &prefill) * prefill.total_s
            + (out - 1) * power_step_w(pm, &decode) * decode.total_s) / t;
}

/* A power row: each GPU's mean draw (its loaded-idle power and its work by phase) under
 * the row's load, the same runs as its throughput would take; a system's adds its
 * servers' host power (models/power.h's default share a GPU, fs.power's host_w); energy
 * a token is the GPUs' draw over the output rate. */
/* The users of a load the closed-loop simulation runs (0: none): a client's concurrency,
 * or a backlog's steady state, the engine's max_seqs running while more wait. */
static double closed_loop_users(const validate_load *load)
{
    return load->concurrency >= 1 ? load->concurrency : load->steady ? load->max_seqs : 0;
}

/* The closed loop of the load's users (closed_loop_users) on the replicas, with the
 * engine's batch limits the load states: true, or false with the refusal in out. */
static bool run_closed_loop(const perf_setup *s, double kv_capacity_tokens, double replicas,
                            const validate_load *load, double in, double outlen,
                            closed_loop_result *loop, validate_prediction *out)
{
    double users = closed_loop_users(load);
    char why[256];
    if (users > VALIDATE_CLOSED_LOOP_MAX_USERS) {
        refuse(out, "%g users (concurrency or max_seqs) are more than a row's simulation runs "
               "(at most %u)", users, VALIDATE_CLOSED_LOOP_MAX_USERS);
        return false;
    }
    if (replicas > VALIDATE_CLOSED_LOOP_MAX_USERS) {
        refuse(out, "%g replicas: more than a row's simulation runs (at most %u)", replicas,
               VALIDATE_CLOSED_LOOP_MAX_USERS);
        return false;
    }
    if (in > 1e7 || outlen > 1e7) {
        refuse(out, "requests of %g + %g tokens: more than 10,000,000 a side", in, outlen);
        return false;
    }
    /* max_seqs at most 1e15 and token_budget at most 1e8 (validate_load_parse); a cap past
     * the users is theirs */
    unsigned max_batch = load->max_seqs ? (unsigned)fmin(load->max_seqs, 1e9) : 0;
    if (!validate_closed_loop(s, kv_capacity_tokens, (unsigned)replicas, (unsigned)users,
                              (unsigned)in, (unsigned)outlen, max_batch,
                              (unsigned)load->token_budget, loop, why, sizeof why)) {
        refuse(out, "%s", why);
        return false;
    }
    return true;
}

static void predict_power(const perf_setup *s, const inference_memory *mem, double gpus,
                          double replicas, double batch, double in, double outlen,
                          const validate_load *load, validate_measure measure,
                          validate_unit unit, validate_prediction *out)
{
    power_model pm;
    char why[320];
    if (power_model_of(s->device, NULL, &pm, why, sizeof why) != 0)
        return refuse(out, "%s", why);
    double watts, tokens_per_s;
    if (closed_loop_users(load) >= 1) {
        closed_loop_result loop;
        if (!run_closed_loop(s, mem->kv_capacity_tokens, replicas, load, in, outlen, &loop, out))
            return;
        if (!(loop.window_s > 0))
            return refuse(out, "the closed-loop simulation measured no time");
        watts = pm.loaded_w + power_work_joules(&pm, &loop.work) / (replicas * loop.window_s);
        tokens_per_s = loop.tokens_per_s;
    } else if (load->queued && !load->trtllm_bench) {
        /* a best-throughput figure (MLPerf Offline): the plan perf_best_throughput finds,
         * its replicas' waves */
        throughput_plan plan = perf_best_throughput(s, (unsigned)gpus, in, outlen);
        if (!(plan.tokens_per_s > 0))
            return refuse(out, "no replica of the model fits %g GPUs", gpus);
        perf_setup at = *s;
        at.tp = plan.tp;
        watts = wave_power_w(&pm, &at, plan.batch, in, outlen);
        tokens_per_s = plan.tokens_per_s;
    } else if (batch >= 1 && !load->queued) {
        if (batch * (in + outlen) > mem->kv_capacity_tokens)
            return refuse(out, "batch %g x %g tokens exceeds the model's cache (%.0f tokens)",
                          batch, in + outlen, mem->kv_capacity_tokens);
        watts = wave_power_w(&pm, s, (unsigned)batch, in, outlen);
        tokens_per_s = wave_tokens_per_s(s, (unsigned)batch, in, outlen) * replicas;
    } else {
        return refuse(out, "a power row needs a batch, a concurrency or an offline queue");
    }
    double host_w = s->device->is_cpu ? 0 : POWER_DEFAULT_HOST_W;
    if (measure == MEASURE_GPU_POWER && unit == UNIT_W_PER_GPU)
        out->value = watts;
    else if (measure == MEASURE_SYSTEM_POWER && unit == UNIT_W)
        out->value = gpus * (watts + host_w);
    else if (measure == MEASURE_ENERGY_PER_TOKEN && unit == UNIT_J_PER_TOKEN)
        out->value = gpus * watts / tokens_per_s;
    else
        return refuse(out, "the power model has no figure for this measure in this unit");
    out->predicted = true;
}

static void predict_inference(const model_spec *m, const device_spec *d, const perf_profile *p,
                              const engine_spec *e, precision prec, const validate_row *row,
                              const row_data *data, const validate_plan *plan,
                              validate_prediction *out)
{
    const validate_load *load = &data->load;
    validate_measure measure = data->measure;
    validate_unit unit = data->unit;
    /* a serving row states TP (else one replica on every GPU) and REPLICAS (else as many
     * as the GPUs hold) */
    for (validate_plan_key k = 0; k < PLAN_KEYS; k++)
        if (k != PLAN_TP && k != PLAN_REPLICAS && validate_plan_has(plan, k)
            && !(k == PLAN_PP && plan->training.pp == 1)) /* PP=1: no pipeline */
            return refuse(out, "%s= is not a serving row's key (the serving model runs TP and "
                          "REPLICAS)", validate_plan_key_name(k));
    double gpus = leading_number(row->device_count);
    double tp = plan->training.tp, replicas_stated = plan->replicas;
    double in = leading_number(row->input_tokens), outlen = leading_number(row->output_tokens);
    precision kv = precision_cache(prec);
    if (*row->kv_precision) {
        char name[32];
        cell_name(row->kv_precision, name, sizeof name); /* "bf16 (auto)": "bf16" */
        if (precision_parse_cache(name, &kv) != 0)
            return refuse(out, "cache precision '%s' not known", row->kv_precision);
    }
    if (gpus < 1)
        gpus = 1;
    if (replicas_stated && fmod(gpus, replicas_stated))
        return refuse(out, "%g GPUs are not REPLICAS=%g whole replicas", gpus, replicas_stated);
    if (tp < 1)
        tp = gpus / (replicas_stated ? replicas_stated : 1);
    if (replicas_stated && tp * replicas_stated != gpus)
        return refuse(out, "REPLICAS=%g of TP=%g are %g GPUs, not the row's %g", replicas_stated,
                      tp, tp * replicas_stated, gpus);
    double batch = load->batch ? load->batch : load->concurrency;
    /* a table is a user's file: sizes past these are refused, not cast */
    if (gpus > 1e7 || batch > 1e7 || in > 1e9 || outlen > 1e9)
        return refuse(out, "%g GPUs, a batch of %g, requests of %g + %g tokens: past what the "
                      "model runs (1e7, 1e7, 1e9)", gpus, batch, in, outlen);
    if (fmod(gpus, tp))
        return refuse(out, "%g GPUs are not whole replicas of TP=%g", gpus, tp);
    if (tp > 65536)
        return refuse(out, "TP=%g: more devices than one replica of the model spans", tp);
    memory_reserve reserve = row_reserve(e, m, load);
    perf_setup s = { .model = m, .device = d, .profile = p, .weights = prec, .kv = kv,
                      .tp = (unsigned)tp, .reserve = &reserve };
    inference_memory mem = memory_inference_reserved(m, d, prec, kv, (unsigned)tp, &reserve);
    double replicas = gpus / tp;
    const char *metric = row->metric;
    bool per_gpu = unit == UNIT_TOKENS_PER_S_PER_GPU;

    if (!strcmp(row->category, "memory")) {
        double unit_bytes = unit == UNIT_GIB ? 1073741824.0 /* vLLM logs GiB as "GB" (the
                                                              * table's notes) */
                                             : 1e9;
        /* the engine's memory (row_reserve: its reservations, the share the row states) */
        if (measure == MEASURE_WEIGHTS) {
            /* memory_inference's weights per device */
            out->value = mem.weights_bytes / unit_bytes;
        } else if (measure == MEASURE_KV_MEMORY) {
            /* what the engine leaves for the cache on a device: its usable memory less
             * the weights */
            out->value = (mem.usable_bytes - mem.weights_bytes) / unit_bytes;
        } else if (measure == MEASURE_ACTIVATION_PEAK) {
            /* the engine's activation peak of its profiling step on a device */
            out->value = memory_activation_bytes(&reserve, (unsigned)tp) / unit_bytes;
        } else if (measure == MEASURE_KV_CAPACITY && unit == UNIT_TOKENS) {
            out->value = mem.kv_capacity_tokens;
        } else if (measure == MEASURE_MAX_POW2_BATCH && in > 0 && outlen > 0) {
            /* the largest power of two whose in + out tokens per sequence fit the cache */
            double b = floor(mem.kv_capacity_tokens / (in + outlen));
            if (b < 1)
                return refuse(out, "not one sequence fits");
            out->value = pow(2, floor(log2(b)));
        } else {
            return refuse(out, "the memory model has no figure for '%s'", metric);
        }
        out->predicted = true;
        return;
    }
    if (!mem.fits)
        return refuse(out, "the weights do not fit on TP=%g", tp);
    if (in < 1 || outlen < 1)
        return refuse(out, "request lengths not fixed ('%s', '%s')", row->input_tokens,
                      row->output_tokens);
    if (load->server)
        return refuse(out, "a latency-bounded Poisson load needs the serving simulation");
    if (measure == MEASURE_TTFT_P99 || measure == MEASURE_TPOT_P99 || measure == MEASURE_E2E_P99)
        return refuse(out, "a percentile under load needs the serving simulation");

    if (!strcmp(row->category, "power"))
        return predict_power(&s, &mem, gpus, replicas, batch, in, outlen, load, measure, unit,
                             out);
    if (closed_loop_users(load) >= 1) {
        /* a closed loop of users (a benchmark client's concurrency, or the engine's
         * max_seqs under a backlog): the serving simulation of them on the replicas
         * (lua/validate_serving.h) */
        closed_loop_result loop;
        if (!run_closed_loop(&s, mem.kv_capacity_tokens, replicas, load, in, outlen, &loop,
                             out))
            return;
        if (!strcmp(row->category, "throughput")) {
            out->value = per_gpu ? loop.tokens_per_s / gpus : loop.tokens_per_s;
        } else if (measure == MEASURE_TTFT && unit == UNIT_MS) {
            out->value = loop.ttft_s * 1e3;
        } else if (measure == MEASURE_TPOT && unit == UNIT_MS) {
            out->value = loop.tpot_s * 1e3;
        } else {
            return refuse(out, "the closed-loop simulation has no figure for '%s' in %s",
                          metric, row->unit);
        }
        if (!isfinite(out->value)) /* a TPOT of one-token answers */
            return refuse(out, "the closed-loop simulation gives no figure for '%s'", metric);
        out->predicted = true;
        return;
    }
    if (!strcmp(row->category, "throughput")) {
        double rate;
        double requests = load->requests;
        if (load->queued && load->trtllm_bench && requests >= 1) {
            /* trtllm-bench throughput: every request queued at once on an in-flight
             * batching engine, at the batch limits the tool sets by its own rule, with
             * TensorRT-LLM's cache (kv_fraction of the memory the weights leave: its
             * kv_cache_free_gpu_mem_fraction, 0.95 as the rows say); the total output over
             * the time to the last answer, from the serving simulation */
            const double kv_fraction = 0.95;
            trtllm_limits lim = trtllm_bench_limits(m, d, prec, kv, (unsigned)tp, 1, in, outlen,
                                                    kv_fraction);
            memory_reserve bench = reserve;
            bench.share = kv_fraction;
            double kv_tokens = memory_inference_reserved(m, d, prec, kv, (unsigned)tp, &bench)
                                   .kv_capacity_tokens;
            closed_loop_result run;
            char why[256];
            if (requests > VALIDATE_CLOSED_LOOP_MAX_USERS || in > 1e7 || outlen > 1e7)
                return refuse(out, "%g requests of %g + %g tokens: more than a row's simulation "
                              "runs", requests, in, outlen);
            if (!validate_all_at_once(&s, kv_tokens, (unsigned)replicas, (unsigned)requests,
                                      (unsigned)in, (unsigned)outlen, lim.max_batch,
                                      lim.max_tokens, &run, why, sizeof why))
                return refuse(out, "%s", why);
            rate = run.tokens_per_s;
        } else if (load->queued) {
            /* a best-throughput figure: perf_best_throughput on the stated GPUs (over
             * tensor parallelism and batch size within memory) */
            rate = perf_best_throughput(&s, (unsigned)gpus, in, outlen).tokens_per_s;
        } else if (batch >= 1) {
            /* the stated batch (or concurrency) as one wave, on every replica; a
             * TensorRT-LLM fp8 row that does not state its cache's precision ran with the
             * 16-bit cache unless the stated batch could not have fitted one, and then
             * with the fp8 cache of that engine's fp8 builds ('--fp8_kv_cache' in its
             * benchmark commands): configuration read from configuration, never from the
             * figure */
            if (batch * (in + outlen) > mem.kv_capacity_tokens && !*row->kv_precision
                && prec == PREC_FP8 && load->fp8_cache_when_needed) {
                s.kv = PREC_FP8;
                mem = memory_inference_reserved(m, d, prec, s.kv, (unsigned)tp, &reserve);
            }
            if (batch * (in + outlen) > mem.kv_capacity_tokens)
                return refuse(out, "batch %g x %g tokens exceeds the model's cache (%.0f tokens)",
                              batch, in + outlen, mem.kv_capacity_tokens);
            rate = wave_tokens_per_s(&s, (unsigned)batch, in, outlen) * replicas;
        } else {
            return refuse(out, "batch or concurrency not stated");
        }
        out->value = per_gpu ? rate / gpus : rate;
        out->predicted = true;
        return;
    }
    if (!strcmp(row->category, "latency")) {
        if (batch < 1)
            return refuse(out, "batch or concurrency not stated");
        if (measure == MEASURE_TTFT) {
            /* TTFT: the prefill of `batch` prompts of the stated input in one iteration */
            out->value = perf_prefill(&s, (unsigned)batch, in).total_s * 1e3;
        } else if (measure == MEASURE_TPOT) {
            /* TPOT: one decode step of `batch` sequences at the mean context in + out / 2 */
            out->value = perf_decode_step(&s, (unsigned)batch, in + outlen / 2).total_s * 1e3;
        } else if (measure == MEASURE_E2E) {
            /* a batch's latency: the prefill and out - 1 decode steps at the mean context */
            out->value = batch * outlen / wave_tokens_per_s(&s, (unsigned)batch, in, outlen) * 1e3;
        } else {
            return refuse(out, "the latency model has no figure for '%s'", metric);
        }
        if (unit != UNIT_MS)
            return refuse(out, "unit '%s' not ms", row->unit);
        out->predicted = true;
        return;
    }
    refuse(out, "category '%s' not known", row->category);
}

static bool training_row(const validate_row *row)
{
    return !strcmp(row->category, "training")
           || (row->measure && !strcmp(row->measure, "training_memory"));
}

const char *validate_engine_of(const validate_row *row)
{
    if (row->engine_profile && *row->engine_profile)
        return row->engine_profile;
    return training_row(row) ? CATALOG_DEFAULT_TRAINING_ENGINE : CATALOG_DEFAULT_SERVING_ENGINE;
}


int validate_row_check(const validate_row *row, char *err, size_t err_size)
{
    validate_plan plan;
    char why[256];
    precision prec;
    if (validate_plan_parse(row->parallelism, &plan, why, sizeof why) != 0) {
        snprintf(err, err_size, "parallelism: %s", why);
        return -1;
    }
    if (row->weights && *row->weights && precision_parse(row->weights, &prec) != 0) {
        snprintf(err, err_size, "weights: expected a precision such as fp8 or bf16 (empty: "
                 "not stated), got '%s'", row->weights);
        return -1;
    }
    if (row->lora && *row->lora && strcmp(row->lora, "yes")) {
        snprintf(err, err_size, "lora: expected yes or nothing, got '%s'", row->lora);
        return -1;
    }
    row_data data;
    return row_data_of(row, &data, err, err_size);
}

void validate_predict(const catalog *cat, const validate_row *row, validate_prediction *out)
{
    memset(out, 0, sizeof *out);
    /* the parallelism cell first: one that does not parse is the table's mistake, which
     * `fleetsim validate` refuses (validate_row_check) before it predicts any row */
    validate_plan plan;
    char why[sizeof out->reason];
    if (validate_plan_parse(row->parallelism, &plan, why, sizeof why) != 0)
        return refuse(out, "parallelism: %s", why);
    row_data data;
    if (row_data_of(row, &data, why, sizeof why) != 0)
        return refuse(out, "%s", why);
    char model_name[128], device_name[128];
    cell_name(row->model, model_name, sizeof model_name);
    cell_name(row->device, device_name, sizeof device_name);
    const model_spec *m = catalog_model(cat, model_name);
    const device_spec *d = catalog_device(cat, device_name);
    for (size_t i = 0; !m && i < sizeof model_aliases / sizeof model_aliases[0]; i++)
        if (!strcasecmp(model_aliases[i].source, model_name))
            m = catalog_model(cat, model_aliases[i].catalog);
    for (size_t i = 0; !d && i < sizeof device_aliases / sizeof device_aliases[0]; i++)
        if (!strcasecmp(device_aliases[i].source, device_name))
            d = catalog_device(cat, device_aliases[i].catalog);
    if (lora_row(row) && strcmp(row->category, "training"))
        return refuse(out, "LoRA adapters are modelled in training only");
    if (!m)
        return refuse(out, "no catalog model for '%s'", model_name);
    if (!d)
        return refuse(out, "no catalog device for '%s'", device_name);
    precision prec;
    if (!row->weights || !*row->weights)
        return refuse(out, "precision not stated");
    if (precision_parse(row->weights, &prec) != 0) /* validate_row_check refuses it first */
        return refuse(out, "precision '%s' not known", row->weights);
    /* the row's engine: its host work and its overlap, its memory, its framework's
     * state; a table may name one the catalog lacks (a user's, edited away): refused */
    out->engine = validate_engine_of(row);
    const engine_spec *e = catalog_engine(cat, out->engine);
    if (!e)
        return refuse(out, "no catalog engine '%s'", out->engine);
    perf_profile base = perf_default_profile(d);
    if (data.network_gbit > 0) { /* the measured cluster's NICs: a server's share a device
                                  * (its GPUs, not a rack's NVLink domain) */
        const perf_family *f = base.family ? base.family : perf_family_of(d);
        base.network_bytes_per_s = data.network_gbit * 1e9 / 8 / f->cluster.devices_per_node;
    }
    if (training_row(row)) {
        perf_profile trained = engine_apply_profile(e, &base, d); /* its kernel families */
        predict_training(m, d, &trained, e, prec, row, &data, &plan, out);
        return;
    }
    perf_profile p = engine_apply_profile(e, &base, d);
    predict_inference(m, d, &p, e, prec, row, &data, &plan, out);
}

validate_row validate_row_of(const csv_table *t, size_t i)
{
#define CELL(name) csv_table_cell(t, i, csv_table_column(t, name))
    return (validate_row){
        CELL("id"), CELL("category"), CELL("metric"), CELL("unit"), CELL("model"),
        CELL("device"), CELL("device_count"), CELL("precision"), CELL("kv_cache_precision"),
        CELL("parallelism"), CELL("batch_or_concurrency"), CELL("input_tokens"),
        CELL("output_tokens"), CELL("seq_len"), CELL("global_batch"), CELL("train_tokens"),
        CELL("engine"), CELL("engine_profile"), CELL("weights"), CELL("lora"),
        CELL("measure"), CELL("load"), CELL("value_unit"), CELL("network"),
    };
#undef CELL
}
