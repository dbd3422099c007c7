#include "models/estimate.h"
#include "models/power.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GB 1e9

/* The products' precision of training at the request's (16-bit: bf16): the request's
 * where the device trains in it, else the first of bf16, fp16 (a V100's mixed precision)
 * and fp32 it does, with the reason in r (perf_training_precision_check). */
static precision training_precision(precision p, const device_spec *d, estimate_result *r)
{
    static const precision fallbacks[] = { PREC_BF16, PREC_FP16, PREC_FP32 };
    precision want = p == PREC_FP16 ? PREC_BF16 : p;
    r->train_precision_why[0] = '\0';
    if (perf_training_precision_check(d, want, r->train_precision_why,
                                      sizeof r->train_precision_why) == 0)
        return want;
    char scratch[200];
    for (size_t i = 0; i < sizeof fallbacks / sizeof fallbacks[0]; i++)
        if (perf_training_precision_check(d, fallbacks[i], scratch, sizeof scratch) == 0)
            return fallbacks[i];
    return PREC_FP32;
}

static void set_layout(perf_setup *s, estimate_layout layout)
{
    s->expert_parallel = layout == ESTIMATE_LAYOUT_EP || layout == ESTIMATE_LAYOUT_DP;
    s->attention_dp = layout == ESTIMATE_LAYOUT_DP;
}

/* A mixture on several devices: each layout's best offline throughput, and the layout of
 * the request or else the fastest; a dense model, or one device, is tensor parallel. */
static void choose_layout(const estimate_request *req, perf_setup *s, estimate_result *r)
{
    r->layout = ESTIMATE_LAYOUT_TP;
    if (!model_moe_layers(s->model) || req->gpus <= 1 || s->device->is_cpu) {
        set_layout(s, r->layout);
        return;
    }
    r->layouts_compared = true;
    double best = -1;
    for (int l = ESTIMATE_LAYOUT_TP; l <= ESTIMATE_LAYOUT_DP; l++) {
        perf_setup at = *s;
        set_layout(&at, (estimate_layout)l);
        r->layout_tokens_per_s[l] = perf_best_throughput(&at, req->gpus, req->prompt,
                                                         req->output).tokens_per_s;
        if (req->layout == ESTIMATE_LAYOUT_BEST && r->layout_tokens_per_s[l] > best) {
            best = r->layout_tokens_per_s[l];
            r->layout = (estimate_layout)l;
        }
    }
    if (req->layout != ESTIMATE_LAYOUT_BEST)
        r->layout = req->layout;
    set_layout(s, r->layout);
}

/* The run's expected time with failures, restarts and checkpoint stalls: the request's
 * figures, or the defaults (models/goodput.c).  A checkpoint holds every parameter's
 * weights and optimizer state as the training engine keeps them (adapters only under
 * LoRA, not counted, as perf_training.h does not count them: the write is then free).
 * 0, or -1 with a message for a figure out of range. */
static int estimate_goodput(const estimate_request *req, estimate_result *r, char *err,
                            size_t err_size)
{
    const double given[] = { req->mtbf_given ? req->mtbf_s : 0,
                             req->every_given ? req->checkpoint_every_s : 0,
                             req->write_given ? req->checkpoint_write_s : 0,
                             req->restart_given ? req->restart_s : 0, req->straggler };
    static const char *const names[] = { "mtbf", "checkpoint-every", "checkpoint-write",
                                         "restart", "straggler" };
    for (int i = 0; i < 5; i++)
        if (!(given[i] >= 0) || (i > 0 && !isfinite(given[i]))) {
            snprintf(err, err_size, "--%s must be a finite number >= 0, got %g", names[i],
                     given[i]);
            return -1;
        }
    const goodput_defaults *g = &GOODPUT_DEFAULTS;
    training_constraints state = TRAINING_FREE;
    engine_training_state(req->train_engine, &state);
    bool stated = state.weight_bytes || state.gradient_bytes || state.optimizer_bytes;
    double per_param = stated ? state.weight_bytes + state.optimizer_bytes
                              : g->weight_bytes + g->optimizer_bytes;
    r->checkpoint_bytes = req->lora ? 0 : r->params * per_param;
    goodput_inputs *in = &r->goodput_in;
    in->work_s = r->train_s;
    in->gpus = req->gpus;
    in->mtbf_s = !req->mtbf_given ? g->gpu_mtbf_s : isfinite(req->mtbf_s) ? req->mtbf_s : 0;
    in->write_s = req->write_given
                      ? req->checkpoint_write_s
                      : r->checkpoint_bytes / (req->gpus * g->write_bytes_per_s_per_gpu);
    in->restart_s = req->restart_given ? req->restart_s : g->restart_s;
    in->straggler = req->straggler;
    if (req->every_given) {
        in->every_s = req->checkpoint_every_s;
    } else { /* checkpoints fall between steps: Young's interval in whole steps */
        double job_mtbf = in->mtbf_s > 0 ? in->mtbf_s / in->gpus : 0;
        double steps = fmax(1, round(goodput_young_daly_s(in->write_s, job_mtbf)
                                     / r->train.step_s));
        in->every_s = in->mtbf_s > 0 ? steps * r->train.step_s : 0; /* no failures: never */
        if (in->every_s >= in->work_s) /* an interval past the run: it never writes one */
            in->every_s = 0;
    }
    r->goodput = goodput_expect(in);
    return 0;
}

