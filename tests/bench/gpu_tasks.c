/* Fractional-GPU task replay speed: the OpenB trace (Alibaba cluster-trace-gpu-v2023,
 * 8,152 tasks on 1,213 nodes) replayed whole under each placement policy, on the real
 * fleet and on a shrunk, loaded one (5% of the nodes, arrivals 60 times faster) where
 * the queue is long; wall seconds per replay (best of repeats), events, peak RSS.
 * The target: the four policies together in under 2 s. */
#include <stdio.h>

#include "bench.h"
#include "models/gpu_tasks.h"

#define NODES "scenarios/traces/openb_node_list_gpu_node.csv"
#define TASKS "scenarios/traces/openb_pod_list_default.csv"

/* Best wall seconds of a whole replay; its events and waiting tasks at the end. */
static double replay_s(const cluster_trace *trace, const gpu_tasks_options *o, int repeats,
                       uint64_t *events, size_t *left_waiting)
{
    double best = 1e300;
    char err[512];
    for (int i = 0; i < repeats; i++) {
        double start = bench_now_s();
        sim_engine *e = sim_engine_create();
        gpu_tasks *t = gpu_tasks_create(e, trace, o, err, sizeof err);
        if (!t) {
            printf("WARNING: %s\n", err);
            sim_engine_free(e);
            return 0;
        }
        gpu_tasks_start(t);
        sim_engine_run(e);
        double elapsed = bench_now_s() - start;
        if (elapsed < best) {
            best = elapsed;
            *events = sim_engine_events_run(e);
            *left_waiting = gpu_tasks_waiting(t);
        }
        gpu_tasks_free(t);
        sim_engine_free(e);
    }
    return best;
}

void bench_gpu_tasks_table(int quick)
{
    cluster_trace trace;
    char err[512];
    double start = bench_now_s();
    if (cluster_trace_read(NODES, TASKS, &trace, err, sizeof err) != 0) {
        printf("WARNING: %s\n", err);
        return;
    }
    double read_s = bench_now_s() - start;
    int repeats = quick ? 1 : BENCH_REPEATS;
    printf("GPU task replay (OpenB: %zu tasks, %zu nodes; reading both files %.3f s)\n",
           trace.ntasks, trace.nnodes, read_s);
    const struct { const char *name; double fraction, speedup; } fleets[] = {
        { "real fleet", 1, 1 }, { "5% of nodes, 60x", 0.05, 60 },
    };
    for (size_t f = 0; f < sizeof fleets / sizeof *fleets; f++) {
        double total = 0;
        for (int p = 0; p < GPU_PLACEMENT_COUNT; p++) {
            gpu_tasks_options o = gpu_tasks_options_default();
            o.placement = (gpu_placement)p;
            o.nodes_fraction = fleets[f].fraction;
            o.speedup = fleets[f].speedup;
            uint64_t events = 0;
            size_t waiting = 0;
            double s = replay_s(&trace, &o, repeats, &events, &waiting);
            total += s;
            printf("  %-17s %-20s %8.4f s  %6llu events  %zu waiting at the end\n",
                   fleets[f].name, gpu_placement_name(o.placement), s,
                   (unsigned long long)events, waiting);
        }
        printf("  %-17s all four policies    %8.4f s%s\n", fleets[f].name, total,
               total < 2 ? "" : "  WARNING: over the 2 s target");
    }
    printf("  peak RSS %.1f MiB\n", bench_peak_rss_mib());
    cluster_trace_release(&trace);
}
