/* Fractional-GPU task replay: the policies place hand-made tasks where a hand computation
 * says, the queue and the measures match hand-computed timelines, bad rows are reported
 * by file and row, and the OpenB trace (Alibaba cluster-trace-gpu-v2023, "Beware of
 * Fragmentation", USENIX ATC 2023) is read and replayed whole. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/gpu_tasks_load.h"
#include "lua/sandbox.h"
#include "models/gpu_tasks.h"
#include "support/scratch.h"

#define DATA "tests/data/"
#define OPENB_NODES "scenarios/traces/openb_node_list_gpu_node.csv"
#define OPENB_TASKS "scenarios/traces/openb_pod_list_default.csv"
#define TASK_HEADER "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase," \
                    "creation_time,deletion_time,scheduled_time\n"
#define NODE_HEADER "sn,cpu_milli,memory_mib,gpu,model\n"

static char *dir;
static cluster_trace trace;
static sim_engine *engine;
static gpu_tasks *replay;

static void setup(void) { dir = scratch_dir(); }
static void teardown(void)
{
    gpu_tasks_free(replay);
    replay = NULL;
    sim_engine_free(engine);
    engine = NULL;
    cluster_trace_release(&trace);
    scratch_remove_dir(dir);
}
TestSuite(gpu_tasks, .init = setup, .fini = teardown);

static void read_trace(const char *nodes, const char *tasks)
{
    char err[512];
    cluster_trace_release(&trace);
    cr_assert_eq(cluster_trace_read(nodes, tasks, &trace, err, sizeof err), 0, "%s", err);
}

/* A new replay of `trace` with the policy (and options), started. */
static void start(gpu_placement p, const gpu_tasks_options *options)
{
    gpu_tasks_options o = options ? *options : gpu_tasks_options_default();
    o.placement = p;
    char err[512];
    gpu_tasks_free(replay);
    sim_engine_free(engine);
    engine = sim_engine_create();
    replay = gpu_tasks_create(engine, &trace, &o, err, sizeof err);
    cr_assert_not_null(replay, "%s", err);
    gpu_tasks_start(replay);
}

static void expect_on(size_t task, int node, uint64_t gpus)
{
    uint64_t mask;
    cr_expect_eq(gpu_tasks_node_of(replay, task, &mask), node, "task %zu: node %d, expected %d",
                 task, gpu_tasks_node_of(replay, task, NULL), node);
    cr_expect_eq(mask, gpus, "task %zu: GPUs %#llx, expected %#llx", task,
                 (unsigned long long)mask, (unsigned long long)gpus);
}

/* Nodes n0 (2 GPUs), n1 and n2 (1 GPU); shares of 300, 500 and 700 thousandths arrive at
 * 0, 1, 2 s.  The measure is those three shares: a free piece x is a fragment to
 * #(shares > x) of them (3 below 300, 2 below 500, 1 below 700), so F of a GPU with x
 * free is x times that count.
 * - first fit: all on n0: 300 and 500 on GPU 0, 700 on GPU 1 (200 free on GPU 0 is too
 *   little).
 * - best fit: 300 on n1 (leaves 700 against n0's 1,700), 500 on n1 (leaves 200), 700 on
 *   n2 (300 against n0's 1,300).
 * - fragmentation-aware: 300: every choice leaves 700, a fragment to no share: a tie, as
 *   best fit: n1.  500: n0 or n2 leave 500 (F +500), n1 leaves 200 (F +600); n0 and n2
 *   tie, best fit: n2.  700: n1 (700 -> 0, F +0) beats a fresh GPU (1,000 -> 300, +600).
 * - whole GPUs: each share takes a GPU, first fit: n0 GPU 0, n0 GPU 1, n1. */
