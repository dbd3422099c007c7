#include "models/budget.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/run.h"
#include "models/workload_groups.h"
#include "sim/timeseries.h"

/* Sizes of what a run keeps, in bytes, rounded up from the structures (with the slack
 * of arrays that double when full). */
#define CELL_BYTES 16.0           /* sim/timeseries.h */
#define POINT_BYTES 262144.0      /* a loaded point: its scenario, catalog and metrics */
#define STREAMED_POINT_BYTES 1024.0 /* a point whose files are written: its values and what
                                       a search reads (measured: an M/M/8 sweep of 50,000
                                       points peaked at 42 MB, of 10,000 at 13 MB) */
#define REPLICATION_BYTES 4194304.0 /* an engine, histograms and buffers of a replication */
#define GPU_BYTES 256.0           /* a GPU or unit of a pool, with its events */
#define WAITING_BYTES 32.0        /* a plain-queue customer (16 bytes, ring doubling) */
#define REQUEST_BYTES 96.0        /* an inference request in flight (80, in blocks) */
#define JOB_BYTES 320.0           /* a training job (240) and its place in the queues */
#define TASK_BYTES 128.0          /* a replayed task: its row and its run state */
#define LIST_VALUE_BYTES 40.0     /* a list's value: the C copy, its cumulative weight, the
                                     alias table's entry (sim/dist.c), and the Lua table's */
