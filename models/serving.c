/* Inference serving (see serving.h): requests arrive (a distribution, a traffic
 * process, a trace, closed-loop users), go to the workload's own fleet of replicas or,
 * when it is saturated, to its overflow fleet (models/serving_fleet.h), wait while no
 * replica is ready, and are recorded as users saw them.  Every autoscaled fleet is
 * evaluated here each interval (models/autoscale.h).
 *
 * Disaggregated, the own fleet prefills: a request goes there asking for one output
 * token (the prefill's), then its prompt's cache crosses a link (models/kv_link.h) and
 * it goes to the decode fleet with its whole output (replica_enqueue_prefilled).  Which
 * stage a request is at is whether it has a token: a request whose replica was lost
 * comes back with none, and is prefilled again. */
#include "models/serving.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/arrivals.h"
#include "models/event_order.h"
#include "models/serving_fleet.h"
#include "sim/array.h"
#include "sim/fatal.h"
#include "sim/rng.h"

/* A request in flight, with what the workload keeps of it: its prefix for the fleet's
 * cache, and its session.  The replica's request comes first, so that the one is the
 * other. */
typedef struct serving_request {
    /* on a cache line of its own start: what a batch touches of a running request is
     * then one line (llm_request's first fields) */
    _Alignas(64) llm_request q;
    fleet_prefix prefix;
    session *session;          /* NULL: a request of its own */
    /* disaggregated: the decode fleet and replica its cache is bound for (NULL: chosen
     * when it arrives), and the bytes its link carried */
    serving_fleet *bound_to;
    fleet_binding binding;
    double sent_bytes;
    /* a trace row's block ids (prefix.chain.ids points here); kept, with its room,
     * when the request goes back to the free list, so a reused one rarely grows it */
    uint64_t *ids;
    size_t ids_cap;
} serving_request;

/* Requests in flight come from a free list: memory follows the requests in the system,
 * not the number served. */
typedef struct request_block {
    struct request_block *next;
    serving_request items[256];
} request_block;

enum { MAX_FLEETS = SERVING_GROUPS_MAX }; /* own, then config.groups */

struct serving {
    sim_engine *engine;
    serving_config config;
    serving_group_config own;  /* fleet 0's configuration, gathered from config */
    serving_fleet *fleets[MAX_FLEETS];
    serving_role roles[MAX_FLEETS];      /* the own pool's: ROLE_SERVE */
    unsigned thresholds[MAX_FLEETS];     /* saturated at (serving_group.threshold) */
    unsigned nfleets;
    /* the fleets' indices by role: the front (the own pool and the serve groups, which
     * take new requests), the decode groups, the overflow cascade in its order */
    unsigned front[MAX_FLEETS], decoders[MAX_FLEETS], overflows[MAX_FLEETS];
    unsigned nfront, ndecoders, noverflows;
    autoscale_memory scaling[MAX_FLEETS];
    struct fleet_tick { serving *s; unsigned index; } ticks[MAX_FLEETS]; /* autoscaler events */
    unsigned spilled[MAX_FLEETS]; /* requests that found the own pool saturated while this
                                     (overflow) fleet had no replica, since its last
                                     evaluation: they call for a first replica */
    llm_request *pending_head, *pending_tail; /* no replica ready to take them */
    unsigned npending;
    llm_request *decode_head, *decode_tail; /* disaggregated: caches that arrived while
                                               no decode replica was ready */
    unsigned ndecode;
    kv_links *links[MAX_FLEETS]; /* disaggregated: each front fleet's, prefill to decode;
                                    else NULL */
    arrivals *arrivals;
    sessions *sessions;       /* NULL without sessions */
    gsl_rng *route_rng, *rtt_rng;
    gsl_rng *system_rng;      /* several system prompts without sessions: which one */
    double system_weight;
    gsl_rng *acceptance_rng;   /* speculative decoding's per-request draws, or NULL */
    gsl_rng *adapter_rng;      /* multi-LoRA's adapter draws, or NULL */
    char error[512];
    llm_request *free_list;
    unsigned in_system;       /* requests taken and not yet given back */
    double idle_since_s;      /* scale to zero: when in_system last fell to 0 */
    sim_event_id idle_check;  /* pending on_idle_check, or 0 */
    request_block *blocks;
    size_t nblocks;
    uint64_t next_id;
    serving_stats stats;
    serving_bucket bucket;
    serving_bucket view;      /* the last closed bucket, handed out */
    double bucket_start_s;
};

/* The configuration of fleet i (0: own, then config.groups). */
static const serving_group_config *fleet_config(const serving *s, unsigned i)
{
    return i == 0 ? &s->own : &s->config.groups[i - 1].fleet;
}

static const char *const ROLE_NAMES[] = { "serve", "decode", "overflow" };

const char *serving_role_name(serving_role role) { return ROLE_NAMES[role]; }

void serving_role_label(serving_role role, unsigned nth, unsigned of, char *out, size_t size)
{
    const char *name = role == ROLE_SERVE ? "serving" : ROLE_NAMES[role];
    if (of > 1)
        snprintf(out, size, "the %s pool %u", name, nth);
    else
        snprintf(out, size, "the %s pool", name);
}

static void route(serving *s, llm_request *q);

