/* LLM inference workloads in a run: each one's serving (models/serving.h) on its pool's
 * GPUs, its buckets, its metrics, and its cost per token (see run_part.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/event_order.h"
#include "models/memory.h"
#include "models/overload.h"
#include "models/pool_tenants.h"
#include "models/run.h"
#include "models/run_part.h"
#include "models/serving.h"
#include "models/workload_groups.h"
#include "sim/fatal.h"

typedef struct inference_run {
    const scenario *sc;
    serving_group others[SERVING_GROUPS_MAX - 1]; /* the serving's groups beside its own
                                                     pool, while it runs */
    const inference_spec *spec;
    pool_gpus *pools;          /* the run's, by pool: where its work and egress are billed */
    serving *sv;
    sim_timeseries *ts;
    /* where each group's replicas are reported: the own pool's (or "<pool>/<workload>"
     * on a shared pool), then each group's pool */
    size_t pool_subjects[SERVING_GROUPS_MAX];
    size_t workload_subject;
    double bucket_start_s;
    /* queue waits of the requests completed in the first and the last third of the
     * measured window (by their bucket's middle): what overload is judged by */
    sim_stat wait_first, wait_last;
    /* A pool several models share: its arbiter (the first of its workloads owns it),
     * and where this workload's replicas are reported ("<pool>/<workload>") */
    pool_tenants *tenants;
    bool owns_tenants;
    char *shared_subject;
} inference_run;

/* Whether other inference workloads name w's pool as their own. */
static bool pool_is_shared(const scenario *sc, const inference_spec *w)
{
    for (size_t i = 0; i < sc->ninferences; i++)
        if (&sc->inferences[i] != w && sc->inferences[i].pool == w->pool)
            return true;
    return false;
}

/* A replica's cold start: the one given, else the derived one where models come and go
 * (a shared pool, or scaling to zero), else none (lua/cold_start_load.h). */
static double load_s_of(const scenario *sc, const inference_spec *w)
{
    if (w->has_cold_start || w->scale_to_zero_s > 0 || pool_is_shared(sc, w))
        return w->cold_start_s;
    return 0;
}

/* The prefix cache's tiers below GPU memory as a replica of `links` device links reaches
 * them: host RAM over its PCIe (models/kv_swap.h's achieved share and copy latency), a
 * shared store over its NICs at the network's latency, a disk as stated. */
static prefix_tiers tiers_of(const inference_spec *w, const device_spec *d,
                             const perf_profile *p, unsigned links, double bytes_per_token)
{
    prefix_tiers t = { 0 };
    for (unsigned k = 0; w->prefix_block && k < PREFIX_TIERS_MAX; k++) {
        const prefix_tier_spec *s = &w->prefix_tiers[k];
        if (!(s->size_bytes > 0))
            continue;
        bool host = k == PREFIX_TIER_HOST;
        double rate = s->bandwidth_bytes_per_s > 0 ? s->bandwidth_bytes_per_s
                      : host ? kv_swap_bandwidth(&(host_kv_spec){ 0 }, d, links)
                             : p->network_bytes_per_s * links;
        double latency = s->latency_s >= 0 ? s->latency_s
                         : host ? KV_SWAP_LATENCY_S : p->link_latency_s;
        double blocks = s->size_bytes / (bytes_per_token * w->prefix_block);
        t.tier[t.n++] = (prefix_tier){ (prefix_tier_kind)k, NULL, (size_t)blocks, rate,
                                       latency };
    }
    return t;
}

static replica_config replica_config_of(const scenario *sc, const inference_spec *w,
                                        size_t pool, size_t device, unsigned tp)
{
    const model_spec *m = &sc->catalog.models[w->model];
    const device_spec *d = &sc->catalog.devices[device];
    bool swap = w->kv_policy == KV_SWAP, offload = w->host_kv.offload && !swap;
    double bytes_per_token = model_kv_bytes_per_token(m, w->kv_prec);
    const model_spec *draft = w->has_spec_draft ? &sc->catalog.models[w->spec_draft] : NULL;
    const memory_reserve *reserve = inference_reserve(w);
    double device_tokens = draft ? memory_inference_with_draft_for(m, draft, d, w->prec, w->kv_prec,
                                                                   tp, w->attention_dp,
                                                                   reserve).kv_capacity_tokens
                                 : memory_inference_for(m, d, w->prec, w->kv_prec, tp,
                                                        w->attention_dp, reserve).kv_capacity_tokens;
    unsigned links = w->attention_dp ? 1 : tp;
    /* multi-LoRA: the adapters' slots take their bytes out of the cache */
    double lora_bytes = w->lora_slots ? lora_adapter_bytes(m, w->lora_rank, w->lora_projections, LORA_BYTES_PER_VALUE) : 0;
    device_tokens -= w->lora_slots * lora_bytes / bytes_per_token;
    double lora_load = !w->lora_slots ? 0 : w->lora_load_s > 0 ? w->lora_load_s
                       : lora_load_s(lora_bytes, kv_swap_bandwidth(&w->host_kv, d, links));
    perf_profile profile = inference_profile(sc, w, pool, d);
    return (replica_config){
        .model = m, .device = d, .prec = w->prec, .kv_prec = w->kv_prec,
        .profile = profile,
        .prefix_tiers = tiers_of(w, d, &profile, links, bytes_per_token),
        .tp = tp, .expert_parallel = w->expert_parallel, .expert_skew = w->expert_skew,
        .max_batch = w->max_batch, .max_tokens = w->max_tokens,
        .chunked_prefill = w->chunked_prefill,
        .attention_dp = w->attention_dp,
        .kv_capacity_tokens = device_tokens + kv_offload_tokens(&w->host_kv, bytes_per_token)
                                                  * offload,
        .kv_device_tokens = offload ? device_tokens : 0,
        .max_wait_s = w->max_wait_s, .reference = w->reference, .kv_policy = w->kv_policy,
        .host_kv_bytes = swap ? w->host_kv.size_bytes : 0,
        .host_kv_bytes_per_s = swap || offload ? kv_swap_bandwidth(&w->host_kv, d, links) : 0,
        .host_kv_latency_s = swap ? kv_swap_latency(&w->host_kv) : 0,
        .kv_bytes_per_token = bytes_per_token,
        .spec_k = w->spec_k, .draft = draft, .spec_step_s = w->spec_step_s,
        .spec_tokens = w->spec_k ? perf_speculative_tokens(sim_dist_mean(&w->spec_acceptance),
                                                           w->spec_k) : 0,
        .lora_slots = w->lora_slots, .lora_adapters = w->lora_popularity.adapters,
        .lora_load_s = lora_load, .lora_bytes = lora_bytes / tp,
        .lora_flops_per_token = w->lora_slots ? lora_flops_per_token(m, w->lora_rank,
                                                                     w->lora_projections) / tp
                                              : 0,
    };
}

