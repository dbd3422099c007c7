/* Inference serving on a fleet of replicas (see serving.h). */
#include "models/serving_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fatal.h"
#include "sim/rng.h"

static const char *const ROUTING_NAMES[] = {
    "round_robin", "least_outstanding", "shortest_tokens", "power_of_two", "custom",
};

const char *routing_policy_name(routing_policy p) { return ROUTING_NAMES[p]; }

int routing_policy_parse(const char *name, routing_policy *out)
{
    for (int i = 0; i < 4; i++) /* "custom" is not a name a scenario gives */
        if (!strcmp(name, ROUTING_NAMES[i])) {
            *out = (routing_policy)i;
            return 0;
        }
    return -1;
}

static llm_request *request_take(serving *s)
{
    if (!s->free_list) {
        request_block *b = calloc(1, sizeof *b);
        if (!b)
            sim_fatal("out of memory for requests in flight");
        b->next = s->blocks;
        s->blocks = b;
        s->nblocks++;
        for (size_t i = 0; i < 256; i++) {
            b->items[i].next = s->free_list;
            s->free_list = &b->items[i];
        }
    }
    llm_request *q = s->free_list;
    s->free_list = q->next;
    memset(q, 0, sizeof *q);
    return q;
}

static void request_give(serving *s, llm_request *q)
{
    q->next = s->free_list;
    s->free_list = q;
}

static unsigned draw_tokens(const sim_dist *d, gsl_rng *rng)
{
    double x = round(sim_dist_sample(d, rng));
    return x < 1 ? 1 : x > 1e7 ? 10000000u : (unsigned)x;
}

static bool closed_loop(const serving *s);
static void schedule_user(serving *s, double now);

static void bucket_clear(serving_bucket *b)
{
    b->arrived = b->completed = b->dropped = 0;
    b->output_tokens = 0;
    b->group_output_tokens[0] = b->group_output_tokens[1] = 0;
    sim_stat_reset(&b->ttft_s);
    sim_stat_reset(&b->tpot_s);
    sim_stat_reset(&b->e2e_s);
    sim_stat_reset(&b->queue_wait_s);
    sim_histogram_clear(&b->ttft_hist_s);
    sim_histogram_clear(&b->e2e_hist_s);
}

static void record_bucket(serving *s, const llm_request *q, bool dropped, double ttft,
                          double tpot, double e2e, unsigned group)
{
    serving_bucket *b = &s->bucket;
    if (dropped) {
        b->dropped++;
        return;
    }
    b->completed++;
    b->output_tokens += q->output;
    b->group_output_tokens[group] += q->output;
    sim_stat_add(&b->ttft_s, ttft);
    sim_histogram_add(&b->ttft_hist_s, ttft);
    sim_stat_add(&b->e2e_s, e2e);
    sim_histogram_add(&b->e2e_hist_s, e2e);
    sim_stat_add(&b->queue_wait_s, q->admitted_s - q->arrival_s);
    if (!isnan(tpot))
        sim_stat_add(&b->tpot_s, tpot);
}

void serving_record(serving *s, llm_request *q, bool dropped, const serving_group *g)
{
    serving_stats *st = &s->stats;
    double ttft = NAN, tpot = NAN, e2e = NAN, rtt = NAN;
    if (!dropped) {
        const serving_group_config *where = &g->config;
        rtt = sim_dist_sample(&where->rtt_s, s->rtt_rng);
        if (where->spike_probability > 0
            && gsl_rng_uniform(s->rtt_rng) < where->spike_probability)
            rtt += sim_dist_sample(&where->spike_s, s->rtt_rng);
        ttft = q->first_token_s - q->arrival_s + rtt;
        e2e = q->finish_s - q->arrival_s + rtt;
        if (q->output > 1)
            tpot = (q->finish_s - q->first_token_s) / (q->output - 1);
    }
    record_bucket(s, q, dropped, ttft, tpot, e2e, g->index);
    if (s->config.on_request) {
        request_record r = {
            s->config.name, s->config.replication, q->id, q->arrival_s,
            dropped ? NAN : q->admitted_s, dropped ? NAN : q->first_token_s,
            dropped ? NAN : q->finish_s, q->prompt, q->output, ttft, tpot, e2e, rtt, dropped,
        };
        s->config.on_request(s->config.request_context, &r);
    }
    if (q->arrival_s >= s->config.warmup_s) {
        if (dropped) {
            st->dropped++;
        } else {
            st->completed++;
            st->output_tokens += q->output;
            st->prompt_tokens += q->prompt;
            sim_stat_add(&st->ttft_s, ttft);
            sim_histogram_add(&st->ttft_hist_s, ttft);
            sim_stat_add(&st->e2e_s, e2e);
            sim_histogram_add(&st->e2e_hist_s, e2e);
            sim_stat_add(&st->queue_wait_s, q->admitted_s - q->arrival_s);
            if (!isnan(tpot)) {
                sim_stat_add(&st->tpot_s, tpot);
                sim_histogram_add(&st->tpot_hist_s, tpot);
            }
            const serving_config *c = &s->config;
            bool met = (!c->slo_ttft_s || ttft <= c->slo_ttft_s)
                       && (!c->slo_e2e_s || e2e <= c->slo_e2e_s)
                       && (!c->slo_tpot_s || isnan(tpot) || tpot <= c->slo_tpot_s);
            st->slo_met += met;
        }
    }
    request_give(s, q);
    if (closed_loop(s))
        schedule_user(s, sim_engine_now(s->engine));
}