static llm_request *request_take(serving *s)
{
    if (!s->free_list) {
        request_block *b = aligned_alloc(_Alignof(request_block), sizeof *b);
        if (b)
            memset(b, 0, sizeof *b);
        if (!b)
            sim_out_of_memory("out of memory for requests in flight");
        b->next = s->blocks;
        s->blocks = b;
        s->nblocks++;
        for (size_t i = 0; i < 256; i++) {
            b->items[i].q.next = s->free_list;
            s->free_list = &b->items[i].q;
        }
    }
    llm_request *q = s->free_list;
    s->free_list = q->next;
    memset(q, 0, offsetof(serving_request, ids));
    s->in_system++;
    return q;
}

static serving_request *request_of(llm_request *q) { return (serving_request *)q; }

/* fleet_events.prefix */
static fleet_prefix *prefix_of(void *owner, llm_request *q) { return &request_of(q)->prefix; }

static void on_idle_check(sim_engine *e, void *data);

/* Scale to zero: the workload's replicas go once it has had no request for the idle
 * time (checked when it empties, and again at the time it would be up). */
static void idle_check_at(serving *s, double at)
{
    if (!s->idle_check)
        s->idle_check = sim_event_schedule(s->engine, at, EVENT_FLEET, on_idle_check, s);
}

static void on_idle_check(sim_engine *e, void *data)
{
    serving *s = data;
    s->idle_check = 0;
    if (s->in_system > 0)
        return; /* checked again when it next empties */
    double due = s->idle_since_s + s->config.scale_to_zero_s;
    if (sim_engine_now(e) >= due)
        serving_fleet_set_target(s->fleets[0], 0);
    else
        idle_check_at(s, due);
}

static void request_give(serving *s, llm_request *q)
{
    q->next = s->free_list;
    s->free_list = q;
    if (--s->in_system == 0 && s->config.scale_to_zero_s > 0) {
        s->idle_since_s = sim_engine_now(s->engine);
        idle_check_at(s, s->idle_since_s + s->config.scale_to_zero_s);
    }
}

static void bucket_clear(serving_bucket *b)
{
    b->arrived = b->completed = b->dropped = 0;
    b->output_tokens = 0;
    for (unsigned g = 0; g < SERVING_GROUPS_MAX; g++)
        b->groups[g] = (serving_group_bucket){ 0 };
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
    b->groups[group].output_tokens += q->output;
    b->groups[group].responses++;
    sim_stat_add(&b->ttft_s, ttft);
    sim_histogram_add(&b->ttft_hist_s, ttft);
    sim_stat_add(&b->e2e_s, e2e);
    sim_histogram_add(&b->e2e_hist_s, e2e);
    sim_stat_add(&b->queue_wait_s, q->admitted_s - q->arrival_s);
    if (!isnan(tpot))
        sim_stat_add(&b->tpot_s, tpot);
}

/* The links of front fleet i's caches (models/kv_link.h). */
static const kv_link_spec *link_spec(const serving *s, unsigned i)
{
    return i == 0 ? &s->config.link : &s->config.groups[i - 1].link;
}

/* Whether front fleet `fleet`'s link takes a cache of `bytes` now: with max_wait, only
 * when it would arrive within it behind the transfers in flight (sharing the link, each
 * moves at W / n, so about (n + 1) of these sizes go before its last byte); else
 * transfers would pile up without bound on a link slower than the prefills. */
static bool link_takes(const serving *s, unsigned fleet, unsigned link, double bytes)
{
    double max_wait = fleet_config(s, fleet)->replica.max_wait_s;
    if (!(max_wait > 0))
        return true;
    double n = kv_links_in_flight(s->links[fleet], link);
    const kv_link_spec *spec = link_spec(s, fleet);
    return n == 0 || spec->latency_s + (n + 1) * bytes / spec->bandwidth_bytes_per_s
                         <= max_wait;
}

static serving_fleet *least_loaded(serving *s, const unsigned *idx, unsigned n);

/* Sends prefilled q's cache from front fleet `fleet` over its link; false when the link
 * cannot take it within max_wait.  With prefix caching the decode replica is chosen
 * first (as Dynamo's and Mooncake's routers choose), q bound to it, and the link carries
 * only what that replica's prefix cache does not hold (what it evicts before q's
 * admission is pulled then: replica_prefix_held); where no decode replica is ready, or
 * without prefix caching, the whole cache travels and its replica is chosen when it
 * arrives. */
static bool send_cache(serving *s, llm_request *q, unsigned fleet)
{
    serving_request *sr = request_of(q);
    unsigned link = kv_link_of(link_spec(s, fleet), q->unit, fleet_config(s, fleet)->replica.tp);
    const model_spec *m = s->config.replica.model;
    sr->bound_to = NULL;
    double held = 0;
    if (s->config.prefix_block) {
        serving_fleet *f = least_loaded(s, s->decoders, s->ndecoders);
        int bound = f ? serving_fleet_bind(f, q, &sr->binding, s->error, sizeof s->error) : 0;
        if (bound < 0) {
            sim_engine_stop(s->engine);
            return true; /* the run ends here */
        }
        if (bound > 0) {
            sr->bound_to = f;
            held = model_attended_tokens(m, q->brought_held);
        }
    }
    /* a sliding window's layers send only the window they keep */
    double bytes = s->config.kv_bytes_per_token * (model_attended_tokens(m, q->cached) - held);
    if (link_takes(s, fleet, link, bytes)) {
        sr->sent_bytes = bytes;
        kv_links_send(s->links[fleet], link, bytes, q);
        return true;
    }
    if (sr->bound_to)
        serving_fleet_unbind(sr->bound_to, &sr->binding, q);
    sr->bound_to = NULL;
    return false;
}