Test(gpu_tasks, the_policies_place_where_hand_computed)
{
    read_trace(DATA "gpu_tasks_policy_nodes.csv", DATA "gpu_tasks_policy_tasks.csv");
    start(PLACE_FIRST_FIT, NULL);
    sim_engine_run_until(engine, 2.5);
    expect_on(0, 0, 1);
    expect_on(1, 0, 1);
    expect_on(2, 0, 2);
    /* left: n0 200 and 300 free: fragments 200 to all three shares, 300 to two: mean
     * (200 + 500 + 500) / 3 = 400 of 4,000 */
    cr_expect_float_eq(gpu_tasks_fragmentation(replay), 0.1, 1e-12);

    start(PLACE_BEST_FIT, NULL);
    sim_engine_run_until(engine, 2.5);
    expect_on(0, 1, 1);
    expect_on(1, 1, 1);
    expect_on(2, 2, 1);
    cr_expect_float_eq(gpu_tasks_fragmentation(replay), 0.1, 1e-12); /* 200 and 300 free */

    start(PLACE_FRAGMENTATION_AWARE, NULL);
    sim_engine_run_until(engine, 2.5);
    expect_on(0, 1, 1);
    expect_on(1, 2, 1);
    expect_on(2, 1, 1);
    /* left: 500 free on n2, a fragment to the 700 share only: 500 / 3 of 4,000 */
    cr_expect_float_eq(gpu_tasks_fragmentation(replay), 500.0 / 3 / 4000, 1e-12);

    start(PLACE_WHOLE_GPUS, NULL);
    sim_engine_run_until(engine, 2.5);
    expect_on(0, 0, 1);
    expect_on(1, 0, 2);
    expect_on(2, 1, 1);
    cr_expect_float_eq(gpu_tasks_fragmentation(replay), 0, 1e-12); /* one whole GPU free */
}

Test(gpu_tasks, fragmentation_of_one_node_against_one_task)
{
    read_trace(DATA "gpu_tasks_policy_nodes.csv", DATA "gpu_tasks_policy_tasks.csv");
    start(PLACE_FIRST_FIT, NULL);
    sim_engine_run_until(engine, 2.5); /* n0: GPU 0 200 free, GPU 1 300 free */
    const gpu_fleet *f = gpu_tasks_fleet(replay);
    gpu_demand share = { 1000, 1024, 1, 250, ~0ull }, whole = { 1000, 1024, 1, 1000, ~0ull };
    gpu_demand huge_cpu = { 40000, 1024, 1, 100, ~0ull }, other_model = { 1000, 1024, 1, 100, 0 };
    cr_expect_eq(gpu_fleet_node_fragmentation_milli(f, 0, &share), 200);
    cr_expect_eq(gpu_fleet_node_fragmentation_milli(f, 0, &whole), 500);
    cr_expect_eq(gpu_fleet_node_fragmentation_milli(f, 0, &huge_cpu), 500);
    cr_expect_eq(gpu_fleet_node_fragmentation_milli(f, 0, &other_model), 500);
    cr_expect_eq(gpu_fleet_node_fragmentation_milli(f, 1, &whole), 0);
    cr_expect_eq(gpu_fleet_gpu_free_milli(f, 0, 0), 200);
    cr_expect_eq(gpu_fleet_gpu_free_milli(f, 0, 1), 300);
}

/* One GPU.  a (600, 0-10 s); b (600, at 1 s, 5 s) waits for a; c (300, at 2 s, 4 s) fits
 * beside a at once; d (a whole GPU, at 3 s, 1 s) waits.  c leaves at 6: 400 free, enough
 * for neither.  a leaves at 10: b (first in line) starts, d still waits; b leaves at 15
 * and d runs 15-16.  Pending: 0, 9, 0, 12 s. */
