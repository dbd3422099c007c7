/* The headline after a run (see headline.h). */
#define _GNU_SOURCE /* qsort_r */
#include "output/headline.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/overload.h"
#include "output/number_text.h"

/* The figure that shows a workload's overload, as words after "is overloaded: ": the
 * rule of models/overload.h that holds on the replications' means (its pool busy, as
 * the flag says where a rule asks it). */
static void overload_figure(char *buf, size_t size, const sim_metrics *metrics,
                            const char *subject)
{
    char offered[48], served[48], a[48], b[48];
    number_text(offered, sizeof offered,
                sim_metrics_mean(metrics, "workload", subject, "offered_rate_per_s"));
    number_text(served, sizeof served,
                sim_metrics_mean(metrics, "workload", subject, "served_rate_per_s"));
    overload_view v = {
        .arrived = sim_metrics_mean(metrics, "workload", subject, "requests_arrived"),
        .completed = sim_metrics_mean(metrics, "workload", subject, "requests_completed"),
        .dropped = sim_metrics_mean(metrics, "workload", subject, "requests_dropped"),
        .measured_s = 1, .busy = 1,
        .wait_first_s = sim_metrics_mean(metrics, "workload", subject,
                                         "queue_wait_first_third_s"),
        .wait_last_s = sim_metrics_mean(metrics, "workload", subject, "queue_wait_last_third_s"),
    };
    overload_cause cause = overload_of(&v);
    if (cause == OVERLOAD_SHEDS)
        snprintf(buf, size, "%.0f%% of its requests dropped (max_wait or a queue limit) with "
                 "its pool busy, %s requests/s offered, %s served: it sheds what it cannot "
                 "serve", 100 * v.dropped / v.arrived, offered, served);
    else if (cause == OVERLOAD_WAITS_GROW)
        snprintf(buf, size, "its mean queue wait rose from %s in the first third of the run "
                 "to %s in the last, %s requests/s offered, %s served: the queue grows "
                 "without bound and its latencies measure the run's length, not the system",
                 quantity_text(a, sizeof a, isnan(v.wait_first_s) ? 0 : v.wait_first_s, "s"),
                 quantity_text(b, sizeof b, v.wait_last_s, "s"), offered, served);
    else
        snprintf(buf, size, "%s requests/s offered, %s served, its pool busy all the time: "
                 "the queue grows without bound and its latencies measure the run's length, "
                 "not the system", offered, served);
}

/* Prompts past the context are worth a warning from a thousandth of the requests on:
 * a tenth of what a p99 leaves beyond it (a lognormal's far tail, one in a million, is
 * not). */
#define OVER_CONTEXT_WARNING_SHARE 0.001

int output_overload_warnings(FILE *out, const sim_metrics *metrics, const char *prefix)
{
    int n = 0;
    for (size_t i = 0; i < metrics->count; i++) {
        const sim_metric *x = &metrics->items[i];
        if (strcmp(x->scope, "workload") || strcmp(x->name, "overloaded")
            || !(x->replications.n && x->replications.mean > 0))
            continue;
        char share[48] = "", figure[400];
        if (x->replications.mean < 1)
            snprintf(share, sizeof share, " in %.0f%% of the replications",
                     100 * x->replications.mean);
        overload_figure(figure, sizeof figure, metrics, x->subject);
        fprintf(out, "fleetsim: warning: %sworkload %s is overloaded%s: %s; add GPUs or lower "
                "the rate\n", prefix, x->subject, share, figure);
        n++;
    }
    for (size_t i = 0; i < metrics->count; i++) { /* what no pool serves */
        const sim_metric *x = &metrics->items[i];
        if (strcmp(x->scope, "workload") || strcmp(x->name, "requests_over_context")
            || !(x->replications.n && x->replications.mean > 0))
            continue;
        double arrived = sim_metrics_mean(metrics, "workload", x->subject, "requests_arrived");
        if (!(x->replications.mean >= OVER_CONTEXT_WARNING_SHARE * arrived))
            continue;
        fprintf(out, "fleetsim: warning: %sworkload %s: %.2g%% of its requests have prompts "
                "that fill the model's context and are refused (requests_over_context), on "
                "any pool; slo_attainment leaves them out; bound the prompt distribution (a "
                "trace's lengths, fs.empirical) or serve a model with a longer context\n",
                prefix, x->subject, 100 * x->replications.mean / arrived);
        n++;
    }
    return n;
}

