/* The values `fleetsim check` prints beyond a pool's or workload's first line (issue 18,
 * 7): every value the run will use, "none" where an optional one is unset. */
#include "output/scenario_details.h"

#include <math.h>

#include "models/kv_swap.h"
#include "models/lora.h"
#include "models/perf.h"
#include "models/workload_groups.h"
#include "output/scenario_text.h"

/* "    key  value", for the indented lines under a pool or a workload. */
static void key(FILE *out, const char *name)
{
    fprintf(out, "    %-18s", name);
}

static void seconds_or_none(FILE *out, double s)
{
    if (s > 0)
        fprintf(out, "%.10g s", s);
    else
        fprintf(out, "none");
}

static void cost_text(FILE *out, const cost_spec *c)
{
    fprintf(out, "%s", cost_kind_name(c->kind));
    switch (c->kind) {
    case COST_ON_DEMAND:
    case COST_SPOT:
        fprintf(out, ", %.10g USD per GPU-hour, billed %s, minimum ", c->usd_per_hour,
                c->per_hour ? "per started hour" : "per second");
        seconds_or_none(out, c->minimum_s);
        break;
    case COST_RESERVED:
        fprintf(out, ", %u GPUs at %.10g USD per GPU-hour for %.10g s, beyond them %.10g USD per "
                "GPU-hour", c->reserved_gpus, c->usd_per_hour, c->term_s, c->above_usd_per_hour);
        break;
    case COST_MONTHLY:
        if (c->gpus_per_server)
            fprintf(out, ", %.10g USD per server of %u GPUs a month", c->usd_per_server_month,
                    c->gpus_per_server);
        else
            fprintf(out, ", %.10g USD per GPU a month", c->usd_per_gpu_month);
        break;
    case COST_OWNED:
        fprintf(out, ", %.10g USD per %s over %.10g years, %.10g left at the end, hosting "
                "%.10g USD a month", c->purchase_usd, c->gpus_per_server ? "server" : "GPU",
                c->years, c->residual, c->hosting_usd_per_month);
        if (c->gpus_per_server)
            fprintf(out, " (servers of %u GPUs)", c->gpus_per_server);
        if (c->purchase_from_catalog)
            fprintf(out, "; the purchase is the catalog's price of the GPUs alone");
        break;
    case COST_NONE:
        break;
    }
    if (c->pays_power)
        fprintf(out, "; power %.10g USD per kWh, PUE %.10g", c->usd_per_kwh, c->pue);
    else
        fprintf(out, "; power none (in the price)");
    fprintf(out, "; egress ");
    if (c->transit_usd_per_mbps > 0)
        fprintf(out, "a site's transit, %.10g USD per Mbps a month at the %.10gth percentile "
                "of its rates a bucket", c->transit_usd_per_mbps, 100 * c->transit_percentile);
    else if (!c->negress && (c->kind == COST_OWNED || c->kind == COST_MONTHLY))
        fprintf(out, "none (the site's transit not priced: give transit = USD per Mbps a "
                "month, or egress)");
    else if (!c->negress)
        fprintf(out, "none");
    for (size_t i = 0; i < c->negress; i++)
        fprintf(out, "%s%.10g USD/GB from %.10g GB a month", i ? ", " : "",
                c->egress[i].usd_per_gb, c->egress[i].from_gb);
}

