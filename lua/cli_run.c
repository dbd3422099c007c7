/* `fleetsim run`: one scenario's replications in this process, or an experiment (a
 * sweep, a search, a run over --jobs processes or MPI ranks); its files, the printed
 * summary, the claim's verdict, then the pictures. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lua/claim.h"
#include "lua/cli.h"
#include "lua/cli_options.h"
#include "lua/cli_progress.h"
#include "lua/experiment.h"
#include "lua/scenario_load.h"
#include "models/budget.h"
#include "models/run.h"
#include "output/atomic_file.h"
#include "output/answer.h"
#include "output/headline.h"
#include "output/jobs.h"
#include "output/number_text.h"
#include "output/pictures.h"
#include "output/records.h"
#include "output/results.h"
#include "output/run_files.h"
#include "output/scenario_text.h"
#include "output/sweep.h"
#include "output/sweep_stream.h"
#include "output/verdict.h"
#include "sim/array.h"
#include "sim/fatal.h"
#include "sim/interrupt.h"
#include "sim/mpi_tasks.h"

const char cli_run_usage[] =
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
    "      --png              also render each chart to PNG (plots/NAME.png, 960 x 540),\n"
    "                         for slides and documents; the report needs only the SVG\n"
    "      --all              print the full summary table after the headline (every\n"
    "                         metric with its 95% half-width; summary.csv holds it too)\n"
    "      --memory-limit SIZE  refuse a run estimated to need more memory (\"8GB\",\n"
    "                         \"none\"; default half this machine's memory)\n"
    "\n"
    "Writes summary.csv (one row per metric, with 95% intervals over replications) and\n"
    "timeseries.csv (one row per time bucket and pool or workload), each complete or\n"
    "not at all, and prints the summary; then gnuplot scripts with their SVG renders\n"
    "(and PNG with --png) in plots/ (scripts only when gnuplot is missing) and report.html.\n"
    "A sweep (the scenario's sweep table, or --sweep) writes sweep.csv, sweep_diff.csv\n"
    "(paired differences from the first point) and points/<k>/ instead of the summary;\n"
    "a search (fs.search) writes search.csv, sweep.csv and points/<k>/.  Under mpirun\n"
    "(a build with MPI=1) the replications are spread over the ranks.\n";

/* The scenario's claim judged on its results (issue 9), before anything is written:
 * a verdict function that fails exits 2 and leaves nothing (issue 18, 8).  *judged
 * says whether there was a claim. */
