/* Arrivals of requests (see arrivals.h). */
#include "models/arrivals.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/event_order.h"
#include "sim/array.h"
#include "sim/fatal.h"
#include "sim/rng.h"

struct arrivals {
    sim_engine *engine;
    arrivals_config config;
    gsl_rng *arrival_rng, *length_rng, *sample_rng;
    trace_reader *trace;
    traffic_state traffic;
    trace_record next_record;   /* the trace row whose arrival is scheduled */
    /* its block ids (a copy: the reader's last only lasts until it reads the next), and
     * those of the row arriving now */
    uint64_t *next_blocks, *blocks;
    size_t next_blocks_cap, blocks_cap;
    double trace_offset_s;      /* added to trace times: loops so far */
    double trace_last_s;        /* time of the last row read, offset included */
    uint64_t trace_pass_rows;   /* rows read in the current pass */
    uint64_t generated, users_scheduled;
    /* closed loop: the instant of the latest request a user asked, and how many were
     * asked at it (a guard against users whose requests all end as they arrive) */
    double user_instant_s;
    uint64_t at_instant;
    char error[512];
};

static unsigned draw_tokens(const sim_dist *d, gsl_rng *rng)
{
    double x = round(sim_dist_sample(d, rng));
    return x < 1 ? 1 : x > 1e7 ? 10000000u : (unsigned)x;
}

static void on_trace_arrival(sim_engine *e, void *data);

static void fetch_ahead(const arrivals *a)
{
    if (a->config.ahead)
        a->config.ahead(a->config.owner);
}

/* Reads the next kept trace row (looping if asked) and schedules its arrival; at the
 * end, or on an error (kept in a->error; the run stops), schedules nothing. */
static void schedule_trace_row(arrivals *a)
{
    trace_record r;
    for (;;) {
        int got = trace_next(a->trace, &r, a->error, sizeof a->error);
        if (got < 0) {
            sim_engine_stop(a->engine);
            return;
        }
        if (got == 0) {
            if (!a->config.loop || a->trace_last_s <= a->trace_offset_s)
                return;
            trace_close(a->trace);
            a->trace = trace_open(a->config.trace, a->error, sizeof a->error);
            if (!a->trace) {
                sim_engine_stop(a->engine);
                return;
            }
            /* the next pass starts one mean gap after this one ended, so that the two
             * rows do not fall on the same instant */
            double span = a->trace_last_s - a->trace_offset_s;
            double gap = a->trace_pass_rows > 1 ? span / (double)(a->trace_pass_rows - 1) : span;
            a->trace_offset_s = a->trace_last_s + gap;
            a->trace_pass_rows = 0;
            continue;
        }
        r.time_s += a->trace_offset_s;
        a->trace_last_s = r.time_s;
        a->trace_pass_rows++;
        if (a->config.sample > 0 && a->config.sample < 1
            && gsl_rng_uniform(a->sample_rng) >= a->config.sample)
            continue;
        break;
    }
    a->next_record = r;
    if (r.nblocks) {
        a->next_blocks = sim_array_grow(a->next_blocks, &a->next_blocks_cap, r.nblocks,
                                        sizeof *a->next_blocks, "a trace's block ids");
        memcpy(a->next_blocks, r.blocks, r.nblocks * sizeof *r.blocks);
    }
    double now = sim_engine_now(a->engine);
    sim_event_schedule(a->engine, r.time_s > now ? r.time_s : now, EVENT_MODEL,
                       on_trace_arrival, a);
}

static void on_trace_arrival(sim_engine *e, void *data)
{
    arrivals *a = data;
    fetch_ahead(a);
    trace_record r = a->next_record;
    uint64_t *swap = a->blocks; /* the next row's ids become this one's */
    size_t swap_cap = a->blocks_cap;
    a->blocks = a->next_blocks;
    a->blocks_cap = a->next_blocks_cap;
    a->next_blocks = swap;
    a->next_blocks_cap = swap_cap;
    unsigned prompt = r.prompt ? r.prompt : 1, output = r.output ? r.output : 1;
    if (!a->config.lengths_from_trace) {
        prompt = draw_tokens(&a->config.prompt_tokens, a->length_rng);
        output = draw_tokens(&a->config.output_tokens, a->length_rng);
    }
    a->generated++;
    if (!a->config.max_arrivals || a->generated < a->config.max_arrivals)
        schedule_trace_row(a);
    a->config.arrive(a->config.owner, prompt, output, r.session,
                     a->config.trace->blocks_column ? a->blocks : NULL, r.nblocks);
}

/* The next arrival of an open process after now. */
static double next_arrival(arrivals *a, double now)
{
    if (a->config.traffic) {
        double next = traffic_next(&a->traffic, now, a->error, sizeof a->error);
        if (isnan(next)) {
            sim_engine_stop(a->engine);
            return INFINITY;
        }
        return next;
    }
    return now + sim_dist_sample(&a->config.interarrival, a->arrival_rng);
}

