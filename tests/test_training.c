/* Training jobs: closed-form checkpoint progress, losses against hand-computed end
 * times, FIFO against backfilling, priority preemption, gang starts, failures against
 * the expected goodput, job traces and step times from the model. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lua/catalog.h"
#include "models/job_scheduler_internal.h"
#include "models/perf.h"
#include "models/perf_training.h"

TestSuite(training);

/* ---- helpers ------------------------------------------------------------------------- */

typedef struct world {
    sim_engine *engine;
    gpu_pool *pool;
    job_scheduler *sched;
} world;

static world make_world(const pool_capacity *c, scheduler_policy policy)
{
    world w = { .engine = sim_engine_create() };
    char err[256];
    w.pool = gpu_pool_create(w.engine, c, "pool.t", 1, 0, err, sizeof err);
    cr_assert_not_null(w.pool, "%s", err);
    scheduler_spec spec = { policy };
    w.sched = job_scheduler_create(w.engine, w.pool, &spec, "t", 1, 0, err, sizeof err);
    cr_assert_not_null(w.sched, "%s", err);
    return w;
}

static void free_world(world *w)
{
    job_scheduler_free(w->sched);
    gpu_pool_free(w->pool);
    sim_engine_free(w->engine);
}

/* A job of `work` seconds (one step per second). */
static training_spec make_job(const char *name, double at_s, unsigned gpus, double work_s,
                         int priority, double every_s, double write_s, double restart_s)
{
    return (training_spec){ .name = (char *)name, .at_s = at_s, .gpus = gpus,
                            .priority = priority, .steps = work_s, .step_s = 1,
                            .mfu = NAN, .checkpoint = { every_s, write_s },
                            .restart_s = restart_s };
}

static void add(world *w, const training_spec *j)
{
    char err[256];
    cr_assert_eq(job_scheduler_add_job(w->sched, j, err, sizeof err), 0, "%s", err);
}

static const pool_capacity DEDICATED8 = { .kind = POOL_DEDICATED, .count = 8, .max = 8 };

/* ---- closed form --------------------------------------------------------------------- */

Test(training, segment_length_and_progress_in_closed_form)
{
    checkpoint_spec c = { 100, 10 };
    /* 250 s of work: checkpoints after 100 and 200 s of it, then 50 more: 2 x 110 + 50 */
    cr_expect_float_eq(training_segment_s(&c, 0, 250), 270.0, 1e-12);
    /* 200 s: one checkpoint, no final one: 110 + 100 */
    cr_expect_float_eq(training_segment_s(&c, 0, 200), 210.0, 1e-12);
    cr_expect_float_eq(training_segment_s(&c, 30, 200), 240.0, 1e-12);
    checkpoint_spec none = { 0, 0 };
    cr_expect_float_eq(training_segment_s(&none, 5, 200), 205.0, 1e-12);
    double done, saved;
    /* 150 s in: one cycle of 110 done, 40 s into the next: 140 done, 100 saved */
    training_progress(&c, 0, 1000, 150, &done, &saved);
    cr_expect_float_eq(done, 140.0, 1e-12);
    cr_expect_float_eq(saved, 100.0, 1e-12);
    /* 105 s in: writing the first checkpoint, not saved yet */
    training_progress(&c, 0, 1000, 105, &done, &saved);
    cr_expect_float_eq(done, 100.0, 1e-12);
    cr_expect_float_eq(saved, 0.0, 1e-12);
    /* during the reload nothing is done */
    training_progress(&c, 30, 1000, 20, &done, &saved);
    cr_expect_float_eq(done, 0.0, 1e-12);
}

/* ---- single jobs --------------------------------------------------------------------- */

Test(training, a_job_alone_pays_its_checkpoints)
{
    /* 1000 s of work on 8 GPUs, a checkpoint every 100 s taking 10: 9 checkpoints, so it
     * ends at 5 + 1090 = 1095; 8 x 1090 GPU-s = 2.4222 GPU-h; goodput 1000 / 1090. */
    world w = make_world(&DEDICATED8, SCHED_FIFO);
    training_spec a = make_job("a", 5, 8, 1000, 0, 100, 10, 30);
    add(&w, &a);
    sim_engine_run_until(w.engine, 5000);
    job_record r = job_scheduler_job(w.sched, 0, 5000);
    cr_expect(r.completed);
    cr_expect_float_eq(r.start_s, 5.0, 1e-9);
    cr_expect_float_eq(r.end_s, 1095.0, 1e-9);
    cr_expect_float_eq(r.wait_s, 0.0, 1e-9);
    cr_expect_float_eq(r.gpu_hours, 8 * 1090 / 3600.0, 1e-9);
    cr_expect_float_eq(r.goodput, 1000 / 1090.0, 1e-9);
    cr_expect_eq(r.restarts, 0);
    free_world(&w);
}