/* fleet_events.done: a request ended (finished, or dropped) on a replica of a fleet. */
static void on_request_done(void *owner, llm_request *q, bool dropped, unsigned fleet)
{
    serving *s = owner;
    serving_stats *st = &s->stats;
    bool disaggregated = s->ndecoders > 0;
    bool decoded = disaggregated && s->roles[fleet] == ROLE_DECODE;
    if (disaggregated) {
        q->output = q->full_output;
        if (s->links[fleet] && !dropped && q->output > 1) { /* prefilled: its cache moves */
            q->prefill_admitted_s = q->admitted_s;
            if (send_cache(s, q, fleet))
                return;
            dropped = true; /* the link could not carry it within max_wait */
        }
    }
    double decode_admitted_s = q->admitted_s;
    if (decoded)
        q->admitted_s = q->prefill_admitted_s; /* users waited for the prefill's */
    double ttft = NAN, tpot = NAN, e2e = NAN, rtt = NAN;
    if (!dropped) {
        const serving_group_config *where = fleet_config(s, fleet);
        rtt = sim_dist_sample(&where->rtt_s, s->rtt_rng);
        if (where->spike_probability > 0
            && gsl_rng_uniform(s->rtt_rng) < where->spike_probability)
            rtt += sim_dist_sample(&where->spike_s, s->rtt_rng);
        ttft = q->first_token_s - q->arrival_s + rtt;
        e2e = q->finish_s - q->arrival_s + rtt;
        if (q->output > 1)
            tpot = (q->finish_s - q->first_token_s) / (q->output - 1);
    }
    record_bucket(s, q, dropped, ttft, tpot, e2e, fleet);
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
            if (disaggregated) {
                sim_stat_add(&st->ttft_queue_s, q->admitted_s - q->arrival_s);
                sim_stat_add(&st->ttft_prefill_s, q->first_token_s - q->admitted_s);
            }
            if (decoded) {
                double transfer = q->transferred_s - q->first_token_s;
                sim_stat_add(&st->transfer_s, transfer);
                sim_histogram_add(&st->transfer_hist_s, transfer);
                sim_stat_add(&st->decode_queue_s, decode_admitted_s - q->transferred_s);
                st->transfer_bytes += request_of(q)->sent_bytes
                                      + q->pulled * s->config.kv_bytes_per_token;
                st->transfers++;
            }
            if (s->config.prefix_block) {
                st->prefix_hits += q->prefix_hit > 0;
                st->prefix_cached_tokens += q->prefix_hit;
                for (unsigned i = 0; i < PREFIX_TIERS_MAX; i++)
                    st->prefix_fetched_tokens[i] += q->prefix_fetched[i];
            }
            const serving_config *c = &s->config;
            bool met = (!c->slo_ttft_s || ttft <= c->slo_ttft_s)
                       && (!c->slo_e2e_s || e2e <= c->slo_e2e_s)
                       && (!c->slo_tpot_s || isnan(tpot) || tpot <= c->slo_tpot_s);
            st->slo_met += met;
        }
    }
    /* (a request's session is NULL without sessions: its line is not read) */
    session *of = s->sessions ? request_of(q)->session : NULL;
    unsigned answered = q->output;
    request_give(s, q);
    if (of)
        sessions_turn_ended(s->sessions, of, !dropped, answered);
    arrivals_request_ended(s->arrivals);
}

/* kv_link_done_fn: a prefilled request's cache reached the decode pool. */
static void on_transferred(void *owner, void *item)
{
    serving *s = owner;
    llm_request *q = item;
    q->transferred_s = sim_engine_now(s->engine);
    serving_request *sr = request_of(q);
    serving_fleet *bound = sr->bound_to;
    sr->bound_to = NULL;
    /* where its replica went meanwhile (lost, or given back), it is routed as a lost
     * replica's requests are */
    if (!bound || !serving_fleet_deliver(bound, &sr->binding, q))
        route(s, q);
}

/* ---- routing between fleets --------------------------------------------------------- */

static void pend(llm_request **head, llm_request **tail, unsigned *n, llm_request *q)
{
    q->next = NULL;
    if (*tail)
        (*tail)->next = q;
    else
        *head = q;
    *tail = q;
    (*n)++;
}

static llm_request *unpend(llm_request **head, llm_request **tail, unsigned *n)
{
    llm_request *q = *head;
    *head = q->next;
    if (!*head)
        *tail = NULL;
    (*n)--;
    return q;
}

/* Whether any of the fleets named by idx has a replica ready. */
static bool any_ready(const serving *s, const unsigned *idx, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (serving_fleet_active(s->fleets[idx[i]]) > 0)
            return true;
    return false;
}

/* Whether fleet i orders replicas for the demand it sees: it has an autoscaler, or it
 * is the own pool scaling to zero (route() raises its target). */