static void on_arrival(sim_engine *e, void *data)
{
    arrivals *a = data;
    fetch_ahead(a);
    double now = sim_engine_now(e);
    a->generated++;
    if (!a->config.max_arrivals || a->generated < a->config.max_arrivals) {
        double next = next_arrival(a, now);
        if (isfinite(next))
            sim_event_schedule(e, next, EVENT_MODEL, on_arrival, a);
    }
    unsigned prompt = draw_tokens(&a->config.prompt_tokens, a->length_rng);
    unsigned output = draw_tokens(&a->config.output_tokens, a->length_rng);
    a->config.arrive(a->config.owner, prompt, output, 0, NULL, 0);
}

static bool closed_loop(const arrivals *a)
{
    return a->config.traffic && a->config.traffic->kind == TRAFFIC_CLOSED_LOOP;
}

/* A closed-loop user's request: the next one follows its answer and a think time. */
static void on_user_request(sim_engine *e, void *data)
{
    arrivals *a = data;
    fetch_ahead(a);
    a->generated++;
    unsigned prompt = draw_tokens(&a->config.prompt_tokens, a->length_rng);
    unsigned output = draw_tokens(&a->config.output_tokens, a->length_rng);
    a->config.arrive(a->config.owner, prompt, output, 0, NULL, 0);
}

static void schedule_user(arrivals *a, double now)
{
    if (a->config.max_arrivals && a->users_scheduled >= a->config.max_arrivals)
        return;
    a->users_scheduled++; /* counted when scheduled, so the limit holds exactly */
    double think = sim_dist_sample(&a->config.traffic->think_s, a->arrival_rng);
    double at = now + think;
    if (at != a->user_instant_s) {
        a->user_instant_s = at;
        a->at_instant = 0;
    }
    /* An answered request takes time; one that ends as it arrives (a prompt past the
     * model's context) does not, and with no think time its user asks again at the same
     * instant, for ever: the run would never leave it.  A thousand asks a user at one
     * instant stop the run with the reason. */
    if (++a->at_instant > 1000 * (uint64_t)a->config.traffic->users + 1000) {
        snprintf(a->error, sizeof a->error,
                 "closed-loop users asked %llu times at %g s without time passing: every "
                 "request ends as it arrives (a prompt past the model's context?) and the "
                 "think time is 0; give the users a think time or prompts that fit",
                 (unsigned long long)a->at_instant, at);
        sim_engine_stop(a->engine);
        return;
    }
    sim_event_schedule(a->engine, at, EVENT_MODEL, on_user_request, a);
}

arrivals *arrivals_create(sim_engine *engine, const arrivals_config *config)
{
    arrivals *a = calloc(1, sizeof *a);
    if (!a)
        sim_out_of_memory("out of memory creating arrivals");
    a->engine = engine;
    a->config = *config;
    const char *name = config->name ? config->name : "inference";
    char stream[256];
    gsl_rng **rngs[] = { &a->arrival_rng, &a->length_rng, &a->sample_rng };
    const char *suffix[] = { "arrivals", "lengths", "sample" };
    for (int i = 0; i < 3; i++) {
        snprintf(stream, sizeof stream, "%s.%s", name, suffix[i]);
        *rngs[i] = sim_rng_stream(config->seed, config->replication, stream);
    }
    if (config->trace && config->trace->blocks_column) { /* never NULL: a row of no ids */
        a->blocks = sim_array_grow(NULL, &a->blocks_cap, 1, sizeof *a->blocks, "block ids");
        a->next_blocks = sim_array_grow(NULL, &a->next_blocks_cap, 1, sizeof *a->blocks,
                                        "block ids");
    }
    return a;
}

void arrivals_start(arrivals *a)
{
    double now = sim_engine_now(a->engine);
    if (a->config.trace) {
        a->trace = trace_open(a->config.trace, a->error, sizeof a->error);
        if (!a->trace) {
            sim_engine_stop(a->engine);
            return;
        }
        schedule_trace_row(a);
        return;
    }
    if (closed_loop(a)) {
        for (unsigned u = 0; u < a->config.traffic->users; u++)
            schedule_user(a, now);
        return;
    }
    if (a->config.traffic)
        traffic_start(&a->traffic, a->config.traffic, a->arrival_rng, now);
    double first = next_arrival(a, now);
    if (isfinite(first))
        sim_event_schedule(a->engine, first, EVENT_MODEL, on_arrival, a);
}

void arrivals_request_ended(arrivals *a)
{
    if (closed_loop(a))
        schedule_user(a, sim_engine_now(a->engine));
}

const char *arrivals_error(const arrivals *a) { return a->error[0] ? a->error : NULL; }

void arrivals_free(arrivals *a)
{
    if (!a)
        return;
    trace_close(a->trace);
    free(a->blocks);
    free(a->next_blocks);
    gsl_rng_free(a->arrival_rng);
    gsl_rng_free(a->length_rng);
    gsl_rng_free(a->sample_rng);
    free(a);
}