Test(gpu_tasks, the_queue_and_its_measures)
{
    read_trace(DATA "gpu_tasks_one_gpu_nodes.csv", DATA "gpu_tasks_queue_tasks.csv");
    start(PLACE_FIRST_FIT, NULL);
    sim_engine_run_until(engine, 3.5);
    cr_expect_eq(gpu_tasks_waiting(replay), 2);
    /* b and d wait and fit nowhere: the 100 free thousandths are all fragments */
    cr_expect_float_eq(gpu_tasks_fragmentation(replay), 0.1, 1e-12);
    sim_engine_run_until(engine, 10);
    gpu_tasks_bucket_stats b = gpu_tasks_bucket(replay, 10);
    /* allocated: 600 over 10 s and 300 over 4 s; waiting: b 9 s, d 7 s; fragmentation:
     * 0-1 nothing waits, 400 free: against shares 600, 600, 300 and one whole GPU,
     * (400 + 400 + 0 + 400) / 4 = 300, 0.3; then the idle share while a task waits:
     * 0.4 (1-2), 0.1 (2-6), 0.4 (6-10) */
    cr_expect_float_eq(b.allocation_rate, (6000 + 1200) / 10.0 / 1000, 1e-12);
    cr_expect_float_eq(b.tasks_pending, 16 / 10.0, 1e-12);
    cr_expect_float_eq(b.fragmentation, (0.3 + 0.4 + 0.4 + 1.6) / 10, 1e-12);
    cr_expect_eq(b.arrived, 4);
    cr_expect_eq(b.placed, 3); /* a, c, and b at 10 */
    sim_engine_run_until(engine, 20);
    cr_expect_float_eq(gpu_tasks_pending_s(replay, 0), 0, 0);
    cr_expect_float_eq(gpu_tasks_pending_s(replay, 1), 9, 1e-12);
    cr_expect_float_eq(gpu_tasks_pending_s(replay, 2), 0, 0);
    cr_expect_float_eq(gpu_tasks_pending_s(replay, 3), 12, 1e-12);
    sim_metrics m;
    sim_metrics_init(&m);
    gpu_tasks_record_metrics(&m, "openb", replay, 20);
    const struct { const char *name; double value, tolerance; } expected[] = {
        { "tasks_arrived", 4, 0 }, { "tasks_placed", 4, 0 }, { "tasks_completed", 4, 0 },
        { "tasks_pending_at_end", 0, 0 }, { "tasks_rejected", 0, 0 },
        { "allocation_rate_mean", (6000 + 1200 + 3000 + 1000) / 20.0 / 1000, 1e-12 },
        { "gpu_allocation_max", 1, 0 },
        { "gpu_requested_mean", 0.56, 1e-12 },
        { "pending_mean_s", 21 / 4.0, 1e-12 },
        { "pending_p99_s", 12, 12 * SIM_HISTOGRAM_REL_ERROR },
        { "pending_max_s", 12, 1e-12 },
        /* then 0.4 while d waits (10-15), 0 with nothing free (15-16) or all free (16-20) */
        { "fragmentation_mean", (2.7 + 0.4 * 5) / 20, 1e-12 },
        { "tasks_pending_mean", (9 + 12) / 20.0, 1e-12 },
    };
    for (size_t i = 0; i < sizeof expected / sizeof *expected; i++) {
        const sim_metric *x = sim_metrics_find(&m, "workload", "openb", expected[i].name);
        cr_assert_not_null(x, "%s", expected[i].name);
        cr_expect_float_eq(x->replications.mean, expected[i].value, expected[i].tolerance,
                           "%s: %.17g, expected %.17g", expected[i].name, x->replications.mean,
                           expected[i].value);
    }
    sim_metrics_release(&m);
}

/* The same tasks on whole dedicated GPUs: c and d queue too.  a 0-10, b 10-15, c 15-19,
 * d 19-20: pending 0, 9, 13, 16 s, and the GPU is allocated all along. */
Test(gpu_tasks, whole_gpus_queue_longer)
{
    read_trace(DATA "gpu_tasks_one_gpu_nodes.csv", DATA "gpu_tasks_queue_tasks.csv");
    start(PLACE_WHOLE_GPUS, NULL);
    sim_engine_run_until(engine, 20);
    cr_expect_float_eq(gpu_tasks_pending_s(replay, 2), 13, 1e-12);
    cr_expect_float_eq(gpu_tasks_pending_s(replay, 3), 16, 1e-12);
    const gpu_tasks_stats *s = gpu_tasks_get_stats(replay);
    cr_expect_float_eq(sim_stat_mean(&s->pending_s), (0 + 9 + 13 + 16) / 4.0, 1e-12);
    cr_expect_float_eq(sim_timeavg_mean(&s->allocation, 20), 1, 1e-12);
    cr_expect_float_eq(sim_timeavg_mean(&s->requested, 20), (6000 + 3000 + 1200 + 1000) / 20.0 / 1000,
                       1e-12);
}

/* Four shares of 400 on a node of two GPUs: two to a GPU when shared, two waiting when
 * each needs a GPU of its own. */