/* The workload's groups: its own pool, then inference_spec.groups. */
static unsigned group_count(const inference_spec *w) { return 1 + w->ngroups; }

/* Group g (>= 1) as the serving model takes it. */
static serving_group_config group_config_of(const scenario *sc, const inference_spec *w,
                                            unsigned g, const pool_gpus *gpus)
{
    size_t pool = workload_group_pool(w, g);
    unsigned tp = workload_group_tp(w, g);
    const pool_spec *o = &sc->pools[pool];
    return (serving_group_config){
        .pool_name = o->name,
        .replica = replica_config_of(sc, w, pool, workload_group_device(w, g), tp),
        .replicas = o->count / tp, .min = o->min / tp,
        .max = o->capacity.max / tp, .pool = gpus[pool].gp,
        .autoscaler = &o->autoscaler,
        /* a decode pool answers where the prefill pool does; a serve or overflow pool
         * is reached at its own site's round trip */
        .rtt_s = w->has_rtt && w->groups[g - 1].role == ROLE_DECODE ? w->rtt_s
                                                                     : o->site.rtt_s,
        .spike_probability = o->site.spike_probability, .spike_s = o->site.spike_s,
        .sharing = &o->sharing, .noisy = o->has_noisy ? &o->noisy : NULL,
        .units_per_gpu = o->units_per_gpu,
    };
}

static serving_config serving_config_of(const scenario *sc, const inference_spec *w, unsigned r,
                                        const pool_gpus *gpus,
                                        serving_group *others)
{
    const pool_spec *pool = &sc->pools[w->pool];
    serving_config c = {
        .name = w->name, .streams = w->streams, .replicas = w->replicas, .routing = w->routing,
        .pool = gpus[w->pool].gp, .pool_name = pool->name,
        .min_replicas = pool->min / w->tp, .max_replicas = pool->capacity.max / w->tp,
        .autoscaler = &pool->autoscaler, .overflow_threshold = w->overflow_threshold,
        .sharing = &pool->sharing, .noisy = pool->has_noisy ? &pool->noisy : NULL,
        .units_per_gpu = pool->units_per_gpu,
        .custom_route = w->custom_route, .route_context = w->route_context,
        .interarrival = arrival_interarrival(&w->arrivals), .prompt_tokens = w->prompt_tokens,
        .output_tokens = w->output_tokens, .warmup_s = sc->warmup_s,
        .rtt_s = w->has_rtt ? w->rtt_s : sc->pools[w->pool].site.rtt_s,
        .spike_probability = sc->pools[w->pool].site.spike_probability,
        .spike_s = sc->pools[w->pool].site.spike_s,
        .slo_ttft_s = w->slo_ttft_s, .slo_tpot_s = w->slo_tpot_s, .slo_e2e_s = w->slo_e2e_s,
        .seed = sc->seed, .replication = r,
        .trace = w->has_trace ? &w->trace : NULL, .lengths_from_trace = w->lengths_from_trace,
        .loop = w->loop, .sample = w->sample,
        .traffic = w->has_traffic ? &w->traffic : NULL,
        .prefix_block = w->prefix_block, .affinity_bound = w->affinity_bound,
        .system_prompts = w->nsystem_prompts ? w->system_prompts : NULL,
        .nsystem_prompts = w->nsystem_prompts,
        .sessions = w->has_sessions ? &w->sessions : NULL,
        .spec_acceptance = w->spec_acceptance,
        .load_s = load_s_of(sc, w), .scale_to_zero_s = w->scale_to_zero_s,
        .lora = w->lora_slots ? &w->lora_popularity : NULL,
    };
    c.replica = replica_config_of(sc, w, w->pool, w->device, w->tp);
    for (unsigned i = 0; i < w->ngroups; i++) {
        /* decode replicas keep max_wait too, from the cache's arrival: without it the
         * requests prefilled faster than the decode pool serves them piled up without
         * bound (a prefill wasted is an engine's timeout under overload, and counted as
         * a drop) */
        const workload_group *g = &w->groups[i];
        others[i] = (serving_group){
            .role = g->role, .fleet = group_config_of(sc, w, i + 1, gpus),
            .routing = g->routing, .custom_route = g->custom_route,
            .route_context = g->route_context, .threshold = g->threshold,
            .link = g->kv_link,
        };
    }
    if (workload_decodes(w)) {
        c.link = w->kv_link;
        c.kv_bytes_per_token = model_kv_bytes_per_token(&sc->catalog.models[w->model],
                                                        w->kv_prec);
    }
    c.groups = others;
    c.ngroups = w->ngroups;
    return c;
}

