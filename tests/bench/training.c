/* Training cluster speed: a year of a 1,000-GPU dedicated pool with 10,000 jobs of 1 to
 * 256 GPUs (about 87% offered load), GPU failures (50,000 h MTBF each), hourly
 * checkpoints and EASY backfilling; wall time, engine events and what the run found.
 * The target (issue 6) is under 10 s on one core.  --quick: a month of 100 GPUs.
 *
 * The ladder runs the same cluster at 1,000, 10,000 and 100,000 GPUs with ten jobs a
 * GPU, at a higher load (95% offered: the queue stays finite, backfilling works hard):
 * jobs per CPU second, events per second against the bare M/M/8
 * loop of this run, and each size's peak memory in a process of its own (issue 37: a
 * year of 100,000 GPUs under 10 s and 64 MB). */
#include <math.h>
#include <stdio.h>

#include "bench.h"
#include "models/job_scheduler.h"

typedef struct cluster {
    unsigned gpus;
    uint64_t jobs;
    double duration_s;
    int repeats;
    double load; /* offered: GPU-time asked for over GPU-time there */
} cluster;

typedef struct cluster_run {
    double seconds; /* the fastest repeat: wall time, or CPU time in the ladder */
    uint64_t events;
    double done, wait_h, goodput, utilization, failures, peak_mib;
    int ok;
} cluster_run;

static void run_cluster(const void *arg, void *out)
{
    const cluster *cl = arg;
    cluster_run *res = out;
    *res = (cluster_run){ .seconds = 1e300 };
    /* sizes' weights give a mean of 19.3 GPUs; a lognormal of median 24 h (mean 39.6 h):
     * 19.3 x 142,500 s / 3,154 s between jobs = 872 GPUs busy of 1,000 */
    double sizes[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };
    double weights[] = { 20, 15, 15, 20, 12, 8, 5, 3, 2 };
    size_t nsizes = cl->gpus < 256 ? 7 : 9; /* up to 64 GPUs on a small pool */
    char err[256];
    job_stream_spec st = { .name = "bench.jobs",
                           .duration_s = sim_dist_lognormal(24 * 3600.0, 1.0),
                           .count = cl->jobs, .checkpoint = { 3600, 120 }, .restart_s = 600 };
    if (sim_dist_empirical(&st.gpus, sizes, weights, nsizes, false, err, sizeof err) != 0) {
        printf("WARNING: %s\n", err);
        return;
    }
    /* arrivals for that share of the GPUs busy */
    double gap = sim_dist_mean(&st.gpus) * sim_dist_mean(&st.duration_s) / (cl->load * cl->gpus);
    st.interarrival_s = sim_dist_exponential(gap);
    pool_capacity c = { .kind = POOL_DEDICATED, .count = cl->gpus, .max = cl->gpus,
                        .mtbf_s = 50000 * 3600.0, .repair_s = sim_dist_constant(4 * 3600.0) };
    scheduler_spec spec = { SCHED_BACKFILL };
    for (int i = 0; i < cl->repeats; i++) {
        sim_engine *e = sim_engine_create();
        gpu_pool *pool = gpu_pool_create(e, &c, "bench.pool", 1, 0, err, sizeof err);
        job_scheduler *s = job_scheduler_create(e, pool, &spec, "bench", 1, 0, err, sizeof err);
        double start = bench_cpu_s();
        if (!pool || !s || job_scheduler_add_stream(s, &st, err, sizeof err) != 0) {
            printf("WARNING: %s\n", err);
            break;
        }
        sim_engine_run_until(e, cl->duration_s);
        double t = bench_cpu_s() - start;
        if (t < res->seconds) {
            sim_metrics m;
            sim_metrics_init(&m);
            training_record_metrics(s, cl->duration_s, NAN, &m);
            gpu_pool_record_metrics(pool, "bench.pool", cl->duration_s, 1, true, &m);
            const sim_metric *done = sim_metrics_find(&m, "workload", "bench.jobs", "jobs_completed");
            const sim_metric *wait = sim_metrics_find(&m, "workload", "bench.jobs", "wait_mean_s");
            const sim_metric *good = sim_metrics_find(&m, "workload", "bench.jobs", "goodput_mean");
            const sim_metric *used = sim_metrics_find(&m, "pool", "bench.pool", "utilization_mean");
            *res = (cluster_run){
                .seconds = t, .events = sim_engine_events_run(e), .ok = done && wait && good && used,
                .done = done ? done->replications.mean : NAN,
                .wait_h = wait ? wait->replications.mean / 3600 : NAN,
                .goodput = good ? good->replications.mean : NAN,
                .utilization = used ? used->replications.mean : NAN,
                .failures = (double)gpu_pool_get_stats(pool)->failures,
            };
            sim_metrics_release(&m);
        }
        job_scheduler_free(s);
        gpu_pool_free(pool);
        sim_engine_free(e);
    }
    res->peak_mib = bench_own_peak_mib();
    sim_dist_release(&st.gpus);
}