Test(gpu_tasks, whole_gpus_need_more_gpus)
{
    char *nodes = scratch_file(dir, "n.csv", NODE_HEADER "n0,8000,16384,2,T4\n");
    char *tasks = scratch_file(dir, "t.csv", TASK_HEADER
                               "a,1000,1024,1,400,,LS,Running,0,10,0\n"
                               "b,1000,1024,1,400,,LS,Running,0,10,0\n"
                               "c,1000,1024,1,400,,LS,Running,0,10,0\n"
                               "d,1000,1024,1,400,,LS,Running,0,10,0\n");
    read_trace(nodes, tasks);
    start(PLACE_FIRST_FIT, NULL);
    sim_engine_run_until(engine, 1);
    cr_expect_eq(gpu_tasks_waiting(replay), 0);
    expect_on(0, 0, 1);
    expect_on(1, 0, 1);
    expect_on(2, 0, 2);
    expect_on(3, 0, 2);
    start(PLACE_WHOLE_GPUS, NULL);
    sim_engine_run_until(engine, 1);
    cr_expect_eq(gpu_tasks_waiting(replay), 2);
    sim_engine_run_until(engine, 30);
    cr_expect_float_eq(gpu_tasks_pending_s(replay, 3), 10, 1e-12);
    free(nodes);
    free(tasks);
}

/* A CPU-only task holding all of a node's CPU strands its GPU: a GPU task waits for it,
 * and before that the idle GPU already counts as fragmented (no GPU task could use it). */
Test(gpu_tasks, cpu_tasks_strand_gpus)
{
    char *nodes = scratch_file(dir, "n.csv", NODE_HEADER "n0,4000,16384,1,T4\n");
    char *tasks = scratch_file(dir, "t.csv", TASK_HEADER
                               "cpu,4000,1024,0,0,,BE,Running,0,10,0\n"
                               "gpu,1000,1024,1,500,,LS,Running,1,6,1\n");
    read_trace(nodes, tasks);
    start(PLACE_FRAGMENTATION_AWARE, NULL);
    sim_engine_run_until(engine, 0.5);
    cr_expect_float_eq(gpu_tasks_fragmentation(replay), 1, 0);
    sim_engine_run_until(engine, 20);
    cr_expect_float_eq(gpu_tasks_pending_s(replay, 1), 9, 1e-12);
    gpu_tasks_options o = gpu_tasks_options_default();
    o.cpu_tasks = false;
    start(PLACE_FRAGMENTATION_AWARE, &o);
    sim_engine_run_until(engine, 20);
    cr_expect_float_eq(gpu_tasks_pending_s(replay, 1), 0, 0);
    cr_expect_eq(gpu_tasks_get_stats(replay)->arrived, 1);
    free(nodes);
    free(tasks);
}

/* A task for a GPU model the fleet lacks, or on more GPUs than any node has, is refused
 * at arrival; "V100M16|T4" accepts the T4; options drop CPU-only and never-scheduled
 * tasks. */
Test(gpu_tasks, what_is_replayed_and_what_is_refused)
{
    read_trace(DATA "gpu_tasks_one_gpu_nodes.csv", DATA "gpu_tasks_mixed_tasks.csv");
    cr_expect_eq(trace.tasks[1].phase, PHASE_PENDING);
    cr_expect(!trace.tasks[1].scheduled);
    cr_expect_float_eq(trace.tasks[1].duration_s, 20, 0); /* deletion - creation */
    cr_expect_eq(trace.tasks[3].phase, PHASE_FAILED);
    start(PLACE_BEST_FIT, NULL);
    sim_engine_run_until(engine, 1);
    const gpu_tasks_stats *s = gpu_tasks_get_stats(replay);
    cr_expect_eq(s->arrived, 5);
    cr_expect_eq(s->rejected, 2);
    cr_expect_eq(s->placed, 3);
    expect_on(3, 0, 1);
    gpu_tasks_options o = gpu_tasks_options_default();
    o.unscheduled = false;
    start(PLACE_BEST_FIT, &o);
    sim_engine_run_until(engine, 1);
    cr_expect_eq(gpu_tasks_get_stats(replay)->arrived, 4);
    cr_expect_eq(gpu_tasks_node_of(replay, 1, NULL), -1);
}