/* ---- the headline ------------------------------------------------------------------- */

/* A figure of the headline: a metric, the words before it, and how to show it. */
typedef enum { AS_QUANTITY, AS_PERCENT } shown_as;
typedef struct figure {
    const char *metric, *label;
    shown_as as;
} figure;

/* One line of a kind of subject: printed when its subject has the metric `when`. */
typedef struct headline_line {
    const char *scope, *when, *title;
    figure figures[7];
} headline_line;

/* One row per line, in the order printed (issue 18, 4: the figures that answer). */
static const headline_line LINES[] = {
    { "workload", "ttft_p99_s", "time to first token",
      { { "ttft_p50_s", "p50", 0 }, { "ttft_p95_s", "p95", 0 }, { "ttft_p99_s", "p99", 0 } } },
    { "workload", "tpot_p99_s", "time per output token",
      { { "tpot_p50_s", "p50", 0 }, { "tpot_p99_s", "p99", 0 }, { "e2e_p99_s", "end to end p99", 0 } } },
    { "workload", "response_p99_s", "response time",
      { { "response_mean_s", "mean", 0 }, { "response_p50_s", "p50", 0 },
        { "response_p99_s", "p99", 0 }, { "queue_wait_mean_s", "wait mean", 0 },
        { "queue_wait_p99_s", "wait p99", 0 } } },
    { "workload", "slo_attainment", "SLO",
      { { "slo_attainment", "within", AS_PERCENT } } },
    { "workload", "offered_rate_per_s", "requests",
      { { "served_rate_per_s", "served", 0 }, { "offered_rate_per_s", "offered", 0 },
        { "drop_fraction", "dropped", AS_PERCENT },
        { "throughput_tokens_per_s", "output", 0 } } },
    { "workload", "cost_per_mtok_usd", "cost",
      { { "cost_per_mtok_usd", "per million output tokens", 0 } } },
    { "workload", "energy_per_mtok_kwh", "energy",
      { { "energy_per_mtok_kwh", "per million output tokens", 0 },
        { "energy_per_request_wh", "per request", 0 },
        { "carbon_per_mtok_kg", "carbon per million tokens", 0 } } },
    { "workload", "tasks_arrived", "tasks",
      { { "tasks_placed", "placed", 0 }, { "tasks_arrived", "of", 0 },
        { "allocation_rate_mean", "GPUs allocated", AS_PERCENT },
        { "fragmentation_mean", "fragmentation", AS_PERCENT },
        { "pending_p99_s", "pending p99", 0 } } },
    { "workload", "jobs_arrived", "jobs",
      { { "jobs_completed", "completed", 0 }, { "jobs_arrived", "of", 0 },
        { "wait_mean_s", "wait mean", 0 }, { "wait_p99_s", "wait p99", 0 },
        { "turnaround_mean_s", "turnaround mean", 0 }, { "goodput_mean", "goodput", AS_PERCENT },
        { "cost_usd", "cost", 0 } } },
    { "job", "end_s", "job",
      { { "completed", "completed", AS_PERCENT }, { "end_s", "ends at", 0 },
        { "gpu_hours", "GPU time", 0 }, { "goodput", "goodput", AS_PERCENT },
        { "cost_usd", "cost", 0 } } },
    { "pool", "gpus_mean", "GPUs",
      { { "gpus_mean", "held", 0 }, { "gpus_max", "at most", 0 },
        { "gpu_hours", "GPU time", 0 }, { "cost_usd", "cost", 0 } } },
    { "pool", "cost_horizon_usd", "over the horizon",
      { { "cost_horizon_usd", "cash", 0 }, { "cost_horizon_book_usd", "book", 0 },
        { "hardware_value_left_usd", "hardware still worth", 0 },
        { "cost_horizon_npv_usd", "present value", 0 } } },
    { "pool", "servers", "servers",
      { { "servers", "", 0 }, { "utilization_mean", "busy", AS_PERCENT },
        { "queue_length_mean", "queue mean", 0 } } },
    { "pool", "busy_fraction", "replicas",
      { { "replicas_mean", "", 0 }, { "busy_fraction", "busy", AS_PERCENT },
        { "batch_occupancy", "batch full", AS_PERCENT },
        { "kv_cache_utilization_mean", "cache full", AS_PERCENT },
        { "compute_share_of_peak", "of peak FLOP/s", AS_PERCENT },
        { "bandwidth_share_of_peak", "of peak bandwidth", AS_PERCENT } } },
    { "pool", "utilization_mean", "GPUs busy",
      { { "utilization_mean", "", AS_PERCENT } } },
    { "run", "cost_usd", "all pools",
      { { "cost_usd", "cost", 0 }, { "cost_horizon_usd", "over the horizon, cash", 0 },
        { "cost_horizon_book_usd", "book", 0 }, { "cost_horizon_npv_usd", "present value", 0 } } },
    { "run", "horizon_months", "horizon",
      { { "horizon_months", "", 0 } } },
    { "run", "energy_kwh", "power",
      { { "power_mean_kw", "mean", 0 }, { "power_peak_kw", "peak", 0 },
        { "energy_kwh", "energy", 0 }, { "carbon_kg", "carbon", 0 } } },
};