/* The serving half: replicas of tp devices, their memory, first token, decode step,
 * best throughput and speculation.  0 (with r->refused's serving bit and its message when
 * no replica fits), or -1 with a message in err for a --tp that does not divide --gpus. */
static int estimate_serving(const model_spec *m, const device_spec *d,
                            const estimate_request *req, const perf_profile *prof,
                            const memory_reserve *reserve, estimate_result *r, char *err,
                            size_t err_size)
{
    precision prec = req->prec;
    double context = req->prompt + req->output;
    unsigned max_tp = d->is_cpu ? 1 : req->gpus;
    r->min_tp = memory_min_tp(m, d, prec, r->kv_prec, context, max_tp, reserve);
    if (req->tp && req->gpus % req->tp) {
        snprintf(err, err_size, "--tp %u does not divide --gpus %u", req->tp, req->gpus);
        return -1;
    }
    r->tp = req->tp ? req->tp : (r->min_tp ? r->min_tp : 1);
    perf_setup setup = { .model = m, .device = d, .profile = prof, .weights = prec,
                          .kv = r->kv_prec, .tp = r->tp, .reserve = reserve };
    choose_layout(req, &setup, r);
    r->memory = memory_inference_for(m, d, prec, r->kv_prec, r->tp, setup.attention_dp, reserve);
    double held = model_attended_tokens(m, context); /* a sliding window caches fewer */
    r->max_batch = floor(r->memory.kv_capacity_tokens / held);
    r->fits = r->max_batch >= 1;
    if (!r->fits) {
        double need = r->memory.weights_bytes + held * r->memory.kv_bytes_per_token;
        unsigned wider = memory_min_tp(m, d, prec, r->kv_prec, context, 1u << 20, reserve);
        char hint[160];
        if (wider)
            snprintf(hint, sizeof hint, "the smallest tensor parallelism that fits is %u "
                     "(--tp %u --gpus %u)", wider, wider, wider);
        else
            snprintf(hint, sizeof hint, "no tensor parallelism fits");
        snprintf(r->serving_refusal, sizeof r->serving_refusal, "%s in %s does not fit on %u "
                 "x %s: a replica needs %.1f GB per device (%.1f GB of weights and %.2f GB of "
                 "cache for %.0f tokens) and each %s has %.1f GB usable (%.0f%% of the %.1f GB CUDA reports%s%s); %s", m->name,
                 precision_name(prec), r->tp, d->name, need / GB, r->memory.weights_bytes / GB,
                 held * r->memory.kv_bytes_per_token / GB, context, d->name,
                 r->memory.usable_bytes / GB, 100 * r->memory.usable_bytes / d->memory_bytes,
                 d->memory_bytes / GB, req->engine ? ", as " : "",
                 req->engine ? req->engine->name : "", hint);
        r->refused |= ESTIMATE_SERVING;
        return 0;
    }
    unsigned batch = req->batch < r->max_batch ? req->batch : (unsigned)r->max_batch;
    r->batch = batch;
    r->prefill = perf_prefill(&setup, batch, req->prompt);
    double no_cache, own;
    model_attention_pairs(m, 0, req->prompt, &no_cache, &own);
    perf_batch one = { .prefill_tokens = req->prompt, .prefill_seqs = 1, .prefill_last = 1,
                       .prefill_new_pairs = own };
    r->first_token = perf_iteration(&setup, &one, &r->first_token_ops);
    perf_batch step = { .decode_seqs = batch,
                        .decode_context = batch * model_attended_tokens(m, req->prompt
                                                                           + req->output / 2) };
    r->decode = perf_iteration(&setup, &step, &r->decode_ops);
    r->decode_tokens_per_s = batch / r->decode.total_s;
    power_model pm;
    char why[320];
    if (power_model_of(d, NULL, &pm, why, sizeof why) == 0) {
        r->prefill_w = power_step_w(&pm, &r->first_token);
        r->decode_w = power_step_w(&pm, &r->decode);
        r->prefill_j_per_token = r->tp * r->prefill_w * r->first_token.total_s / req->prompt;
        r->decode_j_per_token = r->tp * r->decode_w * r->decode.total_s / batch;
    } else {
        r->prefill_w = r->decode_w = r->prefill_j_per_token = r->decode_j_per_token = NAN;
    }
    r->throughput = perf_best_throughput(&setup, req->gpus, req->prompt, req->output);
    r->nspec = 0;
    r->spec_tokens = 0;
    if (req->speculate_k) {
        /* the draft shares the target's devices and precision (its own cache) */
        perf_setup draft = perf_draft_setup(&setup, req->draft);
        perf_speculation sp = { req->draft ? &draft : NULL, req->speculate_k, req->acceptance, 0 };
        r->spec_tokens = perf_speculative_tokens(req->acceptance, req->speculate_k);
        double mean_context = req->prompt + req->output / 2;
        for (unsigned b = 1; b <= r->max_batch && r->nspec < ESTIMATE_SPEC_BATCHES; b *= 4) {
            estimate_speculation *e = &r->spec[r->nspec++];
            e->batch = b;
            e->plain_s = perf_decode_step(&setup, b, mean_context).total_s;
            e->speculative_s = perf_speculative_round_s(&setup, &sp, b, mean_context)
                               / r->spec_tokens;
        }
    }
    return 0;
}

