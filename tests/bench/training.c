/* Training cluster speed: a year of a 1,000-GPU dedicated pool with 10,000 jobs of 1 to
 * 256 GPUs (about 87% offered load), GPU failures (50,000 h MTBF each), hourly
 * checkpoints and EASY backfilling; wall time, engine events and what the run found.
 * The target (issue 6) is under 10 s on one core.  --quick: a month of 100 GPUs. */
#include <math.h>
#include <stdio.h>

#include "bench.h"
#include "models/job_scheduler.h"

void bench_training_table(int quick)
{
    unsigned gpus = quick ? 100 : 1000;
    double duration = quick ? 30 * 86400.0 : 365 * 86400.0;
    uint64_t jobs = quick ? 150 : 10000;
    /* sizes' weights give a mean of 19.3 GPUs; a lognormal of median 24 h (mean 39.6 h):
     * 19.3 x 142,500 s / 3,154 s between jobs = 872 GPUs busy of 1,000 */
    double sizes[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };
    double weights[] = { 20, 15, 15, 20, 12, 8, 5, 3, 2 };
    size_t nsizes = quick ? 7 : 9; /* up to 64 GPUs on the small pool */
    char err[256];
    job_stream_spec st = { .name = "bench.jobs", .duration_s = sim_dist_lognormal(24 * 3600.0, 1.0), .count = jobs,
                           .checkpoint = { 3600, 120 }, .restart_s = 600 };
    if (sim_dist_empirical(&st.gpus, sizes, weights, nsizes, false, err, sizeof err) != 0) {
        printf("WARNING: %s\n", err);
        return;
    }
    /* arrivals for 87% of the GPUs busy */
    double gap = sim_dist_mean(&st.gpus) * sim_dist_mean(&st.duration_s) / (0.87 * gpus);
    st.interarrival_s = sim_dist_exponential(gap);
    pool_capacity c = { .kind = POOL_DEDICATED, .count = gpus, .max = gpus,
                        .mtbf_s = 50000 * 3600.0, .repair_s = sim_dist_constant(4 * 3600.0) };
    scheduler_spec spec = { SCHED_BACKFILL };
    printf("training cluster: %u GPUs, %llu jobs over %.0f simulated days, failures, "
           "checkpoints, backfilling\n", gpus, (unsigned long long)jobs, duration / 86400);
    double best = 1e300;
    uint64_t events = 0;
    sim_metrics m;
    sim_metrics_init(&m);
    double utilization = 0, failures = 0;
    for (int i = 0; i < BENCH_REPEATS; i++) {
        sim_engine *e = sim_engine_create();
        gpu_pool *pool = gpu_pool_create(e, &c, "bench.pool", 1, 0, err, sizeof err);
        job_scheduler *s = job_scheduler_create(e, pool, &spec, "bench", 1, 0, err, sizeof err);
        double start = bench_now_s();
        if (!pool || !s || job_scheduler_add_stream(s, &st, err, sizeof err) != 0) {
            printf("WARNING: %s\n", err);
            break;
        }
        sim_engine_run_until(e, duration);
        double t = bench_now_s() - start;
        if (t < best) {
            best = t;
            events = sim_engine_events_run(e);
            sim_metrics_release(&m);
            sim_metrics_init(&m);
            training_record_metrics(s, duration, NAN, &m);
            gpu_pool_record_metrics(pool, "bench.pool", duration, 1, true, &m);
            utilization = sim_metrics_find(&m, "pool", "bench.pool", "utilization_mean")
                              ->replications.mean;
            failures = (double)gpu_pool_get_stats(pool)->failures;
        }
        job_scheduler_free(s);
        gpu_pool_free(pool);
        sim_engine_free(e);
    }
    const sim_metric *done = sim_metrics_find(&m, "workload", "bench.jobs", "jobs_completed");
    const sim_metric *wait = sim_metrics_find(&m, "workload", "bench.jobs", "wait_mean_s");
    const sim_metric *good = sim_metrics_find(&m, "workload", "bench.jobs", "goodput_mean");
    if (done && wait && good)
        printf("  %8.3f s wall  %10llu events  %6.1f events/job  %5.0f jobs done  "
               "utilization %.3f  wait %.1f h  goodput %.3f  %.0f failures\n", best,
               (unsigned long long)events, (double)events / (double)jobs,
               done->replications.mean, utilization, wait->replications.mean / 3600,
               good->replications.mean, failures);
    sim_metrics_release(&m);
    sim_dist_release(&st.gpus);
}
