/* The default tensor parallelism of a serving replica (see replica_tp.h). */
#include "models/replica_tp.h"

#include <math.h>

#include "models/memory.h"

double replica_wave_rate_per_device(const perf_setup *s, double prompt, double output,
                                    unsigned max_batch)
{
    inference_memory mem = memory_inference_for(s->model, s->device, s->weights, s->kv, s->tp,
                                                s->attention_dp, s->reserve);
    double held = mem.fits ? floor(mem.kv_capacity_tokens
                                   / model_attended_tokens(s->model, prompt + output)) : 0;
    if (held < 1)
        return 0;
    unsigned batch = held < max_batch ? (unsigned)held : max_batch;
    double t = perf_prefill(s, batch, prompt).total_s
               + output * perf_decode_step(s, batch, prompt + output / 2).total_s;
    return batch * output / t / s->tp;
}

size_t replica_tp_ranked(const perf_setup *s, unsigned max_tp, unsigned divides, double prompt,
                         double output, unsigned max_batch, unsigned *tps, size_t max)
{
    double rates[64];
    size_t n = 0;
    for (unsigned tp = 1; tp <= max_tp && n < max && n < 64; tp *= 2) {
        if (divides % tp)
            continue;
        perf_setup at = *s;
        at.tp = tp;
        double rate = replica_wave_rate_per_device(&at, prompt, output, max_batch);
        if (!(rate > 0))
            continue;
        /* after every one it does not beat strictly: a larger tp must do better */
        size_t at_rank = n;
        while (at_rank > 0 && rate > rates[at_rank - 1] * (1 + 1e-9))
            at_rank--;
        for (size_t k = n; k > at_rank; k--) {
            rates[k] = rates[k - 1];
            tps[k] = tps[k - 1];
        }
        rates[at_rank] = rate;
        tps[at_rank] = tp;
        n++;
    }
    return n;
}

unsigned replica_default_tp(const perf_setup *s, unsigned max_tp, unsigned divides,
                            double prompt, double output, unsigned max_batch)
{
    unsigned tps[64];
    return replica_tp_ranked(s, max_tp, divides, prompt, output, max_batch, tps, 64) ? tps[0]
                                                                                   : 0;
}