static int judge_claim(void *runtime, const claim_results *r, claim_verdict *v, bool *judged)
{
    *judged = false;
    if (!claim_present(runtime))
        return 0;
    char err[2048];
    if (claim_judge(runtime, r, v, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return CLI_EXIT_BAD_INPUT;
    }
    *judged = true;
    return 0;
}

/* The verdict line and verdict.csv, after the results; a folder keeps no verdict of an
 * earlier run. */
static int write_verdict(const claim_verdict *v, bool judged, const char *dir)
{
    output_verdict_forget(dir);
    if (!judged)
        return 0;
    char err[2048];
    output_verdict_line(stdout, v->text, v->figure, v->word);
    if (output_verdict_csv(dir, v->text, v->word, v->score, v->figure, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim: %s\n", err);
        return CLI_EXIT_RUN_FAILURE;
    }
    return 0;
}

/* scenario.txt and headline.txt for report.html (issue 18, 6): what check and the run
 * print, written to the folder like the CSVs. */
static int write_text_files(const char *dir, const scenario *sc, const sim_metrics *m,
                            char *err, size_t err_size)
{
    atomic_file *f = atomic_file_open(dir, "scenario.txt", err, err_size);
    if (!f)
        return -1;
    output_scenario_text(atomic_file_stream(f), sc);
    if (atomic_file_commit(f, err, err_size) != 0)
        return -1;
    if (!m) /* a sweep: the scenario its points start from */
        return 0;
    if (output_answer_csv(dir, m, sc, err, err_size) != 0)
        return -1;
    if (!(f = atomic_file_open(dir, "headline.txt", err, err_size)))
        return -1;
    output_headline(atomic_file_stream(f), m, sc);
    return atomic_file_commit(f, err, err_size);
}

/* A search's answer against its limits, and the neighbouring value on the other side
 * (a bisection has probed it unless the answer is the range's end), as a line after
 * the answer (issue 39, 1: its constraints met and by what margin, its neighbours). */
static void print_margins(const experiment *x)
{
    const search_spec *s = &x->spec.search;
    const experiment_point *a = &x->points[x->answer_point];
    printf("  there");
    for (size_t k = 0; k < s->nconds; k++)
        printf("%s %s = %.6g (limit %.6g)", k ? "," : ":", s->conds[k].metric, a->measured[k],
               s->conds[k].threshold);
    char next[32];
    snprintf(next, sizeof next, "%lld", s->largest ? x->answer + s->step : x->answer - s->step);
    for (size_t p = 0; p < x->npoints; p++) {
        const experiment_point *n = &x->points[p];
        if (strcmp(n->values[0], next) || n->meets)
            continue;
        printf("; %s=%s misses it", s->key, next);
        for (size_t k = 0, shown = 0; k < s->nconds; k++)
            if (!experiment_load_search_meets(s->conds[k].op, n->measured[k],
                                              s->conds[k].threshold))
                printf("%s %s = %.6g", shown++ ? "," : ":", s->conds[k].metric, n->measured[k]);
        break;
    }
    printf("\n");
}

/* What a run prints of its results (issue 18, 4): the headline, then the full table
 * with --all (else where it is), and the overload warnings on stderr. */
static void print_summary(const cli_options *o, const scenario *sc, const sim_metrics *m,
                          const char *dir)
{
    output_answer_text(stdout, m, sc); /* the options ranked, where the run compares some */
    output_headline(stdout, m, sc);
    if (o->all) {
        printf("\n");
        output_summary_table(stdout, m);
    } else {
        printf("\n(every metric: --all, or %s/summary.csv)\n", dir);
    }
    output_overload_warnings(stderr, m, "");
}

/* The charts or the report could not be written (a full disk, a file-size limit; the
 * message is printed): the run failed, and none of its files may pass for its results
 * (docs/reliability.md), the CSVs written before included.  CLI_EXIT_RUN_FAILURE. */
static int forget_run(const char *dir)
{
    output_clear_run_folder(dir);
    fprintf(stderr, "fleetsim: the run's files were removed from %s, as for any write that "
            "fails; --no-plots writes the CSVs without charts\n", dir);
    return CLI_EXIT_RUN_FAILURE;
}

/* DIR made for the run (output_make_dir, which makes missing parents too); *made the
 * length of the shallowest folder of DIR's path this run made (0: none).  0, or -1 with
 * a message. */
static int make_run_folder(const char *dir, size_t *made, char *err, size_t err_size)
{
    *made = 0;
    char path[4096];
    size_t n = strlen(dir);
    for (size_t i = 1; i <= n && n < sizeof path && !*made; i++)
        if (i == n || dir[i] == '/') {
            struct stat st;
            memcpy(path, dir, i);
            path[i] = '\0';
            if (stat(path, &st) != 0)
                *made = i;
        }
    return output_make_dir(dir, err, err_size);
}

/* A run that failed leaves no folder of its own making: DIR and the parents it made go,
 * the deepest first, each only when empty (rmdir takes nothing else, and stops the walk
 * at what holds a file). */
static void remove_made_folder(const char *dir, size_t made, bool failed)
{
    if (!dir || !made || !failed)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (size_t n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
        path[n - 1] = '\0'; /* "out/x/" is the folder out/x */
    while (strlen(path) >= made && rmdir(path) == 0) {
        char *slash = strrchr(path, '/');
        if (!slash)
            return;
        while (slash > path && slash[-1] == '/')
            slash--;
        *slash = '\0';
    }
}

/* One scenario, its replications in this process, with progress and records. */
static int run_single(const cli_options *o, scenario *sc)
{
    char err[1024];
    int status = 0;
    char *dir = o->output_dir ? strdup(o->output_dir) : cli_options_default_output_dir(sc->name);
    size_t created = 0;
    if (!dir || make_run_folder(dir, &created, err, sizeof err) != 0
        || output_check_run_folder(dir, err, sizeof err) != 0) {
        fprintf(stderr, "fleetsim: %s\n", dir ? err : "out of memory");
        status = CLI_EXIT_RUN_FAILURE;
    }
    cli_progress display = cli_progress_start();
    bool show = !o->quiet && isatty(STDERR_FILENO);
    run_results results;
    records_writer *records = NULL;
    if (status == 0 && o->records && sc->ninferences > 0
        && !(records = records_open(dir, err, sizeof err))) {
        fprintf(stderr, "fleetsim: %s\n", err);
        status = CLI_EXIT_RUN_FAILURE;
    }
    jobs_writer *jobs = NULL;
    bool has_jobs = sc->ntrainings + sc->njob_streams > 0;
    if (status == 0 && o->records && has_jobs && !(jobs = jobs_open(dir, err, sizeof err))) {
        fprintf(stderr, "fleetsim: %s\n", err);
        status = CLI_EXIT_RUN_FAILURE;
    }
    run_options ro = {
        .progress = show ? cli_progress_show_run : NULL, .progress_context = &display,
        .on_request = records ? records_write : NULL, .request_context = records,
        .on_job = jobs ? jobs_write : NULL, .job_context = jobs,
    };
    claim_verdict verdict;
    bool judged = false;
    if (status == 0 && !o->no_plots)
        output_pictures_warm(); /* gnuplot starts beside the run, not after it */
    bool ran = status == 0 && scenario_run(sc, &ro, &results, err, sizeof err) == 0;
    if (status == 0 && !ran) {
        bool located = !strncmp(err, o->file, strlen(o->file)); /* "file:line: ..." already */
        fprintf(stderr, "%s%s%s\n", located ? "" : o->file, located ? "" : ": ", err);
        status = CLI_EXIT_BAD_INPUT;
    } else if (status == 0 && !sim_interrupt_signal()) { /* no verdict on a part */
        claim_point point = { NULL, &results.metrics, sc->replications };
        claim_results one = { .name = sc->name, .points = &point, .npoints = 1 };
        cli_progress_clear(&display);
        status = judge_claim(sc->runtime, &one, &verdict, &judged);
        if (status != 0)
            run_results_release(&results);
    }
    if (status != 0) {
        records_abort(records);
        jobs_abort(jobs);
    } else {
        output_clear_run_folder(dir); /* an earlier run's files go: the folder is this run's */
        if ((records && records_commit(records, err, sizeof err) != 0)
            || (jobs && jobs_commit(jobs, err, sizeof err) != 0)) {
            fprintf(stderr, "fleetsim: %s\n", err);
            output_forget_run_files(dir);
            status = CLI_EXIT_RUN_FAILURE;
        }
        cli_progress_clear(&display);
        int sig = sim_interrupt_signal();
        if (status == 0 && results.partial)
            fprintf(stderr, "fleetsim: interrupted by %s at simulated time %g s (%u of %u "
                    "replications complete): writing what was measured, marked partial\n",
                    sim_interrupt_name(sig), results.reached_s,
                    results.replications_completed, sc->replications);
        if (status == 0 && (output_run_files(dir, &results.metrics, results.timeseries,
                                             sc->duration_s, err, sizeof err) != 0
                            || write_text_files(dir, sc, &results.metrics, err, sizeof err) != 0)) {
            fprintf(stderr, "fleetsim: %s\n", err);
            status = CLI_EXIT_RUN_FAILURE;
        } else if (status == 0) {
            char length[48];
            printf("%s: %u replication%s of %s, %llu events\n", sc->name, sc->replications,
                   sc->replications == 1 ? "" : "s",
                   duration_text(length, sizeof length, sc->duration_s),
                   (unsigned long long)results.events);
            output_replicas_text(stdout, sc);
            printf("\n");
            print_summary(o, sc, &results.metrics, dir);
            status = write_verdict(&verdict, judged, dir);
            printf("\nwrote %s/summary.csv%s%s and %s/timeseries.csv\n", dir,
                   records ? ", requests.csv" : "", jobs ? ", jobs.csv" : "", dir);
            /* pictures (issue 7): plots/ and report.html after the CSVs */
            if (status == 0 && !sig && !o->no_plots /* interrupted: the user wants out */
                && output_pictures(dir, sc->name, sc->description, true, o->png, NULL, 0, stderr) != 0)
                status = forget_run(dir);
        }
        if (sig && status == 0)
            status = sim_interrupt_exit_status(sig);
        run_results_release(&results);
    }
    output_pictures_cool();
    remove_made_folder(dir, created, status != 0);
    free(dir);
    return status;
}
/* ---- experiments ----------------------------------------------------------------- */

static sweep_point_view view_of(const experiment_point *pt)
{
    return (sweep_point_view){ (const char *const *)pt->values, &pt->results.metrics,
                               pt->samples, pt->samples_metrics, pt->replications };
}

/* What is written as each point completes: its files (on the rank that writes, for a
 * sweep or search), and its overload warnings, kept as text to print after the points'
 * lines; their results then shrink (lua/experiment.h). */
typedef struct point_writer {
    sweep_stream *stream;   /* NULL: no files (another rank, one point, or a failure) */
    /* A write that failed: the experiment goes on (under MPI every rank must merge
     * every result alike, and only rank 0 writes) and fails when it ends, nothing kept. */
    bool failed;
    char error[2048];
    char **warnings;        /* each point's, NULL when none */
    size_t nwarnings, capacity;
} point_writer;

static int write_point(void *context, const experiment *x, size_t p, char *err,
                       size_t err_size)
{
    (void)err, (void)err_size;
    point_writer *w = context;
    const experiment_point *pt = &x->points[p];
    if (w->stream) {
        sweep_point_view view = view_of(pt), first = view_of(&x->points[0]);
        if (sweep_stream_point(w->stream, p + 1, &view, &first, pt->results.timeseries,
                               pt->duration_s, w->error, sizeof w->error) != 0) {
            w->failed = true;
            sweep_stream_abort(w->stream);
            w->stream = NULL;
        }
    }
    w->warnings = sim_array_grow(w->warnings, &w->capacity, p + 1, sizeof *w->warnings,
                                 "the points' warnings");
    for (; w->nwarnings <= p; w->nwarnings++)
        w->warnings[w->nwarnings] = NULL;
    char label[1024], prefix[1100];
    experiment_point_label(x, p, label, sizeof label);
    snprintf(prefix, sizeof prefix, "%s %zu (%s): ", x->spec.has_search ? "probe" : "point",
             p + 1, label);
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    if (!out)
        sim_out_of_memory("out of memory keeping a point's warnings");
    output_overload_warnings(out, &pt->results.metrics, prefix);
    fclose(out);
    if (length)
        w->warnings[p] = text;
    else
        free(text);
    return 0;
}

static void point_writer_release(point_writer *w)
{
    sweep_stream_abort(w->stream);
    for (size_t i = 0; i < w->nwarnings; i++)
        free(w->warnings[i]);
    free(w->warnings);
}

/* The files and the printed lines of an experiment that ran; the points' own files were
 * written as they completed, and are put in place here. */
static int write_experiment(const cli_options *o, const scenario *sc, const experiment *x,
                            point_writer *w, const char *dir, char *err, size_t err_size)
{
    if (x->nkeys == 0) { /* one point: the files of a plain run */
        const experiment_point *pt = &x->points[0];
        if (output_run_files(dir, &pt->results.metrics, pt->results.timeseries,
                             pt->duration_s, err, err_size) != 0
            || write_text_files(dir, sc, &pt->results.metrics, err, err_size) != 0)
            return -1;
        char length[48];
        printf("%s: %u replication%s of %s, %llu events\n", x->name, pt->replications,
               pt->replications == 1 ? "" : "s", duration_text(length, sizeof length, pt->duration_s),
               (unsigned long long)pt->results.events);
        output_replicas_text(stdout, sc);
        printf("\n");
        print_summary(o, sc, &pt->results.metrics, dir);
        printf("\nwrote %s/summary.csv and %s/timeseries.csv\n", dir, dir);
        return 0;
    }
    sweep_stream *stream = w->stream;
    w->stream = NULL;
    if (sweep_stream_commit(stream, err, err_size) != 0)
        return -1;
    search_probe_view *probes = calloc(x->npoints, sizeof *probes);
    const search_spec *s = &x->spec.search;
    size_t nconds = x->spec.has_search ? s->nconds : 0;
    const sim_metric **metrics = calloc(x->npoints * nconds + 1, sizeof *metrics);
    bool *met = calloc(x->npoints * nconds + 1, sizeof *met);
    if (!probes || !metrics || !met) {
        free(probes);
        free(metrics);
        free(met);
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    const char *conditions[SEARCH_MAX_CONDITIONS];
    for (size_t k = 0; k < nconds; k++)
        conditions[k] = s->conds[k].text;
    for (size_t p = 0; p < x->npoints; p++) {
        const experiment_point *pt = &x->points[p];
        for (size_t k = 0; k < nconds; k++) {
            metrics[p * nconds + k] = sim_metrics_find(&pt->results.metrics, x->target_scope[k],
                                                       x->target_subject[k], s->conds[k].metric);
            met[p * nconds + k] = experiment_load_search_meets(s->conds[k].op, pt->measured[k],
                                                               s->conds[k].threshold);
        }
        probes[p] = (search_probe_view){ (const char *const *)pt->values,
            metrics + p * nconds, met + p * nconds,
            s->objective ? sim_metrics_find(&pt->results.metrics, x->objective_scope,
                                            x->objective_subject, s->objective_metric) : NULL };
    }
    char objective[300];  /* "minimise cost_usd" */
    snprintf(objective, sizeof objective, "%s %s", s->maximise ? "maximise" : "minimise",
             s->objective_metric ? s->objective_metric : "");
    int status = write_text_files(dir, sc, NULL, err, err_size);
    if (status == 0 && x->spec.has_search)
        status = output_search_csv(dir, x->keys, x->nkeys, conditions, nconds,
                                   s->objective ? objective : NULL, probes, x->npoints,
                                   x->found ? x->answer_point : SIZE_MAX, err, err_size);
    free(metrics);
    free(met);
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
        if (x->spec.has_search) {
            for (size_t k = 0; k < nconds; k++)
                printf("%s %s = %.6g", k ? "," : ":", s->conds[k].metric, pt->measured[k]);
            printf(", %s", pt->meets ? "meets the target" : "misses it");
        }
        if (x->spec.has_search && x->spec.search.objective)
            printf("; %s = %.6g", x->spec.search.objective_metric, pt->objective);
        printf("\n");
        if (p < w->nwarnings && w->warnings[p])
            fputs(w->warnings[p], stderr);
    }
    char with[1024]; /* "chat ttft_p99_s <= 1 and chat tpot_p99_s <= 0.05" */
    with[0] = '\0';
    for (size_t k = 0, used = 0; k < nconds && used < sizeof with; k++)
        used += (size_t)snprintf(with + used, sizeof with - used, "%s%s %s", k ? " and " : "",
                                 x->target_subject[k], s->conds[k].text);
    if (x->spec.has_search && s->ngrid) {
        size_t meeting = 0;
        for (size_t p = 0; p < x->npoints; p++)
            meeting += x->points[p].meets;
        if (x->found) {
            const experiment_point *best = &x->points[x->answer_point];
            char there[512];
            there[0] = '\0';
            for (size_t k = 0, used = 0; k < nconds && used < sizeof there; k++)
                used += (size_t)snprintf(there + used, sizeof there - used, "%s%s = %.6g",
                                         k ? ", " : "", s->conds[k].metric, best->measured[k]);
            experiment_point_label(x, x->answer_point, label, sizeof label);
            printf("\n%s: the %s %s%s%s (%.6g) of the %zu points of %zu with %s (%s there)\n",
                   label, s->maximise ? "most" : "least", s->objective_metric,
                   strcmp(x->objective_scope, "run") ? " of " : "",
                   strcmp(x->objective_scope, "run") ? x->objective_subject : "",
                   best->objective, meeting, x->npoints, with, there);
        } else {
            printf("\nno point of the %zu in the grid gives %s\n", x->npoints, with);
        }
        printf("wrote %s/search.csv, %s/sweep.csv and %s/points/1..%zu/\n", dir, dir, dir,
               x->npoints);
    } else if (x->spec.has_search) {
        char step[64] = "";
        if (s->step > 1)
            snprintf(step, sizeof step, " in steps of %lld", (long long)s->step);
        if (x->found) {
            printf("\n%s=%lld is the %s value in [%lld, %lld]%s with %s\n", s->key,
                   x->answer, s->largest ? "largest" : "smallest", (long long)s->low,
                   (long long)s->high, step, with);
            print_margins(x);
        } else
            printf("\nno value of %s in [%lld, %lld]%s gives %s\n", s->key,
                   (long long)s->low, (long long)s->high, step, with);
        printf("wrote %s/search.csv, %s/sweep.csv and %s/points/1..%zu/\n", dir, dir, dir,
               x->npoints);
    } else {
        printf("\nwrote %s/sweep.csv, %s/sweep_diff.csv and %s/points/1..%zu/\n", dir, dir, dir,
               x->npoints);
    }
    return 0;
}

/* judge_claim on every point of an experiment (a search's probes in the order run). */
static int judge_experiment(void *runtime, const experiment *x, claim_verdict *v, bool *judged)
{
    claim_point *points = calloc(x->npoints, sizeof *points);
    if (!points) {
        fprintf(stderr, "fleetsim: out of memory\n");
        return CLI_EXIT_RUN_FAILURE;
    }
    for (size_t p = 0; p < x->npoints; p++)
        points[p] = (claim_point){ (const char *const *)x->points[p].values,
                                   &x->points[p].results.metrics, x->points[p].replications };
    claim_results r = { x->name, x->keys, x->nkeys, points, x->npoints, x->spec.has_search,
                        x->found, x->spec.has_search ? x->spec.search.target : NULL, x->answer,
                        x->spec.search.ngrid > 0, x->answer_point };
    int status = judge_claim(runtime, &r, v, judged);
    free(points);
    return status;
}

/* The SLOs of sc's inference workloads as levels on a sweep's charts: each limit on its
 * p99 (the share within it is slo_attainment).  The scenario's own: a sweep of an SLO
 * draws the file's.  The count; *out (the caller frees it) points into sc. */
static size_t slo_limits(const scenario *sc, plot_limit **out)
{
    *out = calloc(3 * sc->ninferences + 1, sizeof **out);
    size_t n = 0;
    for (size_t i = 0; *out && i < sc->ninferences; i++) {
        const inference_spec *w = &sc->inferences[i];
        const struct { const char *metric; double s; } slo[] = {
            { "ttft_p99_s", w->slo_ttft_s }, { "tpot_p99_s", w->slo_tpot_s },
            { "e2e_p99_s", w->slo_e2e_s },
        };
        for (size_t k = 0; k < 3; k++)
            if (slo[k].s > 0)
                (*out)[n++] = (plot_limit){ "workload", w->name, slo[k].metric, slo[k].s, "SLO" };
    }
    return n;
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
        return CLI_EXIT_BAD_INPUT;
    }
    if (mpi && o->jobs > 1) {
        fprintf(stderr, "fleetsim run: --jobs %u under mpirun: the ranks are the workers; "
                "leave --jobs out\n", o->jobs);
        return CLI_EXIT_BAD_INPUT;
    }
    cli_progress display = cli_progress_start();
    bool show = !o->quiet && isatty(STDERR_FILENO);
    point_writer writer = { 0 };
    experiment_options eo = {
        .file = o->file, .unsafe = o->unsafe, .sets = o->sets, .nsets = o->nsets,
        .tasks = { .jobs = o->jobs ? o->jobs : 1, .mpi = mpi },
        .progress = show ? cli_progress_show_points : NULL, .progress_context = &display,
        .point_done = write_point, .point_context = &writer,
        .keep_results = claim_present(sc->runtime), /* the verdict reads every point */
    };
    experiment x;
    experiment_status status = experiment_plan(&x, &eo, spec, err, sizeof err);
    char *dir = NULL;
    size_t created = 0;
    if (status == EXPERIMENT_OK) {
        dir = o->output_dir ? strdup(o->output_dir) : cli_options_default_output_dir(name);
        if (!dir || make_run_folder(dir, &created, err, sizeof err) != 0
            || output_check_run_folder(dir, err, sizeof err) != 0) {
            if (!dir) /* else err holds the reason */
                snprintf(err, sizeof err, "out of memory");
            status = EXPERIMENT_FAILED;
        }
    }
    if (status == EXPERIMENT_OK && x.nkeys && sim_mpi_rank() == 0
        && !(writer.stream = sweep_stream_open(dir, x.keys, x.nkeys, !x.spec.has_search,
                                               writer.error, sizeof writer.error)))
        writer.failed = true; /* said when the run ends: every rank runs it alike */
    if (status == EXPERIMENT_OK)
        status = experiment_run(&x, err, sizeof err);
    if (status == EXPERIMENT_OK && writer.failed) {
        snprintf(err, sizeof err, "%s", writer.error);
        status = EXPERIMENT_FAILED;
    }
    cli_progress_clear(&display);
    int sig = sim_interrupt_signal();
    if (sig) { /* results of several points or processes: nothing partial is written */
        fprintf(stderr, "fleetsim: interrupted by %s: a sweep, a search or a run over "
                "several processes writes nothing when interrupted\n", sim_interrupt_name(sig));
        point_writer_release(&writer); /* its staging folder goes, then the run's own */
        remove_made_folder(dir, created, true);
        free(dir);
        experiment_release(&x);
        return sim_interrupt_exit_status(sig);
    }
    bool writes = status == EXPERIMENT_OK && sim_mpi_rank() == 0;
    claim_verdict v;
    bool judged = false;
    /* the verdict before any file: a failing one exits 2 with nothing written */
    int verdict = writes ? judge_experiment(sc->runtime, &x, &v, &judged) : 0;
    writes = writes && !verdict;
    if (writes)
        output_clear_run_folder(dir); /* an earlier run's files go: the folder is this run's */
    if (writes && write_experiment(o, sc, &x, &writer, dir, err, sizeof err) != 0) {
        output_clear_run_folder(dir); /* nothing half written stays */
        status = EXPERIMENT_FAILED;
    }
    point_writer_release(&writer); /* what was not committed goes */
    if (status != EXPERIMENT_OK)
        fprintf(stderr, "%s%s\n", status == EXPERIMENT_FAILED ? "fleetsim: " : "", err);
    if (writes && status == EXPERIMENT_OK)
        verdict = write_verdict(&v, judged, dir);
    /* pictures: plots/ (sweep charts from sweep.csv) and report.html; prints its errors */
    plot_limit *slos = NULL;
    size_t nslos = writes && !o->no_plots ? slo_limits(sc, &slos) : 0;
    if (writes && status == EXPERIMENT_OK && !verdict && !o->no_plots
        && output_pictures(dir, x.name, description, true, o->png, slos, nslos, stderr) != 0) {
        forget_run(dir);
        status = EXPERIMENT_FAILED;
    }
    free(slos);
    remove_made_folder(dir, created, verdict || status != EXPERIMENT_OK);
    free(dir);
    experiment_release(&x);
    if (verdict)
        return verdict;
    return status == EXPERIMENT_OK ? 0 : status == EXPERIMENT_BAD_INPUT ? CLI_EXIT_BAD_INPUT
                                                                        : CLI_EXIT_RUN_FAILURE;
}

int cli_run(int argc, char **argv)
{
    cli_options o;
    if (cli_options_parse(argc, argv, "run", &o) != 0) {
        cli_options_release(&o);
        return CLI_EXIT_BAD_INPUT;
    }
    scenario sc;
    experiment_spec spec;
    if (cli_options_load_experiment(&o, &sc, &spec) != 0) {
        cli_options_release(&o);
        return CLI_EXIT_BAD_INPUT;
    }
    sim_interrupt_install(); /* from here a signal stops at an event boundary */
    int status;
    if (!spec.naxes && !spec.has_search && o.jobs <= 1 && sim_mpi_size() == 1)
        status = run_single(&o, &sc);
    else
        status = run_experiment(&o, &sc, &spec);
    scenario_release(&sc);
    experiment_load_release(&spec);
    cli_options_release(&o);
    return status;
}
