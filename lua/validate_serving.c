/* Closed-loop users, and requests all queued at once, on the serving simulation, for
 * `fleetsim validate` (see validate_serving.h). */
#include "lua/validate_serving.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/serving.h"
#include "sim/engine.h"

/* The request lengths against the model's context; false with a message when they do
 * not fit (an engine refuses such a prompt or cuts its answer short: not the row's). */
static bool lengths_fit(const perf_setup *s, unsigned prompt, unsigned output, char *err,
                        size_t err_size)
{
    unsigned context = s->model->context;
    if (context && (uint64_t)prompt + output > context) {
        snprintf(err, err_size, "requests of %u + %u tokens exceed the model's %u-token context",
                 prompt, output, context);
        return false;
    }
    return true;
}

/* Whether a row's simulation stays within the bounds on its time (validate_serving.h):
 * replicas, iterations (all replicas together) and routing steps; else a message. */
static bool work_fits(unsigned replicas, double iterations, double requests, char *err,
                      size_t err_size)
{
    if (replicas > VALIDATE_MAX_REPLICAS) {
        snprintf(err, err_size, "%u replicas are more than a row's simulation runs (at most "
                 "%u)", replicas, VALIDATE_MAX_REPLICAS);
        return false;
    }
    if (iterations > VALIDATE_MAX_ITERATIONS || requests * replicas > VALIDATE_MAX_ROUTING_STEPS) {
        snprintf(err, err_size, "the simulation would run about %.2g iterations and route "
                 "%.2g requests over %u replicas: past what a row runs (%.0e iterations, "
                 "%.0e routing steps); a smaller concurrency or fewer GPUs", iterations,
                 requests, replicas, VALIDATE_MAX_ITERATIONS, VALIDATE_MAX_ROUTING_STEPS);
        return false;
    }
    return true;
}

/* `users` closed-loop users with no think time, `asks` requests in all (0: no limit) on
 * the replicas with the given batch limits, from 0 to `end` s (or to the last request's
 * end when end is infinite), the first warmup_s s unmeasured.  Fills out but for
 * tokens_per_s; out->makespan_s is the last answer's end. */
static bool run_users(const perf_setup *s, double kv_capacity_tokens, unsigned replicas,
                      unsigned users, uint64_t asks, unsigned prompt, unsigned output,
                      unsigned max_batch, unsigned max_tokens, double warmup_s, double end,
                      closed_loop_result *out, char *err, size_t err_size)
{
    traffic_spec users_loop = { .kind = TRAFFIC_CLOSED_LOOP, .users = users,
                                .think_s = sim_dist_constant(0) };
    serving_config c = {
        .name = "validate", .replicas = replicas, .routing = ROUTE_LEAST_OUTSTANDING,
        .traffic = &users_loop, .max_arrivals = asks,
        .prompt_tokens = sim_dist_constant(prompt), .output_tokens = sim_dist_constant(output),
        .rtt_s = sim_dist_constant(0), .warmup_s = warmup_s, .seed = 1,
    };
    c.replica = (replica_config){
        .model = s->model, .device = s->device, .profile = *s->profile, .prec = s->weights,
        .kv_prec = s->kv, .tp = s->tp, .expert_parallel = s->expert_parallel,
        .expert_skew = s->expert_skew, .attention_dp = s->attention_dp,
        .max_batch = max_batch, .max_tokens = max_tokens, .chunked_prefill = true,
        .kv_capacity_tokens = kv_capacity_tokens,
    };
    sim_engine *e = sim_engine_create();
    serving *sv = e ? serving_create(e, &c, err, err_size) : NULL;
    if (!sv) {
        if (!e)
            snprintf(err, err_size, "out of memory");
        sim_engine_free(e);
        return false;
    }
    serving_start(sv);
    /* the replicas' work is read over the measured window: from the warm-up's end */
    if (warmup_s > 0)
        sim_engine_run_until(e, warmup_s);
    serving_bucket_close(sv, sim_engine_now(e));
    double from = sim_engine_now(e);
    if (isfinite(end))
        sim_engine_run_until(e, end);
    else
        sim_engine_run(e);
    out->work = serving_bucket_close(sv, sim_engine_now(e))->groups[0].work;
    out->window_s = sim_engine_now(e) - from;
    if (serving_error(sv)) {
        snprintf(err, err_size, "%s", serving_error(sv));
        serving_free(sv);
        sim_engine_free(e);
        return false;
    }
    const serving_stats *st = serving_get_stats(sv);
    out->ttft_s = sim_stat_mean(&st->ttft_s);
    out->tpot_s = sim_stat_mean(&st->tpot_s);
    out->e2e_s = sim_stat_mean(&st->e2e_s);
    out->makespan_s = st->e2e_s.n ? st->e2e_s.max : 0;
    out->requests = (double)st->completed;
    serving_free(sv);
    sim_engine_free(e);
    if (out->requests < 1) {
        snprintf(err, err_size, "no request of %u + %u tokens completed", prompt, output);
        return false;
    }
    return true;
}

