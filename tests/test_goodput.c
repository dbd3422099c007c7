/* Goodput in closed form (models/goodput.h): hand-computed cases, its parts adding up,
 * Young's interval against the exact optimum, the mean of simulated fs.training jobs,
 * and estimate's defaults. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/scenario_load.h"
#include "models/estimate.h"
#include "models/goodput.h"
#include "models/run.h"
#include "models/training.h"
#include "sim/stat.h"
#include "support/catalog_fixture.h"
#include "support/cli.h"
#include "support/scratch.h"

TestSuite(goodput);

static goodput_result expect(double work_s, unsigned gpus, double mtbf_s, double every_s,
                             double write_s, double restart_s)
{
    goodput_inputs in = { .work_s = work_s, .gpus = gpus, .mtbf_s = mtbf_s,
                          .every_s = every_s, .write_s = write_s, .restart_s = restart_s };
    return goodput_expect(&in);
}

/* ---- hand-computed ------------------------------------------------------------------- */

Test(goodput, without_failures_a_run_pays_its_writes_alone)
{
    /* 1000 s of work, a checkpoint every 100 s taking 10, none after the last: 9 written,
     * 1090 s on 8 GPUs (2.4222 GPU-hours), as models/training.c's segment takes */
    goodput_result r = expect(1000, 8, 0, 100, 10, 30);
    cr_expect_float_eq(r.wall_s, 1090.0, 1e-9);
    checkpoint_spec c = { 100, 10 };
    cr_expect_float_eq(r.wall_s, training_segment_s(&c, 0, 1000), 1e-9);
    cr_expect_float_eq(r.checkpoints, 9.0, 0);
    cr_expect_float_eq(r.checkpoint_s, 90.0, 1e-9);
    cr_expect_float_eq(r.gpu_hours, 8 * 1090 / 3600.0, 1e-12);
    cr_expect_float_eq(r.goodput, 1000 / 1090.0, 1e-12);
    cr_expect_eq(r.failures, 0);
    cr_expect_eq(r.restart_s, 0);
    cr_expect_eq(r.lost_s, 0);
    cr_expect(isinf(r.job_mtbf_s));
    /* 250 s: two checkpoints and a last 50 s unsaved; never checkpointing: the work */
    cr_expect_float_eq(expect(250, 8, 0, 100, 10, 30).wall_s, 270.0, 1e-9);
    cr_expect_float_eq(expect(1000, 8, 0, 0, 10, 30).wall_s, 1000.0, 1e-9);
    cr_expect_eq(expect(0, 8, 4000, 100, 10, 30).wall_s, 0);
}

Test(goodput, a_run_as_long_as_its_mtbf_without_checkpoints_takes_e_minus_1_times_it)
{
    /* 8 GPUs at 4000 s each: the job fails every 500 s; 500 s of work, no checkpoint, an
     * instant restart: (e^{lambda W} - 1) / lambda = 500 (e - 1) = 859.14 s, with
     * lambda E[T] = e - 1 = 1.718 failures, all of the rest lost */
    goodput_result r = expect(500, 8, 4000, 0, 0, 0);
    cr_expect_float_eq(r.wall_s, 500 * (exp(1) - 1), 1e-9);
    cr_expect_float_eq(r.failures, exp(1) - 1, 1e-12);
    cr_expect_float_eq(r.lost_s, 500 * (exp(1) - 2), 1e-9);
    cr_expect_float_eq(r.job_mtbf_s, 500.0, 1e-12);
    cr_expect_float_eq(r.goodput, 1 / (exp(1) - 1), 1e-12);
}

Test(goodput, restarts_and_checkpoints_by_hand)
{
    /* Work 250 s, lambda = 8 / 4000 = 1/500, tau = 100, w = 10, R = 20: two stages of
     * 110 s and a last of 50.  E[T] = e^{0.04} x 500 x (2 (e^{0.22} - 1) + e^{0.1} - 1)
     *   = 1.0408108 x 500 x (2 x 0.2460767 + 0.1051709) = 310.8508 s;
     * failures 310.8508 / 500 = 0.62170; restarts E[T] (1 - e^{-0.04}) = 12.1886 s;
     * writes 20 s; lost 310.8508 - 250 - 20 - 12.1886 = 28.6622 s. */
    goodput_result r = expect(250, 8, 4000, 100, 10, 20);
    cr_expect_float_eq(r.wall_s, 310.8508, 1e-4);
    cr_expect_float_eq(r.failures, 0.621702, 1e-6);
    cr_expect_float_eq(r.restart_s, 12.1886, 1e-4);
    cr_expect_float_eq(r.checkpoint_s, 20.0, 1e-12);
    cr_expect_float_eq(r.lost_s, 28.6622, 1e-4);
    cr_expect_float_eq(r.gpu_hours, 8 * 310.8508 / 3600, 1e-6);
}