static void record_inference_bucket(inference_run *ir, double end_s)
{
    double span = end_s - ir->bucket_start_s;
    if (!(span > 0))
        return;
    const serving_bucket *b = serving_bucket_close(ir->sv, end_s);
    const scenario *sc = ir->sc;
    double third = (sc->duration_s - sc->warmup_s) / 3, middle = ir->bucket_start_s + span / 2;
    if (middle > sc->warmup_s && middle < sc->warmup_s + third)
        sim_stat_merge(&ir->wait_first, &b->queue_wait_s);
    else if (middle > sc->duration_s - third && middle < sc->duration_s)
        sim_stat_merge(&ir->wait_last, &b->queue_wait_s);
    size_t bucket = run_bucket_index(ir->sc, ir->bucket_start_s);
    size_t w = ir->workload_subject;
    sim_timeseries *ts = ir->ts;
    const inference_spec *spec = ir->spec;
    unsigned ngroups = serving_groups(ir->sv);
    for (unsigned g = 0; g < ngroups; g++) {
        const serving_group_bucket *gb = &b->groups[g];
        size_t p = ir->pool_subjects[g];
        sim_timeseries_add(ts, bucket, p, COL_UTILIZATION, gb->busy);
        sim_timeseries_add(ts, bucket, p, COL_BATCH, gb->batch);
        sim_timeseries_add(ts, bucket, p, COL_KV, gb->kv);
        sim_timeseries_add(ts, bucket, p, COL_REPLICAS, gb->replicas);
        if (ngroups > 1) { /* what each pool served, where there are several */
            sim_timeseries_add(ts, bucket, p, COL_THROUGHPUT, gb->responses / span);
            sim_timeseries_add(ts, bucket, p, COL_TOKENS_PER_S, gb->output_tokens / span);
        }
    }
    sim_timeseries_add(ts, bucket, w, COL_ARRIVALS, (double)b->arrived);
    sim_timeseries_add(ts, bucket, w, COL_COMPLETED, (double)b->completed);
    sim_timeseries_add(ts, bucket, w, COL_DROPPED, (double)b->dropped);
    sim_timeseries_add(ts, bucket, w, COL_THROUGHPUT, (double)b->completed / span);
    sim_timeseries_add(ts, bucket, w, COL_TOKENS_PER_S, b->output_tokens / span);
    sim_timeseries_add(ts, bucket, w, COL_WAIT_MEAN, sim_stat_mean(&b->queue_wait_s));
    sim_timeseries_add(ts, bucket, w, COL_TTFT_MEAN, sim_stat_mean(&b->ttft_s));
    sim_timeseries_add(ts, bucket, w, COL_TTFT_P99, sim_histogram_quantile(&b->ttft_hist_s, 0.99));
    sim_timeseries_add(ts, bucket, w, COL_TPOT_MEAN, sim_stat_mean(&b->tpot_s));
    sim_timeseries_add(ts, bucket, w, COL_E2E_MEAN, sim_stat_mean(&b->e2e_s));
    sim_timeseries_add(ts, bucket, w, COL_E2E_P99, sim_histogram_quantile(&b->e2e_hist_s, 0.99));
    double tokens = 0;
    for (unsigned g = 0; g < ngroups; g++)
        tokens += b->groups[g].output_tokens;
    for (unsigned g = 0; g < ngroups; g++) {
        if (!ir->pools[workload_group_pool(spec, g)].gp)
            continue;
        /* each of a replica's tp devices works the replica's time */
        perf_phases work = perf_phases_add((perf_phases){ 0 }, b->groups[g].work,
                                           workload_group_tp(spec, g));
        /* a stated volume leaves from the pools in proportion to the tokens each served
         * (all from the workload's own when none were) */
        double share = tokens > 0 ? b->groups[g].output_tokens / tokens : g == 0;
        double bytes = spec->egress_bytes_per_day > 0
                           ? spec->egress_bytes_per_day * span / 86400 * share
                           : b->groups[g].output_tokens * spec->response_bytes_per_token
                                 + b->groups[g].responses * spec->response_bytes;
        pool_gpus_add_work(&ir->pools[workload_group_pool(spec, g)], &work, bytes, end_s);
    }
    ir->bucket_start_s = end_s;
}

/* The warm-up's end: the bucket so far closes, so the pools' meters hold its work when
 * they are read (a bucket split at the warm-up, as the pools' are). */
