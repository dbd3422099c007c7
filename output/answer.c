/* The ranked options a run compares (see answer.h). */
#include "output/answer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output/atomic_file.h"
#include "output/csv_write.h"
#include "output/number_text.h"

static const char *const ORDER_WORDS[] = {
    [ANSWER_BY_HORIZON] = "cost over the horizon, in cash",
    [ANSWER_BY_COST_PER_MTOK] = "cost per million output tokens",
    [ANSWER_BY_TTFT] = "p99 time to first token",
};

static const char *const ORDER_NAMES[] = {
    [ANSWER_BY_HORIZON] = "cost_horizon_usd",
    [ANSWER_BY_COST_PER_MTOK] = "cost_per_mtok_usd",
    [ANSWER_BY_TTFT] = "ttft_p99_s",
};

static double key_of(const answer_option *o, answer_order order)
{
    return order == ANSWER_BY_HORIZON ? o->cost_horizon_usd
           : order == ANSWER_BY_COST_PER_MTOK ? o->cost_per_mtok_usd : o->ttft_p99_s;
}

/* Insertion sort (a few options): those that meet first, then by the key, the
 * scenario's order on a tie (stable). */
static void rank(answer_option *o, size_t n, answer_order order)
{
    for (size_t i = 1; i < n; i++) {
        answer_option x = o[i];
        size_t j = i;
        while (j > 0) {
            const answer_option *y = &o[j - 1];
            bool before = x.meets != y->meets ? x.meets
                          : key_of(&x, order) < key_of(y, order);
            if (!before)
                break;
            o[j] = o[j - 1];
            j--;
        }
        o[j] = x;
    }
}

size_t answer_options(const sim_metrics *m, const scenario *sc, answer_option *out,
                      size_t max, answer_order *order)
{
    *order = ANSWER_BY_TTFT;
    if (!sc)
        return 0;
    const char *streams = scenario_compared_streams(sc);
    if (!streams)
        return 0;
    size_t n = 0;
    bool horizon = true, per_mtok = true;
    for (size_t i = 0; i < sc->ninferences && n < max; i++) {
        const inference_spec *w = &sc->inferences[i];
        if (!w->streams || strcmp(w->streams, streams))
            continue;
        const char *pool = sc->pools[w->pool].name;
        answer_option *o = &out[n++];
        *o = (answer_option){
            .workload = w->name, .pool = pool,
            .cost_horizon_usd = sim_metrics_mean(m, "pool", pool, "cost_horizon_usd"),
            .cost_per_mtok_usd = sim_metrics_mean(m, "workload", w->name, "cost_per_mtok_usd"),
            .cost_usd = sim_metrics_mean(m, "pool", pool, "cost_usd"),
            .slo_attainment = sim_metrics_mean(m, "workload", w->name, "slo_attainment"),
            .ttft_p99_s = sim_metrics_mean(m, "workload", w->name, "ttft_p99_s"),
            .gpus_mean = sim_metrics_mean(m, "pool", pool, "gpus_mean"),
            .energy_per_mtok_kwh = sim_metrics_mean(m, "workload", w->name, "energy_per_mtok_kwh"),
            .overloaded = sim_metrics_mean(m, "workload", w->name, "overloaded") > 0,
        };
        const cost_spec *cost = &sc->pools[w->pool].cost;
        bool site = cost->kind == COST_OWNED || cost->kind == COST_MONTHLY;
        o->egress_unpriced = sc->pools[w->pool].has_cost && site && !cost->negress
                             && !(cost->transit_usd_per_mbps > 0)
                             && sim_metrics_mean(m, "workload", w->name, "egress_gb") > 0;
        bool slo = w->slo_ttft_s > 0 || w->slo_tpot_s > 0 || w->slo_e2e_s > 0;
        o->meets = !o->overloaded && (!slo || o->slo_attainment >= ANSWER_SLO_SHARE);
        horizon &= !isnan(o->cost_horizon_usd);
        per_mtok &= !isnan(o->cost_per_mtok_usd);
    }
    *order = horizon ? ANSWER_BY_HORIZON : per_mtok ? ANSWER_BY_COST_PER_MTOK : ANSWER_BY_TTFT;
    rank(out, n, *order);
    return n;
}

/* A figure with its unit, or "-". */
static const char *figure(char *buf, size_t size, double v, const char *unit)
{
    if (isnan(v))
        snprintf(buf, size, "-");
    else
        quantity_text(buf, size, v, unit);
    return buf;
}