static void expect_read_error(const char *nodes_text, const char *tasks_text, bool in_nodes,
                              const char *message)
{
    char *nodes = scratch_file(dir, "nodes.csv", nodes_text);
    char *tasks = scratch_file(dir, "tasks.csv", tasks_text);
    char err[512], expected[512];
    cluster_trace t;
    cr_expect_eq(cluster_trace_read(nodes, tasks, &t, err, sizeof err), -1, "accepted: %s",
                 in_nodes ? nodes_text : tasks_text);
    cluster_trace_release(&t);
    snprintf(expected, sizeof expected, "%s:%s", in_nodes ? nodes : tasks, message);
    cr_expect_str_eq(err, expected);
    free(nodes);
    free(tasks);
}

static void expect_task_error(const char *row, const char *message)
{
    char text[512];
    snprintf(text, sizeof text, "%sok,1000,1024,1,500,,LS,Running,0,10,0\n%s", TASK_HEADER, row);
    expect_read_error(NODE_HEADER "n0,8000,16384,1,T4\n", text, false, message);
}

Test(gpu_tasks, bad_rows_are_reported_with_file_row_and_column)
{
    const char *tasks = TASK_HEADER "ok,1000,1024,1,500,,LS,Running,0,10,0\n";
    expect_read_error(NODE_HEADER "n0,lots,16384,1,T4\n", tasks, true,
                      "row 2: cpu_milli: expected a whole number from 0 to 4294967295, got \"lots\"");
    expect_read_error(NODE_HEADER "n0,8000,16384,1,T4\nn1,8000,16384,65,T4\n", tasks, true,
                      "row 3: gpu: expected a whole number from 0 to 64, got \"65\"");
    expect_read_error("sn,cpu_milli,memory_mib,model\nn0,8000,16384,T4\n", tasks, true,
                      "row 1: no column \"gpu\" in the header");
    expect_read_error(NODE_HEADER "n0,8000,16384,1\n", tasks, true,
                      "row 2: 4 fields where the header has 5");
    expect_read_error(NODE_HEADER, tasks, true, " the file has no rows");
    expect_task_error("x,-5,1024,1,500,,LS,Running,0,10,0\n",
                      "row 3: cpu_milli: expected a whole number from 0 to 4294967295, got \"-5\"");
    expect_task_error("x,1000,1024,1,1500,,LS,Running,0,10,0\n",
                      "row 3: gpu_milli: expected 1 to 1000 thousandths of a GPU, got \"1500\"");
    expect_task_error("x,1000,1024,1,0,,LS,Running,0,10,0\n",
                      "row 3: gpu_milli: expected 1 to 1000 thousandths of a GPU, got \"0\"");
    expect_task_error("x,1000,1024,2,500,,LS,Running,0,10,0\n",
                      "row 3: gpu_milli: a task on 2 GPUs takes them whole: expected 1000, got \"500\"");
    expect_task_error("x,1000,1024,0,300,,LS,Running,0,10,0\n",
                      "row 3: gpu_milli: expected 0 when num_gpu is 0, got \"300\"");
    expect_task_error("x,1000,1024,1,500,,LS,Running,20,10,20\n",
                      "row 3: deletion_time: 10 is before scheduled_time 20");
    expect_task_error("x,1000,1024,1,500,,LS,Pending,20,10,\n",
                      "row 3: deletion_time: 10 is before creation_time 20");
    expect_task_error("x,1000,1024,1,500,,LS,Running,20,30,10\n",
                      "row 3: scheduled_time: 10 is before creation_time 20");
    expect_task_error("x,1000,1024,1,500,,LS,Running,soon,30,10\n",
                      "row 3: creation_time: expected a time in seconds >= 0, got \"soon\"");
    expect_task_error("x,1000,1024,1,500,,LS,Lost,0,30,0\n",
                      "row 3: pod_phase: expected Running, Succeeded, Failed or Pending, got \"Lost\"");
    expect_read_error(NODE_HEADER "n0,8000,16384,1,T4\n",
                      "name,cpu_milli,memory_mib,num_gpu,creation_time,deletion_time\n", false,
                      "row 1: no column \"gpu_milli\" in the header");
}