static void on_inference_warmup(sim_engine *e, void *data)
{
    record_inference_bucket(data, sim_engine_now(e));
}

static void on_inference_bucket(sim_engine *e, void *data)
{
    inference_run *ir = data;
    double now = sim_engine_now(e);
    record_inference_bucket(ir, now);
    sim_event_schedule(e, now + ir->sc->bucket_s, EVENT_BUCKET, on_inference_bucket, ir);
}

/* What a pool's replicas achieved as shares of their devices' peaks over their ready
 * time (MFU and MBU): 2 x active parameters FLOPs per token computed (attention left
 * out, as MFU counts it), and per iteration the weights once plus the cache read. */
typedef struct peak_shares {
    double compute, bandwidth;
} peak_shares;

static peak_shares peak_shares_of(const model_spec *m, const device_spec *d,
                                  const inference_spec *w, unsigned tp,
                                  const serving_group_stats *gs)
{
    peak_shares out = { NAN, NAN };
    if (!(gs->replica_s > 0))
        return out;
    inference_memory mem = memory_inference_for(m, d, w->prec, w->kv_prec, tp, w->attention_dp,
                                                inference_reserve(w));
    double device_s = gs->replica_s * tp;
    double flops = device_peak_flops(d, w->prec, NULL);
    double bytes = gs->iterations * mem.weights_bytes * tp
                   + gs->cache_tokens_read * mem.kv_bytes_per_token * tp;
    if (flops > 0)
        out.compute = 2 * model_params_active(m) * gs->tokens_computed / (device_s * flops);
    if (d->bandwidth_bytes_per_s > 0)
        out.bandwidth = bytes / (device_s * d->bandwidth_bytes_per_s);
    return out;
}

/* Disaggregated serving's own rows: TTFT's parts, the cache transfers, the wait for a
 * decode replica, and goodput (requests a second meeting every SLO). */
static void record_disaggregated(sim_metrics *m, const char *name, const serving_stats *st,
                                 double measured_s)
{
    sim_metrics_add(m, "workload", name, "ttft_queue_mean_s", "s", sim_stat_mean(&st->ttft_queue_s));
    sim_metrics_add(m, "workload", name, "ttft_prefill_mean_s", "s",
                    sim_stat_mean(&st->ttft_prefill_s));
    sim_metrics_add(m, "workload", name, "kv_transfer_mean_s", "s", sim_stat_mean(&st->transfer_s));
    sim_metrics_add(m, "workload", name, "kv_transfer_p99_s", "s",
                    sim_histogram_quantile(&st->transfer_hist_s, 0.99));
    sim_metrics_add(m, "workload", name, "kv_transfer_bytes", "bytes", st->transfer_bytes);
    sim_metrics_add(m, "workload", name, "kv_transfer_bytes_mean", "bytes",
                    st->transfers ? st->transfer_bytes / (double)st->transfers : NAN);
    sim_metrics_add(m, "workload", name, "decode_queue_mean_s", "s",
                    sim_stat_mean(&st->decode_queue_s));
    sim_metrics_add(m, "workload", name, "goodput_per_s", "requests/s",
                    measured_s > 0 ? (double)st->slo_met / measured_s : NAN);
}

/* Prefix caching's and sessions' own rows: the share of prompt tokens and of requests
 * that found a cached prefix, the prefill they skipped, the blocks evicted, how evenly
 * the replicas worked, and the sessions that ended. */
/* Multi-LoRA's metrics (only with lora: other runs' files stay as they were). */
static void record_lora(sim_metrics *m, const char *name, const lora_stats *l)
{
    sim_metrics_add(m, "workload", name, "adapter_hit_rate", "1",
                    l->admitted ? (double)l->hits / (double)l->admitted : NAN);
    sim_metrics_add(m, "workload", name, "adapter_loads", "loads", (double)l->loads);
    sim_metrics_add(m, "workload", name, "adapter_wait_mean_s", "s", sim_stat_mean(&l->wait_s));
    sim_metrics_add(m, "workload", name, "adapter_wait_p99_s", "s",
                    sim_histogram_quantile(&l->wait_hist_s, 0.99));
    sim_metrics_add(m, "workload", name, "adapters_per_iteration_mean", "adapters",
                    l->iterations > 0 ? l->distinct_sum / l->iterations : NAN);
}

/* The prefix cache's tiers below GPU memory (only where some are given): per pool, what
 * each gave its replicas' admissions and the time they waited for it; per workload, the
 * share of prompt tokens each gave. */
