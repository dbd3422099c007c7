#include "output/scenario_text.h"
#include "output/tp_choice_text.h"
#include "output/scenario_details.h"

#include <math.h>

#include "models/workload_groups.h"
#include "output/number_text.h"

void output_dist_text(FILE *out, const sim_dist *d)
{
    switch (d->kind) {
    case SIM_DIST_CONSTANT: fprintf(out, "constant { value = %.10g }", d->a); break;
    case SIM_DIST_EXPONENTIAL: fprintf(out, "exponential { mean = %.10g }", d->a); break;
    case SIM_DIST_UNIFORM: fprintf(out, "uniform { low = %.10g, high = %.10g }", d->a, d->b); break;
    case SIM_DIST_NORMAL: fprintf(out, "normal { mean = %.10g, sd = %.10g }", d->a, d->b); break;
    case SIM_DIST_LOGNORMAL:
        fprintf(out, "lognormal { median = %.10g, sigma = %.10g }", exp(d->a), d->b);
        break;
    case SIM_DIST_GAMMA: fprintf(out, "gamma { shape = %.10g, scale = %.10g }", d->a, d->b); break;
    case SIM_DIST_WEIBULL: fprintf(out, "weibull { scale = %.10g, shape = %.10g }", d->a, d->b); break;
    case SIM_DIST_PARETO: fprintf(out, "pareto { shape = %.10g, minimum = %.10g }", d->a, d->b); break;
    case SIM_DIST_EMPIRICAL:
        fprintf(out, "empirical { mean = %.10g }", sim_dist_mean(d));
        break;
    }
}

/* The mean tokens of the system prompt a request begins with (0: none). */
static double mean_system_prompt(const inference_spec *w)
{
    double tokens = 0, weight = 0;
    for (unsigned k = 0; k < w->nsystem_prompts; k++) {
        tokens += w->system_prompts[k].weight * w->system_prompts[k].tokens;
        weight += w->system_prompts[k].weight;
    }
    return weight > 0 ? tokens / weight : 0;
}

void output_cache_capacity_text(FILE *out, const inference_spec *w)
{
    double mean = sim_dist_mean(&w->prompt_tokens) + sim_dist_mean(&w->output_tokens);
    double system = mean_system_prompt(w), room = w->kv_capacity_tokens;
    const char *what = w->has_sessions ? "a turn's mean new tokens + output, its session's "
                                         "history on top" : "mean prompt + output";
    char shared[160] = "";
    if (system > 0 && w->prefix_block) { /* running sequences share it: held once */
        room -= system;
        snprintf(shared, sizeof shared, "; a mean system prompt of %.0f tokens held once, "
                 "shared", system);
    } else if (system > 0) {
        mean += system;
        what = w->has_sessions ? "the system prompt + a turn's mean new tokens + output, its "
                                 "session's history on top" : "mean system prompt + prompt + output";
    }
    double fit = room > 0 ? floor(room / mean) : 0;
    fprintf(out, "    cache capacity %.0f tokens per replica: %.0f requests of %.0f tokens "
            "(%s%s)%s\n", w->kv_capacity_tokens, fit, mean, what, shared,
            fit < w->max_batch ? ", fewer than max_batch" : "");
}

/* "per_node (8 GPUs a node), 50 GB/s, latency 1e-05 s" */
static void link_text(FILE *out, const kv_link_spec *k)
{
    fprintf(out, "%s", kv_link_scope_name(k->scope));
    if (k->scope == KV_LINK_PER_NODE)
        fprintf(out, " (%u GPUs a node)", k->gpus_per_node);
    fprintf(out, ", %.6g GB/s, latency %.6g s", k->bandwidth_bytes_per_s / 1e9, k->latency_s);
}