/* A spot pool of 8 GPUs held from the start, one preemption at 555 s. */
static world spot_world(double notice_s, const double *times)
{
    pool_capacity c = { .kind = POOL_SPOT, .count = 8, .max = 8,
                        .provision_s = sim_dist_constant(60), .preemption_times_s = times,
                        .npreemption_times = 1, .notice_s = notice_s };
    return make_world(&c, SCHED_FIFO);
}

Test(training, a_preempted_job_loses_the_work_since_its_last_checkpoint)
{
    /* Work 1000 s, checkpoint every 100 s (write 10), restart 30, no notice.  At 555 s:
     * 5 cycles of 110 done and 5 s into the sixth: 500 s saved, 5 s lost.  The pool
     * provisions 8 new GPUs in 60 s: granted at 615, reload 30, then 500 s of work with
     * 4 checkpoints: 30 + 4 x 110 + 100 = 570, so it ends at 1185.  GPU time 8 x (555 +
     * 570) s; wait 60 s; goodput 1000 / 1125. */
    static const double at[] = { 555 };
    world w = spot_world(0, at);
    training_spec a = make_job("a", 0, 8, 1000, 0, 100, 10, 30);
    add(&w, &a);
    sim_engine_run_until(w.engine, 5000);
    job_record r = job_scheduler_job(w.sched, 0, 5000);
    cr_expect(r.completed);
    cr_expect_float_eq(r.end_s, 1185.0, 1e-9);
    cr_expect_float_eq(r.wait_s, 60.0, 1e-9);
    cr_expect_eq(r.restarts, 1);
    cr_expect_eq(r.preemptions, 1);
    cr_expect_float_eq(r.gpu_hours, 8 * 1125 / 3600.0, 1e-9);
    cr_expect_float_eq(r.goodput, 1000 / 1125.0, 1e-9);
    free_world(&w);
}

Test(training, a_notice_long_enough_to_checkpoint_loses_nothing)
{
    /* The same with 30 s of notice >= the 10 s write: at 555 the job has done 505 s of
     * work; it writes them by 565 and gives its GPUs back.  New GPUs at 625, reload 30,
     * 495 s of work with 4 checkpoints: 30 + 440 + 95 = 565, so it ends at 1190; GPU time
     * 8 x (565 + 565) s. */
    static const double at[] = { 555 };
    world w = spot_world(30, at);
    training_spec a = make_job("a", 0, 8, 1000, 0, 100, 10, 30);
    add(&w, &a);
    sim_engine_run_until(w.engine, 5000);
    job_record r = job_scheduler_job(w.sched, 0, 5000);
    cr_expect(r.completed);
    cr_expect_float_eq(r.end_s, 1190.0, 1e-9);
    cr_expect_float_eq(r.wait_s, 60.0, 1e-9);
    cr_expect_eq(r.preemptions, 1);
    cr_expect_float_eq(r.gpu_hours, 8 * 1130 / 3600.0, 1e-9);
    free_world(&w);
}

Test(training, a_job_not_finished_at_the_end_is_reported_as_such)
{
    /* 1000 s of work without checkpoints, observed at 400: not completed, 400 s done,
     * 8 x 400 GPU-s, goodput 1. */
    world w = make_world(&DEDICATED8, SCHED_FIFO);
    training_spec a = make_job("a", 0, 8, 1000, 0, 0, 0, 0);
    add(&w, &a);
    sim_engine_run_until(w.engine, 400);
    job_record r = job_scheduler_job(w.sched, 0, 400);
    cr_expect(!r.completed);
    cr_expect(isnan(r.end_s));
    cr_expect_float_eq(r.work_s, 400.0, 1e-9);
    cr_expect_float_eq(r.gpu_hours, 8 * 400 / 3600.0, 1e-9);
    cr_expect_float_eq(r.goodput, 1.0, 1e-12);
    sim_metrics m;
    sim_metrics_init(&m);
    training_record_metrics(w.sched, 400, NAN, &m);
    const sim_metric *done = sim_metrics_find(&m, "job", "a", "completed");
    cr_assert_not_null(done);
    cr_expect_float_eq(done->replications.mean, 0.0, 1e-12);
    sim_metrics_release(&m);
    free_world(&w);
}

/* ---- policies ------------------------------------------------------------------------ */

/* A: 6 GPUs for 100 s at 0; B: 4 for 50 s at 1; C: 2 for 30 s at 2; D: 2 for 200 s at 3. */
static void start_times(scheduler_policy policy, double out[4])
{
    world w = make_world(&DEDICATED8, policy);
    training_spec j[4] = { make_job("A", 0, 6, 100, 0, 0, 0, 0), make_job("B", 1, 4, 50, 0, 0, 0, 0),
                           make_job("C", 2, 2, 30, 0, 0, 0, 0), make_job("D", 3, 2, 200, 0, 0, 0, 0) };
    for (int i = 0; i < 4; i++)
        add(&w, &j[i]);
    sim_engine_run_until(w.engine, 10000);
    for (size_t i = 0; i < 4; i++) {
        job_record r = job_scheduler_job(w.sched, i, 10000);
        cr_assert(r.completed, "%s", r.name);
        out[i] = r.start_s;
    }
    free_world(&w);
}

