/* Training steps and the parallel-setup planner (see perf_training.h). */
#include "models/perf_training.h"

#include <math.h>

double perf_allreduce_s(double bytes, unsigned n, double link_bytes_per_s, double latency_s)
{
    if (n <= 1)
        return 0;
    return 2.0 * (n - 1) / n * bytes / link_bytes_per_s + 2.0 * (n - 1) * latency_s;
}

/* The training row's efficiency, scaled by the profile's compute anchor over the
 * family's (1 by default, so the row's figures exactly), falling for few tokens and
 * narrow shards along the profile's curve (the training row's by default). */
static double training_efficiency(const device_spec *d, const perf_profile *p, double tokens,
                                  double width)
{
    const perf_family *f = p->family ? p->family : perf_family_of(d);
    double e = f->training.efficiency * (p->compute_efficiency / f->gemm.efficiency);
    return e * tokens / (tokens + p->tokens_half) * width / (width + p->width_half);
}

training_estimate perf_training_step(const model_spec *m, const device_spec *d,
                                     const perf_profile *p, precision prec,
                                     training_setup s, unsigned gpus, unsigned global_batch)
{
    training_estimate e = { 0 };
    s.dp = gpus / (s.tp * s.pp);
    unsigned per_rank = global_batch / s.dp;
    s.microbatches = per_rank / s.micro_batch > 0 ? per_rank / s.micro_batch : 1;
    e.setup = s;
    e.memory = memory_training(m, d, &s);
    double tokens_mb = (double)s.micro_batch * s.seq_len;
    /* forward + backward = 3 forward passes; recomputation adds a fourth */
    double passes = s.recompute ? 4 : 3;
    double flops_mb = passes * tokens_mb * model_forward_flops_per_token(m, s.seq_len / 2.0)
                      / ((double)s.tp * s.pp);
    double mb_compute = flops_mb / (device_peak_flops(d, prec, NULL)
                                    * training_efficiency(d, p, tokens_mb,
                                                          (double)m->hidden / s.tp));
    /* tensor parallelism: 4 all-reduces per layer (2 forward, 2 backward), on NVLink */
    double bytes = tokens_mb * m->hidden * 2.0;
    double link = s.tp <= p->devices_per_node ? device_link_bytes_per_s(d) : p->network_bytes_per_s;
    double mb_tp = 4.0 * ceil((double)m->layers / s.pp)
                   * perf_allreduce_s(bytes, s.tp, link, p->link_latency_s);
    double mb = mb_compute + mb_tp;
    e.compute_s = s.microbatches * mb_compute;
    e.tp_comm_s = s.microbatches * mb_tp;
    e.bubble_s = (s.pp - 1) * mb; /* 1F1B: pp - 1 micro-batch slots idle per step */
    /* data parallelism: the 16-bit gradients of this rank's shard, between nodes once the
     * group spans more than one node, partly hidden behind the backward pass */
    double grad_bytes = 2.0 * model_params(m) / ((double)s.tp * s.pp);
    double dp_link = (double)gpus > p->devices_per_node ? p->network_bytes_per_s
                                                        : device_link_bytes_per_s(d);
    double dp_s = perf_allreduce_s(grad_bytes, s.dp, dp_link, p->link_latency_s);
    e.dp_comm_s = dp_s * (1 - p->dp_overlap);
    e.step_s = e.compute_s + e.tp_comm_s + e.bubble_s + e.dp_comm_s;
    e.tokens_per_step = (double)s.microbatches * s.micro_batch * s.dp * s.seq_len;
    double model_flops = 6.0 * model_params_active(m) * e.tokens_per_step;
    e.mfu = model_flops / (e.step_s * gpus * device_peak_flops(d, prec, NULL));
    return e;
}

bool perf_training_plan(const model_spec *m, const device_spec *d, const perf_profile *p,
                        precision prec, unsigned gpus, unsigned seq_len, unsigned global_batch,
                        training_estimate *out)
{
    bool found = false;
    training_estimate best = { 0 };
    double least_over = INFINITY;
    unsigned max_tp = p->devices_per_node > 1 ? p->devices_per_node : 1;
    for (int recompute = 0; recompute <= 1 && !found; recompute++) {
        for (unsigned tp = 1; tp <= max_tp && tp <= gpus; tp *= 2) {
            for (unsigned pp = 1; tp * pp <= gpus && pp <= m->layers; pp *= 2) {
                if (gpus % (tp * pp) != 0 || global_batch < gpus / (tp * pp))
                    continue;
                training_setup s = { tp, pp, 0, 1, recompute, 1, seq_len, 0 };
                training_estimate e = perf_training_step(m, d, p, prec, s, gpus, global_batch);
                if (!e.memory.fits) {
                    double over = e.memory.total_bytes / e.memory.usable_bytes;
                    if (!found && over < least_over) {
                        least_over = over;
                        best = e;
                    }
                    continue;
                }
                if (!found || e.step_s / e.tokens_per_step < best.step_s / best.tokens_per_step)
                    best = e;
                found = true;
            }
        }
    }
    *out = best;
    return found;
}