void output_disaggregated_text(FILE *out, const scenario *sc, const inference_spec *w)
{
    const kv_link_spec *k = &w->kv_link;
    double per_token = model_kv_bytes_per_token(&sc->catalog.models[w->model], w->kv_prec);
    double system = mean_system_prompt(w); /* it travels too, but for what a replica holds */
    double bytes = per_token * (sim_dist_mean(&w->prompt_tokens) + system);
    bool first = true;
    for (unsigned i = 0; i < w->ngroups; i++) {
        const workload_group *g = &w->groups[i];
        if (g->role != ROLE_DECODE)
            continue;
        const pool_spec *d = &sc->pools[g->pool];
        fprintf(out, "    %s on %s: %u replica%s of tp %u%s, cache %.0f tokens per replica, "
                "routing %s\n", first ? "disaggregated: prefill here (token 1), decode"
                                      : "and decode", d->name, d->count / g->tp,
                d->count / g->tp == 1 ? "" : "s", g->tp, g->tp_chosen ? " (chosen)" : "",
                g->kv_capacity_tokens, routing_policy_name(g->routing));
        first = false;
    }
    fprintf(out, "    kv link ");
    link_text(out, k);
    fprintf(out, ": the cache is %.6g bytes a token, %.4g MB for a mean prompt%s, %.4g ms "
            "alone on a link\n", per_token, bytes / 1e6, system > 0 ? " (its system prompt too)" : "",
            1e3 * (k->latency_s + bytes / k->bandwidth_bytes_per_s));
    if (w->prefix_block)
        fprintf(out, "    with prefix caching each cache is bound to its decode replica when "
                "its prefill ends, and the link carries only the blocks that replica lacks%s\n",
                system > 0 ? " (a system prompt it holds stays)" : "");
    for (unsigned i = 0; i < w->ngroups; i++) { /* the other prefilling pools' links */
        const kv_link_spec *l = &w->groups[i].kv_link;
        if (w->groups[i].role != ROLE_SERVE)
            continue;
        fprintf(out, "    kv link from %s ", sc->pools[w->groups[i].pool].name);
        link_text(out, l);
        fprintf(out, ": %.4g ms alone on a link\n",
                1e3 * (l->latency_s + bytes / l->bandwidth_bytes_per_s));
    }
}

/* The serve pools beside the own one, then the overflow cascade: "overflow to A
 * (replicas of tp 1, past 8 requests each)", "then to B (when A is past 64 each)". */
static void output_groups_text(FILE *out, const scenario *sc, const inference_spec *w)
{
    for (unsigned i = 0; i < w->ngroups; i++) {
        const workload_group *g = &w->groups[i];
        if (g->role != ROLE_SERVE)
            continue;
        const pool_spec *p = &sc->pools[g->pool];
        fprintf(out, "    also %s on %s: %u replica%s of tp %u%s, routing %s (each new "
                "request to the pool whose least loaded replica holds the fewest)\n",
                workload_decodes(w) ? "prefilled" : "served", p->name,
                p->count / g->tp, p->count / g->tp == 1 ? "" : "s", g->tp,
                g->tp_chosen ? " (chosen)" : "", routing_policy_name(g->routing));
    }
    const workload_group *before = NULL;
    for (unsigned i = 0; i < w->ngroups; i++) {
        const workload_group *g = &w->groups[i];
        if (g->role != ROLE_OVERFLOW)
            continue;
        if (!before)
            fprintf(out, "    overflow to %s (replicas of tp %u%s, past %u requests each)\n",
                    sc->pools[g->pool].name, g->tp, g->tp_chosen ? ", chosen" : "",
                    w->overflow_threshold ? w->overflow_threshold : w->max_batch);
        else
            fprintf(out, "    then to %s (replicas of tp %u%s, when %s is past %u requests "
                    "each)\n", sc->pools[g->pool].name, g->tp, g->tp_chosen ? ", chosen" : "",
                    sc->pools[before->pool].name,
                    before->threshold ? before->threshold : w->max_batch);
        before = g;
    }
}

/* "    engine NAME (default): what it stands for; host work ..., memory ..." */
static void output_engine_text(FILE *out, const scenario *sc, const inference_spec *w)
{
    const engine_spec *e = inference_engine(sc, w);
    if (!e)
        return;
    const pool_spec *p = &sc->pools[w->pool];
    fprintf(out, "    engine %s%s: %s\n", e->name, w->engine_default ? " (the default)" : "",
            e->describes);
    if (p->has_profile && p->profile.has_operators)
        fprintf(out, "      host work and kernels from the pool's measured profile\n");
    else
        fprintf(out, "      host work %s, %.0f%% of it run while the GPU computes (%s)\n",
                isnan(e->host_s) ? "the operator set's measured figures" : "as the engine states",
                100 * e->host_overlap, e->host_measured ? "measured" : "stated");
    fprintf(out, "      memory: %s, share %.3g, %.3g GB kept before the cache on each GPU\n",
            memory_rule_name(e->memory_rule), e->memory_share,
            (w->attention_dp && model_moe_layers(&sc->catalog.models[w->model])
                 ? memory_reserved_dp_bytes(&w->reserve, w->tp,
                                            sc->catalog.devices[w->device].memory_bytes)
                 : memory_reserved_bytes(&w->reserve, w->tp,
                                         sc->catalog.devices[w->device].memory_bytes)) / 1e9);
}