static void on_trace_arrival(sim_engine *e, void *data);

/* Reads the next kept trace row (looping if asked) and schedules its arrival; at the
 * end, or on an error (kept in s->error; the run stops), schedules nothing. */
static void schedule_trace_row(serving *s)
{
    trace_record r;
    for (;;) {
        int got = trace_next(s->trace, &r, s->error, sizeof s->error);
        if (got < 0) {
            sim_engine_stop(s->engine);
            return;
        }
        if (got == 0) {
            if (!s->config.loop || s->trace_last_s <= s->trace_offset_s)
                return;
            trace_close(s->trace);
            s->trace = trace_open(s->config.trace, s->error, sizeof s->error);
            if (!s->trace) {
                sim_engine_stop(s->engine);
                return;
            }
            /* the next pass starts one mean gap after this one ended, so that the two
             * rows do not fall on the same instant */
            double span = s->trace_last_s - s->trace_offset_s;
            double gap = s->trace_pass_rows > 1 ? span / (double)(s->trace_pass_rows - 1) : span;
            s->trace_offset_s = s->trace_last_s + gap;
            s->trace_pass_rows = 0;
            continue;
        }
        r.time_s += s->trace_offset_s;
        s->trace_last_s = r.time_s;
        s->trace_pass_rows++;
        if (s->config.sample > 0 && s->config.sample < 1
            && gsl_rng_uniform(s->sample_rng) >= s->config.sample)
            continue;
        break;
    }
    s->next_record = r;
    double now = sim_engine_now(s->engine);
    sim_event_schedule(s->engine, r.time_s > now ? r.time_s : now, 0, on_trace_arrival, s);
}

static void admit_request(serving *s, double now, unsigned prompt, unsigned output);

static void on_trace_arrival(sim_engine *e, void *data)
{
    serving *s = data;
    trace_record r = s->next_record;
    unsigned prompt = r.prompt ? r.prompt : 1, output = r.output ? r.output : 1;
    if (!s->config.lengths_from_trace) {
        prompt = draw_tokens(&s->config.prompt_tokens, s->length_rng);
        output = draw_tokens(&s->config.output_tokens, s->length_rng);
    }
    s->generated++;
    if (!s->config.max_arrivals || s->generated < s->config.max_arrivals)
        schedule_trace_row(s);
    admit_request(s, sim_engine_now(e), prompt, output);
}

/* The next arrival of an open process after now. */
static double next_arrival(serving *s, double now)
{
    if (s->config.traffic) {
        double next = traffic_next(&s->traffic, now, s->error, sizeof s->error);
        if (isnan(next)) {
            sim_engine_stop(s->engine);
            return INFINITY;
        }
        return next;
    }
    return now + sim_dist_sample(&s->config.interarrival, s->arrival_rng);
}

static void on_arrival(sim_engine *e, void *data)
{
    serving *s = data;
    double now = sim_engine_now(e);
    s->generated++;
    if (!s->config.max_arrivals || s->generated < s->config.max_arrivals) {
        double next = next_arrival(s, now);
        if (isfinite(next))
            sim_event_schedule(e, next, 0, on_arrival, s);
    }
    unsigned prompt = draw_tokens(&s->config.prompt_tokens, s->length_rng);
    unsigned output = draw_tokens(&s->config.output_tokens, s->length_rng);
    admit_request(s, now, prompt, output);
}

