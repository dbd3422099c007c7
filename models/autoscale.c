/* The built-in autoscaling policy (see autoscale.h). */
#include "models/autoscale.h"

#include <math.h>

autoscale_memory autoscale_memory_start(void) { return (autoscale_memory){ NAN, NAN }; }

unsigned autoscale_clamp(const autoscale_view *v, double n)
{
    if (!(n >= v->min))
        return v->min;
    return n > v->max ? v->max : (unsigned)n;
}

double autoscale_desired(const autoscaler_spec *a, const autoscale_view *v)
{
    if (v->active == 0)
        return v->pending > 0 || v->provisioning > 0 || v->spilled > 0 ? fmax(1, v->provisioning)
                                                                        : 0;
    /* the 1e-9 keeps a metric exactly at its target from asking for one more */
    if (a->metric == AUTOSCALE_QUEUE)
        return ceil(v->outstanding / a->target - 1e-9);
    if (a->metric == AUTOSCALE_KV_CACHE)
        return ceil(v->active * v->kv_cache / a->target - 1e-9);
    return ceil(v->active * v->utilization / a->target - 1e-9);
}

unsigned autoscale_decide(const autoscaler_spec *a, const autoscale_view *v, unsigned target,
                          autoscale_memory *m)
{
    unsigned current = v->active + v->provisioning;
    unsigned desired = autoscale_clamp(v, autoscale_desired(a, v));
    double now = v->now_s;
    if (desired > current) {
        if (isnan(m->last_scale_out_s) || now - m->last_scale_out_s >= a->cooldown_s) {
            target = desired;
            m->last_scale_out_s = now;
        }
        m->low_since_s = NAN;
    } else if (desired < current) {
        if (isnan(m->low_since_s))
            m->low_since_s = now;
        if (now - m->low_since_s >= a->scale_in_delay_s) {
            target = desired;
            m->low_since_s = NAN;
        }
    } else {
        m->low_since_s = NAN;
    }
    return target;
}