static void record_prefix_tiers(sim_metrics *m, const inference_run *ir, const char *pool,
                                double end_s)
{
    const inference_spec *w = ir->spec;
    const serving_stats *st = serving_get_stats(ir->sv);
    bool given[PREFIX_TIERS_MAX];
    for (unsigned k = 0; k < PREFIX_TIERS_MAX; k++)
        given[k] = w->prefix_tiers[k].size_bytes > 0;
    for (unsigned g = 0; g < group_count(w); g++) {
        serving_group_stats gs = serving_group_get_stats(ir->sv, g, end_s);
        const char *at = g == 0 ? pool : ir->sc->pools[workload_group_pool(w, g)].name;
        unsigned i = 0; /* the replicas' tiers are the given ones, in order */
        for (unsigned k = 0; k < PREFIX_TIERS_MAX; k++) {
            if (!given[k])
                continue;
            const prefix_tier_stats *t = &gs.prefix_tiers[i++];
            char metric[64];
            const char *kind = prefix_tier_kind_name((prefix_tier_kind)k);
            snprintf(metric, sizeof metric, "prefix_%s_fetches", kind);
            sim_metrics_add(m, "pool", at, metric, "requests", (double)t->fetches);
            snprintf(metric, sizeof metric, "prefix_%s_fetched_tokens", kind);
            sim_metrics_add(m, "pool", at, metric, "tokens", t->tokens);
            snprintf(metric, sizeof metric, "prefix_%s_fetch_stall_s", kind);
            sim_metrics_add(m, "pool", at, metric, "s", t->stall_s);
            snprintf(metric, sizeof metric, "prefix_%s_declined", kind);
            sim_metrics_add(m, "pool", at, metric, "requests", (double)t->declined);
        }
    }
    /* counted as prefix_hit_rate_tokens is: the completed requests' last admissions */
    for (unsigned k = 0, i = 0; k < PREFIX_TIERS_MAX; k++) {
        if (!given[k])
            continue;
        char metric[64];
        snprintf(metric, sizeof metric, "prefix_%s_hit_rate_tokens",
                 prefix_tier_kind_name((prefix_tier_kind)k));
        double fetched = st->prefix_fetched_tokens[i++];
        sim_metrics_add(m, "workload", w->name, metric, "1",
                        st->prompt_tokens > 0 ? fetched / st->prompt_tokens : NAN);
    }
}

static void record_prefix(sim_metrics *m, const inference_run *ir, const char *pool,
                          double end_s)
{
    const inference_spec *w = ir->spec;
    const serving_stats *st = serving_get_stats(ir->sv);
    const char *name = w->name;
    serving_group_stats gs = serving_group_get_stats(ir->sv, 0, end_s);
    if (w->prefix_block || w->has_sessions)
        sim_metrics_add(m, "pool", pool, "replica_load_max_over_mean", "1",
                        gs.load_max_over_mean);
    if (w->prefix_block) {
        sim_metrics_add(m, "workload", name, "prefix_hit_rate_tokens", "1",
                        st->prompt_tokens > 0 ? st->prefix_cached_tokens / st->prompt_tokens : NAN);
        sim_metrics_add(m, "workload", name, "prefix_hit_rate_requests", "1",
                        st->completed ? (double)st->prefix_hits / (double)st->completed : NAN);
        sim_metrics_add(m, "workload", name, "prefill_tokens_saved", "tokens",
                        st->prefix_cached_tokens);
        sim_metrics_add(m, "pool", pool, "prefix_evictions", "blocks",
                        (double)gs.prefix_evictions);
    }
    if (w->prefix_block)
        record_prefix_tiers(m, ir, pool, end_s);
    if (w->has_sessions) {
        sessions_stats ss = serving_sessions_stats(ir->sv);
        sim_metrics_add(m, "workload", name, "sessions_completed", "sessions", (double)ss.ended);
        sim_metrics_add(m, "workload", name, "turns_per_session_mean", "requests",
                        ss.ended ? (double)ss.turns / (double)ss.ended : NAN);
    }
}

/* Where models come and go (a cold start given or derived, scaling to zero, a shared
 * pool): the replicas loaded, how long a load takes, the requests that found no
 * replica ready and their wait, and the GPUs the workload held. */
static void record_cold_starts(sim_metrics *m, const inference_run *ir, double end_s)
{
    const inference_spec *w = ir->spec;
    if (!(load_s_of(ir->sc, w) > 0) && !ir->tenants && !(w->scale_to_zero_s > 0))
        return;
    const serving_stats *st = serving_get_stats(ir->sv);
    serving_group_stats gs = serving_group_get_stats(ir->sv, 0, end_s);
    const char *name = w->name;
    sim_metrics_add(m, "workload", name, "cold_starts", "replicas", (double)gs.cold_starts);
    sim_metrics_add(m, "workload", name, "cold_start_s", "s", load_s_of(ir->sc, w));
    sim_metrics_add(m, "workload", name, "cold_start_waits", "requests",
                    (double)st->cold_wait_s.n);
    sim_metrics_add(m, "workload", name, "cold_start_wait_mean_s", "s",
                    sim_stat_mean(&st->cold_wait_s));
    sim_metrics_add(m, "workload", name, "cold_start_wait_max_s", "s",
                    st->cold_wait_s.n ? st->cold_wait_s.max : NAN);
    sim_metrics_add(m, "workload", name, "gpus_held_mean", "GPUs", gs.gpus_held_mean);
}

