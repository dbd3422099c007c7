/* Autoscaling a serving group (see serving_internal.h): every interval, the replicas
 * that would bring the metric to its target (the horizontal autoscaler's rule), within
 * min and max, a cooldown after a scale-out and a delay before a scale-in; or what a
 * scenario's policy says. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/serving_internal.h"
#include "sim/fatal.h"

static autoscale_view observe(serving_group *g, double now)
{
    serving *s = g->s;
    autoscale_view v = { .now_s = now, .min = g->config.min, .max = g->config.max,
                         .pending = s->npending };
    double busy = 0, kv = 0, span = 0;
    for (size_t i = 0; i < g->nslots; i++) {
        serving_slot *sl = g->slots[i];
        if (sl->state == SLOT_ORDERED) {
            v.provisioning++;
            continue;
        }
        const replica_stats *st = replica_get_stats(sl->r);
        double integral = sim_timeavg_integral(&st->life_busy, now);
        double kv_integral = sim_timeavg_integral(&st->life_kv, now);
        if (sl->state == SLOT_ACTIVE) { /* the metric is of the replicas that stay */
            v.active++;
            busy += integral - sl->tick_mark;
            kv += kv_integral - sl->tick_kv_mark;
            span += now - sl->tick_from_s;
        } else {
            v.draining++;
        }
        sl->tick_mark = integral;
        sl->tick_kv_mark = kv_integral;
        sl->tick_from_s = now;
        v.outstanding += replica_outstanding(sl->r);
    }
    v.outstanding += s->npending;
    v.utilization = span > 0 ? busy / span : 0;
    v.kv_cache = span > 0 ? kv / span : 0;
    return v;
}

static unsigned clamp_replicas(const serving_group *g, double n)
{
    if (!(n >= g->config.min))
        return g->config.min;
    return n > g->config.max ? g->config.max : (unsigned)n;
}

/* Target tracking: the replicas that would bring the metric to its target. */
static double desired_replicas(const serving_group *g, const autoscale_view *v)
{
    const autoscaler_spec *a = g->config.autoscaler;
    if (v->active == 0)
        return v->pending > 0 || v->provisioning > 0 || g->spilled > 0 ? fmax(1, v->provisioning)
                                                                         : 0;
    if (a->metric == AUTOSCALE_QUEUE)
        return ceil(v->outstanding / a->target - 1e-9);
    if (a->metric == AUTOSCALE_KV_CACHE)
        return ceil(v->active * v->kv_cache / a->target - 1e-9);
    return ceil(v->active * v->utilization / a->target - 1e-9);
}

void fleet_on_autoscale(sim_engine *e, void *data)
{
    serving_group *g = data;
    serving *s = g->s;
    const autoscaler_spec *a = g->config.autoscaler;
    double now = sim_engine_now(e);
    autoscale_view v = observe(g, now);
    unsigned current = v.active + v.provisioning;
    if (a->custom) {
        int wanted = a->custom(a->custom_context, &v, s->error, sizeof s->error);
        if (wanted < 0) {
            sim_engine_stop(e);
            return;
        }
        g->target = clamp_replicas(g, wanted);
    } else {
        unsigned desired = clamp_replicas(g, desired_replicas(g, &v));
        if (desired > current) {
            if (isnan(g->last_scale_out_s) || now - g->last_scale_out_s >= a->cooldown_s) {
                g->target = desired;
                g->last_scale_out_s = now;
            }
            g->low_since_s = NAN;
        } else if (desired < current) {
            if (isnan(g->low_since_s))
                g->low_since_s = now;
            if (now - g->low_since_s >= a->scale_in_delay_s) {
                g->target = desired;
                g->low_since_s = NAN;
            }
        } else {
            g->low_since_s = NAN;
        }
    }
    g->spilled = 0;
    fleet_reconcile(g);
    sim_event_schedule(e, now + a->interval_s, FLEET_PRIORITY, fleet_on_autoscale, g);
}
