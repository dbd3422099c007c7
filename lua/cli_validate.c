/* `fleetsim validate`: the model's predictions against a table of published
 * measurements (tests/validation/published.csv), row by row and per category. */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lua/catalog.h"
#include "lua/cli.h"
#include "lua/cli_getopt.h"
#include "lua/profile_load.h"
#include "lua/steps_load.h"
#include "lua/validate_predict.h"
#include "models/validate.h"
#include "output/csv_table.h"
#include "output/validate_text.h"

const char cli_validate_usage[] =
    "usage: fleetsim validate [--table FILE] [--half check|fit|all] [--csv]\n"
    "       fleetsim validate --steps STEPS.csv [--profile FILE.lua]\n"
    "\n"
    "Predicts each row of a table of published measurements (training GPU-hours, MFU\n"
    "and step times, inference throughput, latency, memory, power and energy per token)\n"
    "with the analytic model and the device's default profile (a row measured under a\n"
    "client's concurrency with the serving simulation of that many closed-loop users),\n"
    "and prints it beside the published figure with the error (predicted / published\n"
    "- 1), then per category the rows predicted, the mean absolute percentage error and\n"
    "the worst row.  A row whose model or device is not in the catalog, or whose\n"
    "configuration the model cannot express, is printed as \"not predicted\" with the\n"
    "reason.  Defaults: --table\n"
    "tests/validation/published.csv where the current folder has it (a source tree),\n"
    "else the installed copy (PREFIX/share/fleetsim/validation/published.csv beside\n"
    "PREFIX/bin/fleetsim); --half check (the rows no constant was set from).  --half\n"
    "fit reads fit.csv from the same place instead: the fit set's figures the model\n"
    "can be run on (training throughputs at their stated plans), to show how well the\n"
    "model reproduces what it was set from; --half all reads both.\n"
    "--csv prints the rows and the summary as CSV.\n"
    "\n"
    "--steps STEPS.csv predicts each measured step of a real engine (the file `fleetsim\n"
    "calibrate --steps` fits; docs/calibration.md) with --profile FILE.lua (default: the\n"
    "device's datasheet family) and prints predicted and measured times with the error,\n"
    "then the mean absolute and the worst error, for prefill and decode steps apart.\n";

/* The table a plain `fleetsim validate` reads (`file`: published.csv, the check half;
 * fit.csv, the fit half's rows): the source tree's, from its top folder (in `source`),
 * else the one make install put beside the binary (PREFIX/share/fleetsim/validation,
 * found from the executable's own path, so that a staged or moved install finds its own).
 * Returns the path to try and, in `installed`, the second place for the message. */
static const char *default_table(const char *file, char *source, size_t source_size,
                                 char *installed, size_t size)
{
    snprintf(source, source_size, "tests/validation/%s", file);
    installed[0] = '\0';
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0'; /* PREFIX/bin */
            int w = snprintf(installed, size, "%s/../share/fleetsim/validation/%s", exe, file);
            if (w < 0 || (size_t)w >= size)
                installed[0] = '\0';
        }
    }
    if (access(source, R_OK) == 0 || !installed[0] || access(installed, R_OK) != 0)
        return source;
    return installed;
}

/* Reads and checks a table of published measurements: its columns, every row's
 * configuration as data, every published figure a positive number; refused (exit 2,
 * with file:line) before anything is predicted or printed.  `defaulted`: the path was the
 * default's (its message names `installed`, make install's place, too). */