/* The pool's power: its device's draw and setting, host, PUE, budget and carbon. */
static void power_text(FILE *out, const pool_spec *p)
{
    const power_spec *ps = &p->power;
    const power_model *m = &ps->model;
    key(out, "power");
    fprintf(out, "idle %.10g W, loaded idle %.10g W, TDP %.10g W", m->idle_w, m->loaded_w,
            m->tdp_w);
    if (m->cap_w < m->tdp_w || m->compute_speed < 1)
        fprintf(out, "; capped at %.10g W: compute at %.4g of its speed, memory at %.4g",
                m->cap_w, m->compute_speed, m->memory_speed);
    fprintf(out, "; host %.10g W a GPU; PUE %.10g", ps->host_w, ps->pue);
    if (ps->budget_kw > 0)
        fprintf(out, "; budget %.10g kW powers %u of the %u units owned or allowed",
                ps->budget_kw, ps->powered_units, p->count > ps->powered_units
                                                      ? p->count : ps->powered_units);
    fputc('\n', out);
    key(out, "carbon");
    if (p->carbon.hourly)
        fprintf(out, "grid hourly, %zu hours repeating (mean %.10g g/kWh)", p->carbon.nhourly,
                p->carbon.prefix[p->carbon.nhourly] / (double)p->carbon.nhourly);
    else
        fprintf(out, "grid %.10g g/kWh", p->carbon.grid_g_per_kwh);
    fprintf(out, "; embodied %.10g kg a GPU over %.10g years\n", p->carbon.embodied_kg,
            p->carbon.life_years);
}

/* bytes as "2.1 GB" (powers of 1,000, as egress is priced). */
static void bytes_text(char *buf, size_t size, double bytes)
{
    static const char *const units[] = { "B", "KB", "MB", "GB", "TB", "PB" };
    size_t u = 0;
    while (u + 1 < sizeof units / sizeof units[0] && bytes >= 1000) {
        bytes /= 1000;
        u++;
    }
    snprintf(buf, size, "%.4g %s", bytes, units[u]);
}

/* What a workload sends its users: the volume it states, or its bytes a token and a
 * response with the volume a day they come to at the mean arrival rate if every request
 * is served, so that a volume off by 1,000 shows before the bill does. */
static void egress_text(FILE *out, const inference_spec *w)
{
    char text[32];
    if (w->egress_bytes_per_day > 0) {
        bytes_text(text, sizeof text, w->egress_bytes_per_day);
        fprintf(out, "%s a day (stated)\n", text);
        return;
    }
    bytes_text(text, sizeof text, w->response_bytes);
    fprintf(out, "%.10g bytes a token, %s a response", w->response_bytes_per_token, text);
    double per_request = sim_dist_mean(&w->output_tokens) * w->response_bytes_per_token
                         + w->response_bytes;
    double rate = w->arrivals.rate_per_s;
    if (!w->has_sessions && isfinite(rate) && rate > 0 && isfinite(per_request)) {
        bytes_text(text, sizeof text, per_request * rate * 86400);
        fprintf(out, ": %s a day at the mean arrival rate", text);
    }
    fprintf(out, "\n");
}

static const char *metric_name(autoscale_metric m)
{
    return m == AUTOSCALE_UTILIZATION ? "utilization" : m == AUTOSCALE_QUEUE ? "queue"
                                                                            : "kv_cache";
}

