/* The headline after a run (see headline.h). */
#include "output/headline.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "output/number_text.h"

static double mean_of(const sim_metrics *m, const char *scope, const char *subject,
                      const char *name)
{
    const sim_metric *x = sim_metrics_find(m, scope, subject, name);
    return x && x->replications.n ? x->replications.mean : NAN;
}

int output_overload_warnings(FILE *out, const sim_metrics *metrics, const char *prefix)
{
    int n = 0;
    for (size_t i = 0; i < metrics->count; i++) {
        const sim_metric *x = &metrics->items[i];
        if (strcmp(x->scope, "workload") || strcmp(x->name, "overloaded")
            || !(x->replications.n && x->replications.mean > 0))
            continue;
        char offered[48], served[48], share[48] = "";
        number_text(offered, sizeof offered,
                    mean_of(metrics, "workload", x->subject, "offered_rate_per_s"));
        number_text(served, sizeof served,
                    mean_of(metrics, "workload", x->subject, "served_rate_per_s"));
        if (x->replications.mean < 1)
            snprintf(share, sizeof share, " in %.0f%% of the replications",
                     100 * x->replications.mean);
        fprintf(out, "fleetsim: warning: %sworkload %s is overloaded%s: %s requests/s offered, "
                "%s served, its pool busy all the time: the queue grows without bound and "
                "its latencies measure the run's length, not the system; add GPUs or lower "
                "the rate\n", prefix, x->subject, share, offered, served);
        n++;
    }
    return n;
}
