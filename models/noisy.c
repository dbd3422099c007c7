/* The noisy-neighbour process (see noisy.h). */
#include "models/noisy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/event_order.h"
#include "sim/timeavg.h"

struct noisy_process {
    sim_engine *engine;
    const noisy_spec *spec;
    gsl_rng *rng;
    noisy_changed_fn changed;
    void *context;
    bool contended;
    double compute_factor, memory_factor;
    sim_event_id event;
    sim_timeavg contended_avg;
};

void noisy_spec_release(noisy_spec *spec)
{
    if (!spec)
        return;
    sim_dist_release(&spec->calm_s);
    sim_dist_release(&spec->contended_s);
    sim_dist_release(&spec->slowdown);
}

int noisy_spec_check(const noisy_spec *s, char *err, size_t err_size)
{
    char why[200];
    const sim_dist *dists[] = { &s->calm_s, &s->contended_s, &s->slowdown };
    const char *names[] = { "calm", "contended", "slowdown" };
    for (int i = 0; i < 3; i++) {
        if (sim_dist_check(dists[i], why, sizeof why) != 0) {
            snprintf(err, err_size, "%s: %s", names[i], why);
            return -1;
        }
    }
    double calm = sim_dist_mean(&s->calm_s), contended = sim_dist_mean(&s->contended_s);
    if (!isfinite(calm) || !isfinite(contended) || calm < 0 || contended < 0
        || calm + contended <= 0) {
        snprintf(err, err_size, "calm and contended spells need finite mean lengths, not both 0 "
                 "(got %g s and %g s)", calm, contended);
        return -1;
    }
    if (!(s->compute_sensitivity >= 0 && s->compute_sensitivity <= 1)) {
        snprintf(err, err_size, "compute_sensitivity must lie in [0, 1], got %g",
                 s->compute_sensitivity);
        return -1;
    }
    return 0;
}

noisy_process *noisy_create(sim_engine *engine, const noisy_spec *spec, gsl_rng *rng,
                            noisy_changed_fn changed, void *context)
{
    noisy_process *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->engine = engine;
    p->spec = spec;
    p->rng = rng;
    p->changed = changed;
    p->context = context;
    p->compute_factor = p->memory_factor = 1;
    sim_timeavg_init(&p->contended_avg, sim_engine_now(engine), 0);
    return p;
}

void noisy_free(noisy_process *p)
{
    if (!p)
        return;
    sim_event_cancel(p->engine, p->event);
    free(p);
}

static void set_factors(noisy_process *p, double compute, double memory)
{
    if (compute == p->compute_factor && memory == p->memory_factor)
        return;
    p->compute_factor = compute;
    p->memory_factor = memory;
    p->changed(p->context, compute, memory);
}

static void on_change(sim_engine *e, void *data);

/* Enters a spell now and schedules its end: the dwell is drawn first, then (when
 * contended) the slowdown, so that each spell takes the same draws whatever its values. */
static void enter(noisy_process *p, bool contended)
{
    double now = sim_engine_now(p->engine);
    double dwell = fmax(0, sim_dist_sample(contended ? &p->spec->contended_s : &p->spec->calm_s,
                                           p->rng));
    p->contended = contended;
    sim_timeavg_set(&p->contended_avg, now, contended);
    if (contended) {
        double memory = fmax(1, sim_dist_sample(&p->spec->slowdown, p->rng));
        if (dwell > 0) /* a spell of no length changes nothing */
            set_factors(p, 1 + (memory - 1) * p->spec->compute_sensitivity, memory);
    } else {
        set_factors(p, 1, 1);
    }
    p->event = sim_event_schedule(p->engine, now + dwell, EVENT_MODEL, on_change, p);
}

static void on_change(sim_engine *e, void *data)
{
    (void)e;
    noisy_process *p = data;
    enter(p, !p->contended);
}

void noisy_start(noisy_process *p)
{
    double calm = sim_dist_mean(&p->spec->calm_s);
    double contended = sim_dist_mean(&p->spec->contended_s);
    enter(p, gsl_rng_uniform(p->rng) < contended / (calm + contended));
}

bool noisy_contended(const noisy_process *p) { return p->contended; }

void noisy_factors(const noisy_process *p, double *compute_factor, double *memory_factor)
{
    *compute_factor = p->compute_factor;
    *memory_factor = p->memory_factor;
}

double noisy_contended_fraction(const noisy_process *p, double end_s)
{
    return sim_timeavg_mean(&p->contended_avg, end_s);
}

void noisy_restart_stats(noisy_process *p, double now)
{
    sim_timeavg_restart(&p->contended_avg, now);
}

double noisy_gang_speed(const noisy_spec *spec, unsigned gpus, double compute_share,
                        double memory_share)
{
    double calm = sim_dist_mean(&spec->calm_s), contended = sim_dist_mean(&spec->contended_s);
    if (!(contended > 0) || gpus == 0)
        return 1;
    double q = calm / (calm + contended); /* a GPU calm */
    double weight = memory_share + spec->compute_sensitivity * compute_share;
    /* the slowest factor is 1 when all are calm, else the largest factor drawn: over the
     * quantiles x_1 <= ... <= x_n of a contended GPU's factor, P(slowest <= x_k) =
     * (q + (1 - q) k / n)^gpus */
    double speed = pow(q, gpus), below = speed;
    for (unsigned k = 1; k <= NOISY_GANG_QUANTILES; k++) {
        double m = fmax(1, sim_dist_quantile(&spec->slowdown,
                                             (k - 0.5) / NOISY_GANG_QUANTILES));
        double at_most = pow(q + (1 - q) * k / NOISY_GANG_QUANTILES, gpus);
        speed += (at_most - below) / (1 + (m - 1) * weight);
        below = at_most;
    }
    return speed;
}

double noisy_gang_speed_of(const noisy_spec *spec, unsigned gpus, const perf_phases *step)
{
    if (!step || !(step->compute_s + step->memory_s > 0))
        return noisy_gang_speed(spec, gpus, 1, 0);
    double all = step->compute_s + step->memory_s + step->comm_s + step->launch_s;
    return noisy_gang_speed(spec, gpus, step->compute_s / all, step->memory_s / all);
}