void output_pool_details(FILE *out, const pool_spec *p)
{
    key(out, "round trip");
    output_dist_text(out, &p->site.rtt_s);
    fprintf(out, " s");
    if (p->site.spike_probability > 0) {
        fprintf(out, ", spikes with probability %.10g of ", p->site.spike_probability);
        output_dist_text(out, &p->site.spike_s);
        fprintf(out, " s");
    } else {
        fprintf(out, ", spikes none");
    }
    fputc('\n', out);
    if (p->capacity.kind != POOL_DEDICATED) {
        key(out, "autoscaler");
        const autoscaler_spec *a = &p->autoscaler;
        if (!a->enabled)
            fprintf(out, "none");
        else if (a->custom)
            fprintf(out, "a scenario function, every %.10g s", a->interval_s);
        else
            fprintf(out, "%s to %.10g, every %.10g s, cooldown %.10g s, scale-in delay %.10g s",
                    metric_name(a->metric), a->target, a->interval_s, a->cooldown_s,
                    a->scale_in_delay_s);
        fputc('\n', out);
    }
    key(out, "noisy neighbours");
    if (p->has_noisy) {
        fprintf(out, "calm ");
        output_dist_text(out, &p->noisy.calm_s);
        fprintf(out, " s, contended ");
        output_dist_text(out, &p->noisy.contended_s);
        fprintf(out, " s, slowdown ");
        output_dist_text(out, &p->noisy.slowdown);
        fprintf(out, ", compute sensitivity %.10g", p->noisy.compute_sensitivity);
    } else {
        fprintf(out, "none");
    }
    fputc('\n', out);
    key(out, "failures");
    if (p->capacity.mtbf_s > 0) {
        fprintf(out, "MTBF %.10g s per GPU, repair ", p->capacity.mtbf_s);
        output_dist_text(out, &p->repair_s);
        fprintf(out, " s");
    } else {
        fprintf(out, "none");
    }
    fputc('\n', out);
    key(out, "cost");
    if (p->has_cost)
        cost_text(out, &p->cost);
    else
        fprintf(out, "none");
    fputc('\n', out);
    if (p->gpu && p->power.model.tdp_w > 0)
        power_text(out, p);
    if (p->profile_path) {
        key(out, "profile");
        fprintf(out, "%s\n", p->profile_path);
    }
}

void output_inference_details(FILE *out, const inference_spec *w)
{
    key(out, "SLO");
    const struct { const char *name; double s; } limits[] = {
        { "ttft", w->slo_ttft_s }, { "tpot", w->slo_tpot_s }, { "e2e", w->slo_e2e_s },
    };
    for (size_t k = 0; k < 3; k++) {
        fprintf(out, "%s%s ", k ? ", " : "", limits[k].name);
        seconds_or_none(out, limits[k].s);
    }
    fputc('\n', out);
    key(out, "round trip");
    if (w->has_rtt) {
        output_dist_text(out, &w->rtt_s);
        fprintf(out, " s (the workload's own)\n");
    } else {
        fprintf(out, "the pool's site\n");
    }
    key(out, "when full");
    static const char *const policies[] = { [KV_RESERVE] = "queue", [KV_PREEMPT] = "preempt",
                                            [KV_SWAP] = "swap" };
    fprintf(out, "%s\n", policies[w->kv_policy]);
    key(out, "egress");
    egress_text(out, w);
    if (!workload_role_count(w, ROLE_OVERFLOW)) {
        key(out, "overflow");
        fprintf(out, "none\n");
    }
}

void output_speculative_details(FILE *out, const scenario *sc, const inference_spec *w)
{
    if (!w->spec_k)
        return;
    key(out, "speculative");
    fprintf(out, "%u tokens proposed a round by ", w->spec_k);
    if (w->has_spec_draft)
        fprintf(out, "%s (on the replica's GPUs, its weights and cache in its memory)",
                sc->catalog.models[w->spec_draft].name);
    else
        fprintf(out, "a lookup at %.10g s a step", w->spec_step_s);
    double a = sim_dist_mean(&w->spec_acceptance);
    fprintf(out, ", acceptance ");
    if (w->spec_acceptance.kind == SIM_DIST_CONSTANT) {
        fprintf(out, "%.10g", a);
    } else {
        output_dist_text(out, &w->spec_acceptance);
        fprintf(out, " a request (mean %.3g)", a);
    }
    fprintf(out, ": %.3g tokens a round at the mean\n", perf_speculative_tokens(a, w->spec_k));
}

