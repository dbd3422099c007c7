/* Options of run and check (see cli_options.h). */
#include "lua/cli_options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/claim.h"
#include "lua/cli.h"
#include "lua/cli_getopt.h"
#include "lua/experiment.h"
#include "lua/scenario_load.h"
#include "models/budget.h"

/* Appends text to a list of option values (the strings live as long as the process). */
static void add_text(const char ***list, size_t *n, const char *text)
{
    const char **grown = realloc(*list, (*n + 1) * sizeof *grown);
    if (!grown) {
        fprintf(stderr, "fleetsim: out of memory\n");
        exit(CLI_EXIT_RUN_FAILURE);
    }
    *list = grown;
    grown[(*n)++] = text;
}

/* Adds "KEY=VALUE" to the overrides. */
static void add_set(cli_options *o, const char *text) { add_text(&o->sets, &o->nsets, text); }

void cli_options_release(cli_options *o)
{
    free(o->sets);
    free(o->sweeps);
}

/* --seed N and --replications N are overrides of the scenario's own keys, written into
 * buf (which lives in the options), from min to max (the key's own bounds: a seed within
 * Lua's integers, at most 2^63 - 1; replications 1 to SCENARIO_MAX_REPLICATIONS). */
static int add_integer_set(cli_options *o, const char *key, const char *value,
                           unsigned long long min, unsigned long long max, char *buf,
                           size_t size)
{
    /* digits only: strtoull would take a sign or a space before them */
    char *end;
    errno = 0;
    unsigned long long n = strtoull(value, &end, 10);
    if (!isdigit((unsigned char)value[0]) || *end || errno == ERANGE || n < min || n > max) {
        fprintf(stderr, "fleetsim: --%s expects a whole number from %llu to %llu, got '%s'\n",
                key, min, max, value);
        return -1;
    }
    snprintf(buf, size, "%s=%llu", key, n);
    add_set(o, buf);
    return 0;
}

/* --jobs N: 1 to 1024 processes. */
static int parse_jobs(const char *command, const char *value, unsigned *out)
{
    char *end;
    unsigned long n = strtoul(value, &end, 10);
    if (!*value || *end || value[0] == '-' || n < 1 || n > 1024) {
        fprintf(stderr, "fleetsim %s: --jobs expects a whole number from 1 to 1024, got '%s'\n",
                command, value);
        return -1;
    }
    *out = (unsigned)n;
    return 0;
}

/* --set takes KEY=VALUE in one word: "--set duration 2h" would read 2h as the scenario
 * file; the next word, when it is not an option, is the likely value.  (--sweep's are
 * checked with its values, experiment_load.c.) */
static int needs_equals(const char *command, const char *option, const char *arg, int argc,
                        char **argv)
{
    if (strchr(arg, '='))
        return 0;
    const char *next = optind < argc && argv[optind][0] != '-' ? argv[optind] : NULL;
    fprintf(stderr, "fleetsim %s: --%s %s: expected KEY=VALUE in one word", command, option,
            arg);
    if (next)
        fprintf(stderr, " (did you mean --%s %s=%s?)", option, arg, next);
    else
        fprintf(stderr, ": --%s %s=VALUE", option, arg);
    fprintf(stderr, "\n");
    return -1;
}