static bool grows(const serving *s, unsigned i)
{
    const serving_group_config *c = fleet_config(s, i);
    return (c->pool && c->autoscaler && c->autoscaler->enabled)
           || (i == 0 && s->config.scale_to_zero_s > 0);
}

/* Of the fleets named by idx, the first that grows and has no replica ready; NO_FLEET
 * when none. */
enum { NO_FLEET = UINT_MAX };
static unsigned first_growing_from_zero(const serving *s, const unsigned *idx, unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        if (grows(s, idx[k]) && serving_fleet_active(s->fleets[idx[k]]) == 0)
            return idx[k];
    return NO_FLEET;
}

/* Of the fleets named by idx (a role's), the one whose least loaded ready replica holds
 * the fewest requests, the first among equals; NULL when none has a replica ready.
 * Where it has no idle replica, a fleet with none ready would have taken the request
 * with its first, and the first such fleet that can grow (a tie goes to the earlier)
 * counts it as demand for one (spilled, its autoscaler's): one replica ordered, not one
 * a fleet.  One fleet alone has its waiting list instead. */
static serving_fleet *least_loaded(serving *s, const unsigned *idx, unsigned n)
{
    if (n == 1)
        return serving_fleet_active(s->fleets[idx[0]]) > 0 ? s->fleets[idx[0]] : NULL;
    serving_fleet *best = NULL;
    unsigned least = UINT_MAX;
    for (unsigned i = 0; i < n; i++) {
        unsigned load = serving_fleet_least_load(s->fleets[idx[i]]);
        if (load < least) {
            least = load;
            best = s->fleets[idx[i]];
        }
    }
    unsigned grower = best && least > 0 ? first_growing_from_zero(s, idx, n) : NO_FLEET;
    if (grower != NO_FLEET)
        s->spilled[grower]++;
    return best;
}

/* Whether every front fleet is saturated (or has no replica ready). */
static bool front_saturated(const serving *s)
{
    for (unsigned i = 0; i < s->nfront; i++)
        if (!serving_fleet_saturated(s->fleets[s->front[i]], s->thresholds[s->front[i]]))
            return false;
    return true;
}

/* The front is saturated: the overflow cascade's first group not saturated (or its
 * last), when it has a replica ready.  Every group on the way with none ready (passed
 * over as saturated) notes the request as demand for its first (spilled); where the
 * one reached has none, the nearest group before it with one takes the request; NULL
 * when none has. */
static serving_fleet *spill(serving *s)
{
    unsigned k = 0;
    for (;; k++) {
        unsigned i = s->overflows[k];
        bool ready = serving_fleet_active(s->fleets[i]) > 0;
        if (!ready)
            s->spilled[i]++; /* demand for a pool that has no replica yet */
        if (k + 1 == s->noverflows || (ready && !serving_fleet_saturated(s->fleets[i],
                                                                        s->thresholds[i])))
            break;
    }
    unsigned target = s->overflows[k];
    if (serving_fleet_active(s->fleets[target]) > 0)
        return s->fleets[target];
    while (k-- > 0)
        if (serving_fleet_active(s->fleets[s->overflows[k]]) > 0)
            return s->fleets[s->overflows[k]];
    return NULL;
}

/* arrivals_config.ahead: where a request goes is known before it is drawn when one
 * front fleet takes it whole (route's common case) */
static void fetch_route(const void *owner)
{
    const serving *s = owner;
    if (s->nfront == 1 && !s->ndecoders && !s->noverflows)
        serving_fleet_fetch_route(s->fleets[s->front[0]]);
}

/* Disaggregated: a request with a token to a decode fleet, else to a front fleet to
 * prefill it and make its first token; to the stage's waiting list while it has no
 * replica ready. */
static void route_stage(serving *s, llm_request *q)
{
    bool decode = q->generated > 0;
    serving_fleet *f = decode ? least_loaded(s, s->decoders, s->ndecoders)
                              : least_loaded(s, s->front, s->nfront);
    if (!decode)
        q->output = 1;
    if (!f) {
        if (decode) {
            /* max_wait bounds this wait as a decode replica's queue does: the caches in
             * arrival order, the expired ones at the head go */
            unsigned first = s->decoders[0];
            double max_wait = fleet_config(s, first)->replica.max_wait_s;
            double now = sim_engine_now(s->engine);
            while (max_wait > 0 && s->decode_head
                   && now - s->decode_head->transferred_s > max_wait)
                on_request_done(s, unpend(&s->decode_head, &s->decode_tail, &s->ndecode), true,
                                first);
            pend(&s->decode_head, &s->decode_tail, &s->ndecode, q);
        } else
            pend(&s->pending_head, &s->pending_tail, &s->npending, q);
        return;
    }
    int routed = decode ? serving_fleet_route_prefilled(f, q, s->error, sizeof s->error)
                        : serving_fleet_route(f, q, s->error, sizeof s->error);
    if (routed < 0)
        sim_engine_stop(s->engine);
}

/* To a front fleet, or down the overflow cascade when every front fleet is saturated,
 * or to the pending queue while no replica is ready. */