Test(gpu_tasks, options_are_checked)
{
    read_trace(DATA "gpu_tasks_one_gpu_nodes.csv", DATA "gpu_tasks_queue_tasks.csv");
    engine = sim_engine_create();
    gpu_tasks_options o = gpu_tasks_options_default();
    char err[256];
    o.nodes_fraction = 0.5; /* of one node: floor(0.5) = 0 */
    cr_expect_null(gpu_tasks_create(engine, &trace, &o, err, sizeof err));
    cr_expect_str_eq(err, "nodes_fraction 0.5 keeps none of the 1 nodes");
    o.nodes_fraction = 1;
    o.speedup = 0;
    cr_expect_null(gpu_tasks_create(engine, &trace, &o, err, sizeof err));
    cr_expect_str_eq(err, "speedup: expected a positive number, got 0");
    gpu_placement p;
    cr_expect_eq(gpu_placement_parse("fragmentation_aware", &p), 0);
    cr_expect_eq(p, PLACE_FRAGMENTATION_AWARE);
    cr_expect_eq(gpu_placement_parse("worst_fit", &p), -1);
}

/* OpenB: 8,152 tasks and 1,213 nodes with 6,212 GPUs (counted with a CSV reader in another
 * language).  On the whole node list, every task is placed at its arrival under every
 * policy: the allocation is then the demand itself, whose peak (64,590 thousandths,
 * departures first at equal times) and time average over [0, 12,902,960 s] (the last
 * departure: 185,395,450,660 thousandth-seconds) were computed independently too. */
Test(gpu_tasks, the_openb_trace_fits_the_real_fleet)
{
    read_trace(OPENB_NODES, OPENB_TASKS);
    cr_assert_eq(trace.nnodes, 1213);
    cr_assert_eq(trace.ntasks, 8152);
    size_t gpus = 0, phases[4] = { 0 }, cpu_only = 0, shares = 0;
    for (size_t i = 0; i < trace.nnodes; i++)
        gpus += trace.nodes[i].gpus;
    for (size_t i = 0; i < trace.ntasks; i++) {
        phases[trace.tasks[i].phase]++;
        cpu_only += trace.tasks[i].num_gpu == 0;
        shares += trace.tasks[i].num_gpu == 1 && trace.tasks[i].gpu_milli < 1000;
    }
    cr_expect_eq(gpus, 6212);
    cr_expect_eq(phases[PHASE_RUNNING], 5193);
    cr_expect_eq(phases[PHASE_SUCCEEDED], 192);
    cr_expect_eq(phases[PHASE_FAILED], 1870);
    cr_expect_eq(phases[PHASE_PENDING], 897);
    cr_expect_eq(cpu_only, 1088);
    cr_expect_eq(shares, 3078);
    for (int p = 0; p < GPU_PLACEMENT_COUNT; p++) {
        start((gpu_placement)p, NULL);
        cr_expect_float_eq(gpu_tasks_trace_end_s(replay), 12902960, 0);
        sim_engine_run_until(engine, 12902960);
        const gpu_tasks_stats *s = gpu_tasks_get_stats(replay);
        cr_expect_eq(s->placed, 8152, "%s", gpu_placement_name(p));
        cr_expect_eq(s->pending_s.max, 0, "%s", gpu_placement_name(p));
        if (p == PLACE_WHOLE_GPUS) /* shares hold whole GPUs: more allocated */
            cr_expect_gt(s->allocation.max, 64590 / 6212e3);
        else
            cr_expect_float_eq(s->allocation.max, 64590 / 6212e3, 1e-15);
        cr_expect_float_eq(sim_timeavg_mean(&s->requested, 12902960),
                           185395450660.0 / 6212e3 / 12902960, 1e-12);
    }
}

Test(gpu_tasks, a_fraction_of_the_fleet_keeps_its_mix)
{
    read_trace(OPENB_NODES, OPENB_TASKS);
    gpu_tasks_options o = gpu_tasks_options_default();
    o.nodes_fraction = 0.02;
    start(PLACE_FIRST_FIT, &o);
    cr_expect_eq(gpu_tasks_nodes(replay), 24); /* floor(1213 x 0.02) */
    cr_expect_eq(gpu_tasks_gpus(replay), 118);
}