static void record_inference_metrics(sim_metrics *m, const inference_run *ir, double end_s)
{
    const scenario *sc = ir->sc;
    const inference_spec *w = ir->spec;
    const serving_stats *st = serving_get_stats(ir->sv);
    const char *pool = ir->shared_subject ? ir->shared_subject : sc->pools[w->pool].name;
    const char *name = w->name;
    double measured_s = end_s - sc->warmup_s;
    double busy = 1; /* of the bottleneck: the least busy of the workload's pools */
    double rounds = 0, round_tokens = 0;
    uint64_t overflowed = 0; /* requests the overflow pools served */
    for (unsigned g = 0; g < serving_groups(ir->sv); g++) {
        serving_group_stats gs = serving_group_get_stats(ir->sv, g, end_s);
        const char *where = g == 0 ? pool : sc->pools[workload_group_pool(w, g)].name;
        size_t device = workload_group_device(w, g);
        unsigned tp = workload_group_tp(w, g);
        busy = fmin(busy, isnan(gs.utilization) ? 0 : gs.utilization);
        sim_metrics_add(m, "pool", where, "replicas_mean", "replicas", gs.replicas_mean);
        sim_metrics_add(m, "pool", where, "replicas_max", "replicas", gs.replicas_max);
        sim_metrics_add(m, "pool", where, "busy_fraction", "1", gs.utilization);
        sim_metrics_add(m, "pool", where, "batch_size_mean", "requests", gs.batch_mean);
        sim_metrics_add(m, "pool", where, "batch_occupancy", "1", gs.batch_mean / w->max_batch);
        sim_metrics_add(m, "pool", where, "kv_cache_utilization_mean", "1", gs.kv_mean);
        peak_shares peak = peak_shares_of(&sc->catalog.models[w->model],
                                          &sc->catalog.devices[device], w, tp, &gs);
        sim_metrics_add(m, "pool", where, "compute_share_of_peak", "1", peak.compute);
        sim_metrics_add(m, "pool", where, "bandwidth_share_of_peak", "1", peak.bandwidth);
        sim_metrics_add(m, "pool", where, "kv_preemptions", "preemptions",
                        (double)gs.kv_preemptions);
        sim_metrics_add(m, "pool", where, "replicas_lost", "replicas", (double)gs.replica_losses);
        if (w->kv_policy == KV_SWAP) { /* only then: other runs' files stay as they were */
            const kv_swap_stats *sw = &gs.kv_swap;
            sim_metrics_add(m, "pool", where, "kv_swaps", "sequences", (double)sw->swaps_out);
            sim_metrics_add(m, "pool", where, "kv_swaps_in", "sequences", (double)sw->swaps_in);
            sim_metrics_add(m, "pool", where, "kv_recomputes", "sequences",
                            (double)sw->recomputes);
            sim_metrics_add(m, "pool", where, "kv_swap_gb", "GB", sw->bytes / 1e9);
            sim_metrics_add(m, "pool", where, "kv_swap_stall_s", "s", sw->stall_s);
            sim_metrics_add(m, "pool", where, "kv_swap_stall_fraction", "1",
                            gs.replica_s > 0 ? sw->stall_s / gs.replica_s : NAN);
        }
        if (w->host_kv.offload && w->kv_policy != KV_SWAP) {
            const kv_swap_stats *sw = &gs.kv_swap;
            sim_metrics_add(m, "pool", where, "kv_offload_read_gb", "GB", sw->offload_bytes / 1e9);
            sim_metrics_add(m, "pool", where, "kv_offload_read_s", "s", sw->offload_s);
            sim_metrics_add(m, "pool", where, "kv_offload_read_fraction", "1",
                            gs.replica_s > 0 ? sw->offload_s / gs.replica_s : NAN);
        }
        if (w->spec_k) {
            double busy_s = gs.utilization * gs.replica_s;
            sim_metrics_add(m, "pool", where, "draft_time_share", "1",
                            busy_s > 0 ? gs.draft_s / busy_s : NAN);
            rounds += gs.spec_rounds;
            round_tokens += gs.spec_tokens;
        }
        if (g > 0 && w->groups[g - 1].role == ROLE_OVERFLOW) {
            overflowed += gs.served;
            if (workload_role_count(w, ROLE_OVERFLOW) > 1) /* each pool's share too */
                sim_metrics_add(m, "pool", where, "overflow_fraction", "1",
                                st->completed ? (double)gs.served / (double)st->completed
                                              : NAN);
        }
    }
    if (workload_role_count(w, ROLE_OVERFLOW))
        sim_metrics_add(m, "workload", name, "overflow_fraction", "1",
                        st->completed ? (double)overflowed / (double)st->completed : NAN);
    struct { const char *metric; const sim_histogram *h; double q; } quantiles[] = {
        { "ttft_p50_s", &st->ttft_hist_s, 0.5 }, { "ttft_p95_s", &st->ttft_hist_s, 0.95 },
        { "ttft_p99_s", &st->ttft_hist_s, 0.99 }, { "tpot_p50_s", &st->tpot_hist_s, 0.5 },
        { "tpot_p99_s", &st->tpot_hist_s, 0.99 }, { "e2e_p50_s", &st->e2e_hist_s, 0.5 },
        { "e2e_p99_s", &st->e2e_hist_s, 0.99 },
    };
    sim_metrics_add(m, "workload", name, "requests_arrived", "requests", (double)st->arrived);
    sim_metrics_add(m, "workload", name, "requests_completed", "requests", (double)st->completed);
    double wait_first = ir->wait_first.n ? sim_stat_mean(&ir->wait_first) : NAN;
    double wait_last = ir->wait_last.n ? sim_stat_mean(&ir->wait_last) : NAN;
    overload_record(m, name, &(overload_view){
        .arrived = (double)st->arrived, .completed = (double)st->completed,
        .dropped = (double)st->dropped, .measured_s = measured_s, .busy = busy,
        .wait_first_s = wait_first, .wait_last_s = wait_last });
    sim_metrics_add(m, "workload", name, "queue_wait_first_third_s", "s", wait_first);
    sim_metrics_add(m, "workload", name, "queue_wait_last_third_s", "s", wait_last);
    sim_metrics_add(m, "workload", name, "requests_dropped", "requests", (double)st->dropped);
    sim_metrics_add(m, "workload", name, "requests_over_context", "requests",
                    (double)st->over_context);
    sim_metrics_add(m, "workload", name, "requests_truncated", "requests",
                    (double)st->truncated);
    sim_metrics_add(m, "workload", name, "ttft_mean_s", "s", sim_stat_mean(&st->ttft_s));
    sim_metrics_add(m, "workload", name, "tpot_mean_s", "s", sim_stat_mean(&st->tpot_s));
    sim_metrics_add(m, "workload", name, "e2e_mean_s", "s", sim_stat_mean(&st->e2e_s));
    for (size_t i = 0; i < sizeof quantiles / sizeof quantiles[0]; i++)
        sim_metrics_add(m, "workload", name, quantiles[i].metric, "s",
                        sim_histogram_quantile(quantiles[i].h, quantiles[i].q));
    sim_metrics_add(m, "workload", name, "queue_wait_mean_s", "s", sim_stat_mean(&st->queue_wait_s));
    /* of the requests the fleet could serve: a prompt past the model's context is the
     * model's refusal, the same on any pool, not a latency missed (its own count:
     * requests_over_context) */
    double judged = (double)(st->completed + st->dropped - st->over_context);
    sim_metrics_add(m, "workload", name, "slo_attainment", "1",
                    judged > 0 ? (double)st->slo_met / judged : NAN);
    sim_metrics_add(m, "workload", name, "throughput_tokens_per_s", "tokens/s",
                    measured_s > 0 ? st->output_tokens / measured_s : NAN);
    sim_metrics_add(m, "workload", name, "prompt_tokens", "tokens", st->prompt_tokens);
    sim_metrics_add(m, "workload", name, "output_tokens", "tokens", st->output_tokens);
    sim_metrics_add(m, "workload", name, "egress_gb", "GB",
                    (w->egress_bytes_per_day > 0
                         ? w->egress_bytes_per_day * measured_s / 86400
                         : st->output_tokens * w->response_bytes_per_token
                               + (double)st->completed * w->response_bytes) / 1e9);
    if (workload_decodes(w))
        record_disaggregated(m, name, st, measured_s);
    record_prefix(m, ir, pool, end_s);
    record_cold_starts(m, ir, end_s);
    if (w->lora_slots)
        record_lora(m, name, &st->lora);
    if (w->spec_k) {
        sim_metrics_add(m, "workload", name, "spec_tokens_per_round", "tokens",
                        rounds > 0 ? round_tokens / rounds : NAN);
        sim_metrics_add(m, "workload", name, "spec_acceptance_mean", "1",
                        sim_stat_mean(&st->acceptance));
    }
}