int cli_options_parse(int argc, char **argv, const char *command, cli_options *o)
{
    enum { OPT_SEED = 256, OPT_REPLICATIONS, OPT_SET, OPT_UNSAFE, OPT_RECORDS, OPT_NO_PLOTS,
           OPT_SWEEP, OPT_MEMORY_LIMIT, OPT_ALL, OPT_PNG };
    static const struct option long_options[] = {
        { "output", required_argument, NULL, 'o' },
        { "seed", required_argument, NULL, OPT_SEED },
        { "replications", required_argument, NULL, OPT_REPLICATIONS },
        { "set", required_argument, NULL, OPT_SET },
        { "quiet", no_argument, NULL, 'q' },
        { "unsafe", no_argument, NULL, OPT_UNSAFE },
        { "records", no_argument, NULL, OPT_RECORDS },
        { "no-plots", no_argument, NULL, OPT_NO_PLOTS },
        { "png", no_argument, NULL, OPT_PNG },
        { "all", no_argument, NULL, OPT_ALL },
        { "sweep", required_argument, NULL, OPT_SWEEP },
        { "memory-limit", required_argument, NULL, OPT_MEMORY_LIMIT },
        { "jobs", required_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    memset(o, 0, sizeof *o);
    opterr = 0;
    optind = 2;
    int opt;
    while ((opt = getopt_long(argc, argv, ":o:j:qh", long_options, NULL)) != -1) {
        switch (opt) {
        case 'o':
            if (!*optarg) {
                fprintf(stderr, "fleetsim %s: -o expects a folder, got an empty name\n", command);
                return -1;
            }
            o->output_dir = optarg;
            break;
        case 'q': o->quiet = true; break;
        case 'h': cli_help(command); exit(CLI_EXIT_OK);
        case OPT_SEED:
            if (add_integer_set(o, "seed", optarg, 0, LLONG_MAX, o->seed_set,
                                sizeof o->seed_set) != 0)
                return -1;
            break;
        case OPT_REPLICATIONS:
            if (add_integer_set(o, "replications", optarg, 1, SCENARIO_MAX_REPLICATIONS,
                                o->replications_set, sizeof o->replications_set) != 0)
                return -1;
            break;
        case OPT_SET:
            if (needs_equals(command, "set", optarg, argc, argv) != 0)
                return -1;
            add_set(o, optarg);
            break;
        case OPT_UNSAFE: o->unsafe = true; break;
        case OPT_RECORDS: o->records = true; break;
        case OPT_NO_PLOTS: o->no_plots = true; break;
        case OPT_PNG: o->png = true; break;
        case OPT_ALL: o->all = true; break;
        case OPT_SWEEP: add_text(&o->sweeps, &o->nsweeps, optarg); break;
        case OPT_MEMORY_LIMIT:
            if (run_memory_parse(optarg, &o->memory_limit_bytes) != 0) {
                fprintf(stderr, "fleetsim %s: --memory-limit expects a size such as 8GB or "
                        "512MiB, or none, got '%s'\n", command, optarg);
                return -1;
            }
            break;
        case 'j':
            if (parse_jobs(command, optarg, &o->jobs) != 0)
                return -1;
            break;
        default: /* ':' or '?' */
            cli_getopt_refused(command, opt, argv, long_options);
            return -1;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "fleetsim %s: expected one scenario file (see fleetsim help %s)\n",
                command, command);
        return -1;
    }
    o->file = argv[optind];
    return 0;
}

int cli_options_load(const cli_options *o, scenario *sc)
{
    char err[2048];
    scenario_load_options lo = { .unsafe = o->unsafe, .sets = o->sets, .nsets = o->nsets };
    if (scenario_load(o->file, &lo, sc, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

char *cli_options_default_output_dir(const char *name)
{
    size_t n = strlen(name);
    char *dir = malloc(n + 5);
    if (!dir)
        return NULL;
    memcpy(dir, "out/", 4);
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        bool safe = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
                    || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
        dir[4 + i] = safe && !(i == 0 && ch == '.') ? ch : '_';
    }
    dir[4 + n] = '\0';
    return dir;
}

int cli_options_check_memory(const cli_options *o, const scenario *sc,
                             const experiment_spec *spec)
{
    size_t points = 1;
    for (size_t a = 0; a < spec->naxes; a++)
        points = points * spec->axes[a].nvalues > EXPERIMENT_MAX_POINTS
                     ? EXPERIMENT_MAX_POINTS : points * spec->axes[a].nvalues;
    for (size_t a = 0; a < spec->search.ngrid; a++) /* a grid search runs every point */
        points = points * spec->search.grid[a].nvalues > EXPERIMENT_MAX_POINTS
                     ? EXPERIMENT_MAX_POINTS : points * spec->search.grid[a].nvalues;
    if (spec->has_search && !spec->search.ngrid) /* low, high, then bisection */
        points = 2 + (size_t)ceil(log2(fmax(2.0, (double)(spec->search.high
                                                           - spec->search.low))));
    unsigned processes = o->jobs > 1 ? o->jobs : 1;
    if (processes > sc->replications * points)
        processes = (unsigned)(sc->replications * points);
    run_memory m;
    run_memory_estimate(sc, points, processes, claim_present(sc->runtime), &m);
    double budget = o->memory_limit_bytes > 0 ? o->memory_limit_bytes
                                              : run_memory_default_budget_bytes();
    char err[1024];
    if (run_memory_check(&m, budget, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "%s: %s; --memory-limit raises the budget\n", o->file, err);
    return -1;
}

int cli_options_load_experiment(const cli_options *o, scenario *sc, experiment_spec *spec)
{
    char err[4096];
    scenario_load_options lo = { .unsafe = o->unsafe, .sets = o->sets, .nsets = o->nsets };
    if (scenario_load_experiment(o->file, &lo, sc, spec, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    int status = 0;
    for (size_t i = 0; i < o->nsweeps && status == 0; i++)
        if (experiment_load_add_sweep(spec, o->sweeps[i], err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            status = -1;
        }
    if (status == 0 && cli_options_check_memory(o, sc, spec) != 0)
        status = -1;
    if (status != 0) {
        scenario_release(sc);
        experiment_load_release(spec);
    }
    return status;
}