void output_lora_details(FILE *out, const scenario *sc, const inference_spec *w)
{
    if (!w->lora_slots)
        return;
    const model_spec *m = &sc->catalog.models[w->model];
    const device_spec *d = &sc->catalog.devices[w->device];
    double bytes = lora_adapter_bytes(m, w->lora_rank, w->lora_projections, LORA_BYTES_PER_VALUE);
    double load_s = w->lora_load_s > 0 ? w->lora_load_s
                    : lora_load_s(bytes, kv_swap_bandwidth(&w->host_kv, d, w->attention_dp ? 1 : w->tp));
    const char *which = w->lora_projections == LORA_ATTENTION ? "q, k, v, o"
                        : w->lora_projections == LORA_ALL ? "every projection" : "q, v";
    key(out, "lora");
    fprintf(out, "%u adapters of rank %u on %s, %.4g MB each; %u slots a replica (%.4g GB "
            "out of the cache); a load %.3g ms\n", w->lora_popularity.adapters, w->lora_rank,
            which, bytes / 1e6, w->lora_slots, w->lora_slots * bytes / 1e9, load_s * 1e3);
}

/* "    checkpoints       every 1800 s, 60 s to write, restart 0 s", no newline. */
static void checkpoints(FILE *out, const checkpoint_spec *c, double restart_s)
{
    key(out, "checkpoints");
    if (c->every_s > 0)
        fprintf(out, "every %.10g s, %.10g s to write", c->every_s, c->write_s);
    else
        fprintf(out, "none");
    fprintf(out, ", restart %.10g s", restart_s);
}

void output_training_details(FILE *out, const scenario *sc)
{
    for (size_t i = 0; i < sc->ntrainings; i++) {
        const training_spec *t = &sc->trainings[i];
        fprintf(out, "  %s: training on %s, %u GPUs from %.10g s", t->name,
                sc->pools[t->pool].name, t->gpus, t->at_s);
        if (t->low_carbon)
            fprintf(out, " (low carbon: arrives at %.10g s, ends by %.10g s)", t->arrival_s,
                    t->deadline_s);
        fprintf(out, ", %.10g steps of %.10g s", t->steps, t->step_s);
        if (t->tokens_per_step > 0)
            fprintf(out, " (%.10g tokens each)", t->tokens_per_step);
        if (!isnan(t->mfu))
            fprintf(out, ", MFU %.4g", t->mfu);
        fprintf(out, ", priority %d\n", t->priority);
        const pool_spec *pool = &sc->pools[t->pool];
        if (pool->has_noisy) {
            /* what job_scheduler_set_noisy runs it at (models/noisy.h) */
            double speed = noisy_gang_speed_of(&pool->noisy, t->gpus, &t->work_share);
            fprintf(out, "    noisy neighbours: each step waits for the slowest of its %u GPUs; "
                    "it runs at %.4g of its calm speed over the run\n", t->gpus, speed);
        }
        checkpoints(out, &t->checkpoint, t->restart_s);
        fputc('\n', out);
    }
    for (size_t i = 0; i < sc->njob_streams; i++) {
        const job_stream_spec *j = &sc->job_streams[i];
        fprintf(out, "  %s: job stream on %s (scheduler %s), ", j->name, sc->pools[j->pool].name,
                scheduler_policy_name(sc->pools[j->pool].scheduler.policy));
        if (j->has_trace) {
            fprintf(out, "%zu jobs from a trace\n", j->trace.n);
        } else {
            fprintf(out, "arrivals every ");
            output_dist_text(out, &j->interarrival_s);
            fprintf(out, " s, GPUs ");
            output_dist_text(out, &j->gpus);
            fprintf(out, ", work ");
            output_dist_text(out, &j->duration_s);
            fprintf(out, " s, ");
            if (j->count)
                fprintf(out, "%llu jobs\n", (unsigned long long)j->count);
            else
                fprintf(out, "until the run's end\n");
        }
        checkpoints(out, &j->checkpoint, j->restart_s);
        fprintf(out, ", priority %d\n", j->priority);
        if (sc->pools[j->pool].has_noisy)
            fprintf(out, "    noisy neighbours: each job's steps wait for the slowest of its "
                    "GPUs (compute-bound: a job of 8 GPUs runs at %.4g of its calm speed)\n",
                    noisy_gang_speed_of(&sc->pools[j->pool].noisy, 8, NULL));
    }
}