Test(training, fifo_is_strictly_head_of_line)
{
    /* B (4) cannot start beside A (6 of 8) and blocks C and D, though 2 GPUs are free;
     * at 100 A ends and B, C and D (4 + 2 + 2 = 8) all start. */
    double s[4];
    start_times(SCHED_FIFO, s);
    double want[4] = { 0, 100, 100, 100 };
    for (int i = 0; i < 4; i++)
        cr_expect_float_eq(s[i], want[i], 1e-9, "job %d starts at %g", i, s[i]);
}

Test(training, easy_backfilling_fills_around_the_reservation)
{
    /* B is reserved the instant A ends (100), when 8 GPUs will be free, 4 more than it
     * needs.  C (2 GPUs, ends at 32 <= 100) starts at 2.  D arrives at 3 with no GPU free;
     * at 32 (C done) it takes 2 GPUs: it would end after 100 but fits in the 4 B leaves.
     * B starts at 100 as reserved. */
    double s[4];
    start_times(SCHED_BACKFILL, s);
    double want[4] = { 0, 100, 2, 32 };
    for (int i = 0; i < 4; i++)
        cr_expect_float_eq(s[i], want[i], 1e-9, "job %d starts at %g", i, s[i]);
}

Test(training, priority_preempts_lower_priority_jobs)
{
    /* L (priority 0, 8 GPUs, 1000 s of work, checkpoint every 100 s, write 10, restart
     * 20) runs from 0.  H (priority 5, 4 GPUs, 100 s) arrives at 250: L has 2 cycles of
     * 110 behind it and is 30 s into the third: 200 s saved, 30 lost.  H runs 250-350;
     * L waits for 8 GPUs until 350, reloads 20 s and does 800 s with 7 checkpoints:
     * 20 + 770 + 100 = 890, ending at 1240. */
    world w = make_world(&DEDICATED8, SCHED_PRIORITY);
    training_spec l = make_job("L", 0, 8, 1000, 0, 100, 10, 20), h = make_job("H", 250, 4, 100, 5, 0, 0, 0);
    add(&w, &l);
    add(&w, &h);
    sim_engine_run_until(w.engine, 10000);
    job_record rl = job_scheduler_job(w.sched, 0, 10000), rh = job_scheduler_job(w.sched, 1, 10000);
    cr_expect_float_eq(rh.start_s, 250.0, 1e-9);
    cr_expect_float_eq(rh.end_s, 350.0, 1e-9);
    cr_expect_float_eq(rl.end_s, 1240.0, 1e-9);
    cr_expect_eq(rl.restarts, 1);
    cr_expect_eq(rl.preemptions, 1);
    cr_expect_float_eq(rl.wait_s, 100.0, 1e-9);
    cr_expect_float_eq(rl.gpu_hours, 8 * (250 + 890) / 3600.0, 1e-9);
    free_world(&w);
}

Test(training, fifo_ignores_priorities)
{
    world w = make_world(&DEDICATED8, SCHED_FIFO);
    training_spec l = make_job("L", 0, 8, 1000, 0, 0, 0, 0), h = make_job("H", 250, 4, 100, 5, 0, 0, 0);
    add(&w, &l);
    add(&w, &h);
    sim_engine_run_until(w.engine, 10000);
    cr_expect_float_eq(job_scheduler_job(w.sched, 1, 10000).start_s, 1000.0, 1e-9);
    free_world(&w);
}

/* ---- gangs under failures ------------------------------------------------------------ */

typedef struct gang_check {
    world *w;
    unsigned checks, partial;
} gang_check;

static void check_gangs(sim_engine *e, void *data)
{
    gang_check *g = data;
    const job_scheduler *s = g->w->sched;
    unsigned running = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        const job *j = s->jobs[i];
        if (j->state == JOB_RUNNING || j->state == JOB_EVACUATING)
            running += j->gpus;
    }
    g->checks++;
    g->partial += running != gpu_pool_busy(g->w->pool);
    sim_event_schedule_in(e, 37, 0, check_gangs, g);
}

