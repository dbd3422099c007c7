/* The tensor parallelism of a serving workload that states an SLO (see slo_tp.h). */
#include "models/slo_tp.h"

#include <math.h>
#include <stdio.h>

#include "models/run.h"

/* Whether any workload but w runs on w's pool. */
static bool pool_has_others(const scenario *sc, const inference_spec *w)
{
    for (size_t i = 0; i < sc->ninferences; i++)
        if (&sc->inferences[i] != w && sc->inferences[i].pool == w->pool)
            return true;
    for (size_t i = 0; i < sc->nservices; i++)
        if (sc->services[i].pool == w->pool)
            return true;
    for (size_t i = 0; i < sc->ntrainings; i++)
        if (sc->trainings[i].pool == w->pool)
            return true;
    for (size_t i = 0; i < sc->njob_streams; i++)
        if (sc->job_streams[i].pool == w->pool)
            return true;
    return false;
}

bool slo_tp_applies(const scenario *sc, const inference_spec *w)
{
    const pool_spec *p = &sc->pools[w->pool];
    bool slo = w->slo_ttft_s > 0 || w->slo_tpot_s > 0 || w->slo_e2e_s > 0;
    bool calls_lua = w->custom_route || p->autoscaler.custom
                     || (w->has_traffic && w->traffic.kind == TRAFFIC_FUNCTION);
    bool scales = p->min < p->capacity.max; /* its autoscaler meets the SLO, by GPU-hours */
    return w->tp_chosen && slo && !w->replicas_given && p->units_per_gpu <= 1 && !calls_lua
           && !scales && !pool_has_others(sc, w);
}

slo_tp_span slo_tp_trial_span(const scenario *sc, const inference_spec *w)
{
    double measured = sc->duration_s - sc->warmup_s, rate = w->arrivals.rate_per_s;
    double per_replication = rate > 0 ? rate * measured : 0;
    slo_tp_span out = { sc->duration_s, sc->replications };
    if (!(per_replication > 0) || per_replication * out.replications <= SLO_TP_TRIAL_REQUESTS)
        return out;
    out.replications = (unsigned)fmax(1, floor(SLO_TP_TRIAL_REQUESTS / per_replication));
    if (per_replication <= SLO_TP_TRIAL_REQUESTS)
        return out;
    if (w->has_trace || w->has_traffic || w->has_sessions) { /* no shorter span is alike */
        out.replications = 0;
        return out;
    }
    out.end_s = fmin(sc->duration_s,
                     sc->warmup_s + fmax(SLO_TP_TRIAL_MIN_S, SLO_TP_TRIAL_REQUESTS / rate));
    return out;
}

int slo_tp_trial(const scenario *sc, const inference_spec *w, tp_trial *out, char *err,
                 size_t err_size)
{
    /* sc's pools and catalog, this workload alone, nothing owned: not released */
    scenario alone = *sc;
    alone.inferences = (inference_spec *)w;
    alone.ninferences = 1;
    alone.nservices = alone.ngpu_tasks = alone.ntrainings = alone.njob_streams = 0;
    slo_tp_span span = slo_tp_trial_span(sc, w);
    if (!span.replications) {
        snprintf(err, err_size, "a replication is %.0f requests, past a trial's %d",
                 w->arrivals.rate_per_s * (sc->duration_s - sc->warmup_s),
                 SLO_TP_TRIAL_REQUESTS);
        return -1;
    }
    alone.replications = span.replications;
    alone.duration_s = span.end_s;
    alone.runtime = NULL;
    alone.runtime_free = NULL;
    alone.runtime_rewind = NULL;
    run_results r;
    if (scenario_run(&alone, NULL, &r, err, err_size) != 0)
        return -1;
    const sim_metrics *m = &r.metrics;
    *out = (tp_trial){
        .tp = w->tp,
        .ttft_p99_s = sim_metrics_mean(m, "workload", w->name, "ttft_p99_s"),
        .tpot_p99_s = sim_metrics_mean(m, "workload", w->name, "tpot_p99_s"),
        .e2e_p99_s = sim_metrics_mean(m, "workload", w->name, "e2e_p99_s"),
        .attainment = sim_metrics_mean(m, "workload", w->name, "slo_attainment"),
        .overloaded = sim_metrics_mean(m, "workload", w->name, "overloaded") > 0,
        .span_s = alone.duration_s - alone.warmup_s,
        .replications = alone.replications,
        .whole_run = alone.replications == sc->replications && alone.duration_s == sc->duration_s,
    };
    run_results_release(&r);
    /* a limit is met by a p99 within it; with nothing completed, none is */
    const struct { double limit, p99; } slo[] = {
        { w->slo_ttft_s, out->ttft_p99_s }, { w->slo_tpot_s, out->tpot_p99_s },
        { w->slo_e2e_s, out->e2e_p99_s },
    };
    out->meets = !out->overloaded && !isnan(out->ttft_p99_s);
    for (size_t k = 0; k < sizeof slo / sizeof slo[0]; k++) {
        bool none = k == 1 && isnan(slo[k].p99); /* one-token answers: no time per token */
        if (slo[k].limit > 0 && !none && !(slo[k].p99 <= slo[k].limit))
            out->meets = false;
    }
    return 0;
}

size_t slo_tp_pick(const tp_trial *trials, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (trials[i].meets)
            return i;
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (trials[i].attainment > trials[best].attainment
            || (isnan(trials[best].attainment) && !isnan(trials[i].attainment)))
            best = i;
    return best;
}