/* Cost, energy and carbon per million output tokens and per request: what the
 * workload's pools cost and drew after the warm-up (its own and its other groups' pools,
 * each serving it alone; a pool several models share, in proportion to the GPUs
 * each held: own_share). */
static void record_inference_cost(sim_metrics *m, const inference_run *ir, double own_share)
{
    const inference_spec *w = ir->spec;
    const serving_stats *st = serving_get_stats(ir->sv);
    double mtok = st->output_tokens / 1e6, requests = (double)st->completed;
    /* the own pool at its share, the other groups' pools whole */
    double kwh = 0, kg = 0, usd = 0;
    bool metered = false, priced = false;
    for (unsigned g = 0; g < group_count(w); g++) {
        const pool_gpus *p = &ir->pools[workload_group_pool(w, g)];
        double share = g == 0 ? own_share : 1;
        priced |= ir->sc->pools[workload_group_pool(w, g)].has_cost;
        usd += g == 0 ? p->measured.total_usd * share : p->measured.total_usd;
        if (!p->gp)
            continue;
        metered = true;
        kwh += g == 0 ? p->measured.energy_kwh * share : p->measured.energy_kwh;
        kg += g == 0 ? (p->carbon.operational_kg + p->carbon.embodied_kg) * share
                     : p->carbon.operational_kg + p->carbon.embodied_kg;
    }
    if (metered) {
        sim_metrics_add(m, "workload", w->name, "energy_per_mtok_kwh", "kWh/Mtok",
                        mtok > 0 ? kwh / mtok : NAN);
        sim_metrics_add(m, "workload", w->name, "energy_per_request_wh", "Wh",
                        requests > 0 ? kwh * 1e3 / requests : NAN);
        sim_metrics_add(m, "workload", w->name, "carbon_per_mtok_kg", "kgCO2e/Mtok",
                        mtok > 0 ? kg / mtok : NAN);
        sim_metrics_add(m, "workload", w->name, "carbon_per_request_g", "gCO2e",
                        requests > 0 ? kg * 1e3 / requests : NAN);
    }
    if (!priced)
        return;
    sim_metrics_add(m, "workload", w->name, "cost_per_mtok_usd", "USD/Mtok",
                    mtok > 0 ? usd / mtok : NAN);
}

