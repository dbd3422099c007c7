/* Overload detection (see overload.h). */
#include "models/overload.h"

#include <math.h>

bool overload_detected(double arrived, double completed, double measured_s, double busy)
{
    return measured_s > 0 && arrived >= OVERLOAD_MIN_ARRIVALS
           && completed < OVERLOAD_SERVED_SHARE * arrived && busy >= OVERLOAD_BUSY_SHARE;
}

void overload_record(sim_metrics *m, const char *name, double arrived, double completed,
                     double measured_s, double busy)
{
    sim_metrics_add(m, "workload", name, "offered_rate_per_s", "requests/s",
                    measured_s > 0 ? arrived / measured_s : NAN);
    sim_metrics_add(m, "workload", name, "served_rate_per_s", "requests/s",
                    measured_s > 0 ? completed / measured_s : NAN);
    sim_metrics_add(m, "workload", name, "overloaded", "1",
                    overload_detected(arrived, completed, measured_s, busy) ? 1 : 0);
}