Test(training, jobs_run_on_whole_gangs_only)
{
    /* A stream of jobs of 1..32 GPUs (10.5 on average) for an hour on average, one every
     * 900 s (a load of 42 GPUs), on a 64-GPU pool with failures, under backfilling: at
     * every check the GPUs busy in the pool are exactly those of the running jobs, and
     * most of the 2880 jobs expected in 30 days complete. */
    pool_capacity c = { .kind = POOL_DEDICATED, .count = 64, .max = 64, .mtbf_s = 2e5,
                        .repair_s = sim_dist_constant(3600) };
    world w = make_world(&c, SCHED_BACKFILL);
    double sizes[] = { 1, 2, 4, 8, 16, 32 };
    job_stream_spec st = { .name = "stream", .interarrival_s = sim_dist_exponential(900),
                           .duration_s = sim_dist_exponential(3600),
                           .checkpoint = { 1800, 60 }, .restart_s = 120 };
    char err[256];
    cr_assert_eq(sim_dist_empirical(&st.gpus, sizes, NULL, 6, false, err, sizeof err), 0);
    job_scheduler_keep_jobs(w.sched); /* check_gangs looks at every job */
    cr_assert_eq(job_scheduler_add_stream(w.sched, &st, err, sizeof err), 0, "%s", err);
    gang_check g = { &w, 0, 0 };
    sim_event_schedule(w.engine, 1, 0, check_gangs, &g);
    sim_engine_run_until(w.engine, 30 * 86400.0);
    cr_expect_gt(g.checks, 60000);
    cr_expect_eq(g.partial, 0);
    cr_expect_gt(gpu_pool_get_stats(w.pool)->failures, 10);
    sim_metrics m;
    sim_metrics_init(&m);
    training_record_metrics(w.sched, 30 * 86400.0, NAN, &m);
    const sim_metric *done = sim_metrics_find(&m, "workload", "stream", "jobs_completed");
    cr_assert_not_null(done);
    cr_expect_gt(done->replications.mean, 2500);
    sim_metrics_release(&m);
    free_world(&w);
    sim_dist_release(&st.gpus);
}

/* ---- failures against theory --------------------------------------------------------- */

/* Expected time to get through an interval of `first` s (then `retry` s after each
 * failure, which restarts it) under failures at rate lambda:
 *     E[min(X, first)] + P(X < first) (e^{lambda retry} - 1) / lambda
 * with E[min(X, a)] = (1 - e^{-lambda a}) / lambda: the classic checkpointing formula
 * (Young 1974, Daly 2006) for one segment, the reload counted only after a failure. */
static double expected_segment_s(double lambda, double first, double retry)
{
    double p_fail = 1 - exp(-lambda * first);
    return p_fail / lambda + p_fail * expm1(lambda * retry) / lambda;
}

Test(training, goodput_under_failures_matches_the_checkpointing_formula)
{
    /* One 8-GPU job on a 16-GPU pool (spares: it restarts at once), GPUs failing at
     * 1 / 4000 s each, so its gang fails at lambda = 8 / 4000 = 1 / 500 s.  Work 10^5 s
     * in 1000 segments of tau = 100 s, each followed by a delta = 10 s write except the
     * last; a loss costs a reload of R = 20 s.  Expected time: 999 segments of first try
     * 110 s and retries 130 s, and one of 100 and 120:
     *     999 x 128.08 + 115.22 = 128,067 s, goodput 10^5 / 128,067 = 0.7808.
     * Over 8 replications the mean goodput is within 1.5%. */
    double lambda = 1.0 / 500, tau = 100, delta = 10, reload = 20;
    double expected_t = 999 * expected_segment_s(lambda, tau + delta, reload + tau + delta)
                        + expected_segment_s(lambda, tau, reload + tau);
    double expected = 1e5 / expected_t;
    cr_assert(fabs(expected - 0.7808) < 0.001, "formula gives %.4f", expected);
    sim_stat goodput;
    sim_stat_reset(&goodput);
    for (uint64_t rep = 0; rep < 8; rep++) {
        sim_engine *e = sim_engine_create();
        pool_capacity c = { .kind = POOL_DEDICATED, .count = 16, .max = 16, .mtbf_s = 4000,
                            .repair_s = sim_dist_constant(1) };
        char err[256];
        gpu_pool *pool = gpu_pool_create(e, &c, "pool", 3, rep, err, sizeof err);
        scheduler_spec spec = { SCHED_FIFO };
        job_scheduler *s = job_scheduler_create(e, pool, &spec, "p", 3, rep, err, sizeof err);
        training_spec a = make_job("a", 0, 8, 1e5, 0, tau, delta, reload);
        cr_assert_eq(job_scheduler_add_job(s, &a, err, sizeof err), 0);
        sim_engine_run_until(e, 1e6);
        job_record r = job_scheduler_job(s, 0, 1e6);
        cr_assert(r.completed);
        cr_expect_lt(r.wait_s, 100, "restarts at once on spares");
        sim_stat_add(&goodput, r.goodput);
        job_scheduler_free(s);
        gpu_pool_free(pool);
        sim_engine_free(e);
    }
    cr_expect(fabs(goodput.mean - expected) < 0.015 * expected, "goodput %.4f, expected %.4f",
              goodput.mean, expected);
}