void output_replicas_text(FILE *out, const scenario *sc)
{
    for (size_t i = 0; i < sc->ninferences; i++) {
        const inference_spec *w = &sc->inferences[i];
        double mean = sim_dist_mean(&w->prompt_tokens) + sim_dist_mean(&w->output_tokens);
        const engine_spec *e = inference_engine(sc, w);
        char why[160];
        output_tp_choice_text(why, sizeof why, w);
        fprintf(out, "%s: %u replica%s of tp %u%s%s%s on %s, engine %s%s, cache %.0f tokens per "
                "replica (%.0f requests of %.0f tokens)\n", w->name, w->replicas,
                w->replicas == 1 ? "" : "s", w->tp, *why ? " (" : "", why, *why ? ")" : "",
                sc->pools[w->pool].name, e ? e->name : "none",
                w->engine_default ? " (default)" : "", w->kv_capacity_tokens,
                floor(w->kv_capacity_tokens / mean), mean);
        for (unsigned k = 0; k < w->ngroups; k++) { /* the other pools serving it alike */
            const workload_group *g = &w->groups[k];
            const pool_spec *p = &sc->pools[g->pool];
            if (g->role == ROLE_OVERFLOW)
                continue; /* said with the workload: overflow to ... */
            fprintf(out, "%s: %s on %u replica%s of tp %u%s on %s, cache %.0f tokens per "
                    "replica (%.0f requests)\n", w->name,
                    g->role == ROLE_DECODE ? "decode"
                    : workload_decodes(w)  ? "also prefilling"
                                           : "also serving", p->count / g->tp,
                    p->count / g->tp == 1 ? "" : "s", g->tp, g->tp_chosen ? " (chosen)" : "",
                    p->name, g->kv_capacity_tokens, floor(g->kv_capacity_tokens / mean));
        }
    }
}

/* Prompts that repeat: the system prompts, the sessions, the prefix cache. */
static void output_prefix_text(FILE *out, const inference_spec *w)
{
    if (w->nsystem_prompts) {
        fprintf(out, "    system prompt");
        for (unsigned k = 0; k < w->nsystem_prompts; k++) {
            const system_prompt *p = &w->system_prompts[k];
            fprintf(out, "%s %u tokens (weight %.6g", k ? "," : "", p->tokens, p->weight);
            if (p->groups > 1)
                fprintf(out, ", %u distinct prompts of that length", p->groups);
            fputc(')', out);
        }
        fprintf(out, " before each %s\n", w->has_sessions ? "session" : "prompt");
    }
    if (w->has_sessions) {
        fprintf(out, "    arrivals are sessions: turns ");
        output_dist_text(out, &w->sessions.turns);
        fprintf(out, " (mean %.6g), think ", sim_dist_mean(&w->sessions.turns));
        output_dist_text(out, &w->sessions.think_s);
        fprintf(out, " s, new tokens a turn ");
        output_dist_text(out, &w->sessions.new_tokens);
        fprintf(out, " (mean %.6g); a turn's prompt is the history plus them\n",
                sim_dist_mean(&w->sessions.new_tokens));
    }
    if (w->prefix_block)
        fprintf(out, "    prefix cache per replica in blocks of %u tokens\n", w->prefix_block);
    for (unsigned k = 0; w->prefix_block && k < PREFIX_TIERS_MAX; k++) {
        const prefix_tier_spec *t = &w->prefix_tiers[k];
        if (!(t->size_bytes > 0))
            continue;
        fprintf(out, "    below it, %s: %.6g GB %s", prefix_tier_kind_name((prefix_tier_kind)k),
                t->size_bytes / 1e9, k == PREFIX_TIER_SHARED ? "a pool" : "a replica");
        if (t->bandwidth_bytes_per_s > 0)
            fprintf(out, " at %.6g GB/s", t->bandwidth_bytes_per_s / 1e9);
        else
            fprintf(out, " at its %s", k == PREFIX_TIER_HOST ? "PCIe's 80%" : "NICs' rate");
        if (t->latency_s >= 0)
            fprintf(out, ", %.6g us a fetch", t->latency_s * 1e6);
        fputc('\n', out);
    }
    if (w->routing == ROUTE_PREFIX_AFFINITY)
        fprintf(out, "    prefix affinity within a load bound of %.6g\n", w->affinity_bound);
}