static bool closed_loop(const serving *s)
{
    return s->config.traffic && s->config.traffic->kind == TRAFFIC_CLOSED_LOOP;
}

/* A closed-loop user's request: the next one follows its answer and a think time. */
static void on_user_request(sim_engine *e, void *data)
{
    serving *s = data;
    s->generated++;
    unsigned prompt = draw_tokens(&s->config.prompt_tokens, s->length_rng);
    unsigned output = draw_tokens(&s->config.output_tokens, s->length_rng);
    admit_request(s, sim_engine_now(e), prompt, output);
}

static void schedule_user(serving *s, double now)
{
    if (s->config.max_arrivals && s->users_scheduled >= s->config.max_arrivals)
        return;
    s->users_scheduled++; /* counted when scheduled, so the limit holds exactly */
    double think = sim_dist_sample(&s->config.traffic->think_s, s->arrival_rng);
    sim_event_schedule(s->engine, now + think, 0, on_user_request, s);
}

static void admit_request(serving *s, double now, unsigned prompt, unsigned output)
{
    llm_request *q = request_take(s);
    q->id = s->next_id++;
    q->arrival_s = now;
    q->prompt = prompt;
    q->output = output;
    if (now >= s->config.warmup_s)
        s->stats.arrived++;
    s->bucket.arrived++;
    fleet_route(s, q);
}

static void on_warmup_end(sim_engine *e, void *data)
{
    fleet_restart_stats(data, sim_engine_now(e));
}

serving *serving_create(sim_engine *engine, const serving_config *config, char *err,
                        size_t err_size)
{
    char why[160];
    const sim_dist *dists[] = { &config->interarrival, &config->prompt_tokens,
                                &config->output_tokens, &config->rtt_s, &config->spike_s };
    const char *names[] = { "inter-arrival time", "prompt tokens", "output tokens", "rtt",
                            "spike" };
    for (int i = 0; i < (config->spike_probability > 0 ? 5 : 4); i++) {
        if (sim_dist_check(dists[i], why, sizeof why) != 0) {
            snprintf(err, err_size, "%s: %s", names[i], why);
            return NULL;
        }
    }
    if (config->routing == ROUTE_CUSTOM && !config->custom_route) {
        snprintf(err, err_size, "a custom routing policy needs its function");
        return NULL;
    }
    bool elastic = config->pool && config->autoscaler && config->autoscaler->enabled;
    if ((config->replicas < 1 && !elastic) || config->replica.max_batch < 1
        || config->replica.max_tokens < 1 || !(config->replica.kv_capacity_tokens >= 1)
        || (config->overflow && (config->overflow->replica.max_batch < 1
                                 || !(config->overflow->replica.kv_capacity_tokens >= 1)))) {
        snprintf(err, err_size, "serving needs replicas, a batch, a token budget and cache space");
        return NULL;
    }
    serving *s = calloc(1, sizeof *s);
    if (!s)
        sim_fatal("out of memory creating a serving workload");
    s->engine = engine;
    s->config = *config;
    if (!s->config.overflow_threshold)
        s->config.overflow_threshold = config->replica.max_batch;
    fleet_init(s);
    const char *name = config->name ? config->name : "inference";
    char stream[256];
    gsl_rng **rngs[] = { &s->arrival_rng, &s->length_rng, &s->route_rng, &s->rtt_rng,
                         &s->sample_rng };
    const char *suffix[] = { "arrivals", "lengths", "routing", "network", "sample" };
    for (int i = 0; i < 5; i++) {
        snprintf(stream, sizeof stream, "%s.%s", name, suffix[i]);
        *rngs[i] = sim_rng_stream(config->seed, config->replication, stream);
    }
    serving_stats *st = &s->stats;
    sim_stat_reset(&st->ttft_s);
    sim_stat_reset(&st->tpot_s);
    sim_stat_reset(&st->e2e_s);
    sim_stat_reset(&st->queue_wait_s);
    sim_histogram_init(&st->ttft_hist_s);
    sim_histogram_init(&st->tpot_hist_s);
    sim_histogram_init(&st->e2e_hist_s);
    sim_histogram_init(&s->bucket.ttft_hist_s);
    sim_histogram_init(&s->bucket.e2e_hist_s);
    sim_histogram_init(&s->view.ttft_hist_s);
    sim_histogram_init(&s->view.e2e_hist_s);
    bucket_clear(&s->bucket);
    s->bucket_start_s = sim_engine_now(engine);
    return s;
}