/* ---- traces and model ---------------------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

Test(training, job_traces_are_read_and_checked)
{
    char path[] = "/tmp/fleetsim_jobs_XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    write_file(path, "gpus,at_s,duration_s,priority\n8,0,3600,1\n16,10.5,7200,0\n");
    job_trace t;
    char err[512];
    cr_assert_eq(job_trace_read(path, &t, err, sizeof err), 0, "%s", err);
    cr_expect_eq(t.n, 2);
    cr_expect_eq(t.gpus[1], 16);
    cr_expect_float_eq(t.at_s[1], 10.5, 1e-12);
    cr_expect_eq(t.priority[0], 1);
    job_trace_release(&t);
    write_file(path, "at_s,gpus,duration_s\n0,8,3600\n5,2.5,10\n");
    cr_expect_eq(job_trace_read(path, &t, err, sizeof err), -1);
    char want[600];
    snprintf(want, sizeof want, "%s:row 3: gpus: expected a positive integer, got 2.5", path);
    cr_expect_str_eq(err, want);
    write_file(path, "at_s,duration_s\n0,8\n");
    cr_expect_eq(job_trace_read(path, &t, err, sizeof err), -1);
    cr_expect(strstr(err, ":row 1: gpus: no such column") != NULL, "%s", err);
    write_file(path, "at_s,gpus,duration_s\n10,1,1\n5,1,1\n");
    cr_expect_eq(job_trace_read(path, &t, err, sizeof err), -1);
    cr_expect(strstr(err, ":row 3: at_s: 5 comes before") != NULL, "%s", err);
    unlink(path);
}

Test(training, a_trace_replays_its_jobs)
{
    /* Two jobs from a trace on 8 GPUs, FIFO: 8 GPUs for 100 s at 0, 4 for 50 s at 10:
     * the second starts at 100 and ends at 150. */
    world w = make_world(&DEDICATED8, SCHED_FIFO);
    double at[] = { 0, 10 }, dur[] = { 100, 50 };
    unsigned gpus[] = { 8, 4 };
    job_stream_spec st = { .name = "replay", .has_trace = true,
                           .trace = { .at_s = at, .gpus = gpus, .duration_s = dur, .n = 2 } };
    char err[256];
    job_scheduler_keep_jobs(w.sched); /* to read the finished jobs' records */
    cr_assert_eq(job_scheduler_add_stream(w.sched, &st, err, sizeof err), 0, "%s", err);
    sim_engine_run_until(w.engine, 1000);
    cr_assert_eq(job_scheduler_jobs(w.sched), 2);
    job_record r = job_scheduler_job(w.sched, 1, 1000);
    cr_expect_str_eq(r.name, "replay#2");
    cr_expect_float_eq(r.start_s, 100.0, 1e-9);
    cr_expect_float_eq(r.end_s, 150.0, 1e-9);
    cr_expect_float_eq(r.wait_s, 90.0, 1e-9);
    free_world(&w);
}

Test(training, a_job_too_big_for_its_pool_is_refused)
{
    world w = make_world(&DEDICATED8, SCHED_FIFO);
    training_spec a = make_job("big", 0, 16, 10, 0, 0, 0, 0);
    char err[256];
    cr_expect_eq(job_scheduler_add_job(w.sched, &a, err, sizeof err), -1);
    cr_expect_str_eq(err, "big needs 16 GPUs; pool \"t\" can hold at most 8");
    free_world(&w);
}

