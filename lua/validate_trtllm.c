/* trtllm-bench's default batch limits (see validate_trtllm.h). */
#include "lua/validate_trtllm.h"

#include <math.h>

/* The benchmark's bytes an element: 2 unquantised, 1 fp8, 0.5 fp4 (its table; others 2). */
static double bench_bytes(precision p)
{
    return p == PREC_FP8 ? 1 : p == PREC_FP4 ? 0.5 : 2;
}

static double round_up(double x, double step) { return step * ceil(x / step); }

trtllm_limits trtllm_bench_limits(const model_spec *m, const device_spec *d, precision weights,
                                  precision kv, unsigned tp, unsigned pp, double prompt,
                                  double output, double kv_fraction)
{
    const double gib = 1073741824.0;
    tp = tp ? tp : 1;
    pp = pp ? pp : 1;
    double kv_heads = fmax(tp, m->kv_heads);
    double per_token = 2.0 * m->layers * kv_heads * model_head_dim(m) * bench_bytes(kv) / gib;
    double engine = model_params(m) * bench_bytes(weights) / gib;
    double free_gib = d->memory_bytes / gib * tp * pp - engine;
    trtllm_limits r = { 0 };
    r.kv_requests = fmax(0, free_gib * kv_fraction / (per_token * (prompt + output)));
    double batch = fmin(r.kv_requests, 4096) / pp;
    double tokens = fmin(batch * (1 + prompt / output), 32768);
    r.max_batch = (unsigned)(batch < 256    ? fmax(64, round_up(batch, 32))
                             : batch < 1024 ? round_up(batch, 128)
                                            : round_up(batch, 256));
    r.max_tokens = (unsigned)(tokens < 4096   ? fmax(2048, round_up(tokens, 256))
                              : tokens < 8192 ? round_up(tokens, 512)
                                              : round_up(tokens, 1024));
    return r;
}
