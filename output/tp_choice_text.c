/* Why a workload's tensor parallelism is what it is (see tp_choice_text.h). */
#include "output/tp_choice_text.h"

#include <string.h>

#include "models/slo_tp.h"
#include "output/number_text.h"

/* The trial of the tp kept, or NULL. */
static const tp_trial *kept_trial(const inference_spec *w)
{
    for (unsigned i = 0; i < w->ntp_trials; i++)
        if (w->tp_trials[i].tp == w->tp)
            return &w->tp_trials[i];
    return NULL;
}

char *output_tp_choice_text(char *buf, size_t size, const inference_spec *w)
{
    const tp_trial *kept = kept_trial(w);
    if (!w->tp_chosen)
        snprintf(buf, size, "%s", "");
    else if (!kept)
        snprintf(buf, size, "chosen: the most tokens/s per GPU");
    else if (!kept->meets)
        snprintf(buf, size, "chosen: no tp tried meets the SLO; the most requests within it");
    else if (kept == &w->tp_trials[0])
        snprintf(buf, size, "chosen: the most tokens/s per GPU, and it meets the SLO");
    else {
        size_t used = (size_t)snprintf(buf, size, "chosen for the SLO: tp");
        for (unsigned i = 0; w->tp_trials + i < kept && used < size; i++)
            used += (size_t)snprintf(buf + used, size - used, "%s %u", i ? "," : "",
                                     w->tp_trials[i].tp);
        if (used < size)
            snprintf(buf + used, size - used, " %s more tokens/s per GPU but %s it",
                     kept - w->tp_trials > 1 ? "give" : "gives",
                     kept - w->tp_trials > 1 ? "miss" : "misses");
    }
    return buf;
}

/* " ttft 1.12 s (over 1 s)": a p99 beside its limit, nothing without a limit. */
static void p99_text(FILE *out, const char *name, double p99, double limit)
{
    if (!(limit > 0))
        return;
    char v[48], l[48];
    fprintf(out, " %s %s%s%s", name, quantity_text(v, sizeof v, p99, "s"),
            p99 <= limit ? "" : " > ", p99 <= limit ? "" : quantity_text(l, sizeof l, limit, "s"));
}

void output_tp_trials_text(FILE *out, const inference_spec *w)
{
    if (w->tp_untried_requests > 0)
        fprintf(out, "    tp for the SLO    not tried: where the rate varies, a trial is the "
                "run, and one replication is %.0f requests, past a trial's %d; tp given, or "
                "--sweep workloads.%s.tp=1,2,4, compares them\n", w->tp_untried_requests,
                SLO_TP_TRIAL_REQUESTS, w->name);
    if (!w->ntp_trials)
        return;
    const tp_trial *kept = kept_trial(w);
    const tp_trial *first = &w->tp_trials[0];
    char span[48];
    duration_text(span, sizeof span, first->span_s);
    fprintf(out, "    tp for the SLO    tried in the throughput ranking's order until one meets "
            "every p99 limit (the mean of its replications') without overload, each alone on "
            "the pool: ");
    if (first->whole_run)
        fprintf(out, "the run itself, so the kept one's figures are the run's\n");
    else
        fprintf(out, "%u replication%s of %s after the warm-up, the run's first (the run's "
                "figures may differ a little)\n", first->replications,
                first->replications == 1 ? "" : "s", span);
    for (unsigned i = 0; i < w->ntp_trials; i++) {
        const tp_trial *t = &w->tp_trials[i];
        fprintf(out, "      tp %-3u p99", t->tp);
        p99_text(out, "ttft", t->ttft_p99_s, w->slo_ttft_s);
        p99_text(out, "tpot", t->tpot_p99_s, w->slo_tpot_s);
        p99_text(out, "e2e", t->e2e_p99_s, w->slo_e2e_s);
        fprintf(out, ", %.2f%% within the SLO%s: %s%s\n", 100 * t->attainment,
                t->overloaded ? ", overloaded" : "", t->meets ? "meets it" : "misses it",
                t == kept ? ", kept" : "");
    }
}
