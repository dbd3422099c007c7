/* The fleetsim command line: run, check, version, help. */
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernels/cuda_probe.h"
#include "lua/catalog.h"
#include "lua/claim.h"
#include "lua/experiment.h"
#include "lua/scenario_load.h"
#include "models/budget.h"
#include "models/estimate.h"
#include "models/run.h"
#include "output/atomic_file.h"
#include "output/estimate_text.h"
#include "output/jobs.h"
#include "output/pictures.h"
#include "output/records.h"
#include "output/results.h"
#include "output/scenario_text.h"
#include "output/sweep.h"
#include "output/verdict.h"
#include "kernels/calibrate_cli.h"
#include "lua/profile_load.h"
#include "sim/interrupt.h"
#include "sim/mpi_tasks.h"
#include "sim/rng.h"
#include "sim/version.h"

enum { EXIT_RUN_FAILURE = 1, EXIT_BAD_INPUT = 2 };

static const char usage[] =
    "usage: fleetsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run FILE.lua     run a scenario and write its results\n"
    "  check FILE.lua   load and check a scenario, print it resolved, run nothing\n"
    "  plot DIR         render a run folder's chart scripts (plots/*.gp) again, as edited,\n"
    "                   and rewrite its report.html\n"
    "  estimate         memory, latency, throughput and training time of a model on a\n"
    "                   device (fleetsim help estimate)\n"
    "  calibrate        measure this machine's GPU (or CPU) and write a profile\n"
    "                   (fleetsim help calibrate)\n"
    "  version          print the version and what this build can use\n"
    "  help [COMMAND]   print this message, or a command's options\n"
    "\n"
    "Exit status: 0 success, 1 run-time failure (e.g. an unwritable folder), 2 bad usage\n"
    "or a bad scenario.\n";

static const char usage_run[] =
    "usage: fleetsim run FILE.lua [options]\n"
    "\n"
    "  -o, --output DIR       write results here (default out/<scenario name>)\n"
    "      --seed N           override the scenario's seed\n"
    "      --replications N   override the number of replications\n"
    "      --set KEY=VALUE    override any value by its dotted path, e.g.\n"
    "                         --set pools.q.count=6 --set workloads.mm.arrivals.rate=5.5\n"
    "                         (repeatable; values take units: --set duration=2h)\n"
    "      --sweep KEY=V1,V2  run every combination of the swept values (repeatable;\n"
    "                         replaces the scenario's sweep values of KEY)\n"
    "  -j, --jobs N           run replications and sweep points in N processes (1)\n"
    "  -q, --quiet            no progress line\n"
    "      --records          also write requests.csv, one row per inference request, and\n"
    "                         jobs.csv, one row per training job (not with sweeps,\n"
    "                         searches, --jobs or mpirun)\n"
    "      --unsafe           lift the sandbox, for trusted files only\n"
    "      --no-plots         no charts (plots/) and no report.html\n"
    "      --memory-limit SIZE  refuse a run estimated to need more memory (\"8GB\",\n"
    "                         \"none\"; default half this machine's memory)\n"
    "\n"
    "Writes summary.csv (one row per metric, with 95% intervals over replications) and\n"
    "timeseries.csv (one row per time bucket and pool or workload), each complete or\n"
    "not at all, and prints the summary; then gnuplot scripts with their SVG and PNG\n"
    "renders in plots/ (scripts only when gnuplot is missing) and report.html.\n"
    "A sweep (the scenario's sweep table, or --sweep) writes sweep.csv, sweep_diff.csv\n"
    "(paired differences from the first point) and points/<k>/ instead of the summary;\n"
    "a search (fs.search) writes search.csv, sweep.csv and points/<k>/.  Under mpirun\n"
    "(a build with MPI=1) the replications are spread over the ranks.\n";

static const char usage_check[] =
    "usage: fleetsim check FILE.lua [--set KEY=VALUE]... [--seed N] [--replications N]\n"
    "                      [--unsafe]\n"
    "\n"
    "Loads the scenario with the same checks as run, prints every value as the run would\n"
    "use it (base units: seconds, per second), and runs nothing.\n";

static const char usage_plot[] =
    "usage: fleetsim plot DIR\n"
    "\n"
    "Renders the chart scripts of a run folder, DIR/plots/*.gp, as they are (edited or\n"
    "added by hand) into plots/NAME.svg and NAME.png, with gnuplot, then writes\n"
    "DIR/report.html again.  A folder without scripts gets them from its CSVs first.\n";