static void route(serving *s, llm_request *q)
{
    if (s->ndecoders) {
        /* a new request spills whole to an overflow pool (prefilled and decoded there)
         * when every prefill replica is saturated and the cascade has one ready */
        serving_fleet *o = q->generated == 0 && s->noverflows && front_saturated(s)
                               ? spill(s) : NULL;
        if (o) {
            q->output = q->full_output; /* whole there, though it waited to prefill */
            if (serving_fleet_route(o, q, s->error, sizeof s->error) < 0)
                sim_engine_stop(s->engine);
            return;
        }
        route_stage(s, q);
        return;
    }
    serving_fleet *own = s->fleets[0];
    if (s->config.scale_to_zero_s > 0 && serving_fleet_target(own) < s->config.replicas)
        serving_fleet_set_target(own, s->config.replicas); /* a cold start (or more) */
    serving_fleet *chosen = s->noverflows && front_saturated(s) ? spill(s) : NULL;
    if (!chosen)
        chosen = least_loaded(s, s->front, s->nfront);
    if (!chosen) { /* no replica ready: wait for one */
        pend(&s->pending_head, &s->pending_tail, &s->npending, q);
        return;
    }
    if (serving_fleet_route(chosen, q, s->error, sizeof s->error) < 0)
        sim_engine_stop(s->engine);
}

static bool any_replica_ready(const serving *s)
{
    return any_ready(s, s->front, s->nfront) || any_ready(s, s->decoders, s->ndecoders)
           || any_ready(s, s->overflows, s->noverflows);
}

/* fleet_events.ready: the requests that waited for a replica go to those now ready. */
static void on_fleet_ready(void *owner)
{
    serving *s = owner;
    if (s->ndecoders) { /* each stage's waiting list to its own fleets */
        while (s->pending_head && any_ready(s, s->front, s->nfront))
            route(s, unpend(&s->pending_head, &s->pending_tail, &s->npending));
        while (s->decode_head && any_ready(s, s->decoders, s->ndecoders))
            route(s, unpend(&s->decode_head, &s->decode_tail, &s->ndecode));
        return;
    }
    double now = sim_engine_now(s->engine);
    while (s->pending_head && any_replica_ready(s)) {
        llm_request *q = unpend(&s->pending_head, &s->pending_tail, &s->npending);
        if (q->arrival_s >= s->config.warmup_s)
            sim_stat_add(&s->stats.cold_wait_s, now - q->arrival_s);
        route(s, q);
    }
}

/* fleet_events.reroute: a lost replica's request, routed again. */
static void on_reroute(void *owner, llm_request *q) { route(owner, q); }

/* ---- autoscaling ------------------------------------------------------------------- */

/* The requests waiting because no replica of fleet i's stage is ready, if fleet i is the
 * one to grow for them: the first fleet of the stage that can (in the stage's order:
 * the front, then without disaggregation the overflow cascade; or the decode pools),
 * else none.  Every pool of a stage counting the whole list would each order replicas
 * for the same requests. */
static unsigned waiting_for(const serving *s, unsigned i)
{
    if (s->roles[i] == ROLE_DECODE)
        return first_growing_from_zero(s, s->decoders, s->ndecoders) == i ? s->ndecode : 0;
    unsigned owner = first_growing_from_zero(s, s->front, s->nfront);
    if (owner == NO_FLEET && !s->ndecoders)
        owner = first_growing_from_zero(s, s->overflows, s->noverflows);
    return owner == i ? s->npending : 0;
}

/* Every interval: the fleet's view, completed with what waits here, then the policy's
 * target (a scenario's function, or the built-in target tracking). */
static void on_autoscale(sim_engine *e, void *data)
{
    const struct fleet_tick *tick = data;
    serving *s = tick->s;
    unsigned i = tick->index;
    serving_fleet *f = s->fleets[i];
    const autoscaler_spec *a = fleet_config(s, i)->autoscaler;
    double now = sim_engine_now(e);
    autoscale_view v = serving_fleet_observe(f, now);
    v.pending = waiting_for(s, i);
    v.outstanding += v.pending;
    v.spilled = s->spilled[i];
    unsigned target = serving_fleet_target(f);
    if (a->custom) {
        int wanted = a->custom(a->custom_context, &v, s->error, sizeof s->error);
        if (wanted < 0) {
            sim_engine_stop(e);
            return;
        }
        target = autoscale_clamp(&v, wanted);
    } else {
        target = autoscale_decide(a, &v, target, &s->scaling[i]);
    }
    s->spilled[i] = 0;
    serving_fleet_set_target(f, target);
    sim_event_schedule(e, now + a->interval_s, EVENT_FLEET, on_autoscale, data);
}

/* ---- life cycle -------------------------------------------------------------------- */

/* A request joins the workload: a session's turn (session not NULL, its chain given)
 * or a request of its own; a chain's block ids are copied into the request. */