/* The workloads, in scenario order, with their subjects; ends with an empty one. */
static void *plan(run_shared *rs)
{
    const scenario *sc = rs->sc;
    inference_run *runs = calloc(sc->ninferences + 1, sizeof *runs);
    if (!runs)
        sim_out_of_memory("out of memory planning a run");
    for (size_t i = 0; i < sc->ninferences; i++) {
        const inference_spec *w = &sc->inferences[i];
        runs[i] = (inference_run){
            .sc = sc, .spec = w, .ts = rs->ts, .pools = rs->gpus,
            .pool_subjects = { rs->pool_subjects[w->pool] },
            .workload_subject = sim_timeseries_add_subject(rs->ts, "workload", w->name),
        };
        if (pool_is_shared(sc, w)) { /* each model's replicas apart */
            const char *pool = sc->pools[w->pool].name;
            size_t n = strlen(pool) + strlen(w->name) + 2;
            if (!(runs[i].shared_subject = malloc(n)))
                sim_out_of_memory("out of memory planning a run");
            snprintf(runs[i].shared_subject, n, "%s/%s", pool, w->name);
            runs[i].pool_subjects[0] = sim_timeseries_add_subject(rs->ts, "pool",
                                                                  runs[i].shared_subject);
        }
        for (unsigned g = 1; g <= w->ngroups; g++) /* a group's pool is its alone */
            runs[i].pool_subjects[g] = rs->pool_subjects[workload_group_pool(w, g)];
    }
    return runs;
}

static int start(void *parts, run_shared *rs, char *err, size_t err_size)
{
    inference_run *runs = parts;
    for (size_t i = 0; i < rs->sc->ninferences; i++) {
        inference_run *ir = &runs[i];
        serving_config config = serving_config_of(rs->sc, ir->spec, rs->replication, rs->gpus,
                                                  ir->others);
        if (ir->shared_subject) { /* the pool's arbiter: the first of its models makes it */
            for (size_t k = 0; k < i && !ir->tenants; k++)
                if (runs[k].spec->pool == ir->spec->pool)
                    ir->tenants = runs[k].tenants;
            if (!ir->tenants) {
                ir->tenants = pool_tenants_create(rs->engine, rs->gpus[ir->spec->pool].gp);
                ir->owns_tenants = true;
            }
            config.tenants = ir->tenants;
        }
        if (rs->options) {
            config.on_request = rs->options->on_request;
            config.request_context = rs->options->request_context;
        }
        ir->sv = serving_create(rs->engine, &config, err, err_size);
        if (!ir->sv)
            return -1;
        ir->bucket_start_s = 0;
        sim_stat_reset(&ir->wait_first);
        sim_stat_reset(&ir->wait_last);
        serving_start(ir->sv);
        sim_event_schedule(rs->engine, rs->sc->bucket_s, EVENT_BUCKET, on_inference_bucket, ir);
        if (rs->sc->warmup_s > 0)
            sim_event_schedule(rs->engine, rs->sc->warmup_s, EVENT_WORKLOAD_WARMUP,
                               on_inference_warmup, ir);
    }
    return 0;
}

static const char *failure(void *parts)
{
    inference_run *runs = parts;
    for (size_t i = 0; runs[i].sc; i++) {
        const char *why = runs[i].sv ? serving_error(runs[i].sv) : NULL;
        if (why)
            return why;
    }
    return NULL;
}

static void record_workloads(void *parts, run_shared *rs, double end_s, sim_metrics *m)
{
    inference_run *runs = parts;
    for (size_t i = 0; i < rs->sc->ninferences; i++) {
        record_inference_bucket(&runs[i], end_s);
        record_inference_metrics(m, &runs[i], end_s);
    }
}

static void record_costs(void *parts, run_shared *rs, double end_s, sim_metrics *m)
{
    inference_run *runs = parts;
    for (size_t i = 0; i < rs->sc->ninferences; i++) {
        double share = 1;
        if (runs[i].shared_subject) { /* this one's GPU-time over all the pool's models' */
            double own = 0, all = 0;
            for (size_t k = 0; k < rs->sc->ninferences; k++) {
                if (runs[k].spec->pool != runs[i].spec->pool)
                    continue;
                double held = serving_group_get_stats(runs[k].sv, 0, end_s).gpus_held_mean;
                all += held;
                own += k == i ? held : 0;
            }
            share = all > 0 ? own / all : NAN;
        }
        record_inference_cost(m, &runs[i], share);
    }
}

static void stop(void *parts, run_shared *rs)
{
    inference_run *runs = parts;
    for (size_t i = 0; i < rs->sc->ninferences; i++) {
        serving_free(runs[i].sv);
        runs[i].sv = NULL;
    }
    for (size_t i = 0; i < rs->sc->ninferences; i++) {
        if (runs[i].owns_tenants)
            pool_tenants_free(runs[i].tenants);
        runs[i].tenants = NULL;
        runs[i].owns_tenants = false;
    }
}

static void release(void *parts)
{
    inference_run *runs = parts;
    for (size_t i = 0; runs && runs[i].sc; i++)
        free(runs[i].shared_subject);
    free(runs);
}

const run_part_kind run_inference = {
    .what = "inference", .plan = plan, .start = start, .failure = failure,
    .record = { [RUN_STAGE_WORKLOADS] = record_workloads, [RUN_STAGE_COSTS] = record_costs },
    .stop = stop, .release = release,
};