void bench_training_table(int quick)
{
    cluster cl = { quick ? 100 : 1000, quick ? 150 : 10000,
                   quick ? 30 * 86400.0 : 365 * 86400.0, BENCH_REPEATS, 0.87 };
    printf("training cluster: %u GPUs, %llu jobs over %.0f simulated days, failures, "
           "checkpoints, backfilling\n", cl.gpus, (unsigned long long)cl.jobs,
           cl.duration_s / 86400);
    cluster_run r;
    run_cluster(&cl, &r);
    if (r.ok)
        printf("  %8.3f s CPU  %10llu events  %6.1f events/job  %5.0f jobs done  "
               "utilization %.3f  wait %.1f h  goodput %.3f  %.0f failures\n", r.seconds,
               (unsigned long long)r.events, (double)r.events / (double)cl.jobs, r.done,
               r.utilization, r.wait_h, r.goodput, r.failures);
}

void bench_training_cluster(unsigned gpus, double load)
{
    cluster cl = { gpus, 10 * (uint64_t)gpus, 365 * 86400.0, 1, load };
    cluster_run r;
    run_cluster(&cl, &r);
    printf("%u GPUs at %.2f offered: %.2f s CPU, %.0f jobs done, %.1f MiB peak\n", gpus, load,
           r.seconds, r.done, r.peak_mib);
}

void bench_training_ladder_table(int quick)
{
    static const unsigned SIZES[] = { 1000, 10000, 100000 };
    unsigned sizes = quick ? 1 : 3;
    double bare = bench_mm8_bare_rate(quick ? 200000 : 2000000);
    printf("training scale: a year at 95%% offered load, ten jobs a GPU, failures, backfilling "
           "(bare M/M/8 loop: %.3g events/s)\n", bare);
    printf("  %8s %9s %9s %10s %9s %10s %9s %9s %8s\n", "GPUs", "jobs", "done", "CPU s",
           "jobs/s", "events/s", "vs bare", "peak MiB", "util");
    for (unsigned k = 0; k < sizes; k++) {
        cluster cl = { SIZES[k], 10 * (uint64_t)SIZES[k], 365 * 86400.0,
                       SIZES[k] >= 100000 ? 1 : BENCH_REPEATS, 0.95 };
        cluster_run r;
        if (bench_in_child(run_cluster, &cl, &r, sizeof r) != 0 || !r.ok) {
            printf("WARNING: the cluster of %u GPUs failed\n", SIZES[k]);
            break;
        }
        printf("  %8u %9llu %9.0f %10.2f %9.3g %10.3g %8.3fx %9.1f %8.3f\n", SIZES[k],
               (unsigned long long)cl.jobs, r.done, r.seconds, (double)cl.jobs / r.seconds,
               (double)r.events / r.seconds, (double)r.events / r.seconds / bare, r.peak_mib,
               r.utilization);
    }
}