static void join(serving *s, unsigned prompt, unsigned output, session *of,
                 const prefix_chain *chain)
{
    double now = sim_engine_now(s->engine);
    llm_request *q = request_take(s);
    serving_request *r = request_of(q);
    q->id = s->next_id++;
    r->session = of;
    if (chain)
        r->prefix.chain = *chain;
    if (chain && chain->ids) { /* never NULL: NULL would say it had no ids to name */
        r->ids = sim_array_grow(r->ids, &r->ids_cap, chain->nids ? chain->nids : 1,
                                sizeof *r->ids, "a request's block ids");
        memcpy(r->ids, chain->ids, chain->nids * sizeof *r->ids);
        r->prefix.chain.ids = r->ids;
    }
    q->arrival_s = now;
    q->prompt = prompt;
    q->output = output;
    q->full_output = output;
    q->brought_held = q->pulled = 0;
    unsigned k = s->config.replica.spec_k;
    double a = 0;
    if (k) {
        a = fmin(1, fmax(0, sim_dist_sample(&s->config.spec_acceptance, s->acceptance_rng)));
        q->spec_tokens = perf_speculative_tokens(a, k);
    }
    if (s->adapter_rng)
        q->adapter = lora_popularity_draw(s->config.lora, s->adapter_rng);
    if (now >= s->config.warmup_s) {
        s->stats.arrived++;
        if (k)
            sim_stat_add(&s->stats.acceptance, a);
    }
    s->bucket.arrived++;
    const model_spec *m = s->config.replica.model;
    if (m && m->context && (uint64_t)prompt + output > m->context) {
        /* an engine refuses a prompt that fills the context, and ends a generation
         * where the context does */
        bool counted = now >= s->config.warmup_s;
        if (prompt >= m->context) {
            s->stats.over_context += counted;
            on_request_done(s, q, true, 0);
            return;
        }
        q->output = q->full_output = m->context - prompt;
        s->stats.truncated += counted;
    }
    route(s, q);
}

/* sessions_config.turn */
static void on_turn(void *owner, const session_turn *t)
{
    join(owner, t->prompt, t->output, t->session, &t->chain);
}

/* arrivals_config.arrive: a request, or a session, arrives; a trace's session (not 0)
 * names the request's own blocks, so its turns find each other's, and a trace's block
 * ids name each block (no system prompt then: the ids cover the whole prompt). */
static void admit_request(void *owner, unsigned prompt, unsigned output,
                          uint64_t trace_session, const uint64_t *blocks, unsigned nblocks)
{
    serving *s = owner;
    if (s->sessions) {
        sessions_begin(s->sessions);
        return;
    }
    prefix_chain chain = { .own = trace_session ? trace_session : s->next_id + 1,
                           .ids = blocks, .nids = nblocks };
    if (blocks) { /* a partial last block's id is never cached: the answer fills that
                     block, whose whole content the next turn's ids name */
        unsigned b = s->config.trace->block_tokens ? s->config.trace->block_tokens
                                                   : TRACE_BLOCK_TOKENS;
        if (chain.nids > prompt / b)
            chain.nids = prompt / b;
    }
    if (s->config.nsystem_prompts) { /* the system prompt it begins with */
        unsigned k = system_prompt_draw(s->config.system_prompts, s->config.nsystem_prompts,
                                        s->system_weight, s->system_rng, &chain.shared);
        unsigned system = s->config.system_prompts[k].tokens;
        chain.shared_tokens = system;
        prompt = (uint64_t)prompt + system > 10000000 ? 10000000 : prompt + system;
    }
    join(s, prompt, output, NULL, &chain);
}

static void on_warmup_end(sim_engine *e, void *data)
{
    serving *s = data;
    for (unsigned i = 0; i < s->nfleets; i++)
        serving_fleet_restart_stats(s->fleets[i], sim_engine_now(e));
}