Test(goodput, the_parts_add_up_to_the_wall_time)
{
    const double cases[][6] = {
        /* work, gpus, mtbf, every, write, restart */
        { 3.6e6, 1024, 1.8e8, 3600, 60, 600 },
        { 1e5, 8, 4000, 100, 10, 20 },
        { 7e5, 64, 1.8e8, 0, 0, 600 },
        { 123456, 16384, 1.8244e8, 250, 2.8, 600 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const double *c = cases[i];
        goodput_inputs in = { c[0], (unsigned)c[1], c[2], c[3], c[4], c[5], 0.05 };
        goodput_result r = goodput_expect(&in);
        double parts = c[0] + r.straggler_s + r.checkpoint_s + r.restart_s + r.lost_s;
        cr_expect_float_eq(parts, r.wall_s, 1e-9 * r.wall_s, "case %zu", i);
        cr_expect_float_eq(r.failures, r.wall_s * c[1] / c[2], 1e-9 * r.failures, "case %zu", i);
        cr_expect_float_eq(r.straggler_s, 0.05 * c[0], 1e-9 * c[0]);
        cr_expect(r.lost_s > 0 && r.restart_s > 0, "case %zu", i);
        /* stragglers stretch the work: the same as a run of 1.05 times the work */
        goodput_result longer = expect(1.05 * c[0], (unsigned)c[1], c[2], c[3], c[4], c[5]);
        cr_expect_float_eq(r.wall_s, longer.wall_s, 1e-12 * r.wall_s, "case %zu", i);
        cr_expect_float_eq(r.goodput, c[0] / r.wall_s, 1e-12);
    }
}

Test(goodput, a_run_that_never_gets_through_a_stage_takes_forever)
{
    /* no checkpoint, a job MTBF of 1 s, 10^4 s of work: e^{10^4} overflows */
    goodput_result r = expect(1e4, 1000, 1000, 0, 0, 10);
    cr_expect(isinf(r.wall_s) && isinf(r.gpu_hours) && isinf(r.failures));
    cr_expect_eq(r.goodput, 0);
}

/* ---- Young's interval ---------------------------------------------------------------- */

Test(goodput, youngs_interval_is_close_to_the_exact_optimum)
{
    /* a write of 120 s and a job MTBF of 100 h: sqrt(2 x 120 x 360000) = 9295.16 s */
    cr_expect_float_eq(goodput_young_daly_s(120, 360000), 9295.1600, 1e-4);
    cr_expect_eq(goodput_young_daly_s(120, 0), 0);
    cr_expect_eq(goodput_young_daly_s(120, INFINITY), 0);
    /* 1024 GPUs of Llama 3's MTBF (the job's 49.5 h), a 60 s write, 10 min restarts, 1000
     * h of work: no interval on a fine grid beats Young's by more than 0.05%, and halving
     * or doubling it costs more than 0.5% */
    double mtbf = GOODPUT_DEFAULTS.gpu_mtbf_s, work = 3.6e6;
    double young = goodput_young_daly_s(60, mtbf / 1024);
    cr_expect(young > 4500 && young < 4700, "%g", young);
    double at_young = expect(work, 1024, mtbf, young, 60, 600).wall_s;
    double best = INFINITY;
    for (double tau = 0.2 * young; tau < 5 * young; tau *= 1.001)
        best = fmin(best, expect(work, 1024, mtbf, tau, 60, 600).wall_s);
    cr_expect(at_young <= best * 1.0005, "Young %g, best %g", at_young, best);
    cr_expect(expect(work, 1024, mtbf, young / 2, 60, 600).wall_s > 1.005 * at_young);
    cr_expect(expect(work, 1024, mtbf, young * 2, 60, 600).wall_s > 1.005 * at_young);
}

/* ---- against the simulator ----------------------------------------------------------- */

/* Two fs.training jobs of fixed work (steps of 1 s) on dedicated pools with twice the
 * GPUs they need (a repair of 1 s: a failed job restarts at once on spares), 2000
 * replications:
 *   ja: 8 GPUs of MTBF 4000 s (the job fails every 500 s), 10,050 s of work, a checkpoint
 *       every 100 s taking 10, restarts of 200 s: 100 stages and a last of 50 s;
 *   jb: 4 GPUs of MTBF 40,000 s, 5000 s of work, no checkpoint, restarts of 300 s. */
static const char SCENARIO[] =
    "local fs = require \"fleetsim\"\n"
    "return fs.scenario { name = \"goodput\", duration = \"1d\", seed = 11,\n"
    "  replications = 2000,\n"
    "  pools = {\n"
    "    a = fs.dedicated { gpu = \"H100-SXM\", count = 16, mtbf = \"4000s\", repair = \"1s\" },\n"
    "    b = fs.dedicated { gpu = \"H100-SXM\", count = 8, mtbf = \"40000s\", repair = \"1s\" },\n"
    "  },\n"
    "  workloads = {\n"
    "    ja = fs.training { steps = 10050, step = \"1s\", gpus = 8, pool = \"a\",\n"
    "                       checkpoint = { every = \"100s\", write = \"10s\" },\n"
    "                       restart = \"200s\" },\n"
    "    jb = fs.training { steps = 5000, step = \"1s\", gpus = 4, pool = \"b\",\n"
    "                       restart = \"300s\" },\n"
    "  },\n"
    "}\n";

static const sim_stat *job_metric(const run_results *r, const char *job, const char *name)
{
    const sim_metric *m = sim_metrics_find(&r->metrics, "job", job, name);
    cr_assert_not_null(m, "no metric job/%s/%s", job, name);
    return &m->replications;
}

/* The closed form within 3 standard errors of the simulated mean (the simulation is
 * seeded: this is one fixed sample), and that interval tight enough to refute the
 * expectation with failures that spare the restarts (alt_s) or a first-order formula. */
static void expect_within(const sim_stat *s, double closed, double alt, const char *what)
{
    double se = sim_stat_sd(s) / sqrt((double)s->n);
    cr_expect(fabs(s->mean - closed) <= 3 * se, "%s: simulated %.6g +- %.3g (3 SE), closed "
              "form %.6g", what, s->mean, 3 * se, closed);
    if (!isnan(alt))
        cr_expect(fabs(s->mean - alt) > 6 * se, "%s: %.6g is as close as the closed form",
                  what, alt);
    cr_log_info("%s: simulated %.6g (95%% CI +- %.3g, n %llu), closed form %.6g", what,
                s->mean, 1.96 * se, (unsigned long long)s->n, closed);
}

Test(goodput, the_closed_form_is_the_mean_of_simulated_training_jobs, .timeout = 120)
{
    char *dir = scratch_dir();
    char *path = scratch_file(dir, "goodput.lua", SCENARIO);
    scenario sc;
    char err[1024];
    scenario_load_options options = { 0 };
    cr_assert_eq(scenario_load(path, &options, &sc, err, sizeof err), 0, "%s", err);
    run_results r;
    cr_assert_eq(scenario_run(&sc, NULL, &r, err, sizeof err), 0, "%s", err);
    struct {
        const char *job;
        goodput_result g;
        double alt_s; /* failures do not strike during the restart: per stage,
                       * (e^{lambda b} - 1) / lambda + (e^{lambda b} - 1) R */
    } jobs[2] = {
        { "ja", expect(10050, 8, 4000, 100, 10, 200), 0 },
        { "jb", expect(5000, 4, 40000, 0, 0, 300), 0 },
    };
    double lambda = 8 / 4000.0;
    jobs[0].alt_s = 100 * expm1(lambda * 110) * (1 / lambda + 200)
                    + expm1(lambda * 50) * (1 / lambda + 200);
    jobs[1].alt_s = NAN; /* a difference of 0.05%: not resolved here */
    cr_expect_float_eq(jobs[0].g.wall_s, 18433.6155, 1e-3, "hand: %.10g", jobs[0].g.wall_s);
    cr_expect_float_eq(jobs[0].alt_s, 17298.9908, 1e-3, "hand: %.10g", jobs[0].alt_s);
    for (int i = 0; i < 2; i++) {
        const char *j = jobs[i].job;
        const sim_stat *done = job_metric(&r, j, "completed");
        cr_assert_eq(done->n, 2000);
        cr_assert_eq(done->min, 1, "%s: every replication completes", j);
        cr_expect_eq(job_metric(&r, j, "wait_s")->max, 0, "%s: restarts at once on spares", j);
        cr_expect_eq(job_metric(&r, j, "start_s")->max, 0);
        char what[64];
        snprintf(what, sizeof what, "%s wall time (s)", j);
        expect_within(job_metric(&r, j, "end_s"), jobs[i].g.wall_s, jobs[i].alt_s, what);
        snprintf(what, sizeof what, "%s GPU-hours", j);
        expect_within(job_metric(&r, j, "gpu_hours"), jobs[i].g.gpu_hours, NAN, what);
        snprintf(what, sizeof what, "%s failures", j);
        expect_within(job_metric(&r, j, "failures"), jobs[i].g.failures, NAN, what);
    }
    /* a first-order formula, W + n w over 1 - lambda (R + (tau + w) / 2): 22,551 s */
    const sim_stat *ja = job_metric(&r, "ja", "end_s");
    double first_order = (10050 + 100 * 10) / (1 - lambda * (200 + 55));
    cr_expect(fabs(ja->mean - first_order) > 6 * sim_stat_sd(ja) / sqrt((double)ja->n));
    run_results_release(&r);
    scenario_release(&sc);
    free(path);
    scratch_remove_dir(dir);
}

/* ---- estimate's defaults ------------------------------------------------------------- */

Test(goodput, estimate_prices_failures_with_the_sourced_defaults, .init = test_catalog_setup,
     .fini = test_catalog_teardown)
{
    /* Llama-3-8B on 64 H100s: the defaults are Llama 3's MTBF (16,384 x 54 x 24 / 419 =
     * 50,677 GPU-hours), a 10 min restart, the 8.03e9 x 14 bytes of state written at
     * 2 TB/s / 16,384 a GPU, and Young's interval in whole steps */
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    estimate_request req = { .gpus = 64, .prec = PREC_BF16, .batch = 1, .prompt = 512,
                             .output = 256, .train_tokens = 4.5e11, .seq_len = 4096,
                             .global_batch = 512 };
    estimate_result r;
    char err[512];
    cr_assert_eq(estimate_run(m, d, &req, &r, err, sizeof err), 0, "%s", err);
    cr_assert(r.train_fits);
    const goodput_inputs *in = &r.goodput_in;
    cr_expect_float_eq(in->mtbf_s / 3600, 50677.0, 0.1);
    cr_expect_float_eq(in->restart_s, 600.0, 0);
    cr_expect_float_eq(r.checkpoint_bytes, r.params * 14, 1);
    cr_expect_float_eq(in->write_s, r.params * 14 / (64 * 2e12 / 16384), 1e-9);
    cr_expect_float_eq(in->work_s, r.train_s, 0);
    double young = sqrt(2 * in->write_s * in->mtbf_s / 64);
    double steps = in->every_s / r.train.step_s;
    cr_expect_float_eq(steps, round(steps), 1e-9, "whole steps: %g", steps);
    cr_expect(fabs(in->every_s - young) <= r.train.step_s / 2 + 1e-9, "every %g, Young %g",
              in->every_s, young);
    goodput_result g = goodput_expect(in);
    cr_expect_float_eq(r.goodput.wall_s, g.wall_s, 0);
    cr_expect(r.goodput.wall_s > r.train_s && r.goodput.gpu_hours > r.train_gpu_hours);
    cr_expect(r.goodput.goodput > 0.99 && r.goodput.goodput < 1, "%g", r.goodput.goodput);
    /* figures given replace the defaults; no failures and no checkpoints: productive */
    req.mtbf_given = req.every_given = req.restart_given = req.write_given = true;
    req.mtbf_s = 0;
    req.checkpoint_every_s = 0;
    req.checkpoint_write_s = 120;
    req.restart_s = 60;
    cr_assert_eq(estimate_run(m, d, &req, &r, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(r.goodput.wall_s, r.train_s, 1e-9 * r.train_s);
    cr_expect_float_eq(r.goodput.gpu_hours, r.train_gpu_hours, 1e-9 * r.train_gpu_hours);
    cr_expect_float_eq(r.goodput_in.write_s, 120.0, 0);
    cr_expect_float_eq(r.goodput_in.restart_s, 60.0, 0);
    req.restart_s = -1;
    cr_expect_eq(estimate_run(m, d, &req, &r, err, sizeof err), -1);
    cr_expect_str_eq(err, "--restart must be a finite number >= 0, got -1");
}

/* The value of row `metric` of estimate's CSV, or NaN. */
static double csv_value(const char *csv, const char *metric)
{
    char key[96];
    snprintf(key, sizeof key, "\n%s,", metric);
    const char *at = strstr(csv, key);
    return at ? strtod(at + strlen(key), NULL) : NAN;
}

Test(goodput, the_command_line_takes_the_assumptions_and_prints_both_figures)
{
    char *out = NULL, *err = NULL;
    /* the job of scenarios/training_week.lua: 64 H100s, hourly checkpoints of 2 min,
     * 10 min restarts, an MTBF of 50,000 h */
    const char *job = "estimate --model llama-3-8b --gpu H100-SXM --gpus 64 --precision bf16 "
                      "--train-tokens 4.5e11 --seq 4096 --global-batch 512";
    cr_assert_eq(cli_run(&out, &err, "%s --mtbf 50000h --checkpoint-every 1h "
                         "--checkpoint-write 2m --restart 10m --csv", job), 0, "%s", err);
    double days = csv_value(out, "train_days"), work = days * 86400;
    cr_expect_float_eq(csv_value(out, "train_mtbf_gpu_hours"), 50000.0, 1e-9);
    cr_expect_float_eq(csv_value(out, "train_checkpoint_every_s"), 3600.0, 0);
    cr_expect_float_eq(csv_value(out, "train_checkpoint_write_s"), 120.0, 0);
    cr_expect_float_eq(csv_value(out, "train_restart_s"), 600.0, 0);
    goodput_result g = expect(work, 64, 50000 * 3600.0, 3600, 120, 600);
    cr_expect_float_eq(csv_value(out, "train_expected_days"), g.wall_s / 86400, 1e-9);
    cr_expect_float_eq(csv_value(out, "train_expected_gpu_hours"), g.gpu_hours, 1e-6);
    cr_expect_float_eq(csv_value(out, "train_goodput"), g.goodput, 1e-12);
    cr_expect_float_eq(csv_value(out, "train_failures"), g.failures, 1e-9);
    cr_expect_float_eq(csv_value(out, "train_checkpoint_days"), g.checkpoint_s / 86400, 1e-12);
    cr_expect(g.goodput > 0.96 && g.goodput < 0.97, "goodput %g", g.goodput);
    /* the text: both figures side by side, and where each assumption comes from */
    cr_assert_eq(cli_run(&out, &err, "%s", job), 0, "%s", err);
    cr_expect(strstr(out, "  time                  productive     expected\n") != NULL, "%s", out);
    cr_expect(strstr(out, "(Llama 3: 419 unexpected interruptions in 54 days on 16,384 H100s)")
              != NULL, "%s", out);
    cr_expect(strstr(out, "Young's optimum") != NULL, "%s", out);
    cr_assert_eq(cli_run(&out, &err, "%s --mtbf 0 --checkpoint-every 0 --csv", job), 0);
    cr_expect_float_eq(csv_value(out, "train_expected_days"), csv_value(out, "train_days"), 0);
    cr_expect_float_eq(csv_value(out, "train_goodput"), 1.0, 0);
    /* mistakes name the option and the value */
    cr_expect_eq(cli_run(&out, &err, "%s --restart 10x", job), 2);
    cr_expect_str_eq(err, "fleetsim estimate: --restart expects a duration such as 90s, 10m or "
                     "2h, got '10x'\n");
    cr_expect_eq(cli_run(&out, &err, "%s --checkpoint-every -1h", job), 2);
    cr_expect_str_eq(err, "fleetsim estimate: --checkpoint-every expects a duration such as "
                     "90s, 10m or 2h (or auto), got '-1h'\n");
    cr_expect_eq(cli_run(&out, &err, "%s --straggler -0.1", job), 2);
    free(out);
    free(err);
}

Test(goodput, an_interval_past_the_run_is_no_checkpoint_at_all)
{
    /* 1,000 s of work on 8 GPUs at a per-GPU MTBF of 8,000 s (lambda 1e-3): an interval
     * of 1e300 s writes nothing, so the run is one stage, e^{lambda W} - 1 over lambda,
     * (e - 1) x 1,000 s; not 0 x infinity */
    goodput_inputs in = { .work_s = 1000, .gpus = 8, .mtbf_s = 8000, .every_s = 1e300,
                          .write_s = 10, .restart_s = 0 };
    goodput_result r = goodput_expect(&in);
    cr_expect_eq(r.checkpoints, 0);
    cr_expect_float_eq(r.wall_s, 1000 * (exp(1) - 1), 1e-9 * r.wall_s);
}
