/* `fleetsim validate`: the model's predictions against a table of published
 * measurements (tests/validation/published.csv), row by row and per category. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/catalog.h"
#include "lua/cli.h"
#include "lua/validate_predict.h"
#include "models/validate.h"
#include "output/csv_table.h"
#include "output/validate_text.h"

const char cli_validate_usage[] =
    "usage: fleetsim validate [--table FILE] [--half check|fit|all] [--csv]\n"
    "\n"
    "Predicts each row of a table of published measurements (training GPU-hours, MFU\n"
    "and step times, inference throughput, latency, memory) with the analytic model and\n"
    "the device's default profile, and prints it beside the published figure with the\n"
    "error (predicted / published - 1), then per category the rows predicted, the mean\n"
    "absolute percentage error and the worst row.  A row whose model or device is not\n"
    "in the catalog, or whose configuration the model cannot express, is printed as\n"
    "\"not predicted\" with the reason.  Defaults: --table\n"
    "tests/validation/published.csv, --half check (the rows no constant was set from).\n"
    "--csv prints the rows and the summary as CSV.\n";

int cli_validate(int argc, char **argv)
{
    enum { O_TABLE = 256, O_HALF, O_CSV };
    static const struct option options[] = {
        { "table", required_argument, NULL, O_TABLE }, { "half", required_argument, NULL, O_HALF },
        { "csv", no_argument, NULL, O_CSV }, { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *path = "tests/validation/published.csv", *half = "check";
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
        case 'h': fputs(cli_validate_usage, stdout); return CLI_EXIT_OK;
        case ':':
            fprintf(stderr, "fleetsim validate: %s needs a value\n", argv[optind - 1]);
            return CLI_EXIT_BAD_INPUT;
        default:
            fprintf(stderr, "fleetsim validate: unknown option '%s' (see fleetsim help "
                    "validate)\n", argv[optind - 1]);
            return CLI_EXIT_BAD_INPUT;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "fleetsim validate: unexpected argument '%s'\n", argv[optind]);
        return CLI_EXIT_BAD_INPUT;
    }
    char err[1024];
    csv_table t;
    int rc = csv_table_read(path, &t, err, sizeof err);
    if (rc != 0) {
        if (rc > 0)
            fprintf(stderr, "fleetsim validate: cannot read '%s' (no such file)\n", path);
        else
            fprintf(stderr, "fleetsim validate: %s\n", err);
        csv_table_release(&t);
        return CLI_EXIT_BAD_INPUT;
    }
    static const char *const required[] = { "id", "half", "category", "metric", "unit", "value",
                                             "model", "device" };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (csv_table_column(&t, required[i]) < 0) {
            fprintf(stderr, "fleetsim validate: %s: no column '%s'\n", path, required[i]);
            csv_table_release(&t);
            return CLI_EXIT_BAD_INPUT;
        }
    catalog cat;
    if (catalog_load(&cat, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim: %s\n", err);
        csv_table_release(&t);
        return CLI_EXIT_RUN_FAILURE;
    }
    validate_result *rows = calloc(t.rows ? t.rows : 1, sizeof *rows);
    validate_prediction *preds = calloc(t.rows ? t.rows : 1, sizeof *preds);
    if (!rows || !preds) {
        fprintf(stderr, "fleetsim validate: out of memory\n");
        free(rows);
        free(preds);
        catalog_release(&cat);
        csv_table_release(&t);
        return CLI_EXIT_RUN_FAILURE;
    }
#define CELL(name) csv_table_cell(&t, i, csv_table_column(&t, name))
    size_t n = 0;
    for (size_t i = 0; i < t.rows; i++) {
        if (strcmp(half, "all") && strcmp(CELL("half"), half))
            continue;
        validate_row row = {
            CELL("id"), CELL("category"), CELL("metric"), CELL("unit"), CELL("model"),
            CELL("device"), CELL("device_count"), CELL("precision"), CELL("kv_cache_precision"),
            CELL("parallelism"), CELL("batch_or_concurrency"), CELL("input_tokens"),
            CELL("output_tokens"), CELL("seq_len"), CELL("global_batch"), CELL("train_tokens"),
        };
        validate_predict(&cat, &row, &preds[n]);
        validate_result *r = &rows[n];
        *r = (validate_result){ row.id, row.category, row.metric, row.unit,
                                csv_table_number(&t, i, csv_table_column(&t, "value")),
                                preds[n].predicted, preds[n].value, 0, NULL };
        if (r->predicted)
            r->error = validate_error(r->value, r->published);
        else
            r->reason = preds[n].reason;
        n++;
    }
#undef CELL
    if (csv)
        output_validate_csv(stdout, rows, n);
    else
        output_validate_text(stdout, rows, n);
    free(rows);
    free(preds);
    catalog_release(&cat);
    csv_table_release(&t);
    return CLI_EXIT_OK;
}
