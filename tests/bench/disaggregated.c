/* Disaggregated serving speed: 64 prefill and 64 decode replicas of Llama-3-8B on H100s,
 * each prefill replica sending its caches over its own 50 GB/s link, Poisson traffic of
 * about 2,000,000 requests in a simulated hour (the single-pool table's lengths); simulated
 * requests per second of wall time, engine events per request, and model memory. */
#include <stdio.h>

#include "bench.h"
#include "lua/catalog.h"
#include "models/serving.h"

void bench_disaggregated_table(int quick)
{
    catalog cat;
    char err[512];
    if (catalog_load(&cat, err, sizeof err) != 0) {
        printf("WARNING: %s\n", err);
        return;
    }
    const model_spec *m = catalog_model(&cat, "llama-3-8b");
    const device_spec *d = catalog_device(&cat, "H100-SXM");
    double duration = quick ? 60 : 3600, rate = 2e6 / 3600;
    replica_config one = {
        .model = m, .device = d, .profile = perf_default_profile(d), .prec = PREC_FP16,
        .kv_prec = PREC_FP16, .tp = 1, .max_batch = 256, .max_tokens = 8192,
        .chunked_prefill = true,
        .kv_capacity_tokens = memory_inference(m, d, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens,
    };
    serving_group decode = { .role = ROLE_DECODE,
                             .fleet = { .pool_name = "decode", .replica = one, .replicas = 64,
                                        .max = 64, .rtt_s = sim_dist_constant(0.03) },
                             .routing = ROUTE_LEAST_OUTSTANDING };
    serving_config c = {
        .name = "bench", .replicas = 64, .routing = ROUTE_LEAST_OUTSTANDING,
        .interarrival = sim_dist_exponential(1 / rate),
        .prompt_tokens = sim_dist_lognormal(600, 1.0),
        .output_tokens = sim_dist_lognormal(200, 0.8),
        .rtt_s = sim_dist_constant(0.03), .seed = 1, .replica = one, .groups = &decode,
        .ngroups = 1,
        .link = { 50e9, 10e-6, KV_LINK_PER_REPLICA, 0 },
        .kv_bytes_per_token = model_kv_bytes_per_token(m, PREC_FP16),
    };
    printf("disaggregated serving: 64 prefill + 64 decode replicas, ~%.0f requests over %.0f "
           "simulated s\n", rate * duration, duration);
    for (int mode = 0; mode < (quick ? 1 : 2); mode++) {
        c.replica.reference = decode.fleet.replica.reference = mode == 1;
        double best = 1e300;
        serving_stats st = { 0 };
        uint64_t events = 0;
        size_t bytes = 0;
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
            sim_engine_run_until(e, mode ? duration / 10 : duration);
            double t = bench_now_s() - start;
            if (t < best) {
                best = t;
                st = *serving_get_stats(s);
                events = sim_engine_events_run(e);
                bytes = serving_memory_bytes(s) + sim_engine_memory_bytes(e);
            }
            serving_free(s);
            sim_engine_free(e);
        }
        printf("  %-9s %10.3g requests/s of wall time  %5.1f events/request  model %.1f MB  "
               "(%llu completed, transfers %.3g ms mean)\n",
               mode ? "reference" : "fast", (double)st.arrived / best,
               (double)events / (double)st.arrived, bytes / 1e6,
               (unsigned long long)st.completed, 1e3 * sim_stat_mean(&st.transfer_s));
    }
    printf("  peak resident memory so far: %.1f MiB\n", bench_peak_rss_mib());
    catalog_release(&cat);
}