serving *serving_create(sim_engine *engine, const serving_config *config, char *err,
                        size_t err_size)
{
    config_problems problems = { 0 };
    serving_config_check(config, &problems);
    if (problems.n) {
        config_problems_join(&problems, err, err_size);
        return NULL;
    }
    serving *s = calloc(1, sizeof *s);
    if (!s)
        sim_out_of_memory("out of memory creating a serving workload");
    s->engine = engine;
    s->config = *config;
    if (!s->config.overflow_threshold)
        s->config.overflow_threshold = config->replica.max_batch;
    const char *name = config->streams ? config->streams
                       : config->name ? config->name : "inference";
    char stream[256];
    gsl_rng **rngs[] = { &s->route_rng, &s->rtt_rng };
    const char *suffix[] = { "routing", "network" };
    for (int i = 0; i < 2; i++) {
        snprintf(stream, sizeof stream, "%s.%s", name, suffix[i]);
        *rngs[i] = sim_rng_stream(config->seed, config->replication, stream);
    }
    if (config->replica.spec_k) {
        snprintf(stream, sizeof stream, "%s.acceptance", name);
        s->acceptance_rng = sim_rng_stream(config->seed, config->replication, stream);
    }
    if (config->lora) {
        snprintf(stream, sizeof stream, "%s.adapter", name);
        s->adapter_rng = sim_rng_stream(config->seed, config->replication, stream);
    }
    const serving_config *c = config;
    arrivals_config ac = {
        .name = name, .seed = c->seed, .replication = c->replication,
        .interarrival = c->interarrival, .prompt_tokens = c->prompt_tokens,
        .output_tokens = c->output_tokens, .trace = c->trace,
        .lengths_from_trace = c->lengths_from_trace, .loop = c->loop, .sample = c->sample,
        .traffic = c->traffic, .max_arrivals = c->max_arrivals,
        .arrive = admit_request, .owner = s, .ahead = fetch_route,
    };
    s->arrivals = arrivals_create(engine, &ac);
    if (c->sessions) {
        sessions_config sc = {
            .spec = c->sessions, .system = c->system_prompts, .nsystem = c->nsystem_prompts,
            .output_tokens = c->output_tokens, .name = name, .seed = c->seed,
            .replication = c->replication, .warmup_s = c->warmup_s, .turn = on_turn, .owner = s,
        };
        s->sessions = sessions_create(engine, &sc);
    } else if (system_prompt_drawn(c->system_prompts, c->nsystem_prompts)) {
        snprintf(stream, sizeof stream, "%s.system", name);
        s->system_rng = sim_rng_stream(c->seed, c->replication, stream);
        for (unsigned i = 0; i < c->nsystem_prompts; i++)
            s->system_weight += c->system_prompts[i].weight;
    }
    bool to_zero = c->scale_to_zero_s > 0;
    s->own = (serving_group_config){
        .pool_name = c->pool_name, .replica = c->replica, .replicas = to_zero ? 0 : c->replicas,
        .min = to_zero ? 0 : c->min_replicas,
        .max = c->max_replicas ? c->max_replicas : c->replicas,
        .pool = c->pool, .autoscaler = c->autoscaler, .rtt_s = c->rtt_s,
        .spike_probability = c->spike_probability, .spike_s = c->spike_s,
        .sharing = c->sharing, .noisy = c->noisy, .units_per_gpu = c->units_per_gpu,
        .load_s = c->load_s, .tenants = c->tenants,
    };
    s->nfleets = 1 + c->ngroups;
    s->roles[0] = ROLE_SERVE;
    s->thresholds[0] = s->config.overflow_threshold;
    for (unsigned i = 0; i < s->nfleets; i++) {
        const serving_group *g = i ? &c->groups[i - 1] : NULL;
        serving_role role = g ? g->role : ROLE_SERVE;
        s->roles[i] = role;
        if (g)
            s->thresholds[i] = g->threshold ? g->threshold : g->fleet.replica.max_batch;
        if (role == ROLE_SERVE)
            s->front[s->nfront++] = i;
        else if (role == ROLE_DECODE)
            s->decoders[s->ndecoders++] = i;
        else
            s->overflows[s->noverflows++] = i;
    }
    for (unsigned k = 0; s->ndecoders && k < s->nfront; k++)
        s->links[s->front[k]] = kv_links_create(engine, link_spec(s, s->front[k]),
                                                on_transferred, s);
    for (unsigned i = 0; i < s->nfleets; i++) {
        const serving_group *g = i ? &c->groups[i - 1] : NULL;
        serving_fleet_config fc = {
            .group = *fleet_config(s, i), .index = i,
            .routing = { g ? g->routing : c->routing, g ? g->custom_route : c->custom_route,
                         g ? g->route_context : c->route_context, s->route_rng, name },
            .events = { s, on_request_done, on_fleet_ready, on_reroute, prefix_of },
            /* every pool's replicas cache prefixes, as engines do wherever they run (a
             * decode pool's, the caches they are sent, shared by their sequences) */
            .prefix = { c->prefix_block, c->affinity_bound },
            .warmup_s = c->warmup_s, .seed = c->seed, .replication = c->replication,
        };
        if (fc.group.replica.lora_slots)
            fc.group.replica.lora_stats = &s->stats.lora;
        if (s->roles[i] == ROLE_DECODE && c->prefix_block) { /* what it lacks comes from the prefill
                                                           side, over the own pool's links */
            replica_config *r = &fc.group.replica;
            r->pull_bytes_per_s = c->link.bandwidth_bytes_per_s;
            r->pull_latency_s = c->link.latency_s;
            if (!(r->kv_bytes_per_token > 0))
                r->kv_bytes_per_token = c->kv_bytes_per_token;
        }
        s->fleets[i] = serving_fleet_create(engine, &fc);
        s->scaling[i] = autoscale_memory_start();
        s->ticks[i] = (struct fleet_tick){ s, i };
    }
    serving_stats *st = &s->stats;
    sim_stat_reset(&st->ttft_s);
    sim_stat_reset(&st->tpot_s);
    sim_stat_reset(&st->e2e_s);
    sim_stat_reset(&st->queue_wait_s);
    sim_stat_reset(&st->ttft_queue_s);
    sim_stat_reset(&st->ttft_prefill_s);
    sim_stat_reset(&st->transfer_s);
    sim_stat_reset(&st->decode_queue_s);
    sim_stat_reset(&st->acceptance);
    sim_stat_reset(&st->cold_wait_s);
    sim_histogram_init(&st->transfer_hist_s);
    sim_stat_reset(&st->lora.wait_s);
    sim_histogram_init(&st->lora.wait_hist_s);
    st->lora.warmup_s = c->warmup_s;
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
    double span = now - s->bucket_start_s;
    serving_group_bucket measured[SERVING_GROUPS_MAX] = { { 0 } };
    for (unsigned g = 0; g < s->nfleets; g++) {
        double sums[3], replica_s;
        serving_group_bucket *m = &measured[g];
        serving_fleet_bucket_sums(s->fleets[g], now, sums, &replica_s, &m->work);
        m->busy = replica_s > 0 ? sums[0] / replica_s : NAN;
        m->batch = replica_s > 0 ? sums[1] / replica_s : NAN;
        m->kv = replica_s > 0 ? sums[2] / replica_s : NAN;
        m->replicas = span > 0 ? replica_s / span : NAN;
    }
    /* swap, so the view owns this bucket's histograms and the next bucket reuses the
     * view's old memory */
    serving_bucket closed = s->bucket;
    s->bucket = *view;
    *view = closed;
    for (unsigned g = 0; g < s->nfleets; g++) { /* the served counts came with the bucket */
        measured[g].output_tokens = view->groups[g].output_tokens;
        measured[g].responses = view->groups[g].responses;
        view->groups[g] = measured[g];
    }
    bucket_clear(&s->bucket);
    s->bucket_start_s = now;
    return view;
}

