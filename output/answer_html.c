/* The answer's section of report.html, from answer.csv (see answer.h). */
#include "output/answer.h"

#include <math.h>
#include <string.h>

#include "output/csv_table.h"
#include "output/html_text.h"
#include "output/number_text.h"

/* A cell as a figure with its unit ("2.306M USD", "97.5%", "-"). */
static void cell_figure(FILE *out, const csv_table *t, size_t r, const char *column,
                        const char *unit)
{
    double v = csv_table_number(t, r, csv_table_column(t, column));
    char buf[64];
    if (isnan(v))
        snprintf(buf, sizeof buf, "-");
    else if (!strcmp(unit, "%"))
        snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
    else
        quantity_text(buf, sizeof buf, v, unit);
    html_escape(out, buf);
}

/* The break-even lines under the table, from the run's break_even_months in
 * summary.csv. */
static void write_break_even(FILE *out, const char *dir)
{
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    csv_table t;
    if (csv_table_read(path, &t, err, sizeof err) != 0) {
        csv_table_release(&t);
        return;
    }
    long scope = csv_table_column(&t, "scope"), subject = csv_table_column(&t, "subject"),
         metric = csv_table_column(&t, "metric"), value = csv_table_column(&t, "value");
    for (size_t r = 0; scope >= 0 && subject >= 0 && metric >= 0 && value >= 0 && r < t.rows;
         r++) {
        const char *who = csv_table_cell(&t, r, subject), *vs = strstr(who, "_vs_");
        if (strcmp(csv_table_cell(&t, r, scope), "run") || !vs
            || strcmp(csv_table_cell(&t, r, metric), "break_even_months"))
            continue;
        char line[1024];
        double months = ceil(csv_table_number(&t, r, value) - 1e-9);
        int n = snprintf(line, sizeof line, "Break-even: buying %.*s against renting %s ",
                         (int)(vs - who), who, vs + 4);
        if (n > 0 && (size_t)n < sizeof line)
            snprintf(line + n, sizeof line - (size_t)n, isnan(months)
                     ? "never: bought, it costs more a month to run than rented."
                     : "after %.0f months (%.1f years): its purchase repaid by what it saves "
                       "each month.", months, months / 12);
        fputs("<p>", out);
        html_escape(out, line);
        fputs("</p>\n", out);
    }
    csv_table_release(&t);
}

void output_answer_html(FILE *out, const char *dir)
{
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/answer.csv", dir);
    csv_table t;
    long by = -1;
    if (csv_table_read(path, &t, err, sizeof err) != 0 || t.rows == 0
        || (by = csv_table_column(&t, "ranked_by")) < 0) {
        csv_table_release(&t);
        return;
    }
    const char *key = csv_table_cell(&t, 0, by);
    const char *unit = !strcmp(key, "ttft_p99_s") ? "s" : "USD";
    const char *words = !strcmp(key, "cost_horizon_usd") ? "cost over the horizon, in cash"
                        : !strcmp(key, "cost_per_mtok_usd") ? "cost per million output tokens"
                        : "p99 time to first token";
    long k = csv_table_column(&t, key);
    double top = 0;
    for (size_t r = 0; r < t.rows; r++)
        top = fmax(top, csv_table_number(&t, r, k));
    fprintf(out, "<h2>Answer</h2>\n<p class=\"answer\">%zu options on the same requests, best "
            "first: ranked by %s, those within their SLO for %.0f%% of requests and not "
            "overloaded ahead. <strong>Best: ", t.rows, words, 100 * ANSWER_SLO_SHARE);
    html_escape(out, csv_table_cell(&t, 0, csv_table_column(&t, "workload")));
    fputs(" on ", out);
    html_escape(out, csv_table_cell(&t, 0, csv_table_column(&t, "pool")));
    fputs("</strong>.</p>\n<div class=\"wide\"><table class=\"answer\">\n<thead><tr><th>rank"
          "</th><th>workload</th><th>pool</th><th>", out);
    html_escape(out, words);
    fputs("</th><th></th>", out);
    static const struct { const char *column, *unit, *head; } figures[] = {
        { "cost_horizon_usd", "USD", "over the horizon (cash)" },
        { "cost_per_mtok_usd", "USD", "per million output tokens" },
        { "slo_attainment", "%", "within SLO" }, { "ttft_p99_s", "s", "p99 TTFT" },
        { "gpus_mean", "gpus", "GPUs" }, { "energy_per_mtok_kwh", "kWh", "energy per Mtok" },
    };
    for (size_t f = 0; f < sizeof figures / sizeof figures[0]; f++)
        if (strcmp(figures[f].column, key)) /* the ranking figure leads, with its bar */
            fprintf(out, "<th>%s</th>", figures[f].head);
    fputs("<th></th></tr></thead>\n<tbody>\n", out);
    for (size_t r = 0; r < t.rows; r++) {
        bool best = r == 0, meets = !strcmp(csv_table_cell(&t, r, csv_table_column(&t, "meets")),
                                           "true");
        fprintf(out, "<tr%s><td class=\"num\">%zu%s</td><td>", best ? " class=\"best\"" : "",
                r + 1, best ? " &#9733;" : "");
        html_escape(out, csv_table_cell(&t, r, csv_table_column(&t, "workload")));
        fputs("</td><td>", out);
        html_escape(out, csv_table_cell(&t, r, csv_table_column(&t, "pool")));
        double v = csv_table_number(&t, r, k);
        double width = top > 0 && !isnan(v) ? 100 * v / top : 0;
        fputs("</td><td class=\"num\">", out);
        cell_figure(out, &t, r, key, unit);
        fprintf(out, "</td><td style=\"min-width:8em\"><div style=\"background:%s;height:.9em;"
                "width:%.1f%%\"></div></td>", best ? "#2a7" : "#89a", width);
        for (size_t f = 0; f < sizeof figures / sizeof figures[0]; f++) {
            if (!strcmp(figures[f].column, key))
                continue;
            fputs("<td class=\"num\">", out);
            cell_figure(out, &t, r, figures[f].column, figures[f].unit);
            fputs("</td>", out);
        }
        long priced = csv_table_column(&t, "egress_priced");
        bool unpriced = priced >= 0 && !strcmp(csv_table_cell(&t, r, priced), "false");
        fprintf(out, "<td style=\"min-width:12em\">%s%s%s</td></tr>\n",
                meets ? "" : "misses its SLO",
                !meets && unpriced ? "; " : "", unpriced ? "egress not priced (transit)" : "");
    }
    fputs("</tbody>\n</table></div>\n", out);
    /* said under the table too: the note column may be scrolled out of sight */
    long priced = csv_table_column(&t, "egress_priced");
    size_t unpriced = 0;
    for (size_t r = 0; priced >= 0 && r < t.rows; r++) {
        if (strcmp(csv_table_cell(&t, r, priced), "false"))
            continue;
        fputs(unpriced++ ? ", " : "<p>Egress not priced: the sites of ", out);
        html_escape(out, csv_table_cell(&t, r, csv_table_column(&t, "workload")));
    }
    if (unpriced)
        fputs(" state no <code>transit</code> (nor <code>egress</code>) for the bytes they "
              "send, which their cost leaves out.</p>\n", out);
    csv_table_release(&t);
    write_break_even(out, dir);
}