#define PREFIX_RUN_BYTES 115.0    /* a run of cached blocks on a replica (24, its table slot
                                     at half load 8) and its holder in the fleet's directory
                                     (12, and its run's slot 24): 68, arrays doubling */
#define SESSION_BYTES 225.0       /* a session between turns: itself (48), its think event
                                     and the turn it will send (measured: 3.6 M sessions
                                     kept 810 MB; 1.2 M, 196 MB of the whole run) */

static void add(run_memory *m, double bytes, const char *what)
{
    if (!(bytes > 0))
        return;
    m->total_bytes += bytes;
    if (bytes > m->largest_bytes) {
        m->largest_bytes = bytes;
        snprintf(m->largest, sizeof m->largest, "%s", what);
    }
}

/* Customers a plain-queue pool can hold waiting: under overload the queue grows by the
 * excess rate over the whole run, up to the queue limits. */
static double waiting_in_pool(const scenario *sc, size_t p)
{
    double load = scenario_offered_load(sc, p), rate = 0, limit = 0;
    bool limited = true;
    for (size_t w = 0; w < sc->nservices; w++)
        if (sc->services[w].pool == p) {
            rate += sc->services[w].arrivals.rate_per_s;
            if (sc->services[w].queue_limit)
                limit += (double)sc->services[w].queue_limit;
            else
                limited = false;
        }
    if (rate == 0)
        return 0;
    double excess = isfinite(load) && load > 0 ? rate * (1 - sc->pools[p].count / load) : rate;
    double grown = excess > 0 ? excess * sc->duration_s : 0;
    return limited ? fmin(grown, limit) : grown;
}

static double inference_in_flight(const scenario *sc, const inference_spec *w)
{
    if (w->has_traffic && w->traffic.kind == TRAFFIC_CLOSED_LOOP)
        return w->traffic.users;
    /* waiting (max_wait's worth of arrivals, else all of them) and running (every
     * replica's batch), never more than arrive in the whole run; disaggregated, a wait of
     * up to max_wait at each of three stages (the prefill queue, the link, the decode
     * queue) and the decode replicas' batches */
    double all = w->arrivals.rate_per_s * sc->duration_s;
    if (w->has_trace && !w->loop)
        all = fmin(all, (double)w->trace_summary.rows);
    double waiting = w->max_wait_s > 0 ? w->arrivals.rate_per_s * w->max_wait_s : all;
    double running = (double)w->replicas * w->max_batch;
    if (workload_decodes(w)) /* max_wait bounds the link and the decode queue as well */
        waiting *= 3;
    for (unsigned i = 0; i < w->ngroups; i++) { /* the other groups' batches */
        const pool_spec *p = &sc->pools[w->groups[i].pool];
        double most = fmax((double)p->count, (double)p->capacity.max);
        running += (w->groups[i].tp ? floor(most / w->groups[i].tp) : 0) * w->max_batch;
    }
    return fmin(all, waiting + running);
}

/* The replicas a workload can hold at most: its own, or its pool's most over tp. */
static double replicas_at_most(const scenario *sc, const inference_spec *w)
{
    const pool_spec *pool = &sc->pools[w->pool];
    double most = fmax((double)pool->count, (double)pool->capacity.max);
    return fmax((double)w->replicas, w->tp ? floor(most / w->tp) : 0);
}

/* Runs a prefix cache can hold, all replicas and the directory: each run is at least one
 * block, so at most a replica's cache in blocks on every replica (a trace of hashed ids
 * one token a block keeps one per token); a trace that is not looped has no more than
 * its ids (a row's prompt over the block, rounded up). */
static double prefix_runs(const scenario *sc, const inference_spec *w)
{
    if (!w->prefix_block)
        return 0;
    double per_replica = floor(w->kv_capacity_tokens / w->prefix_block);
    if (w->has_trace && !w->loop)
        per_replica = fmin(per_replica, ceil(w->trace_summary.prompt_tokens / w->prefix_block)
                                            + (double)w->trace_summary.rows);
    return per_replica * replicas_at_most(sc, w);
}

/* Sessions in progress, between turns or in one: by Little's law the sessions' rate
 * times their length (turns x think time; the answers' time left out, so a lower
 * estimate), never more than arrive in the run. */
static double sessions_in_progress(const scenario *sc, const inference_spec *w)
{
    if (!w->has_sessions)
        return 0;
    double rate = w->arrivals.rate_per_s;
    double length = sim_dist_mean(&w->sessions.turns) * sim_dist_mean(&w->sessions.think_s);
    double all = rate * sc->duration_s;
    return isfinite(length) ? fmin(all, rate * length) : all;
}

static double jobs_of_stream(const scenario *sc, const job_stream_spec *s)
{
    if (s->has_trace)
        return (double)s->trace.n;
    double mean = sim_dist_mean(&s->interarrival_s);
    double n = mean > 0 ? sc->duration_s / mean : INFINITY;
    return s->count ? fmin((double)s->count, n) : n;
}

void run_memory_estimate(const scenario *sc, size_t points, unsigned processes,
                         bool keeps_points, run_memory *out)
{
    memset(out, 0, sizeof *out);
    char what[256];
    if (points < 1)
        points = 1;
    if (processes < 1)
        processes = 1;
    size_t nbuckets = (size_t)ceil(sc->duration_s / sc->bucket_s - 1e-9);
    size_t subjects = sc->npools + sc->nservices + sc->ninferences + sc->ngpu_tasks;
    double cells = (double)nbuckets * (double)subjects * (double)run_timeseries_ncolumns;
    /* the points held whole at once: each process's own and the first (kept for
     * sweep_diff.csv), or every one for a claim; the others shrunk once written */
    size_t loaded = points < (size_t)processes + 1 ? points : (size_t)processes + 1;
    size_t whole = keeps_points ? points : loaded;
    /* each point held whole keeps its table; each process one more for its replication */
    double tables = (double)whole + (processes > 1 ? processes : 0);
    snprintf(what, sizeof what, "the time series: %.3g buckets x %zu pools and workloads "
             "x %zu columns, %.3g tables (sweep points and processes); a larger bucket "
             "needs less", (double)nbuckets, subjects, run_timeseries_ncolumns, tables);
    add(out, cells * CELL_BYTES * tables, what);
    snprintf(what, sizeof what, "%zu sweep points held whole at once", whole);
    add(out, (double)whole * POINT_BYTES, what);
    snprintf(what, sizeof what, "%zu sweep points written, their figures kept", points);
    add(out, keeps_points || points <= 1 ? 0 : (double)points * STREAMED_POINT_BYTES, what);
    snprintf(what, sizeof what, "the scenario's lists (fs.empirical): %zu values x %zu sweep "
             "points loaded at once", sc->list_values, loaded);
    add(out, (double)sc->list_values * LIST_VALUE_BYTES * (double)loaded, what);

    /* one replication's state, held by each process at once */
    run_memory one = { 0 };
    add(&one, REPLICATION_BYTES, "the engines of the replications");
    for (size_t p = 0; p < sc->npools; p++) {
        const pool_spec *pool = &sc->pools[p];
        double units = fmax((double)pool->count, (double)pool->capacity.max);
        snprintf(what, sizeof what, "pool %s: %.3g GPUs or units", pool->name, units);
        add(&one, units * GPU_BYTES, what);
        double waiting = waiting_in_pool(sc, p);
        snprintf(what, sizeof what, "pool %s: up to %.3g requests waiting (the offered load "
                 "passes its servers; a queue_limit bounds it)", pool->name, waiting);
        add(&one, waiting * WAITING_BYTES, what);
    }
    for (size_t i = 0; i < sc->ninferences; i++) {
        const inference_spec *w = &sc->inferences[i];
        double n = inference_in_flight(sc, w);
        snprintf(what, sizeof what, "workload %s: up to %.3g requests in flight (max_wait "
                 "bounds it)", w->name, n);
        add(&one, n * REQUEST_BYTES, what);
        double runs = prefix_runs(sc, w);
        snprintf(what, sizeof what, "workload %s: up to %.3g runs of prefix blocks cached "
                 "(the fleet's cache in blocks of %u token%s, or the trace's ids) and their "
                 "directory", w->name, runs, w->prefix_block, w->prefix_block == 1 ? "" : "s");
        add(&one, runs * PREFIX_RUN_BYTES, what);
        double talking = sessions_in_progress(sc, w);
        snprintf(what, sizeof what, "workload %s: about %.3g sessions in progress (their "
                 "rate x turns x think time)", w->name, talking);
        add(&one, talking * SESSION_BYTES, what);
    }
    for (size_t i = 0; i < sc->njob_streams; i++) {
        const job_stream_spec *s = &sc->job_streams[i];
        double n = jobs_of_stream(sc, s);
        snprintf(what, sizeof what, "workload %s: %.3g training jobs (count bounds it)",
                 s->name, n);
        add(&one, n * JOB_BYTES, what);
    }
    for (size_t i = 0; i < sc->ngpu_tasks; i++) {
        const cluster_trace *t = &sc->gpu_tasks[i].spec.trace;
        snprintf(what, sizeof what, "workload %s: a trace of %zu tasks on %zu nodes",
                 sc->gpu_tasks[i].name, t->ntasks, t->nnodes);
        add(&one, ((double)t->ntasks + (double)t->nnodes) * TASK_BYTES, what);
    }
    if (processes > 1) {
        char each[300];
        snprintf(each, sizeof each, "%s, in each of %u processes", one.largest, processes);
        snprintf(one.largest, sizeof one.largest, "%s", each);
    }
    /* the replications' state is named by its largest single part, more telling than
     * "the replications", with that part's bytes (it printed the replication's whole) */
    double before = out->largest_bytes;
    add(out, one.total_bytes * processes, one.largest);
    if (out->largest_bytes != before)
        out->largest_bytes = one.largest_bytes * processes;
}

double run_memory_default_budget_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 8.0 * (1 << 30);
    return 0.5 * (double)pages * (double)page;
}

int run_memory_parse(const char *text, double *bytes)
{
    static const struct { const char *unit; double scale; } units[] = {
        { "", 1 }, { "B", 1 }, { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 },
        { "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
        { "TiB", 1099511627776.0 },
    };
    if (!strcmp(text, "none")) {
        *bytes = INFINITY;
        return 0;
    }
    char *end;
    double x = strtod(text, &end);
    if (end == text || !isfinite(x) || x <= 0)
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].unit)) {
            *bytes = x * units[i].scale;
            return 0;
        }
    return -1;
}

int run_memory_check(const run_memory *m, double budget_bytes, char *err, size_t err_size)
{
    if (m->total_bytes <= budget_bytes)
        return 0;
    snprintf(err, err_size, "the run would need about %.3g GB of memory, over the budget of "
             "%.3g GB (half this machine's memory unless --memory-limit says otherwise); "
             "the largest part: %s (%.3g GB)", m->total_bytes / 1e9, budget_bytes / 1e9,
             m->largest, m->largest_bytes / 1e9);
    return -1;
}