static const char usage_estimate[] =
    "usage: fleetsim estimate --model NAME --gpu NAME [--gpus N] [--tp N] [--pp N]\n"
    "                         [--precision fp32|fp16|bf16|fp8|int8|int4] [--batch B]\n"
    "                         [--prompt P] [--output O] [--train-tokens T] [--seq S]\n"
    "                         [--global-batch G] [--profile FILE] [--csv]\n"
    "\n"
    "The analytic answer for one model on one kind of device: memory (weights, cache,\n"
    "training state), time to first token, time per output token at --batch, the best\n"
    "offline throughput on --gpus devices, and training step time, MFU, days and\n"
    "GPU-hours for --train-tokens (default 20 per parameter).  Defaults: --gpus 1,\n"
    "--precision fp16, --batch 1, --prompt 512, --output 256; --tp the smallest that\n"
    "fits.  --gpu takes any catalog device, CPUs included.  --profile takes a calibration\n"
    "profile (fleetsim calibrate) whose measured figures replace the device's datasheet\n"
    "ones.  --csv prints metric,value,unit rows.\n";

typedef struct cli_options {
    const char *file;
    const char *output_dir;
    const char **sets;
    size_t nsets;
    const char **sweeps;        /* --sweep KEY=V1,V2,... */
    size_t nsweeps;
    unsigned jobs;              /* --jobs N; 0 when not given */
    bool quiet;
    bool unsafe;
    bool records;
    bool no_plots;              /* --no-plots */
    double memory_limit_bytes;  /* --memory-limit; 0 when not given */
    char seed_set[48];          /* "seed=N", from --seed */
    char replications_set[48];  /* "replications=N", from --replications */
} cli_options;

static int cmd_version(void)
{
    char why[256] = "";
    printf("fleetsim %s\n", FLEETSIM_VERSION);
    if (!kernels_cuda_built()) {
        printf("cuda: not built\n");
        return 0;
    }
    int devices = kernels_cuda_device_count(why, sizeof why);
    printf("cuda: runtime %s, ", kernels_cuda_runtime_version());
    if (devices > 0)
        printf("%d device%s\n", devices, devices == 1 ? "" : "s");
    else
        printf("no device (%s)\n", why);
    return 0;
}

static int cmd_help(const char *command)
{
    if (!command)
        fputs(usage, stdout);
    else if (!strcmp(command, "run"))
        fputs(usage_run, stdout);
    else if (!strcmp(command, "check"))
        fputs(usage_check, stdout);
    else if (!strcmp(command, "estimate"))
        fputs(usage_estimate, stdout);
    else if (!strcmp(command, "plot"))
        fputs(usage_plot, stdout);
    else if (!strcmp(command, "calibrate"))
        fputs(calibrate_usage, stdout);
    else if (!strcmp(command, "version") || !strcmp(command, "help"))
        fputs(usage, stdout);
    else {
        fprintf(stderr, "fleetsim: no command '%s'\n\n%s", command, usage);
        return EXIT_BAD_INPUT;
    }
    return 0;
}

/* Appends text to a list of option values (the strings live as long as the process). */
static void add_text(const char ***list, size_t *n, const char *text)
{
    const char **grown = realloc(*list, (*n + 1) * sizeof *grown);
    if (!grown) {
        fprintf(stderr, "fleetsim: out of memory\n");
        exit(EXIT_RUN_FAILURE);
    }
    *list = grown;
    grown[(*n)++] = text;
}

/* Adds "KEY=VALUE" to the overrides. */
static void add_set(cli_options *o, const char *text) { add_text(&o->sets, &o->nsets, text); }

static void release_options(cli_options *o)
{
    free(o->sets);
    free(o->sweeps);
}

/* --seed N and --replications N are overrides of the scenario's own keys, written into
 * buf (which lives in the options). */