static int read_table(const char *path, bool defaulted, const char *installed, csv_table *t)
{
    char err[1024];
    int rc = csv_table_read(path, t, err, sizeof err);
    if (rc != 0) {
        if (rc > 0 && defaulted)
            fprintf(stderr, "fleetsim validate: no table of published measurements: neither "
                    "'%s' (a source tree's) nor '%s' (make install's) exists; name one with "
                    "--table FILE\n", path, installed[0] ? installed
                    : "PREFIX/share/fleetsim/validation/ (published.csv, fit.csv)");
        else if (rc > 0)
            fprintf(stderr, "fleetsim validate: cannot read '%s' (no such file)\n", path);
        else
            fprintf(stderr, "fleetsim validate: %s\n", err);
        csv_table_release(t);
        return CLI_EXIT_BAD_INPUT;
    }
    static const char *const required[] = { "id", "half", "category", "metric", "unit", "value",
                                             "model", "device" };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (csv_table_column(t, required[i]) < 0) {
            fprintf(stderr, "fleetsim validate: %s: no column '%s'\n", path, required[i]);
            csv_table_release(t);
            return CLI_EXIT_BAD_INPUT;
        }
    /* every row's configuration is data that must parse, whichever half is asked for: a
     * mistake in it is the table's */
    for (size_t i = 0; i < t->rows; i++) {
        validate_row row = validate_row_of(t, i);
        if (validate_row_check(&row, err, sizeof err) != 0) {
            fprintf(stderr, "fleetsim validate: %s:%zu: %s\n", path, csv_table_line(t, i), err);
            csv_table_release(t);
            return CLI_EXIT_BAD_INPUT;
        }
    }
    /* a published figure is a positive number: the error divides by it */
    long value = csv_table_column(t, "value");
    for (size_t i = 0; i < t->rows; i++) {
        double x = csv_table_number(t, i, value);
        if (!(x > 0) || !isfinite(x)) {
            fprintf(stderr, "fleetsim validate: %s:%zu: value: expected a positive number, "
                    "got '%s'\n", path, csv_table_line(t, i), csv_table_cell(t, i, value));
            csv_table_release(t);
            return CLI_EXIT_BAD_INPUT;
        }
    }
    return CLI_EXIT_OK;
}

/* One step row's phase, for the summary. */
static const char *phase_of(const calib_step *s)
{
    return s->prefill_tokens > 0 ? (s->decode_tokens > 0 ? "mixed" : "prefill") : "decode";
}

