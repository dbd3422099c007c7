#include "models/scenario.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void scenario_init(scenario *sc) { memset(sc, 0, sizeof *sc); }

void inference_spec_release(inference_spec *w)
{
    free(w->name);
    free(w->streams);
    sim_dist_release(&w->prompt_tokens);
    sim_dist_release(&w->output_tokens);
    sim_dist_release(&w->rtt_s);
    if (w->has_sessions) {
        sim_dist_release(&w->sessions.turns);
        sim_dist_release(&w->sessions.think_s);
        if (w->has_new_tokens)
            sim_dist_release(&w->sessions.new_tokens);
    }
    sim_dist_release(&w->spec_acceptance);
    lora_popularity_release(&w->lora_popularity);
    traffic_spec_release(&w->traffic);
    if (w->trace.fd > 0)
        close(w->trace.fd);
    free((char *)w->trace.path);
    free((char *)w->trace.time_column);
    free((char *)w->trace.prompt_column);
    free((char *)w->trace.session_column);
    free((char *)w->trace.blocks_column);
    free((char *)w->trace.output_column);
}

void scenario_release(scenario *sc)
{
    if (!sc)
        return;
    for (size_t i = 0; i < sc->npools; i++) {
        free(sc->pools[i].name);
        free(sc->pools[i].gpu);
        sim_dist_release(&sc->pools[i].site.rtt_s);
        sim_dist_release(&sc->pools[i].site.spike_s);
        sim_dist_release(&sc->pools[i].provision_s);
        sim_dist_release(&sc->pools[i].repair_s);
        free(sc->pools[i].preemption_times_s);
        free(sc->pools[i].unit_device);
        free(sc->pools[i].profile_path);
        sharing_spec_release(&sc->pools[i].sharing);
        noisy_spec_release(&sc->pools[i].noisy);
        cost_spec_release(&sc->pools[i].cost);
        carbon_spec_release(&sc->pools[i].carbon);
    }
    for (size_t i = 0; i < sc->nservices; i++) {
        free(sc->services[i].name);
        sim_dist_release(&sc->services[i].service);
    }
    for (size_t i = 0; i < sc->ninferences; i++)
        inference_spec_release(&sc->inferences[i]);
    free(sc->inferences);
    for (size_t i = 0; i < sc->ngpu_tasks; i++) {
        free(sc->gpu_tasks[i].name);
        gpu_tasks_spec_release(&sc->gpu_tasks[i].spec);
    }
    free(sc->gpu_tasks);
    for (size_t i = 0; i < sc->ntrainings; i++)
        training_spec_release(&sc->trainings[i]);
    free(sc->trainings);
    for (size_t i = 0; i < sc->njob_streams; i++)
        job_stream_spec_release(&sc->job_streams[i]);
    free(sc->job_streams);
    catalog_release(&sc->catalog);
    if (sc->runtime && sc->runtime_free)
        sc->runtime_free(sc->runtime);
    free(sc->pools);
    free(sc->services);
    free(sc->name);
    free(sc->description);
    scenario_init(sc);
}

const engine_spec *inference_engine(const scenario *sc, const inference_spec *w)
{
    return w->has_engine && w->engine < sc->catalog.nengines ? &sc->catalog.engines[w->engine]
                                                              : NULL;
}

const memory_reserve *inference_reserve(const inference_spec *w)
{
    return w->has_engine ? &w->reserve : NULL;
}

perf_profile inference_profile(const scenario *sc, const inference_spec *w, size_t pool,
                               const device_spec *d)
{
    perf_profile base = pool_profile(&sc->pools[pool], d);
    return engine_apply_profile(inference_engine(sc, w), &base, d);
}

perf_profile pool_profile(const pool_spec *p, const device_spec *d)
{
    perf_profile out = p->has_profile ? p->profile : perf_default_profile(d);
    if (p->power.model.compute_speed > 0) { /* set: a cap or a clock slows its work */
        out.compute_efficiency *= p->power.model.compute_speed;
        out.bandwidth_efficiency *= p->power.model.memory_speed;
    }
    return out;
}

sim_dist arrival_interarrival(const arrival_spec *arrivals)
{
    double mean_s = 1 / arrivals->rate_per_s;
    return arrivals->kind == ARRIVALS_POISSON ? sim_dist_exponential(mean_s)
                                              : sim_dist_constant(mean_s);
}

const char *arrival_kind_name(arrival_kind kind)
{
    return kind == ARRIVALS_POISSON ? "poisson" : "constant_rate";
}

const char *pool_kind_name(pool_kind kind)
{
    static const char *const names[] = { "dedicated", "cloud", "spot" };
    return names[kind];
}

double scenario_offered_load(const scenario *sc, size_t pool)
{
    double load = 0;
    for (size_t i = 0; i < sc->nservices; i++)
        if (sc->services[i].pool == pool)
            load += sc->services[i].arrivals.rate_per_s * sim_dist_mean(&sc->services[i].service);
    return load;
}

/* Two workloads' pools and streams: the same draws on different pools. */
static bool same_draws(size_t pool_a, const char *streams_a, size_t pool_b,
                       const char *streams_b)
{
    return pool_a != pool_b && streams_a && streams_b && !strcmp(streams_a, streams_b);
}

const char *scenario_compared_streams(const scenario *sc)
{
    for (size_t a = 0; a < sc->ninferences; a++)
        for (size_t b = a + 1; b < sc->ninferences; b++)
            if (same_draws(sc->inferences[a].pool, sc->inferences[a].streams,
                           sc->inferences[b].pool, sc->inferences[b].streams))
                return sc->inferences[a].streams;
    return NULL;
}

bool scenario_compares_pools(const scenario *sc)
{
    if (scenario_compared_streams(sc))
        return true;
    for (size_t a = 0; a < sc->njob_streams; a++)
        for (size_t b = a + 1; b < sc->njob_streams; b++)
            if (same_draws(sc->job_streams[a].pool, sc->job_streams[a].streams,
                           sc->job_streams[b].pool, sc->job_streams[b].streams))
                return true;
    return false;
}