const serving_bucket *serving_bucket_close(serving *s, double now)
{
    serving_bucket *view = &s->view;
    double sums[3], replica_s, other[3] = { 0, 0, 0 }, other_s = 0;
    fleet_bucket_sums(s, 0, now, sums, &replica_s);
    if (s->ngroups > 1)
        fleet_bucket_sums(s, 1, now, other, &other_s);
    /* swap, so the view owns this bucket's histograms and the next bucket reuses the
     * view's old memory */
    serving_bucket closed = s->bucket;
    s->bucket = *view;
    *view = closed;
    view->busy = replica_s > 0 ? sums[0] / replica_s : NAN;
    view->batch = replica_s > 0 ? sums[1] / replica_s : NAN;
    view->kv = replica_s > 0 ? sums[2] / replica_s : NAN;
    view->replicas = now > s->bucket_start_s ? replica_s / (now - s->bucket_start_s) : NAN;
    view->group_busy_s[0] = sums[0];
    view->group_busy_s[1] = other[0];
    bucket_clear(&s->bucket);
    s->bucket_start_s = now;
    return view;
}

void serving_start(serving *s)
{
    double now = sim_engine_now(s->engine);
    if (s->config.warmup_s > now)
        sim_event_schedule(s->engine, s->config.warmup_s, -1, on_warmup_end, s);
    fleet_start(s);
    if (s->config.trace) {
        s->trace = trace_open(s->config.trace, s->error, sizeof s->error);
        if (!s->trace) {
            sim_engine_stop(s->engine);
            return;
        }
        schedule_trace_row(s);
        return;
    }
    if (closed_loop(s)) {
        for (unsigned u = 0; u < s->config.traffic->users; u++)
            schedule_user(s, now);
        return;
    }
    if (s->config.traffic)
        traffic_start(&s->traffic, s->config.traffic, s->arrival_rng, now);
    double first = next_arrival(s, now);
    if (isfinite(first))
        sim_event_schedule(s->engine, first, 0, on_arrival, s);
}

const char *serving_error(const serving *s) { return s->error[0] ? s->error : NULL; }

void serving_free(serving *s)
{
    if (!s)
        return;
    fleet_free(s); /* pending requests live in the blocks freed below */
    while (s->blocks) {
        request_block *next = s->blocks->next;
        free(s->blocks);
        s->blocks = next;
    }
    gsl_rng_free(s->arrival_rng);
    gsl_rng_free(s->length_rng);
    gsl_rng_free(s->route_rng);
    gsl_rng_free(s->rtt_rng);
    gsl_rng_free(s->sample_rng);
    trace_close(s->trace);
    sim_histogram_release(&s->stats.ttft_hist_s);
    sim_histogram_release(&s->stats.tpot_hist_s);
    sim_histogram_release(&s->stats.e2e_hist_s);
    sim_histogram_release(&s->bucket.ttft_hist_s);
    sim_histogram_release(&s->bucket.e2e_hist_s);
    sim_histogram_release(&s->view.ttft_hist_s);
    sim_histogram_release(&s->view.e2e_hist_s);
    free(s->loads);
    free(s);
}

const serving_stats *serving_get_stats(const serving *s) { return &s->stats; }

double serving_utilization(const serving *s, double end_s)
{
    return serving_group_get_stats(s, 0, end_s).utilization;
}

double serving_batch_mean(const serving *s, double end_s)
{
    return serving_group_get_stats(s, 0, end_s).batch_mean;
}

double serving_kv_utilization(const serving *s, double end_s)
{
    return serving_group_get_stats(s, 0, end_s).kv_mean;
}

double serving_batch_max(const serving *s) { return fleet_batch_max(s); }
double serving_kv_max(const serving *s) { return fleet_kv_max(s); }

uint64_t serving_preemptions(const serving *s)
{
    uint64_t n = 0;
    for (unsigned g = 0; g < s->ngroups; g++)
        n += serving_group_get_stats(s, g, sim_engine_now(s->engine)).kv_preemptions;
    return n;
}

uint64_t serving_replica_events(const serving *s) { return fleet_replica_events(s); }

size_t serving_memory_bytes(const serving *s)
{
    return sizeof *s + s->nblocks * sizeof(request_block)
           + sim_histogram_memory_bytes(&s->stats.ttft_hist_s)
           + sim_histogram_memory_bytes(&s->stats.tpot_hist_s)
           + sim_histogram_memory_bytes(&s->stats.e2e_hist_s);
}