/* The training half: the plan (stated, or the planner's) and its step, memory, days and
 * GPU-hours; r->refused's training bit and its message when no setup fits. */
static void estimate_training(const model_spec *m, const device_spec *d,
                              const estimate_request *req, const perf_profile *base,
                              estimate_result *r)
{
    precision prec = req->prec;
    precision tprec = r->train_precision = training_precision(prec, d, r);
    unsigned seq = req->seq_len ? req->seq_len : (m->context < 4096 ? m->context : 4096);
    unsigned global = req->global_batch ? req->global_batch : (unsigned)ceil(4194304.0 / seq);
    r->train_tokens = req->train_tokens > 0 ? req->train_tokens : 20 * r->params;
    /* 6 N a token; 4 N for adapters on a frozen model (no weight gradients) */
    r->train_flops = (req->lora ? 4 : 6) * r->params_active * r->train_tokens;
    /* the stated plan (--train-tp, --pp, --cp, ..., --schedule) is imposed on the planner;
     * --tp is the serving replicas' unless the caller made it training's */
    training_constraints within = req->train_stated ? req->train_within : TRAINING_FREE;
    engine_training_state(req->train_engine, &within);
    if (req->pp)
        within.pp = req->pp;
    within.dualpipe = within.dualpipe || req->dualpipe;
    within.lora = within.lora || req->lora;
    perf_profile tp = engine_apply_profile(req->train_engine, base, d);
    r->train_fits = training_plan_scheduled(m, d, &tp, tprec, req->gpus, seq, global, within,
                                            req->schedule, &r->train);
    if (!r->train_fits) {
        training_estimate probe;
        for (unsigned g = req->gpus * 2; g && g <= 1u << 20; g *= 2)
            if (training_plan_scheduled(m, d, &tp, tprec, g, seq, global,
                                        within, req->schedule, &probe)) {
                r->train_min_gpus = g;
                break;
            }
        size_t n = (size_t)snprintf(r->train_refusal, sizeof r->train_refusal, "%s",
                                    r->train.refusal);
        if (!r->train.refusal[0])
            n = (size_t)snprintf(r->train_refusal, sizeof r->train_refusal, "%s does not fit "
                                 "on %u device%s", m->name, req->gpus, req->gpus == 1 ? "" : "s");
        if (r->train_min_gpus && n < sizeof r->train_refusal)
            snprintf(r->train_refusal + n, sizeof r->train_refusal - n, "; the fewest that "
                     "fit%s: %u", req->train_stated || req->pp || req->dualpipe
                                      ? " as stated" : "", r->train_min_gpus);
        r->refused |= ESTIMATE_TRAINING;
    } else {
        r->train_s = r->train_tokens / r->train.tokens_per_step * r->train.step_s;
        r->train_gpu_hours = r->train_s * req->gpus / 3600;
    }
}

int estimate_run(const model_spec *m, const device_spec *d, const estimate_request *req,
                 estimate_result *r, char *err, size_t err_size)
{
    memset(r, 0, sizeof *r);
    perf_profile base = req->profile ? *req->profile : perf_default_profile(d);
    perf_profile p = engine_apply_profile(req->engine, &base, d);
    if (req->engine) {
        r->reserve = engine_memory_reserve(req->engine, m);
        r->has_reserve = true;
    }
    const memory_reserve *reserve = r->has_reserve ? &r->reserve : NULL;
    precision prec = req->prec;
    r->halves = req->halves ? req->halves & ESTIMATE_BOTH : ESTIMATE_BOTH;
    r->kv_prec = req->kv_given ? req->kv_prec : precision_cache(prec);
    r->params = model_params(m);
    r->params_active = model_params_active(m);
    r->weights_bytes = model_weight_bytes(m, prec);
    r->kv_bytes_per_token = model_kv_bytes_per_token(m, r->kv_prec);

    if ((r->halves & ESTIMATE_SERVING)
        && estimate_serving(m, d, req, &p, reserve, r, err, err_size) != 0)
        return -1;
    if (r->halves & ESTIMATE_TRAINING)
        estimate_training(m, d, req, &base, r);
    if (r->train_fits && estimate_goodput(req, r, err, err_size) != 0)
        return -1;
    if (r->refused == r->halves) {
        snprintf(err, err_size, "%s", r->refused & ESTIMATE_SERVING ? r->serving_refusal
                                                                    : r->train_refusal);
        return -1;
    }
    return 0;
}