static void figure_text(char *buf, size_t size, const sim_metric *m, shown_as as)
{
    sim_ci ci = sim_ci_student(&m->replications, 0.95);
    double factor = as == AS_PERCENT ? 100 : 1;
    const char *unit = as == AS_PERCENT ? "%" : readable_unit(m->unit, ci.mean, &factor);
    char value[48], half[64] = "", width[48];
    number_text(value, sizeof value, ci.mean * factor);
    if (as == AS_PERCENT) {
        share_text(buf, size, ci.mean, ci.half_width);
        return;
    }
    bool shown = !isnan(ci.half_width) && ci.half_width > 1e-9 * fabs(ci.mean);
    if (shown)
        snprintf(half, sizeof half, " +- %s",
                 half_width_text(width, sizeof width, ci.half_width * factor, ci.mean * factor));
    snprintf(buf, size, "%s%s%s%s", value, half, *unit && strcmp(unit, "%") ? " " : "", unit);
}

/* The workload's SLO as text ("ttft 500 ms, tpot 50 ms"), or "" (no scenario, none). */
static void slo_text(char *buf, size_t size, const scenario *sc, const char *workload)
{
    buf[0] = 0;
    for (size_t i = 0; sc && i < sc->ninferences; i++) {
        const inference_spec *w = &sc->inferences[i];
        if (strcmp(w->name, workload))
            continue;
        const struct { const char *name; double s; } limits[] = {
            { "ttft", w->slo_ttft_s }, { "tpot", w->slo_tpot_s }, { "e2e", w->slo_e2e_s },
        };
        size_t used = 0;
        for (size_t k = 0; k < 3; k++) {
            if (!(limits[k].s > 0))
                continue;
            char q[48];
            int n = snprintf(buf + used, size - used, "%s%s < %s", used ? ", " : "",
                             limits[k].name, quantity_text(q, sizeof q, limits[k].s, "s"));
            used += n > 0 && (size_t)n < size - used ? (size_t)n : 0;
        }
    }
}