Test(training, step_time_from_the_model_or_the_smallest_fit)
{
    catalog cat;
    char err[1024];
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
    const model_spec *m8 = catalog_model(&cat, "llama-3-8b"), *m70 = catalog_model(&cat, "llama-3-70b");
    const device_spec *h100 = catalog_device(&cat, "H100-SXM");
    cr_assert(m8 && m70 && h100);
    training_spec j = { 0 };
    /* 8B on 8 H100s, 4096-token sequences, 512 per step: 2M tokens a step, so 2e9 tokens
     * are ceil(2e9 / 2097152) = 954 steps */
    cr_assert_eq(training_job_from_model(&j, m8, h100, NULL, PREC_BF16, 8, TRAINING_FREE,
                                         TRAINING_SCHEDULE_PLANNED, 4096, 512, 2e9, 0,
                                         err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(j.tokens_per_step, 512 * 4096.0, 1e-9);
    cr_expect_float_eq(j.steps, 954.0, 1e-9);
    cr_expect(j.step_s > 0 && j.mfu > 0.1 && j.mfu < 1, "step %g s, mfu %g", j.step_s, j.mfu);
    /* 70B does not fit on 8: the message names the smallest power-of-two count that
     * does, which fits by the planner while half of it does not */
    cr_expect_eq(training_job_from_model(&j, m70, h100, NULL, PREC_BF16, 8, TRAINING_FREE,
                                         TRAINING_SCHEDULE_PLANNED, 4096, 512, 2e9, 0,
                                         err, sizeof err), -1);
    const char *smallest = strstr(err, "the smallest that fits is ");
    cr_assert_not_null(smallest, "%s", err);
    cr_expect(strstr(err, "llama-3-70b on 8 H100-SXM: needs ") == err, "%s", err);
    unsigned fit = (unsigned)atoi(smallest + strlen("the smallest that fits is "));
    perf_profile p = perf_default_profile(h100);
    training_estimate e;
    cr_expect(perf_training_plan(m70, h100, &p, PREC_BF16, fit, 4096, 512, &e), "%u fits", fit);
    cr_expect(!perf_training_plan(m70, h100, &p, PREC_BF16, fit / 2, 4096, 512, &e));
    catalog_release(&cat);
}

Test(training, a_stated_plan_is_taken_or_refused_with_the_planners_cause)
{
    catalog cat;
    char err[1024];
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
    const model_spec *m8 = catalog_model(&cat, "llama-3-8b");
    const device_spec *h100 = catalog_device(&cat, "H100-SXM");
    training_spec j = { 0 };
    /* tp 2, pp 2, micro-batches of 2, interleaved with the chunks left free: the fastest
     * of 2, 4 and 8 chunks a stage, each planned alone */
    training_constraints c = TRAINING_FREE;
    c.tp = 2;
    c.pp = 2;
    c.micro_batch = 2;
    cr_assert_eq(training_job_from_model(&j, m8, h100, NULL, PREC_BF16, 16, c,
                                         TRAINING_SCHEDULE_INTERLEAVED, 4096, 512, 2e9, 0, err,
                                         sizeof err), 0, "%s", err);
    cr_expect(j.setup.tp == 2 && j.setup.pp == 2 && j.setup.micro_batch == 2,
              "tp %u pp %u micro-batch %u", j.setup.tp, j.setup.pp, j.setup.micro_batch);
    cr_expect_geq(j.setup.virtual_stages, 2);
    perf_profile p = perf_default_profile(h100);
    int same = 0;
    for (unsigned v = 2; v <= 8; v *= 2) {
        training_estimate e;
        c.virtual_stages = v;
        if (!perf_training_plan_within(m8, h100, &p, PREC_BF16, 16, 4096, 512, c, &e))
            continue;
        cr_expect_geq(e.step_s, j.step_s, "%u chunks: %g s against %g", v, e.step_s, j.step_s);
        same += e.step_s == j.step_s && e.setup.virtual_stages == j.setup.virtual_stages;
    }
    cr_expect_eq(same, 1, "the job's step is one of the three");
    /* a degree the model cannot take: the planner's cause, and -2 (nothing was timed) */
    c = TRAINING_FREE;
    c.tp = 3;
    cr_expect_eq(training_job_from_model(&j, m8, h100, NULL, PREC_BF16, 16, c,
                                         TRAINING_SCHEDULE_PLANNED, 4096, 512, 2e9, 0, err,
                                         sizeof err), -2);
    cr_expect_str_eq(err, "tp 3 does not divide the 32 attention heads of llama-3-8b");
    /* ZB-H1 on pp 2: the plan says so */
    c = TRAINING_FREE;
    c.pp = 2;
    cr_assert_eq(training_job_from_model(&j, m8, h100, NULL, PREC_BF16, 16, c,
                                         TRAINING_SCHEDULE_ZERO_BUBBLE, 4096, 512, 2e9, 0, err,
                                         sizeof err), 0, "%s", err);
    cr_expect(j.setup.zero_bubble && j.setup.pp == 2 && j.setup.virtual_stages == 1);
    catalog_release(&cat);
}

/* ---- scenario constructors ----------------------------------------------------------- */

#include <lauxlib.h>

#include "lua/sandbox.h"
#include "lua/training_load.h"

/* Runs a chunk returning a table in a sandbox; the table is left on the stack as an
 * object at path. */
static lua_State *load_table(sandbox **sb, const char *code, load_context *c, char *err,
                             size_t err_size, const char *path, fields_object *out)
{
    *sb = sandbox_create(false);
    cr_assert_not_null(*sb);
    lua_State *L = sandbox_state(*sb);
    cr_assert_eq(luaL_loadstring(L, code), LUA_OK, "%s", lua_tostring(L, -1));
    cr_assert_eq(lua_pcall(L, 0, 1, 0), LUA_OK, "%s", lua_tostring(L, -1));
    *c = (load_context){ .L = L, .err = err, .err_size = err_size };
    cr_assert_eq(fields_object_open(c, -1, path, "", NULL, "a table", out), 0, "%s", err);
    return L;
}

Test(training, a_job_stream_and_a_scheduler_from_a_scenario_table)
{
    sandbox *sb;
    load_context c;
    fields_object w;
    char err[512] = "";
    load_table(&sb, "local fs = require 'fleetsim'\n"
               "return { pool = 'gpus', arrivals = fs.poisson { rate = 2 / 3600 },\n"
               "  gpus = fs.empirical { values = { 1, 2, 4, 8 } },\n"
               "  duration = fs.exponential { mean = '3h' }, count = 100, priority = 2,\n"
               "  checkpoint = { every = '1h', write = '2m' }, restart = '10m' }", &c, err, sizeof err, "workloads.sweep", &w);
    job_stream_spec s;
    cr_assert_eq(training_load_convert_job_stream(&c, &w, 3, &s), 0, "%s", err);
    cr_expect_str_eq(s.name, "sweep");
    cr_expect_eq(s.pool, 3);
    /* 2 per hour: exponential gaps of 1800 s; gpus 1, 2, 4, 8 equally: mean 3.75 */
    cr_expect_float_eq(sim_dist_mean(&s.interarrival_s), 1800.0, 1e-9);
    cr_expect_float_eq(sim_dist_mean(&s.gpus), 3.75, 1e-9);
    cr_expect_float_eq(sim_dist_mean(&s.duration_s), 10800.0, 1e-9);
    cr_expect_eq(s.count, 100);
    cr_expect_eq(s.priority, 2);
    cr_expect_float_eq(s.checkpoint.every_s, 3600.0, 1e-9);
    cr_expect_float_eq(s.checkpoint.write_s, 120.0, 1e-9);
    cr_expect_float_eq(s.restart_s, 600.0, 1e-9);
    job_stream_spec_release(&s);
    sandbox_free(sb);
    scheduler_spec sched;
    load_table(&sb, "return { scheduler = 'backfill' }", &c, err, sizeof err, "pools.p", &w);
    cr_expect_eq(training_load_convert_scheduler(&c, &w, &sched), 0, "%s", err);
    cr_expect_eq(sched.policy, SCHED_BACKFILL);
    sandbox_free(sb);
    load_table(&sb, "return { scheduler = 'fair' }", &c, err, sizeof err, "pools.p", &w);
    cr_expect_eq(training_load_convert_scheduler(&c, &w, &sched), -1);
    cr_expect(strstr(err, "pools.p.scheduler") == err, "%s", err);
    sandbox_free(sb);
}

/* A scenario's training job states its precision: fp8 on a device without fp8 matrix
 * units, and int4, are refused at the key (they were priced as weight-only products). */
Test(training, a_training_precision_the_device_lacks_is_refused_at_its_key)
{
    catalog cat;
    char err[1024] = "";
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
    static const char *const cases[][3] = {
        { "fp8", "A100-80GB-SXM", "workloads.j.precision: A100-80GB-SXM has no fp8 matrix "
                                  "units (fp8 training runs on Hopper and later)" },
        { "int4", "H100-SXM", "workloads.j.precision: int4 is a serving precision: training "
                              "runs in bf16, fp16, tf32, fp32 or fp8" },
        { "bf16", "V100-SXM2-32GB", "workloads.j.precision: V100-SXM2-32GB has no bf16 "
                                    "matrix units" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sandbox *sb;
        load_context c;
        fields_object w;
        char code[200];
        snprintf(code, sizeof code, "return { model = 'llama-3-8b', gpus = 8, tokens = 1e9, "
                 "pool = 'p', precision = '%s' }", cases[i][0]);
        load_table(&sb, code, &c, err, sizeof err, "workloads.j", &w);
        training_spec t;
        cr_expect_eq(training_load_convert(&c, &w, &cat, 0, cases[i][1], NULL, &t), -1);
        cr_expect(strstr(err, cases[i][2]) != NULL, "%s", err);
        training_spec_release(&t);
        sandbox_free(sb);
    }
    catalog_release(&cat);
}

Test(training, a_training_job_that_does_not_fit_is_refused_with_the_numbers)
{
    catalog cat;
    char err[1024] = "";
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
    sandbox *sb;
    load_context c;
    fields_object w;
    load_table(&sb, "local fs = require 'fleetsim'\n"
               "return { model = 'llama-3-70b', gpus = 8, tokens = 1e9, pool = 'p' }", &c,
               err, sizeof err, "workloads.big", &w);
    training_spec t;
    cr_expect_eq(training_load_convert(&c, &w, &cat, 0, "H100-SXM", NULL, &t), -1);
    cr_expect(strstr(err, "workloads.big.gpus: llama-3-70b on 8 H100-SXM: needs ") == err, "%s",
              err);
    training_spec_release(&t);
    sandbox_free(sb);
    /* the 8B model fits: its steps come from the model */
    load_table(&sb, "local fs = require 'fleetsim'\n"
               "return { model = 'llama-3-8b', gpus = 8, steps = 100, at = '1h',\n"
               "  checkpoint = { every = '30m' }, pool = 'p', mdoel = 1 }", &c, err,
               sizeof err, "workloads.ok", &w);
    cr_expect_eq(training_load_convert(&c, &w, &cat, 0, "H100-SXM", NULL, &t), -1,
                 "a misspelt key");
    cr_expect(strstr(err, "mdoel") != NULL, "%s", err);
    training_spec_release(&t);
    sandbox_free(sb);
    load_table(&sb, "local fs = require 'fleetsim'\n"
               "return { model = 'llama-3-8b', gpus = 8, steps = 100, at = '1h',\n"
               "  checkpoint = { every = '30m' }, pool = 'p' }", &c, err, sizeof err,
               "workloads.ok", &w);
    cr_assert_eq(training_load_convert(&c, &w, &cat, 0, "H100-SXM", NULL, &t), 0, "%s", err);
    cr_expect_float_eq(t.steps, 100.0, 1e-12);
    cr_expect_float_eq(t.at_s, 3600.0, 1e-9);
    cr_expect_float_eq(t.checkpoint.every_s, 1800.0, 1e-9);
    cr_expect(t.step_s > 0 && t.mfu > 0);
    training_spec_release(&t);
    sandbox_free(sb);
    catalog_release(&cat);
}

/* ---- jobs.csv ------------------------------------------------------------------------ */

#include "output/jobs.h"

Test(training, jobs_csv_has_a_row_per_job_finished_or_not)
{
    /* A (8 GPUs, 100 s) completes at 100; B (8 GPUs, 100 s, arriving at 50) starts at 100
     * and is still running at 150, the end: two rows, the second not completed. */
    char dir[] = "/tmp/fleetsim_jobs_dir_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char err[512];
    jobs_writer *out = jobs_open(dir, err, sizeof err);
    cr_assert_not_null(out, "%s", err);
    world w = make_world(&DEDICATED8, SCHED_FIFO);
    job_scheduler_set_recorder(w.sched, jobs_write, out);
    training_spec a = make_job("A", 0, 8, 100, 0, 0, 0, 0), b = make_job("B", 50, 8, 100, 0, 0, 0, 0);
    add(&w, &a);
    add(&w, &b);
    sim_engine_run_until(w.engine, 150);
    job_scheduler_finish(w.sched, 150);
    cr_assert_eq(jobs_commit(out, err, sizeof err), 0, "%s", err);
    free_world(&w);
    char path[600], text[2048] = "";
    snprintf(path, sizeof path, "%s/jobs.csv", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    unlink(path);
    rmdir(dir);
    cr_expect_str_eq(text,
        "replication,workload,name,arrival_s,start_s,end_s,wait_s,gpus,gpu_hours,work_s,"
        "goodput,mfu_effective,restarts,preemptions,failures,completed\n"
        "0,A,A,0,0,100,0,8,0.2222222222222222,100,1,,0,0,0,1\n"
        "0,B,B,50,100,,50,8,0.1111111111111111,50,1,,0,0,0,0\n");
}

/* A stream's figures from jobs folded as they finish equal those of every job kept to
 * the end, bit for bit, and folding leaves only the jobs still in hand in memory. */
static void stream_figures(bool keep, sim_metrics *m, size_t *live)
{
    pool_capacity c = { .kind = POOL_DEDICATED, .count = 64, .max = 64, .mtbf_s = 2e5,
                        .repair_s = sim_dist_constant(3600) };
    world w = make_world(&c, SCHED_BACKFILL);
    double sizes[] = { 1, 2, 4, 8, 16, 32 };
    job_stream_spec st = { .name = "stream", .interarrival_s = sim_dist_exponential(1200),
                           .duration_s = sim_dist_lognormal(3600, 1.0),
                           .checkpoint = { 1800, 60 }, .restart_s = 120 };
    char err[256];
    cr_assert_eq(sim_dist_empirical(&st.gpus, sizes, NULL, 6, false, err, sizeof err), 0);
    if (keep)
        job_scheduler_keep_jobs(w.sched);
    cr_assert_eq(job_scheduler_add_stream(w.sched, &st, err, sizeof err), 0, "%s", err);
    sim_engine_run_until(w.engine, 20 * 86400.0);
    training_record_metrics(w.sched, 20 * 86400.0, 2.5, m);
    *live = w.sched->streams[0]->nlive;
    free_world(&w);
    sim_dist_release(&st.gpus);
}

Test(training, folding_finished_jobs_changes_no_figure)
{
    sim_metrics kept, folded;
    sim_metrics_init(&kept);
    sim_metrics_init(&folded);
    size_t live_kept, live_folded;
    stream_figures(true, &kept, &live_kept);
    stream_figures(false, &folded, &live_folded);
    static const char *const names[] = { "jobs_arrived", "jobs_completed", "wait_mean_s",
                                         "wait_p99_s", "turnaround_mean_s", "goodput_mean",
                                         "gpu_hours", "restarts", "failures", "cost_usd" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const sim_metric *a = sim_metrics_find(&kept, "workload", "stream", names[i]);
        const sim_metric *b = sim_metrics_find(&folded, "workload", "stream", names[i]);
        cr_assert(a && b, "%s", names[i]);
        cr_expect(a->replications.mean == b->replications.mean, "%s: kept %.17g, folded %.17g",
                  names[i], a->replications.mean, b->replications.mean);
    }
    const sim_metric *arrived = sim_metrics_find(&kept, "workload", "stream", "jobs_arrived");
    cr_expect_eq(live_kept, (size_t)arrived->replications.mean, "kept: every job");
    cr_expect_lt(live_folded * 4, live_kept, "folded: %zu of %zu jobs still held", live_folded,
                 live_kept);
    cr_expect_gt(arrived->replications.mean, 1300, "about 1,440 jobs in 20 days");
    sim_metrics_release(&kept);
    sim_metrics_release(&folded);
}
