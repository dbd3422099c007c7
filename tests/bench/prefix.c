/* Sessions with prefix caching: 64 replicas of Llama-3-8B on H100s, chat sessions of 4
 * to 8 turns after a 1,000-token system prompt (about 2,000,000 turns in a simulated
 * hour: twice the single-pool table's rate, the disaggregated table's), a prefix cache
 * of 16-token blocks on each replica, routed least-outstanding and by prefix affinity; simulated requests per
 * second of wall time, engine events per request, and model memory after a quarter of
 * the hour and after all of it (sessions end all along: the memory must not follow
 * them). */
#include <stdio.h>

#include "bench.h"
#include "lua/catalog.h"
#include "models/serving.h"

void bench_prefix_table(int quick)
{
    catalog cat;
    char err[512];
    if (catalog_load(&cat, err, sizeof err) != 0) {
        printf("WARNING: %s\n", err);
        return;
    }
    const model_spec *m = catalog_model(&cat, "llama-3-8b");
    const device_spec *d = catalog_device(&cat, "H100-SXM");
    double duration = quick ? 60 : 3600, rate = 2e6 / 3600 / 6; /* sessions of 6 turns */
    static const system_prompt system[] = { { 1000, 1, 1 } };
    session_spec spec = { sim_dist_uniform(4, 8), sim_dist_exponential(20),
                          sim_dist_lognormal(150, 0.5) };
    serving_config c = {
        .name = "bench", .replicas = 64, .routing = ROUTE_LEAST_OUTSTANDING,
        .interarrival = sim_dist_exponential(1 / rate),
        .prompt_tokens = sim_dist_lognormal(150, 0.5),
        .output_tokens = sim_dist_lognormal(200, 0.8),
        .rtt_s = sim_dist_constant(0.03), .seed = 1, .prefix_block = 16,
        .affinity_bound = 0.25, .system_prompts = system, .nsystem_prompts = 1,
        .sessions = &spec,
    };
    c.replica = (replica_config){
        .model = m, .device = d, .profile = perf_default_profile(d), .prec = PREC_FP16,
        .kv_prec = PREC_FP16, .tp = 1, .max_batch = 256, .max_tokens = 8192,
        .chunked_prefill = true, .max_wait_s = 60,
        .kv_capacity_tokens = memory_inference(m, d, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens,
    };
    printf("sessions with prefix caching: 64 replicas, %.0f sessions/s of 4-8 turns "
           "(~%.0f turns) over %.0f simulated s\n", rate, 6 * rate * duration, duration);
    routing_policy ways[] = { ROUTE_LEAST_OUTSTANDING, ROUTE_PREFIX_AFFINITY };
    for (int w = 0; w < 2; w++) {
        c.routing = ways[w];
        double best = 1e300;
        serving_stats st = { 0 };
        sessions_stats ss = { 0 };
        uint64_t events = 0;
        size_t bytes[2] = { 0, 0 };
        for (int i = 0; i < BENCH_REPEATS; i++) {
            sim_engine *e = sim_engine_create();
            serving *s = serving_create(e, &c, err, sizeof err);
            if (!s) {
                printf("WARNING: %s\n", err);
                sim_engine_free(e);
                catalog_release(&cat);
                return;
            }
            double start = bench_now_s();
            serving_start(s);
            sim_engine_run_until(e, duration / 4);
            size_t quarter = serving_memory_bytes(s) + sim_engine_memory_bytes(e);
            sim_engine_run_until(e, duration);
            double t = bench_now_s() - start;
            if (t < best) {
                best = t;
                st = *serving_get_stats(s);
                ss = serving_sessions_stats(s);
                events = sim_engine_events_run(e);
                bytes[0] = quarter;
                bytes[1] = serving_memory_bytes(s) + sim_engine_memory_bytes(e);
            }
            serving_free(s);
            sim_engine_free(e);
        }
        printf("  %-17s %10.3g requests/s of wall time  %5.1f events/request  model %.1f MB "
               "at 1/4, %.1f MB at the end  (%llu sessions ended, prompt tokens cached %.1f%%)\n",
               routing_policy_name(c.routing), (double)st.arrived / best,
               (double)events / (double)st.arrived, bytes[0] / 1e6, bytes[1] / 1e6,
               (unsigned long long)ss.ended, 100 * st.prefix_cached_tokens / st.prompt_tokens);
    }
    printf("  peak resident memory so far: %.1f MiB\n", bench_peak_rss_mib());
    catalog_release(&cat);
}