void serving_start(serving *s)
{
    double now = sim_engine_now(s->engine);
    if (s->config.warmup_s > now)
        sim_event_schedule(s->engine, s->config.warmup_s, EVENT_WARMUP, on_warmup_end, s);
    for (unsigned i = 0; i < s->nfleets; i++) {
        serving_fleet_start(s->fleets[i]);
        const serving_group_config *c = fleet_config(s, i);
        if (c->pool && c->autoscaler && c->autoscaler->enabled)
            sim_event_schedule(s->engine, now + c->autoscaler->interval_s, EVENT_FLEET,
                               on_autoscale, &s->ticks[i]);
    }
    arrivals_start(s->arrivals);
}

const char *serving_error(const serving *s)
{
    return s->error[0] ? s->error : arrivals_error(s->arrivals);
}

void serving_free(serving *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < s->nfleets; i++) /* requests live in the blocks freed below */
        serving_fleet_free(s->fleets[i]);
    for (unsigned i = 0; i < s->nfleets; i++)
        kv_links_free(s->links[i]);
    while (s->blocks) {
        request_block *next = s->blocks->next;
        for (size_t i = 0; i < 256; i++)
            free(s->blocks->items[i].ids);
        free(s->blocks);
        s->blocks = next;
    }
    arrivals_free(s->arrivals);
    sessions_free(s->sessions);
    gsl_rng_free(s->system_rng);
    gsl_rng_free(s->route_rng);
    if (s->acceptance_rng)
        gsl_rng_free(s->acceptance_rng);
    if (s->adapter_rng)
        gsl_rng_free(s->adapter_rng);
    gsl_rng_free(s->rtt_rng);
    sim_histogram_release(&s->stats.ttft_hist_s);
    sim_histogram_release(&s->stats.tpot_hist_s);
    sim_histogram_release(&s->stats.e2e_hist_s);
    sim_histogram_release(&s->stats.lora.wait_hist_s);
    sim_histogram_release(&s->stats.transfer_hist_s);
    sim_histogram_release(&s->bucket.ttft_hist_s);
    sim_histogram_release(&s->bucket.e2e_hist_s);
    sim_histogram_release(&s->view.ttft_hist_s);
    sim_histogram_release(&s->view.e2e_hist_s);
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

double serving_batch_max(const serving *s)
{
    double m = 0;
    for (unsigned i = 0; i < s->nfleets; i++)
        m = fmax(m, serving_fleet_batch_max(s->fleets[i]));
    return m;
}

double serving_kv_max(const serving *s)
{
    double m = 0;
    for (unsigned i = 0; i < s->nfleets; i++)
        m = fmax(m, serving_fleet_kv_max(s->fleets[i]));
    return m;
}

unsigned serving_groups(const serving *s) { return s->nfleets; }

sessions_stats serving_sessions_stats(const serving *s)
{
    return s->sessions ? sessions_get_stats(s->sessions) : (sessions_stats){ 0 };
}

serving_group_stats serving_group_get_stats(const serving *s, unsigned group, double end_s)
{
    return serving_fleet_stats(s->fleets[group], end_s);
}

uint64_t serving_preemptions(const serving *s)
{
    uint64_t n = 0;
    for (unsigned g = 0; g < s->nfleets; g++)
        n += serving_group_get_stats(s, g, sim_engine_now(s->engine)).kv_preemptions;
    return n;
}

uint64_t serving_replica_events(const serving *s)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < s->nfleets; i++)
        n += serving_fleet_replica_events(s->fleets[i]);
    return n;
}

static size_t links_memory_bytes(const serving *s)
{
    size_t n = 0;
    for (unsigned i = 0; i < s->nfleets; i++)
        n += s->links[i] ? kv_links_memory_bytes(s->links[i]) : 0;
    return n;
}

size_t serving_memory_bytes(const serving *s)
{
    size_t caches = 0;
    for (unsigned i = 0; i < s->nfleets; i++)
        caches += serving_fleet_prefix_memory_bytes(s->fleets[i]);
    return caches + sizeof *s + s->nblocks * sizeof(request_block)
           + sim_histogram_memory_bytes(&s->stats.ttft_hist_s)
           + sim_histogram_memory_bytes(&s->stats.tpot_hist_s)
           + sim_histogram_memory_bytes(&s->stats.e2e_hist_s)
           + sim_histogram_memory_bytes(&s->stats.transfer_hist_s)
           + links_memory_bytes(s)
           + (s->sessions ? sessions_memory_bytes(s->sessions) : 0);
}