void output_scenario_text(FILE *out, const scenario *sc)
{
    fprintf(out, "scenario \"%s\"\n", sc->name);
    if (sc->description)
        fprintf(out, "  description   %s\n", sc->description);
    fprintf(out, "  duration      %.10g s\n", sc->duration_s);
    fprintf(out, "  warmup        %.10g s\n", sc->warmup_s);
    fprintf(out, "  bucket        %.10g s\n", sc->bucket_s);
    fprintf(out, "  seed          %llu\n", (unsigned long long)sc->seed);
    fprintf(out, "  replications  %u\n", sc->replications);
    if (sc->horizon_s > 0) {
        char span[48];
        fprintf(out, "  horizon       %s (%.10g s; costs projected to it",
                duration_text(span, sizeof span, sc->horizon_s), sc->horizon_s);
        if (sc->discount_rate > 0)
            fprintf(out, ", discounted at %.10g%% a year", 100 * sc->discount_rate);
        fprintf(out, ")\n");
    } else {
        fprintf(out, "  horizon       none\n");
    }
    fprintf(out, "pools\n");
    for (size_t i = 0; i < sc->npools; i++) {
        const pool_spec *p = &sc->pools[i];
        const char *unit = !p->gpu ? "servers" : p->units_per_gpu > 1 ? "units of" : "GPUs";
        fprintf(out, "  %s: %s, %u %s%s%s", p->name, pool_kind_name(p->capacity.kind), p->count,
                unit, p->gpu ? " " : "", p->gpu ? p->gpu : "");
        if (p->unit_device)
            fprintf(out, " (each a %s)", p->unit_device);
        if (p->capacity.kind != POOL_DEDICATED) {
            fprintf(out, ", min %u, max %u, provisioning ", p->min, p->capacity.max);
            output_dist_text(out, &p->provision_s);
            fprintf(out, " s");
            if (p->autoscaler.enabled)
                fprintf(out, ", autoscaled");
        }
        if (p->capacity.kind == POOL_SPOT)
            fprintf(out, ", preemptions %.6g/GPU/h%s, notice %g s",
                    p->capacity.preemption_rate_per_s * 3600,
                    p->capacity.npreemption_times ? " and a trace" : "", p->capacity.notice_s);
        if (p->capacity.mtbf_s > 0)
            fprintf(out, ", MTBF %.6g h", p->capacity.mtbf_s / 3600);
        if (p->has_noisy)
            fprintf(out, ", noisy neighbours");
        bool services = false;
        for (size_t w = 0; w < sc->nservices; w++)
            services |= sc->services[w].pool == i;
        if (services)
            fprintf(out, ", offered load %.4g Erlangs", scenario_offered_load(sc, i));
        fputc('\n', out);
        output_pool_details(out, p);
    }
    fprintf(out, "workloads\n");
    for (size_t i = 0; i < sc->nservices; i++) {
        const service_spec *w = &sc->services[i];
        fprintf(out, "  %s: service on %s, %s arrivals at %.10g/s, service time ", w->name,
                sc->pools[w->pool].name, arrival_kind_name(w->arrivals.kind),
                w->arrivals.rate_per_s);
        output_dist_text(out, &w->service);
        fprintf(out, " s (mean %.6g s)", sim_dist_mean(&w->service));
        if (w->queue_limit)
            fprintf(out, ", queue limit %zu", w->queue_limit);
        fputc('\n', out);
    }
    for (size_t i = 0; i < sc->ninferences; i++) {
        const inference_spec *w = &sc->inferences[i];
        char arrivals[1400];
        if (w->has_trace) { /* the trace's rows, not a Poisson process of their mean rate */
            char blocks[320] = "";
            if (w->trace.blocks_column)
                snprintf(blocks, sizeof blocks, ", block ids of %u tokens in column %s",
                         w->trace.block_tokens, w->trace.blocks_column);
            snprintf(arrivals, sizeof arrivals, "the trace %s (%llu rows over %.6g s, %.6g/s "
                     "on average%s%s%s%s%s)", w->trace.path,
                     (unsigned long long)w->trace_summary.rows, w->trace_summary.duration_s,
                     w->arrivals.rate_per_s, w->loop ? ", looped" : "",
                     w->sample > 0 && w->sample < 1 ? ", sampled" : "",
                     w->trace.session_column ? ", sessions in column " : "",
                     w->trace.session_column ? w->trace.session_column : "", blocks);
        } else if (w->has_traffic)
            snprintf(arrivals, sizeof arrivals, "%s traffic at %.10g/s on average",
                     traffic_kind_name(w->traffic.kind), w->arrivals.rate_per_s);
        else
            snprintf(arrivals, sizeof arrivals, "%s arrivals at %.10g/s",
                     arrival_kind_name(w->arrivals.kind), w->arrivals.rate_per_s);
        char why[160];
        output_tp_choice_text(why, sizeof why, w);
        fprintf(out, "  %s: inference of %s in %s on %s, %u replicas of tp %u%s%s%s, %s, routing "
                "%s%s\n", w->name, sc->catalog.models[w->model].name, precision_name(w->prec),
                sc->pools[w->pool].name, w->replicas, w->tp, *why ? " (" : "", why,
                *why ? ")" : "", arrivals,
                routing_policy_name(w->routing), w->reference ? ", reference mode" : "");
        output_tp_trials_text(out, w);
        output_engine_text(out, sc, w);
        output_cache_capacity_text(out, w);
        if (w->lengths_from_trace) {
            fprintf(out, "    prompt and output tokens from the trace's rows (mean %.6g and "
                    "%.6g)\n", sim_dist_mean(&w->prompt_tokens), sim_dist_mean(&w->output_tokens));
        } else {
            fprintf(out, "    prompt tokens ");
            output_dist_text(out, &w->prompt_tokens);
            fprintf(out, " (mean %.6g), output tokens ", sim_dist_mean(&w->prompt_tokens));
            output_dist_text(out, &w->output_tokens);
            fprintf(out, " (mean %.6g)\n", sim_dist_mean(&w->output_tokens));
        }
        char wait[64] = "none";
        if (w->max_wait_s > 0)
            snprintf(wait, sizeof wait, "%g s", w->max_wait_s);
        fprintf(out, "    batch up to %u sequences and %u tokens%s, cache in %s, max wait %s\n",
                w->max_batch, w->max_tokens, w->chunked_prefill ? " (chunked prefill)" : "",
                precision_name(w->kv_prec), wait);
        output_groups_text(out, sc, w);
        if (workload_decodes(w))
            output_disaggregated_text(out, sc, w);
        output_prefix_text(out, w);
        output_inference_details(out, w);
        if (w->kv_policy == KV_SWAP || w->host_kv.offload) {
            const device_spec *d = &sc->catalog.devices[w->device];
            unsigned links = w->attention_dp ? 1 : w->tp;
            double bytes = model_kv_bytes_per_token(&sc->catalog.models[w->model], w->kv_prec);
            if (w->host_kv.offload)
                fprintf(out, "    offload tier      the cache extended by %.10g tokens in host "
                        "memory, the part beyond the device's %.10g read over PCIe each "
                        "iteration\n", kv_offload_tokens(&w->host_kv, bytes),
                        w->kv_capacity_tokens);
            fprintf(out, "    host tier         %.6g GB a replica, %.6g GB/s each way",
                    w->host_kv.size_bytes / 1e9,
                    kv_swap_bandwidth(&w->host_kv, d, links) / 1e9);
            if (w->host_kv.bandwidth_bytes_per_s <= 0)
                fprintf(out, " (%u PCIe link%s of %.6g GB/s at %.0f%%)", links,
                        links == 1 ? "" : "s", d->pcie_bytes_per_s / 1e9,
                        100 * KV_SWAP_PCIE_ACHIEVED_SHARE);
            if (!w->host_kv.offload)
                fprintf(out, ", %.6g us a copy", kv_swap_latency(&w->host_kv) * 1e6);
            fprintf(out, ", %.6g kB a token of cache (%s)\n", bytes / 1e3,
                    precision_name(w->kv_prec));
        }
        output_speculative_details(out, sc, w);
        output_lora_details(out, sc, w);
    }
    output_training_details(out, sc);
    for (size_t i = 0; i < sc->ngpu_tasks; i++) {
        const gpu_tasks_workload *t = &sc->gpu_tasks[i];
        fprintf(out, "  %s: GPU tasks from %s on the nodes of %s, placement %s, %zu tasks\n",
                t->name, t->spec.tasks_path, t->spec.nodes_path,
                gpu_placement_name(t->spec.options.placement), t->spec.trace.ntasks);
    }
}
