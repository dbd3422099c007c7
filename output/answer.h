/* The answer first (issue 39, 1): a run that compares options (inference workloads that
 * draw the same requests, the same `streams`, on different pools: buy or rent, H100 or
 * H200, dedicated or shared) opens with one table of them, ranked, the best marked,
 * before the headline's details.
 *
 * An option meets its workload's SLO when at least ANSWER_SLO_SHARE of its requests do
 * (a p99 SLO; without one, every option does) and it is not overloaded.  Those that meet
 * come first; within each group the order is by cost over the horizon in cash where every
 * option has one (a buy-or-rent decision), else by cost per million output tokens, else
 * (no prices) by p99 time to first token.  The rule is printed with the table. */
#ifndef FLEETSIM_OUTPUT_ANSWER_H
#define FLEETSIM_OUTPUT_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "models/scenario.h"
#include "sim/metrics.h"

#define ANSWER_SLO_SHARE 0.99
/* The most options a table ranks (workloads sharing one set of streams). */
#define ANSWER_MAX_OPTIONS 64

typedef struct answer_option {
    const char *workload, *pool;   /* the scenario's names */
    double cost_horizon_usd;       /* the pool's, in cash (NaN: no horizon or no price) */
    double cost_per_mtok_usd, cost_usd; /* the workload's; the pool's over the run */
    double slo_attainment, ttft_p99_s, gpus_mean, energy_per_mtok_kwh;
    bool overloaded, meets;
    /* the workload sends bytes its pool prices neither by the GB nor as transit (an owned
     * or monthly site that states neither): its cost leaves them out */
    bool egress_unpriced;
} answer_option;

typedef enum answer_order {
    ANSWER_BY_HORIZON, ANSWER_BY_COST_PER_MTOK, ANSWER_BY_TTFT,
} answer_order;

/* The options of the first set of streams two or more workloads share, ranked (best
 * first) into out; their count (0: the run compares none), and the order in *order. */
size_t answer_options(const sim_metrics *m, const scenario *sc, answer_option *out,
                      size_t max, answer_order *order);

/* Each bought pool's break-even against each rented one (the run's break_even_months),
 * a line each after `indent`: "break-even: buying bought against renting rented after
 * 16 months (1.3 years): ...", or never. */
void answer_break_even_text(FILE *out, const sim_metrics *m, const char *indent);

/* The ranked table as text, and the break-even lines (nothing when the run compares no
 * options). */
void output_answer_text(FILE *out, const sim_metrics *m, const scenario *sc);

/* answer.csv in dir: rank,best,workload,pool,meets,cost_horizon_usd,cost_per_mtok_usd,
 * cost_usd,slo_attainment,ttft_p99_s,gpus_mean,energy_per_mtok_kwh,ranked_by,
 * egress_priced; written
 * only when the run compares options.  0, or -1 with a message. */
int output_answer_csv(const char *dir, const sim_metrics *m, const scenario *sc, char *err,
                      size_t err_size);

/* report.html's opening section from dir/answer.csv: the options ranked, the best
 * marked, a bar for each option's ranking figure; nothing without the file
 * (output/answer_html.c). */
void output_answer_html(FILE *out, const char *dir);

#endif
