/* Overload detection (see overload.h). */
#include "models/overload.h"

#include <math.h>

overload_cause overload_of(const overload_view *v)
{
    if (!(v->measured_s > 0) || !(v->arrived >= OVERLOAD_MIN_ARRIVALS))
        return OVERLOAD_NONE;
    bool busy = v->busy >= OVERLOAD_BUSY_SHARE;
    if (busy && v->dropped >= OVERLOAD_DROPPED_SHARE * v->arrived)
        return OVERLOAD_SHEDS;
    if (!isnan(v->wait_last_s)) {
        /* nothing completed in the first third (answers longer than a third of the run):
         * the waits grew from none */
        double first = isnan(v->wait_first_s) ? 0 : v->wait_first_s;
        return v->wait_last_s > OVERLOAD_WAIT_GROWTH * first
                       && v->wait_last_s > first + OVERLOAD_WAIT_FLOOR_S
                   ? OVERLOAD_WAITS_GROW
                   : OVERLOAD_NONE;
    }
    return busy && v->completed < OVERLOAD_SERVED_SHARE * v->arrived ? OVERLOAD_FEW_SERVED
                                                                    : OVERLOAD_NONE;
}

void overload_record(sim_metrics *m, const char *name, const overload_view *v)
{
    double s = v->measured_s;
    sim_metrics_add(m, "workload", name, "offered_rate_per_s", "requests/s",
                    s > 0 ? v->arrived / s : NAN);
    sim_metrics_add(m, "workload", name, "served_rate_per_s", "requests/s",
                    s > 0 ? v->completed / s : NAN);
    sim_metrics_add(m, "workload", name, "overloaded", "1", overload_of(v) != OVERLOAD_NONE);
}