/* fs.gpu_tasks { ... } as a scenario gives it (a plain table here): files relative to the
 * scenario, read at once; mistakes name the key or the file and row. */
static int convert_source(const char *scenario, const char *source, gpu_tasks_spec *spec,
                          char *err, size_t err_size)
{
    sandbox *sb = sandbox_create(false);
    cr_assert_not_null(sb);
    lua_State *L = sandbox_state(sb);
    load_context c = { .L = L, .err = err, .err_size = err_size, .scenario_path = scenario };
    cr_assert_eq(luaL_loadbuffer(L, source, strlen(source), "@s.lua"), LUA_OK);
    cr_assert_eq(lua_pcall(L, 0, 1, 0), LUA_OK, "%s", lua_tostring(L, -1));
    fields_object w;
    cr_assert_eq(fields_object_open(&c, -1, "workloads.openb", "", NULL, "a workload", &w), 0);
    int status = gpu_tasks_load_convert(&c, &w, spec);
    sandbox_free(sb);
    return status;
}

Test(gpu_tasks, the_scenario_constructor)
{
    gpu_tasks_spec spec;
    char err[512];
    cr_assert_eq(convert_source(DATA "s.lua", "return { nodes = 'gpu_tasks_one_gpu_nodes.csv', "
                                "tasks = 'gpu_tasks_queue_tasks.csv', placement = "
                                "'fragmentation_aware', nodes_fraction = 1, speedup = 2, "
                                "cpu_tasks = false }", &spec, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(spec.nodes_path, DATA "gpu_tasks_one_gpu_nodes.csv");
    cr_expect_eq(spec.options.placement, PLACE_FRAGMENTATION_AWARE);
    cr_expect_float_eq(spec.options.speedup, 2, 0);
    cr_expect(!spec.options.cpu_tasks);
    cr_expect(spec.options.unscheduled);
    cr_expect_eq(spec.trace.ntasks, 4);
    gpu_tasks_spec_release(&spec);

    cr_expect_eq(convert_source(DATA "s.lua", "return { nodes = 'gpu_tasks_one_gpu_nodes.csv', "
                                "tasks = 'gpu_tasks_queue_tasks.csv', placement = 'worst_fit' }",
                                &spec, err, sizeof err), -1);
    cr_expect(strstr(err, "workloads.openb.placement: expected one of \"first_fit\", "
                     "\"best_fit\", \"fragmentation_aware\", \"whole_gpus\", got \"worst_fit\""),
              "%s", err);
    gpu_tasks_spec_release(&spec);

    cr_expect_eq(convert_source(DATA "s.lua", "return { nodes = 'gpu_tasks_one_gpu_nodes.csv', "
                                "tasks = 'gpu_tasks_queue_tasks.csv', nodes_fraction = 0 }",
                                &spec, err, sizeof err), -1);
    cr_expect(strstr(err, "workloads.openb.nodes_fraction"), "%s", err);
    gpu_tasks_spec_release(&spec);

    cr_expect_eq(convert_source(DATA "s.lua", "return { nodes = 'gpu_tasks_one_gpu_nodes.csv', "
                                "tasks = 'gpu_tasks_queue_tasks.csv', placment = 'best_fit' }",
                                &spec, err, sizeof err), -1);
    cr_expect(strstr(err, "placement"), "no hint: %s", err);
    gpu_tasks_spec_release(&spec);

    char *scenario = scratch_file(dir, "s.lua", "");
    char *nodes = scratch_file(dir, "n.csv", NODE_HEADER "n0,8000,16384,1,T4\n");
    char *tasks = scratch_file(dir, "t.csv", TASK_HEADER "x,1000,1024,1,500,,LS,Running,9,8,9\n");
    cr_expect_eq(convert_source(scenario, "return { nodes = 'n.csv', tasks = 't.csv' }", &spec,
                                err, sizeof err), -1);
    char expected[512];
    snprintf(expected, sizeof expected, "%s:row 2: deletion_time: 8 is before scheduled_time 9",
             tasks);
    cr_expect_str_eq(err, expected);
    gpu_tasks_spec_release(&spec);
    free(scenario);
    free(nodes);
    free(tasks);
}