bool validate_closed_loop(const perf_setup *s, double kv_capacity_tokens, unsigned replicas,
                          unsigned users, unsigned prompt, unsigned output, unsigned max_batch,
                          unsigned max_tokens, closed_loop_result *out, char *err,
                          size_t err_size)
{
    memset(out, 0, sizeof *out);
    if (!max_batch)
        max_batch = VALIDATE_DEFAULT_MAX_BATCH;
    if (!max_tokens)
        max_tokens = VALIDATE_DEFAULT_MAX_TOKENS;
    if (users > VALIDATE_CLOSED_LOOP_MAX_USERS) {
        snprintf(err, err_size, "concurrency %u is more users than a row's simulation runs "
                 "(at most %u)", users, VALIDATE_CLOSED_LOOP_MAX_USERS);
        return false;
    }
    if (users < 1 || replicas < 1) {
        snprintf(err, err_size, "%u users on %u replicas: none to simulate", users, replicas);
        return false;
    }
    if (!lengths_fit(s, prompt, output, err, err_size))
        return false;
    /* a cycle: the requests a replica holds at once prefill together and decode at their
     * mean context; a user waits for the waves ahead of its own */
    double fit = fmin(fmin(ceil((double)users / replicas), max_batch),
                      floor(kv_capacity_tokens / ((double)prompt + output)));
    if (fit < 1) {
        snprintf(err, err_size,
                 "one request of %u + %u tokens does not fit the cache (%.0f tokens)", prompt,
                 output, kv_capacity_tokens);
        return false;
    }
    double decode = perf_decode_step(s, (unsigned)fit, prompt + output / 2.0).total_s;
    double wave = perf_prefill(s, (unsigned)fit, prompt).total_s + (output - 1.0) * decode;
    double cycle = ceil((double)users / replicas / fit) * wave;
    /* 12 cycles: each replica's iterations are about their time over a decode step, each
     * user asks about once a cycle */
    if (!work_fits(replicas, 12 * cycle / decode * replicas, 12.0 * users, err, err_size))
        return false;
    if (!run_users(s, kv_capacity_tokens, replicas, users, 0, prompt, output, max_batch,
                   max_tokens, 2 * cycle, 12 * cycle, out, err, err_size))
        return false;
    out->tokens_per_s = users / out->e2e_s * output;
    return true;
}

bool validate_all_at_once(const perf_setup *s, double kv_capacity_tokens, unsigned replicas,
                          unsigned requests, unsigned prompt, unsigned output,
                          unsigned max_batch, unsigned max_tokens, closed_loop_result *out,
                          char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    if (requests > VALIDATE_CLOSED_LOOP_MAX_USERS) {
        snprintf(err, err_size, "%u requests are more than a row's simulation runs (at most "
                 "%u)", requests, VALIDATE_CLOSED_LOOP_MAX_USERS);
        return false;
    }
    if (requests < 1 || replicas < 1 || max_batch < 1 || max_tokens < 1) {
        snprintf(err, err_size, "%u requests on %u replicas of batches up to %u sequences and "
                 "%u tokens: none to simulate", requests, replicas, max_batch, max_tokens);
        return false;
    }
    if (!lengths_fit(s, prompt, output, err, err_size))
        return false;
    /* an iteration a prompt chunk, an event each: a bound on the run's size and time */
    if ((double)requests * ceil((double)prompt / max_tokens) > VALIDATE_MAX_PREFILL_ITERATIONS) {
        snprintf(err, err_size, "%u prompts of %u tokens in chunks of %u: more iterations than "
                 "a row's simulation runs (%g)", requests, prompt, max_tokens,
                 (double)VALIDATE_MAX_PREFILL_ITERATIONS);
        return false;
    }
    if ((double)prompt + output > kv_capacity_tokens) {
        snprintf(err, err_size,
                 "one request of %u + %u tokens does not fit the cache (%.0f tokens)", prompt,
                 output, kv_capacity_tokens);
        return false;
    }
    /* every prompt's chunks, then each replica's waves of decoding */
    double waves = ceil((double)requests / replicas / max_batch);
    double iterations = (double)requests * ceil((double)prompt / max_tokens)
                        + waves * output * replicas;
    if (!work_fits(replicas, iterations, requests, err, err_size))
        return false;
    /* each of `requests` users asks once, all at 0 */
    if (!run_users(s, kv_capacity_tokens, replicas, requests, requests, prompt, output,
                   max_batch, max_tokens, 0, INFINITY, out, err, err_size))
        return false;
    if (out->requests < requests) {
        snprintf(err, err_size, "%.0f of %u requests completed", out->requests, requests);
        return false;
    }
    out->tokens_per_s = (double)requests * output / out->makespan_s;
    return true;
}