static int add_integer_set(cli_options *o, const char *key, const char *value, char *buf,
                           size_t size)
{
    char *end;
    unsigned long long n = strtoull(value, &end, 10);
    if (!*value || *end || value[0] == '-') {
        fprintf(stderr, "fleetsim: --%s expects a whole number, got '%s'\n", key, value);
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

/* Parses the options of run and check; -1 after printing the mistake. */
static int parse_options(int argc, char **argv, const char *command, cli_options *o)
{
    enum { OPT_SEED = 256, OPT_REPLICATIONS, OPT_SET, OPT_UNSAFE, OPT_RECORDS, OPT_NO_PLOTS,
           OPT_SWEEP, OPT_MEMORY_LIMIT };
    static const struct option long_options[] = {
        { "output", required_argument, NULL, 'o' },
        { "seed", required_argument, NULL, OPT_SEED },
        { "replications", required_argument, NULL, OPT_REPLICATIONS },
        { "set", required_argument, NULL, OPT_SET },
        { "quiet", no_argument, NULL, 'q' },
        { "unsafe", no_argument, NULL, OPT_UNSAFE },
        { "records", no_argument, NULL, OPT_RECORDS },
        { "no-plots", no_argument, NULL, OPT_NO_PLOTS },
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
        case 'o': o->output_dir = optarg; break;
        case 'q': o->quiet = true; break;
        case 'h': cmd_help(command); exit(0);
        case OPT_SEED:
            if (add_integer_set(o, "seed", optarg, o->seed_set, sizeof o->seed_set) != 0)
                return -1;
            break;
        case OPT_REPLICATIONS:
            if (add_integer_set(o, "replications", optarg, o->replications_set,
                                sizeof o->replications_set) != 0)
                return -1;
            break;
        case OPT_SET: add_set(o, optarg); break;
        case OPT_UNSAFE: o->unsafe = true; break;
        case OPT_RECORDS: o->records = true; break;
        case OPT_NO_PLOTS: o->no_plots = true; break;
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
        case ':':
            fprintf(stderr, "fleetsim %s: %s needs a value\n", command, argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "fleetsim %s: unknown option '%s' (see fleetsim help %s)\n",
                    command, argv[optind - 1], command);
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

static int load(const cli_options *o, scenario *sc)
{
    char err[2048];
    scenario_load_options lo = { o->unsafe, o->sets, o->nsets };
    if (scenario_load(o->file, &lo, sc, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static int cmd_check(int argc, char **argv)
{
    cli_options o;
    if (parse_options(argc, argv, "check", &o) != 0) {
        release_options(&o);
        return EXIT_BAD_INPUT;
    }
    scenario sc;
    int status = load(&o, &sc) == 0 ? 0 : EXIT_BAD_INPUT;
    if (status == 0)
        output_scenario_text(stdout, &sc);
    scenario_release(&sc);
    release_options(&o);
    return status;
}

/* ---- progress ------------------------------------------------------------------ */

typedef struct progress_display {
    double started_s;
    double last_print_s;
    bool printed;
} progress_display;

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "12.5 d", "3.2 h", "45 s": a duration a person reads at a glance. */
static const char *human_duration(double s, char *buf, size_t size)
{
    if (s >= 2 * 86400)
        snprintf(buf, size, "%.1f d", s / 86400);
    else if (s >= 2 * 3600)
        snprintf(buf, size, "%.1f h", s / 3600);
    else if (s >= 120)
        snprintf(buf, size, "%.1f min", s / 60);
    else
        snprintf(buf, size, "%.3g s", s);
    return buf;
}

static void show_progress(void *context, const run_progress *p)
{
    progress_display *d = context;
    double now = wall_s();
    if (now - d->last_print_s < 0.5)
        return;
    d->last_print_s = now;
    d->printed = true;
    double elapsed = now - d->started_s;
    double done = (p->replication + p->sim_time_s / p->duration_s) / p->replications;
    double eta = done > 0 ? elapsed * (1 - done) / done : 0;
    char reached[32], total[32], left[32];
    fprintf(stderr, "\r  replication %u/%u  simulated %s of %s  %.3g events/s  %3.0f%%  "
            "ETA %s   ", p->replication + 1, p->replications,
            human_duration(p->sim_time_s, reached, sizeof reached),
            human_duration(p->duration_s, total, sizeof total),
            elapsed > 0 ? (double)p->events / elapsed : 0, 100 * done,
            human_duration(eta, left, sizeof left));
}

/* "out/<name>" with characters unsafe in file names replaced by '_'. */
static char *default_output_dir(const char *name)
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

/* The scenario's claim judged on its results (issue 9): the verdict line and
 * verdict.csv; a folder keeps no verdict of an earlier run. */
static int judge_claim(void *runtime, const claim_results *r, const char *dir)
{
    output_verdict_forget(dir);
    if (!claim_present(runtime))
        return 0;
    char err[2048];
    claim_verdict v;
    if (claim_judge(runtime, r, &v, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return EXIT_BAD_INPUT;
    }
    output_verdict_line(stdout, v.text, v.figure, v.word);
    if (output_verdict_csv(dir, v.text, v.word, v.score, v.figure, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim: %s\n", err);
        return EXIT_RUN_FAILURE;
    }
    return 0;
}

/* After a failed write (a full disk): the run's files go, so that nothing left in the
 * folder, not even an earlier run's summary, passes for this run's results. */
static void forget_results(const char *dir)
{
    static const char *const names[] = { "summary.csv", "timeseries.csv", "requests.csv",
                                         "jobs.csv" };
    char path[4096];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
}

/* One scenario, its replications in this process, with progress and records. */
static int run_single(const cli_options *o, scenario *sc)
{
    char err[1024];
    int status = 0;
    char *dir = o->output_dir ? strdup(o->output_dir) : default_output_dir(sc->name);
    if (!dir || output_make_dir(dir, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim: %s\n", dir ? err : "out of memory");
        status = EXIT_RUN_FAILURE;
    }
    progress_display display = { wall_s(), wall_s(), false };
    bool show = !o->quiet && isatty(STDERR_FILENO);
    run_results results;
    records_writer *records = NULL;
    if (status == 0 && o->records && sc->ninferences > 0
        && !(records = records_open(dir, err, sizeof err))) {
        fprintf(stderr, "fleetsim: %s\n", err);
        status = EXIT_RUN_FAILURE;
    }
    jobs_writer *jobs = NULL;
    bool has_jobs = sc->ntrainings + sc->njob_streams > 0;
    if (status == 0 && o->records && has_jobs && !(jobs = jobs_open(dir, err, sizeof err))) {
        fprintf(stderr, "fleetsim: %s\n", err);
        status = EXIT_RUN_FAILURE;
    }
    run_options ro = {
        .progress = show ? show_progress : NULL, .progress_context = &display,
        .on_request = records ? records_write : NULL, .request_context = records,
        .on_job = jobs ? jobs_write : NULL, .job_context = jobs,
    };
    if (status == 0 && scenario_run(sc, &ro, &results, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", o->file, err);
        records_abort(records);
        jobs_abort(jobs);
        status = EXIT_BAD_INPUT;
    } else if (status == 0) {
        if ((records && records_commit(records, err, sizeof err) != 0)
            || (jobs && jobs_commit(jobs, err, sizeof err) != 0)) {
            fprintf(stderr, "fleetsim: %s\n", err);
            forget_results(dir);
            status = EXIT_RUN_FAILURE;
        }
        if (display.printed)
            fputs("\r\033[K", stderr);
        int sig = sim_interrupt_signal();
        if (status == 0 && results.partial)
            fprintf(stderr, "fleetsim: interrupted by %s at simulated time %g s (%u of %u "
                    "replications complete): writing what was measured, marked partial\n",
                    sim_interrupt_name(sig), results.reached_s,
                    results.replications_completed, sc->replications);
        if (status == 0 && (output_summary_csv(dir, &results.metrics, err, sizeof err) != 0
            || output_timeseries_csv(dir, results.timeseries, sc->duration_s, err,
                                     sizeof err) != 0)) {
            fprintf(stderr, "fleetsim: %s\n", err);
            forget_results(dir);
            status = EXIT_RUN_FAILURE;
        } else if (status == 0) {
            printf("%s: %u replication%s of %g s, %llu events\n\n", sc->name, sc->replications,
                   sc->replications == 1 ? "" : "s", sc->duration_s,
                   (unsigned long long)results.events);
            output_summary_table(stdout, &results.metrics);
            claim_point point = { NULL, &results.metrics, sc->replications };
            claim_results one = { .name = sc->name, .points = &point, .npoints = 1 };
            status = sig ? 0 : judge_claim(sc->runtime, &one, dir); /* none on a part */
            printf("\nwrote %s/summary.csv%s%s and %s/timeseries.csv\n", dir,
                   records ? ", requests.csv" : "", jobs ? ", jobs.csv" : "", dir);
            /* pictures (issue 7): plots/ and report.html after the CSVs */
            if (status == 0 && !sig && !o->no_plots /* interrupted: the user wants out */
                && output_pictures(dir, sc->name, sc->description, true, stderr) != 0)
                status = EXIT_RUN_FAILURE;
        }
        if (sig && status == 0)
            status = sim_interrupt_exit_status(sig);
        run_results_release(&results);
    }
    free(dir);
    return status;
}

/* ---- plot (issue 7: pictures) ------------------------------------------------ */

/* `fleetsim plot DIR`: renders the scripts in DIR/plots as they are, then report.html. */
static int cmd_plot(int argc, char **argv)
{
    if (argc == 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")))
        return cmd_help("plot");
    if (argc != 3 || argv[2][0] == '-') {
        fprintf(stderr, "fleetsim plot: expected one run folder (see fleetsim help plot)\n");
        return EXIT_BAD_INPUT;
    }
    return output_pictures(argv[2], NULL, NULL, false, stderr) == 0 ? 0 : EXIT_RUN_FAILURE;
}

/* ---- experiments ----------------------------------------------------------------- */

static void show_points(void *context, size_t done, size_t points)
{
    progress_display *d = context;
    double now = wall_s();
    if (done < points && now - d->last_print_s < 0.5)
        return;
    d->last_print_s = now;
    d->printed = true;
    fprintf(stderr, "\r  point %zu/%zu done   ", done, points);
}

static sweep_point_view view_of(const experiment_point *pt)
{
    return (sweep_point_view){ (const char *const *)pt->values, &pt->results.metrics,
                               pt->samples, pt->samples_metrics, pt->replications };
}

/* The files and the printed lines of an experiment that ran. */
static int write_experiment(const experiment *x, const char *dir, char *err, size_t err_size)
{
    for (size_t p = 0; p < x->npoints && x->nkeys; p++) {
        const experiment_point *pt = &x->points[p];
        if (output_point_dir(dir, p + 1, &pt->results.metrics, pt->results.timeseries,
                             pt->duration_s, err, err_size) != 0)
            return -1;
    }
    if (x->nkeys == 0) { /* one point: the files of a plain run */
        const experiment_point *pt = &x->points[0];
        if (output_summary_csv(dir, &pt->results.metrics, err, err_size) != 0
            || output_timeseries_csv(dir, pt->results.timeseries, pt->duration_s, err,
                                     err_size) != 0)
            return -1;
        printf("%s: %u replication%s of %g s, %llu events\n\n", x->name, pt->replications,
               pt->replications == 1 ? "" : "s", pt->duration_s,
               (unsigned long long)pt->results.events);
        output_summary_table(stdout, &pt->results.metrics);
        printf("\nwrote %s/summary.csv and %s/timeseries.csv\n", dir, dir);
        return 0;
    }
    sweep_point_view *views = calloc(x->npoints, sizeof *views);
    search_probe_view *probes = calloc(x->npoints, sizeof *probes);
    if (!views || !probes) {
        free(views);
        free(probes);
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    for (size_t p = 0; p < x->npoints; p++) {
        const experiment_point *pt = &x->points[p];
        views[p] = view_of(pt);
        probes[p] = (search_probe_view){ pt->values[0],
            sim_metrics_find(&pt->results.metrics, x->target_scope, x->target_subject,
                             x->spec.has_search ? x->spec.search.metric : ""), pt->meets };
    }
    int status = output_sweep_csv(dir, x->keys, x->nkeys, views, x->npoints, err, err_size);
    if (status == 0 && x->spec.has_search)
        status = output_search_csv(dir, x->keys[0], x->spec.search.target, probes, x->npoints,
                                   x->found, x->answer, err, err_size);
    else if (status == 0)
        status = output_sweep_diff_csv(dir, x->keys, x->nkeys, views, x->npoints, err,
                                       err_size);
    free(views);
    free(probes);
    if (status != 0)
        return -1;
    char label[1024];
    for (size_t p = 0; p < x->npoints; p++) {
        const experiment_point *pt = &x->points[p];
        experiment_point_label(x, p, label, sizeof label);
        printf("%s %zu: %s: %u replication%s, %llu events", x->spec.has_search ? "probe" : "point",
               p + 1, label, pt->replications, pt->replications == 1 ? "" : "s",
               (unsigned long long)pt->results.events);
        if (x->spec.has_search)
            printf(": %s = %.6g, %s", x->spec.search.metric, pt->measured,
                   pt->meets ? "meets the target" : "misses it");
        printf("\n");
    }
    if (x->spec.has_search) {
        const search_spec *s = &x->spec.search;
        if (x->found)
            printf("\n%s=%lld is the smallest value in [%lld, %lld] with %s %s\n", s->key,
                   x->answer, (long long)s->low, (long long)s->high, x->target_subject,
                   s->target);
        else
            printf("\nno value of %s in [%lld, %lld] gives %s %s\n", s->key, (long long)s->low,
                   (long long)s->high, x->target_subject, s->target);
        printf("wrote %s/search.csv, %s/sweep.csv and %s/points/1..%zu/\n", dir, dir, dir,
               x->npoints);
    } else {
        printf("\nwrote %s/sweep.csv, %s/sweep_diff.csv and %s/points/1..%zu/\n", dir, dir, dir,
               x->npoints);
    }
    return 0;
}

/* judge_claim on every point of an experiment (a search's probes in the order run). */
static int judge_experiment(void *runtime, const experiment *x, const char *dir)
{
    claim_point *points = calloc(x->npoints, sizeof *points);
    if (!points) {
        fprintf(stderr, "fleetsim: out of memory\n");
        return EXIT_RUN_FAILURE;
    }
    for (size_t p = 0; p < x->npoints; p++)
        points[p] = (claim_point){ (const char *const *)x->points[p].values,
                                   &x->points[p].results.metrics, x->points[p].replications };
    claim_results r = { x->name, x->keys, x->nkeys, points, x->npoints, x->spec.has_search,
                        x->found, x->spec.has_search ? x->spec.search.target : NULL, x->answer };
    int status = judge_claim(runtime, &r, dir);
    free(points);
    return status;
}

/* Sweeps, searches, and runs spread over processes: every (point, replication) a task. */
static int run_experiment(const cli_options *o, const scenario *sc, experiment_spec *spec)
{
    const char *name = sc->name, *description = sc->description;
    char err[4096];
    bool mpi = sim_mpi_size() > 1;
    if (o->records) {
        fprintf(stderr, "fleetsim run: --records writes one stream in run order: it does not "
                "combine with sweeps, searches, --jobs or mpirun\n");
        return EXIT_BAD_INPUT;
    }
    if (mpi && o->jobs > 1) {
        fprintf(stderr, "fleetsim run: --jobs %u under mpirun: the ranks are the workers; "
                "leave --jobs out\n", o->jobs);
        return EXIT_BAD_INPUT;
    }
    progress_display display = { wall_s(), wall_s(), false };
    bool show = !o->quiet && isatty(STDERR_FILENO);
    experiment_options eo = {
        .file = o->file, .unsafe = o->unsafe, .sets = o->sets, .nsets = o->nsets,
        .tasks = { .jobs = o->jobs ? o->jobs : 1, .mpi = mpi },
        .progress = show ? show_points : NULL, .progress_context = &display,
    };
    experiment x;
    experiment_status status = experiment_plan(&x, &eo, spec, err, sizeof err);
    char *dir = NULL;
    if (status == EXPERIMENT_OK) {
        dir = o->output_dir ? strdup(o->output_dir) : default_output_dir(name);
        if (!dir || output_make_dir(dir, err, sizeof err) != 0) {
            snprintf(err, sizeof err, "%s", dir ? err : "out of memory");
            status = EXPERIMENT_FAILED;
        }
    }
    if (status == EXPERIMENT_OK)
        status = experiment_run(&x, err, sizeof err);
    if (display.printed)
        fputs("\r\033[K", stderr);
    int sig = sim_interrupt_signal();
    if (sig) { /* results of several points or processes: nothing partial is written */
        fprintf(stderr, "fleetsim: interrupted by %s: a sweep, a search or a run over "
                "several processes writes nothing when interrupted\n", sim_interrupt_name(sig));
        free(dir);
        experiment_release(&x);
        return sim_interrupt_exit_status(sig);
    }
    bool writes = status == EXPERIMENT_OK && sim_mpi_rank() == 0;
    if (writes && write_experiment(&x, dir, err, sizeof err) != 0)
        status = EXPERIMENT_FAILED;
    if (status != EXPERIMENT_OK)
        fprintf(stderr, "%s%s\n", status == EXPERIMENT_FAILED ? "fleetsim: " : "", err);
    /* pictures: plots/ (sweep charts from sweep.csv) and report.html; prints its errors */
    int verdict = writes && status == EXPERIMENT_OK ? judge_experiment(sc->runtime, &x, dir) : 0;
    if (writes && status == EXPERIMENT_OK && !verdict && !o->no_plots
        && output_pictures(dir, x.name, description, true, stderr) != 0)
        status = EXPERIMENT_FAILED;
    free(dir);
    experiment_release(&x);
    if (verdict)
        return verdict;
    return status == EXPERIMENT_OK ? 0 : status == EXPERIMENT_BAD_INPUT ? EXIT_BAD_INPUT
                                                                        : EXIT_RUN_FAILURE;
}

/* Refuses, before anything runs, a run estimated to need more memory than the budget
 * (models/budget.h); -1 after saying why. */
static int check_memory(const cli_options *o, const scenario *sc, const experiment_spec *spec)
{
    size_t points = 1;
    for (size_t a = 0; a < spec->naxes; a++)
        points = points * spec->axes[a].nvalues > EXPERIMENT_MAX_POINTS
                     ? EXPERIMENT_MAX_POINTS : points * spec->axes[a].nvalues;
    if (spec->has_search) /* low, high, then bisection */
        points = 2 + (size_t)ceil(log2(fmax(2.0, (double)(spec->search.high
                                                           - spec->search.low))));
    unsigned processes = o->jobs > 1 ? o->jobs : 1;
    if (processes > sc->replications * points)
        processes = (unsigned)(sc->replications * points);
    run_memory m;
    run_memory_estimate(sc, points, processes, &m);
    double budget = o->memory_limit_bytes > 0 ? o->memory_limit_bytes
                                              : run_memory_default_budget_bytes();
    char err[1024];
    if (run_memory_check(&m, budget, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "%s: %s; --memory-limit raises the budget\n", o->file, err);
    return -1;
}

static int cmd_run(int argc, char **argv)
{
    cli_options o;
    if (parse_options(argc, argv, "run", &o) != 0) {
        release_options(&o);
        return EXIT_BAD_INPUT;
    }
    char err[2048];
    scenario sc;
    experiment_spec spec;
    scenario_load_options lo = { o.unsafe, o.sets, o.nsets };
    if (scenario_load_experiment(o.file, &lo, &sc, &spec, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        release_options(&o);
        return EXIT_BAD_INPUT;
    }
    int status = 0;
    for (size_t i = 0; i < o.nsweeps && status == 0; i++)
        if (experiment_spec_add_sweep(&spec, o.sweeps[i], err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            status = EXIT_BAD_INPUT;
        }
    if (status == 0 && check_memory(&o, &sc, &spec) != 0)
        status = EXIT_BAD_INPUT;
    if (status == 0)
        sim_interrupt_install(); /* from here a signal stops at an event boundary */
    if (status == 0 && !spec.naxes && !spec.has_search && o.jobs <= 1 && sim_mpi_size() == 1)
        status = run_single(&o, &sc);
    else if (status == 0)
        status = run_experiment(&o, &sc, &spec);
    scenario_release(&sc);
    experiment_spec_release(&spec);
    release_options(&o);
    return status;
}

/* ---- estimate ---------------------------------------------------------------- */

/* A whole number in [min, max] from an option, or -1 after saying why. */
static int option_count(const char *option, const char *value, double min, double max,
                        double *out)
{
    char *end;
    double x = strtod(value, &end);
    if (!*value || *end || !(x >= min && x <= max) || x != floor(x)) {
        fprintf(stderr, "fleetsim estimate: --%s expects a whole number from %g to %g, got "
                "'%s'\n", option, min, max, value);
        return -1;
    }
    *out = x;
    return 0;
}

static int cmd_estimate(int argc, char **argv)
{
    enum { O_MODEL = 256, O_GPU, O_GPUS, O_TP, O_PP, O_PREC, O_BATCH, O_PROMPT, O_OUTPUT,
           O_TOKENS, O_SEQ, O_GLOBAL, O_CSV, O_PROFILE };
    static const struct option options[] = {
        { "model", required_argument, NULL, O_MODEL }, { "gpu", required_argument, NULL, O_GPU },
        { "gpus", required_argument, NULL, O_GPUS }, { "tp", required_argument, NULL, O_TP },
        { "pp", required_argument, NULL, O_PP }, { "precision", required_argument, NULL, O_PREC },
        { "batch", required_argument, NULL, O_BATCH }, { "prompt", required_argument, NULL, O_PROMPT },
        { "output", required_argument, NULL, O_OUTPUT },
        { "train-tokens", required_argument, NULL, O_TOKENS },
        { "seq", required_argument, NULL, O_SEQ },
        { "global-batch", required_argument, NULL, O_GLOBAL },
        { "csv", no_argument, NULL, O_CSV }, { "help", no_argument, NULL, 'h' },
        { "profile", required_argument, NULL, O_PROFILE },
        { NULL, 0, NULL, 0 },
    };
    const char *model_name = NULL, *gpu_name = NULL, *profile_path = NULL;
    bool csv = false;
    estimate_request req = { .gpus = 1, .prec = PREC_FP16, .batch = 1, .prompt = 512, .output = 256 };
    double x;
    int opt, bad = 0;
    opterr = 0;
    optind = 2;
    while (!bad && (opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (opt) {
        case O_MODEL: model_name = optarg; break;
        case O_GPU: gpu_name = optarg; break;
        case O_GPUS: bad = option_count("gpus", optarg, 1, 1 << 20, &x); req.gpus = (unsigned)x; break;
        case O_TP: bad = option_count("tp", optarg, 1, 1 << 20, &x); req.tp = (unsigned)x; break;
        case O_PP: bad = option_count("pp", optarg, 1, 1 << 20, &x); req.pp = (unsigned)x; break;
        case O_BATCH: bad = option_count("batch", optarg, 1, 1 << 20, &x); req.batch = (unsigned)x; break;
        case O_PROMPT: bad = option_count("prompt", optarg, 1, 1 << 24, &req.prompt); break;
        case O_OUTPUT: bad = option_count("output", optarg, 1, 1 << 24, &req.output); break;
        case O_TOKENS: bad = option_count("train-tokens", optarg, 1, 1e18, &req.train_tokens); break;
        case O_SEQ: bad = option_count("seq", optarg, 1, 1 << 24, &x); req.seq_len = (unsigned)x; break;
        case O_GLOBAL: bad = option_count("global-batch", optarg, 1, 1 << 30, &x); req.global_batch = (unsigned)x; break;
        case O_PREC:
            if (precision_parse(optarg, &req.prec) != 0) {
                fprintf(stderr, "fleetsim estimate: unknown precision '%s' (known: fp32, tf32, "
                        "fp16, bf16, fp8, int8, int4)\n", optarg);
                bad = -1;
            }
            break;
        case O_CSV: csv = true; break;
        case O_PROFILE: profile_path = optarg; break;
        case 'h': fputs(usage_estimate, stdout); return 0;
        case ':':
            fprintf(stderr, "fleetsim estimate: %s needs a value\n", argv[optind - 1]);
            bad = -1;
            break;
        default:
            fprintf(stderr, "fleetsim estimate: unknown option '%s' (see fleetsim help "
                    "estimate)\n", argv[optind - 1]);
            bad = -1;
        }
    }
    if (bad)
        return EXIT_BAD_INPUT;
    if (optind != argc || !model_name || !gpu_name) {
        fprintf(stderr, "fleetsim estimate: --model and --gpu are required (see fleetsim help "
                "estimate)\n");
        return EXIT_BAD_INPUT;
    }
    catalog cat;
    char err[1024], names[1024];
    if (catalog_load(&cat, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim: %s\n", err);
        return EXIT_RUN_FAILURE;
    }
    const model_spec *m = catalog_model(&cat, model_name);
    const device_spec *d = catalog_device(&cat, gpu_name);
    int status = 0;
    if (!m) {
        const char *hint = catalog_closest_model(&cat, model_name);
        fprintf(stderr, "fleetsim estimate: unknown model '%s'%s%s%s (known: %s)\n", model_name,
                hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "",
                catalog_model_names(&cat, names, sizeof names));
        status = EXIT_BAD_INPUT;
    } else if (!d) {
        const char *hint = catalog_closest_device(&cat, gpu_name);
        fprintf(stderr, "fleetsim estimate: unknown device '%s'%s%s%s (known: %s)\n", gpu_name,
                hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "",
                catalog_device_names(&cat, names, sizeof names));
        status = EXIT_BAD_INPUT;
    } else {
        device_spec calibrated = *d; /* shares the catalog's strings: not released */
        perf_profile perf = perf_default_profile(d);
        if (profile_path) {
            if (profile_apply_file(profile_path, &calibrated, &perf, err, sizeof err) != 0) {
                fprintf(stderr, "fleetsim estimate: --profile: %s\n", err);
                catalog_release(&cat);
                return EXIT_BAD_INPUT;
            }
            d = &calibrated;
            req.profile = &perf;
        }
        estimate_result r;
        if (estimate_run(m, d, &req, &r, err, sizeof err) != 0) {
            fprintf(stderr, "fleetsim estimate: %s\n", err);
            status = EXIT_BAD_INPUT;
        } else if (csv) {
            output_estimate_csv(stdout, m, d, &req, &r);
        } else {
            output_estimate_text(stdout, m, d, &req, &r);
        }
    }
    catalog_release(&cat);
    return status;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_BAD_INPUT;
    }
    const char *command = argv[1];
    if (!strcmp(command, "run"))
        return cmd_run(argc, argv);
    if (!strcmp(command, "check"))
        return cmd_check(argc, argv);
    if (!strcmp(command, "estimate"))
        return cmd_estimate(argc, argv);
    if (!strcmp(command, "calibrate"))
        return calibrate_main(argc, argv);
    if (!strcmp(command, "plot"))
        return cmd_plot(argc, argv);
    if (!strcmp(command, "version") || !strcmp(command, "--version"))
        return cmd_version();
    if (!strcmp(command, "help") || !strcmp(command, "--help") || !strcmp(command, "-h"))
        return cmd_help(argc > 2 ? argv[2] : NULL);
    fprintf(stderr, "fleetsim: unknown command '%s'\n\n%s", command, usage);
    return EXIT_BAD_INPUT;
}

int main(int argc, char **argv)
{
    sim_gsl_quiet(); /* GSL reports errors through return codes, never aborts */
    sim_mpi_start(&argc, &argv);
    if (sim_mpi_rank() != 0) { /* rank 0 speaks for the job */
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            return EXIT_RUN_FAILURE;
    }
    int status = dispatch(argc, argv);
    sim_mpi_stop();
    return status;
}
