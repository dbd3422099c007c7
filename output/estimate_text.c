#include "output/estimate_text.h"

#include <math.h>

#include "output/csv_write.h"

#define GB 1e9

static const char *bound(const perf_time *t)
{
    return t->compute_bound ? "compute" : "memory bandwidth";
}

void output_estimate_text(FILE *out, const model_spec *m, const device_spec *d,
                          const estimate_request *req, const estimate_result *r)
{
    fprintf(out, "%s on %u x %s, %s\n\n", m->name, req->gpus, d->name, precision_name(req->prec));
    fprintf(out, "model\n");
    fprintf(out, "  parameters          %.4g B", r->params / 1e9);
    if (m->experts)
        fprintf(out, " (%.4g B active: %u of %u experts)", r->params_active / 1e9,
                m->experts_active, m->experts);
    fprintf(out, "\n  weights             %.2f GB in %s\n", r->weights_bytes / GB, precision_name(req->prec));
    fprintf(out, "  key-value cache     %.1f KB per token (%s)\n\n", r->kv_bytes_per_token / 1e3,
            precision_name(r->kv_prec));
    fprintf(out, "inference, replicas of %u device%s (smallest that fits: %u)\n", r->tp,
            r->tp == 1 ? "" : "s", r->min_tp);
    fprintf(out, "  memory per device   %.1f GB weights + cache, %.1f GB usable\n",
            r->memory.weights_bytes / GB, r->memory.usable_bytes / GB);
    fprintf(out, "  cache capacity      %.0f tokens: %.0f requests of %.0f + %.0f tokens\n",
            r->memory.kv_capacity_tokens, r->max_batch, req->prompt, req->output);
    fprintf(out, "  time to first token %.4g s (prefill of %.0f tokens, %s-bound)\n",
            r->first_token.total_s, req->prompt, bound(&r->first_token));
    unsigned batch = req->batch < r->max_batch ? req->batch : (unsigned)r->max_batch;
    fprintf(out, "  prefill, batch %-4u %.4g s\n", batch, r->prefill.total_s);
    fprintf(out, "  decode, batch %-4u  %.4g s per token (%s-bound: compute %.3g s, memory %.3g s,"
            " communication %.3g s, launches %.3g s)\n", batch, r->decode.total_s,
            bound(&r->decode), r->decode.compute_s, r->decode.memory_s, r->decode.comm_s,
            r->decode.launch_s);
    fprintf(out, "                      %.4g tokens/s per replica\n", r->decode_tokens_per_s);
    if (r->throughput.tokens_per_s > 0)
        fprintf(out, "  best throughput     %.4g output tokens/s on %u devices (%u replicas of "
                "tp %u, batch %u)\n", r->throughput.tokens_per_s, req->gpus,
                r->throughput.replicas, r->throughput.tp, r->throughput.batch);
    fprintf(out, "\ntraining on %u device%s, %.3g tokens (%.3g FLOPs = 6 x %.3g x %.3g)\n",
            req->gpus, req->gpus == 1 ? "" : "s", r->train_tokens, r->train_flops,
            r->params_active, r->train_tokens);
    const training_estimate *t = &r->train;
    const training_memory *mem = &t->memory;
    fprintf(out, "  memory per device   %.1f GB (weights %.1f, gradients %.1f, optimizer %.1f, "
            "activations %.1f) of %.1f GB usable\n", mem->total_bytes / GB,
            mem->weights_bytes / GB, mem->gradient_bytes / GB, mem->optimizer_bytes / GB,
            mem->activation_bytes / GB, mem->usable_bytes / GB);
    if (!r->train_fits) {
        fprintf(out, "  does not fit on %u device%s", req->gpus, req->gpus == 1 ? "" : "s");
        if (r->train_min_gpus)
            fprintf(out, "; the fewest that fit: %u", r->train_min_gpus);
        fprintf(out, "\n");
        return;
    }
    fprintf(out, "  parallelism         tp %u, pp %u, dp %u, ZeRO-%u%s, %u micro-batches of "
            "%u x %u tokens\n", t->setup.tp, t->setup.pp, t->setup.dp, t->setup.zero_stage,
            t->setup.recompute ? ", recomputation" : "", t->setup.microbatches,
            t->setup.micro_batch, t->setup.seq_len);
    fprintf(out, "  step                %.4g s (compute %.3g, tensor-parallel %.3g, pipeline "
            "bubble %.3g, data-parallel %.3g)\n", t->step_s, t->compute_s, t->tp_comm_s,
            t->bubble_s, t->dp_comm_s);
    fprintf(out, "  MFU                 %.1f%%\n", 100 * t->mfu);
    fprintf(out, "  time                %.4g days, %.4g GPU-hours\n", r->train_s / 86400,
            r->train_gpu_hours);
}

static void row(FILE *out, const char *metric, double value, const char *unit)
{
    csv_write_text(out, metric, true);
    csv_write_number(out, value, false);
    csv_write_text(out, unit, false);
    fputc('\n', out);
}

void output_estimate_csv(FILE *out, const model_spec *m, const device_spec *d,
                         const estimate_request *req, const estimate_result *r)
{
    (void)m;
    (void)d;
    const training_estimate *t = &r->train;
    fputs("metric,value,unit\n", out);
    row(out, "params", r->params, "parameters");
    row(out, "params_active", r->params_active, "parameters");
    row(out, "weights_gb", r->weights_bytes / GB, "GB");
    row(out, "kv_gb_per_token", r->kv_bytes_per_token / GB, "GB");
    row(out, "fits", r->fits, "1");
    row(out, "min_tp", r->min_tp, "devices");
    row(out, "tp", r->tp, "devices");
    row(out, "max_batch", r->max_batch, "requests");
    row(out, "kv_capacity_tokens", r->memory.kv_capacity_tokens, "tokens");
    row(out, "prefill_s", r->prefill.total_s, "s");
    row(out, "ttft_s", r->first_token.total_s, "s");
    row(out, "tpot_s", r->decode.total_s, "s");
    row(out, "decode_tokens_per_s", r->decode_tokens_per_s, "tokens/s");
    row(out, "decode_compute_bound", r->decode.compute_bound, "1");
    row(out, "throughput_tokens_per_s", r->throughput.tokens_per_s, "tokens/s");
    row(out, "throughput_tp", r->throughput.tp, "devices");
    row(out, "throughput_batch", r->throughput.batch, "requests");
    row(out, "train_fits", r->train_fits, "1");
    row(out, "train_memory_per_gpu_gb", t->memory.total_bytes / GB, "GB");
    row(out, "train_min_gpus", r->train_fits ? req->gpus : r->train_min_gpus, "devices");
    row(out, "train_tokens", r->train_tokens, "tokens");
    row(out, "train_flops", r->train_flops, "FLOP");
    row(out, "train_tp", r->train_fits ? t->setup.tp : NAN, "devices");
    row(out, "train_pp", r->train_fits ? t->setup.pp : NAN, "devices");
    row(out, "train_dp", r->train_fits ? t->setup.dp : NAN, "devices");
    row(out, "train_step_s", r->train_fits ? t->step_s : NAN, "s");
    row(out, "train_days", r->train_fits ? r->train_s / 86400 : NAN, "days");
    row(out, "train_gpu_hours", r->train_fits ? r->train_gpu_hours : NAN, "GPU-hours");
    row(out, "mfu", r->train_fits ? t->mfu : NAN, "1");
}