static int validate_steps(const char *path, const char *profile_path, bool csv)
{
    char err[1024];
    catalog cat;
    if (catalog_load(&cat, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim: %s\n", err);
        return CLI_EXIT_RUN_FAILURE;
    }
    device_profile p;
    profile_init(&p);
    if (profile_path && profile_load_file(profile_path, &p, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim validate: --profile: %s\n", err);
        catalog_release(&cat);
        return CLI_EXIT_BAD_INPUT;
    }
    steps_file f;
    if (steps_load(path, &cat, profile_path ? &p : NULL, &f, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim validate: %s\n", err);
        steps_release(&f);
        catalog_release(&cat);
        return CLI_EXIT_BAD_INPUT;
    }
    static const char *const phases[] = { "prefill", "decode", "mixed", "all" };
    double sum[4] = { 0 }, worst[4] = { 0 };
    size_t count[4] = { 0 };
    if (csv)
        printf("line,model,batch,prefill_tokens,decode_tokens,mean_context,measured_s,"
               "predicted_s,error\n");
    else
        printf("%s on %s (as %s), profile %s\n\n%5s  %-14s %5s %7s %6s %7s %12s %12s %8s\n",
               path, f.device_name, f.device.name, profile_path ? profile_path : "none",
               "line", "model", "batch", "prefill", "decode", "context", "measured ms",
               "predicted ms", "error");
    for (size_t i = 0; i < f.count; i++) {
        const calib_step *s = &f.rows[i];
        double pred = calib_step_predict(s, &f.perf), e = pred / s->seconds - 1;
        if (csv)
            printf("%u,%s,%g,%g,%g,%g,%.6g,%.6g,%.4f\n", s->line, s->model->name, s->batch,
                   s->prefill_tokens, s->decode_tokens, s->mean_context, s->seconds, pred, e);
        else
            printf("%5u  %-14s %5g %7g %6g %7g %12.4g %12.4g %+7.1f%%\n", s->line,
                   s->model->name, s->batch, s->prefill_tokens, s->decode_tokens,
                   s->mean_context, 1e3 * s->seconds, 1e3 * pred, 100 * e);
        for (int k = 0; k < 4; k++)
            if (k == 3 || !strcmp(phases[k], phase_of(s))) {
                sum[k] += fabs(e);
                worst[k] = fabs(e) > fabs(worst[k]) ? e : worst[k];
                count[k]++;
            }
    }
    if (!csv) {
        printf("\n");
        for (int k = 0; k < 4; k++)
            if (count[k])
                printf("%-8s %4zu steps  mean |error| %5.1f%%  worst %+6.1f%%\n", phases[k],
                       count[k], 100 * sum[k] / count[k], 100 * worst[k]);
    }
    steps_release(&f);
    catalog_release(&cat);
    return CLI_EXIT_OK;
}

int cli_validate(int argc, char **argv)
{
    enum { O_TABLE = 256, O_HALF, O_CSV, O_STEPS, O_PROFILE };
    static const struct option options[] = {
        { "steps", required_argument, NULL, O_STEPS },
        { "profile", required_argument, NULL, O_PROFILE },
        { "table", required_argument, NULL, O_TABLE }, { "half", required_argument, NULL, O_HALF },
        { "csv", no_argument, NULL, O_CSV }, { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };

    const char *path = NULL, *half = "check", *steps = NULL, *profile = NULL;
    bool csv = false;
    int opt;
    opterr = 0;
    optind = 2;
    while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (opt) {
        case O_TABLE: path = optarg; break;
        case O_HALF:
            if (strcmp(optarg, "check") && strcmp(optarg, "fit") && strcmp(optarg, "all")) {
                fprintf(stderr, "fleetsim validate: --half expects check, fit or all, got "
                        "'%s'\n", optarg);
                return CLI_EXIT_BAD_INPUT;
            }
            half = optarg;
            break;
        case O_CSV: csv = true; break;
        case O_STEPS: steps = optarg; break;
        case O_PROFILE: profile = optarg; break;
        case 'h': fputs(cli_validate_usage, stdout); return CLI_EXIT_OK;
        default: /* ':' or '?' */
            cli_getopt_refused("validate", opt, argv, options);
            return CLI_EXIT_BAD_INPUT;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "fleetsim validate: unexpected argument '%s'\n", argv[optind]);
        return CLI_EXIT_BAD_INPUT;
    }
    if (profile && !steps) {
        fprintf(stderr, "fleetsim validate: --profile goes with --steps\n");
        return CLI_EXIT_BAD_INPUT;
    }
    if (steps)
        return validate_steps(steps, profile, csv);
    /* the tables: the one named, else the half's (under --half all, both) */
    const char *paths[2] = { path, NULL };
    char sources[2][64], installs[2][4200];
    size_t ntables = 1;
    if (!path) {
        static const char *const files[2] = { "published.csv", "fit.csv" };
        size_t first = strcmp(half, "fit") ? 0 : 1;
        ntables = strcmp(half, "all") ? 1 : 2;
        for (size_t k = 0; k < ntables; k++)
            paths[k] = default_table(files[first + k], sources[k], sizeof sources[k],
                                     installs[k], sizeof installs[k]);
    }
    csv_table t[2];
    size_t read = 0, rows_in_all = 0;
    int status = CLI_EXIT_OK;
    for (; read < ntables && status == CLI_EXIT_OK; read++) {
        status = read_table(paths[read], path == NULL, path ? "" : installs[read], &t[read]);
        rows_in_all += t[read].rows;
    }
    if (status != CLI_EXIT_OK) {
        for (size_t k = 0; k < read; k++)
            csv_table_release(&t[k]);
        return status;
    }
    char err[1024];
    catalog cat;
    if (catalog_load(&cat, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim: %s\n", err);
        for (size_t k = 0; k < ntables; k++)
            csv_table_release(&t[k]);
        return CLI_EXIT_RUN_FAILURE;
    }
    validate_result *rows = calloc(rows_in_all ? rows_in_all : 1, sizeof *rows);
    validate_prediction *preds = calloc(rows_in_all ? rows_in_all : 1, sizeof *preds);
    if (!rows || !preds) {
        fprintf(stderr, "fleetsim validate: out of memory\n");
        free(rows);
        free(preds);
        catalog_release(&cat);
        for (size_t k = 0; k < ntables; k++)
            csv_table_release(&t[k]);
        return CLI_EXIT_RUN_FAILURE;
    }
    size_t n = 0;
    for (size_t k = 0; k < ntables; k++) {
        const csv_table *table = &t[k];
        long half_column = csv_table_column(table, "half");
        long value_column = csv_table_column(table, "value");
        for (size_t i = 0; i < table->rows; i++) {
            if (strcmp(half, "all") && strcmp(csv_table_cell(table, i, half_column), half))
                continue;
            validate_row row = validate_row_of(table, i);
            validate_predict(&cat, &row, &preds[n]);
            validate_result *r = &rows[n];
            *r = (validate_result){ row.id, row.category, row.metric, row.unit,
                                    csv_table_number(table, i, value_column),
                                    preds[n].predicted, preds[n].value, 0, NULL,
                                    validate_engine_of(&row) };
            if (r->predicted)
                r->error = validate_error(r->value, r->published);
            else
                r->reason = preds[n].reason;
            n++;
        }
    }
    if (csv)
        output_validate_csv(stdout, rows, n);
    else
        output_validate_text(stdout, rows, n);
    free(rows);
    free(preds);
    catalog_release(&cat);
    for (size_t k = 0; k < ntables; k++)
        csv_table_release(&t[k]);
    return CLI_EXIT_OK;
}