/* Metrics by (scope, subject), then by their place: the first of each subject leads. */
static int by_subject(const void *a, const void *b, void *metrics)
{
    const sim_metrics *m = metrics;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const sim_metric *x = &m->items[i], *y = &m->items[j];
    int c = strcmp(x->scope, y->scope);
    if (!c)
        c = strcmp(x->subject, y->subject);
    return c ? c : (i > j) - (i < j);
}

/* first[i]: metric i is its subject's first (a subject's headline is printed once, at
 * its first metric; asking each metric about all before it was quadratic in the
 * metrics, 48,000 for 800 workloads).  NULL out of memory. */
static bool *subject_leaders(const sim_metrics *m)
{
    size_t n = m->count ? m->count : 1;
    size_t *order = malloc(n * sizeof *order);
    bool *first = calloc(n, sizeof *first);
    if (!order || !first) {
        free(order);
        free(first);
        return NULL;
    }
    for (size_t i = 0; i < m->count; i++)
        order[i] = i;
    qsort_r(order, m->count, sizeof *order, by_subject, (void *)m);
    for (size_t k = 0; k < m->count; k++) {
        const sim_metric *x = &m->items[order[k]];
        const sim_metric *prev = k ? &m->items[order[k - 1]] : NULL;
        first[order[k]] = !prev || strcmp(prev->scope, x->scope)
                          || strcmp(prev->subject, x->subject);
    }
    free(order);
    return first;
}

/* The lines of one subject. */
static void subject_headline(FILE *out, const sim_metrics *metrics, const scenario *sc,
                             const char *scope, const char *subject)
{
    bool any = false;
    for (size_t l = 0; l < sizeof LINES / sizeof LINES[0]; l++) {
        const headline_line *line = &LINES[l];
        if (strcmp(line->scope, scope) || !sim_metrics_find(metrics, scope, subject, line->when))
            continue;
        char text[1024];
        size_t used = 0;
        for (size_t f = 0; f < 7 && line->figures[f].metric; f++) {
            const figure *fig = &line->figures[f];
            const sim_metric *m = sim_metrics_find(metrics, scope, subject, fig->metric);
            if (!m || !m->replications.n)
                continue;
            char value[128];
            figure_text(value, sizeof value, m, fig->as);
            int n = snprintf(text + used, sizeof text - used, "%s%s%s%s", used ? ", " : "",
                             fig->label, *fig->label ? " " : "", value);
            used += n > 0 && (size_t)n < sizeof text - used ? (size_t)n : 0;
        }
        if (!used)
            continue;
        char slo[256] = "";
        if (!strcmp(line->when, "slo_attainment"))
            slo_text(slo, sizeof slo, sc, subject);
        if (!any)
            fprintf(out, "%s %s\n", scope, subject);
        any = true;
        fprintf(out, "  %-22s %s%s%s\n", line->title, text, *slo ? " of requests: " : "", slo);
    }
    const sim_metric *over = sim_metrics_find(metrics, scope, subject, "overloaded");
    if (over && over->replications.n && over->replications.mean > 0)
        fprintf(out, "  %-22s %s\n", "OVERLOADED", "the queue grows without bound: the "
                "latencies measure the run's length (see the warning)");
}

void output_headline(FILE *out, const sim_metrics *metrics, const scenario *sc)
{
    static const char *const scopes[] = { "workload", "job", "pool", "run" };
    bool *first = subject_leaders(metrics);
    if (!first) {
        fprintf(out, "(out of memory for the headline: see summary.csv)\n");
        return;
    }
    for (size_t s = 0; s < sizeof scopes / sizeof scopes[0]; s++)
        for (size_t i = 0; i < metrics->count; i++) {
            const sim_metric *m = &metrics->items[i];
            if (first[i] && !strcmp(m->scope, scopes[s]))
                subject_headline(out, metrics, sc, m->scope, m->subject);
        }
    free(first);
}