void output_answer_text(FILE *out, const sim_metrics *m, const scenario *sc)
{
    answer_option o[ANSWER_MAX_OPTIONS];
    answer_order order;
    size_t n = answer_options(m, sc, o, ANSWER_MAX_OPTIONS, &order);
    if (n == 0)
        return;
    fprintf(out, "answer: %zu options on the same requests, best first (* ): ranked by %s, "
            "those within their SLO for %.0f%% of requests and not overloaded ahead\n", n,
            ORDER_WORDS[order], 100 * ANSWER_SLO_SHARE);
    fprintf(out, "  %-6s %-18s %-12s %16s %14s %12s %12s %8s %16s\n", "rank", "workload", "pool",
            "over the horizon", "per Mtok", "within SLO", "ttft p99", "GPUs", "energy per Mtok");
    for (size_t i = 0; i < n; i++) {
        char a[48], b[48], c[48], d[48], e[48], f[48], r[24];
        if (isnan(o[i].slo_attainment))
            snprintf(c, sizeof c, "-");
        else
            snprintf(c, sizeof c, "%.1f%%", 100 * o[i].slo_attainment);
        fprintf(out, "  %-6s %-18s %-12s %16s %14s %12s %12s %8s %16s%s%s\n",
                i == 0 ? "1 *" : (snprintf(r, sizeof r, "%zu", i + 1), r), o[i].workload,
                o[i].pool, figure(a, sizeof a, o[i].cost_horizon_usd, "USD"),
                figure(b, sizeof b, o[i].cost_per_mtok_usd, "USD"), c,
                figure(d, sizeof d, o[i].ttft_p99_s, "s"),
                figure(e, sizeof e, o[i].gpus_mean, "gpus"),
                figure(f, sizeof f, o[i].energy_per_mtok_kwh, "kWh"),
                o[i].meets ? "" : o[i].overloaded ? "  overloaded" : "  misses its SLO",
                o[i].egress_unpriced ? "  egress not priced (transit)" : "");
    }
    answer_break_even_text(out, m, "  ");
    fputc('\n', out);
}

void answer_break_even_text(FILE *out, const sim_metrics *m, const char *indent)
{
    for (size_t i = 0; i < m->count; i++) {
        const sim_metric *x = &m->items[i];
        const char *vs = strstr(x->subject, "_vs_");
        if (strcmp(x->scope, "run") || strcmp(x->name, "break_even_months") || !vs)
            continue;
        double months = x->replications.n ? x->replications.mean : NAN;
        fprintf(out, "%sbreak-even: buying %.*s against renting %s ", indent,
                (int)(vs - x->subject), x->subject, vs + 4);
        if (isnan(months))
            fprintf(out, "never: bought, it costs more a month to run than rented\n");
        else
            fprintf(out, "after %.1f months (%.1f years): its purchase repaid by what it saves "
                    "each month\n", months, months / 12); /* break_even_months, as in the CSV */
    }
}

int output_answer_csv(const char *dir, const sim_metrics *m, const scenario *sc, char *err,
                      size_t err_size)
{
    answer_option o[ANSWER_MAX_OPTIONS];
    answer_order order;
    size_t n = answer_options(m, sc, o, ANSWER_MAX_OPTIONS, &order);
    if (n == 0)
        return 0;
    atomic_file *f = atomic_file_open(dir, "answer.csv", err, err_size);
    if (!f)
        return -1;
    FILE *out = atomic_file_stream(f);
    fputs("rank,best,workload,pool,meets,cost_horizon_usd,cost_per_mtok_usd,cost_usd,"
          "slo_attainment,ttft_p99_s,gpus_mean,energy_per_mtok_kwh,ranked_by,egress_priced\n",
          out);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "%zu", i + 1);
        csv_write_text(out, i == 0 ? "true" : "false", false);
        csv_write_text(out, o[i].workload, false);
        csv_write_text(out, o[i].pool, false);
        csv_write_text(out, o[i].meets ? "true" : "false", false);
        const double v[] = { o[i].cost_horizon_usd, o[i].cost_per_mtok_usd, o[i].cost_usd,
                             o[i].slo_attainment, o[i].ttft_p99_s, o[i].gpus_mean,
                             o[i].energy_per_mtok_kwh };
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
            csv_write_number(out, v[k], false);
        csv_write_text(out, ORDER_NAMES[order], false);
        csv_write_text(out, o[i].egress_unpriced ? "false" : "true", false);
        fputc('\n', out);
    }
    return atomic_file_commit(f, err, err_size);
}
