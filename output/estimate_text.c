#include "output/estimate_text.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "models/catalog.h"
#include "output/csv_write.h"
#include "output/number_text.h"

#define GB 1e9

/* What the largest part of a step is; the host's, what the step pays beyond the GPU's
 * time (what the engine hides under the GPU counts for nothing). */
static const char *bound(const perf_time *t)
{
    const double parts[] = { t->compute_s, t->memory_s, t->launch_s, t->total_s - t->gpu_s,
                             t->comm_s };
    static const char *const names[] = { "compute", "memory bandwidth", "kernel launch",
                                         "host", "communication" };
    int most = 0;
    for (int i = 1; i < 5; i++)
        if (parts[i] > parts[most])
            most = i;
    return names[most];
}

/* Whether op is priced by a calibration profile's operator table (measured), not by the
 * family's: every operator of a layer but the collectives, whose links stay the family's. */
static bool op_from_profile(const estimate_request *req, perf_op op)
{
    return req->profile && req->profile->has_operators && op != OP_ALLREDUCE
           && op != OP_ALLTOALL;
}

/* Where the figures come from: the family's table of published measurements, or a
 * calibration profile, naming what it measured and what it left to the catalog. */
static void print_measurements(FILE *out, const device_spec *d, const estimate_request *req)
{
    const device_profile *p = req->calibration;
    if (!p) {
        fprintf(out, "  measurements        %s\n", perf_family_reason(d));
        return;
    }
    fprintf(out, "  measurements        profile %s: measured on '%s'%s%s%s%s\n",
            req->calibration_file ? req->calibration_file : "(given)", p->device,
            *p->host ? ", " : "", p->host, *p->date ? ", " : "", p->date);
    if (p->perf.has_operators)
        fprintf(out, "                      operators: the profile's table, fitted at %s%s "
                "(GEMMs, attention,\n                      memory passes, host work); the "
                "collectives the catalog's family's\n", *p->operators_model ? "model " : "",
                *p->operators_model ? p->operators_model : "its model");
    else
        fprintf(out, "                      achieved peaks and bandwidth the profile's; the "
                "operators the catalog's\n                      family's shares of them (%s)\n",
                perf_family_reason(d));
    if (p->memory_bytes > 0)
        fprintf(out, "                      memory %.1f GB: the measured machine's\n",
                p->memory_bytes / 1e9);
    else
        fprintf(out, "                      memory: the catalog's (the profile did not measure "
                "it)\n");
}

/* The band a calibration profile's measured spread puts around the first token and a
 * decode step (models/profile.h: the classes' spreads by the time each takes). */
static void print_spread(FILE *out, const estimate_request *req, const estimate_result *r)
{
    const device_profile *p = req->calibration;
    if (!p || !req->profile || !req->profile->has_operators)
        return;
    bool any = false;
    for (int c = 0; c < SPREAD_CLASSES; c++)
        any |= p->spread[c] > 0;
    if (!any)
        return;
    fprintf(out, "  measured spread     +-%.1f%% on the first token, +-%.1f%% on a decode step "
            "(the profile's\n                      operators between repeats, half their "
            "interquartile range:",
            50 * profile_step_spread(p, &r->first_token_ops, r->first_token.total_s),
            50 * profile_step_spread(p, &r->decode_ops, r->decode.total_s));
    const char *sep = " ";
    for (int c = 0; c < SPREAD_CLASSES; c++)
        if (p->spread[c] > 0) {
            fprintf(out, "%s%s %.1f%%", sep, profile_spread_names[c], 50 * p->spread[c]);
            sep = ", ";
        }
    fprintf(out, ")\n");
}

/* The operators of the first token's prefill and of one decode step, side by side. */
static void print_breakdown(FILE *out, const model_spec *m, const estimate_request *req,
                            const estimate_result *r)
{
    const perf_breakdown *a = &r->first_token_ops, *b = &r->decode_ops;
    fprintf(out, "\nwhere the time goes: the first token (prefill of %.0f tokens) and a decode "
            "step (batch %u, %.0f tokens of context each)\n", req->prompt, r->batch,
            req->prompt + req->output / 2);
    fprintf(out, "  %-18s %10s %6s  %-13s %10s %6s  %-13s %s\n", "operator", "prefill ms",
            "share", "bound", "decode ms", "share", "bound", "kernels");
    /* the host's share is of what it adds to the step (what the GPU's step does not
     * hide), so that the shares add up to the total */
    const double exposed[2] = { r->first_token.total_s - r->first_token.gpu_s,
                                r->decode.total_s - r->decode.gpu_s };
    for (int i = 0; i < OP_COUNT; i++) {
        const perf_op_time *x = &a->op[i], *y = &b->op[i];
        if (x->time_s <= 0 && y->time_s <= 0)
            continue;
        fprintf(out, "  %-18s", perf_op_name((perf_op)i));
        double share_x = i == OP_HOST ? exposed[0] : x->time_s;
        double share_y = i == OP_HOST ? exposed[1] : y->time_s;
        if (x->time_s > 0)
            fprintf(out, " %10.4f %5.1f%%  %-13s", 1e3 * x->time_s,
                    100 * share_x / r->first_token.total_s, perf_bound_name(x->bound));
        else
            fprintf(out, " %10s %6s  %-13s", "-", "", "");
        if (y->time_s > 0)
            fprintf(out, " %10.4f %5.1f%%  %-13s", 1e3 * y->time_s,
                    100 * share_y / r->decode.total_s, perf_bound_name(y->bound));
        else
            fprintf(out, " %10s %6s  %-13s", "-", "", "");
        const char *kernels = engine_kernel_of(req->engine, (perf_op)i, m);
        if (op_from_profile(req, (perf_op)i))
            fprintf(out, " the profile's (measured)\n");
        else if (i == OP_HOST)
            fprintf(out, " the engine's host work (share: what the GPU's step leaves exposed)\n");
        else
            fprintf(out, " %s\n", kernels ? kernels : "memory passes");
    }
    fprintf(out, "  %-18s %10.4f %5.1f%%  %-13s %10.4f %5.1f%%\n", "total",
             1e3 * r->first_token.total_s, 100.0, "", 1e3 * r->decode.total_s, 100.0);
    fprintf(out, "  by bound: prefill compute %.3g, memory %.3g, launch %.3g, host %.3g, "
            "communication %.3g ms;\n            decode compute %.3g, memory %.3g, launch %.3g, "
            "host %.3g, communication %.3g ms\n", 1e3 * r->first_token.compute_s,
            1e3 * r->first_token.memory_s, 1e3 * r->first_token.launch_s,
            1e3 * r->first_token.host_s, 1e3 * r->first_token.comm_s, 1e3 * r->decode.compute_s,
            1e3 * r->decode.memory_s, 1e3 * r->decode.launch_s, 1e3 * r->decode.host_s,
            1e3 * r->decode.comm_s);
    fprintf(out, "  host work: prefill %.3g ms, %.3g of it hidden under the GPU's %.3g ms, %.3g "
            "exposed;\n             decode %.3g ms, %.3g hidden under the GPU's %.3g ms, %.3g "
            "exposed\n", 1e3 * r->first_token.host_s,
            1e3 * fmin(r->first_token.host_hidden_s, r->first_token.gpu_s),
            1e3 * r->first_token.gpu_s, 1e3 * (r->first_token.total_s - r->first_token.gpu_s),
            1e3 * r->decode.host_s, 1e3 * fmin(r->decode.host_hidden_s, r->decode.gpu_s),
            1e3 * r->decode.gpu_s, 1e3 * (r->decode.total_s - r->decode.gpu_s));
}

/* Speculative decoding against plain decoding across batch sizes: its gain at small
 * batches and how it shrinks (or turns into a loss) as the batch grows. */
static void print_speculation(FILE *out, const estimate_request *req, const estimate_result *r)
{
    if (!r->nspec)
        return;
    fprintf(out, "\nspeculative decoding: %u tokens proposed a round by %s, each accepted with "
            "probability %.3g: %.3g tokens a round\n", req->speculate_k,
            req->draft ? req->draft->name : "a lookup (no GPU cost)", req->acceptance,
            r->spec_tokens);
    fprintf(out, "  %8s %14s %14s %9s\n", "batch", "plain ms/tok", "spec ms/tok", "speed-up");
    for (unsigned i = 0; i < r->nspec; i++) {
        const estimate_speculation *e = &r->spec[i];
        fprintf(out, "  %8u %14.4f %14.4f %8.2fx\n", e->batch, 1e3 * e->plain_s,
                1e3 * e->speculative_s, e->plain_s / e->speculative_s);
    }
}

/* A mixture's layout on its replica's devices, and the others' best offline throughput. */
static void print_layout(FILE *out, const estimate_request *req, const estimate_result *r)
{
    if (!r->layouts_compared)
        return;
    static const char *const names[] = {
        [ESTIMATE_LAYOUT_TP] = "tensor parallel (each expert split over the devices)",
        [ESTIMATE_LAYOUT_EP] = "expert parallel (experts held whole, attention tensor parallel)",
        [ESTIMATE_LAYOUT_DP] = "attention data parallel, experts held whole (all-to-all)",
    };
    static const char *const short_names[] = {
        [ESTIMATE_LAYOUT_TP] = "tensor parallel", [ESTIMATE_LAYOUT_EP] = "expert parallel",
        [ESTIMATE_LAYOUT_DP] = "attention data parallel",
    };
    fprintf(out, "  layout              %s, EP %u%s\n", names[r->layout],
            r->layout == ESTIMATE_LAYOUT_TP ? 1 : r->tp,
            req->layout == ESTIMATE_LAYOUT_BEST ? " (the best offline throughput)" : " (--layout)");
    fprintf(out, "                      best output tokens/s on %u devices:", req->gpus);
    for (int l = ESTIMATE_LAYOUT_TP; l <= ESTIMATE_LAYOUT_DP; l++)
        fprintf(out, "%s %s %.4g", l == ESTIMATE_LAYOUT_TP ? "" : ",", short_names[l],
                r->layout_tokens_per_s[l]);
    fputc('\n', out);
}

/* A span of time in the unit that reads best: "42 s", "8.5 min", "3.1 h", "8.31 days". */
static char *span_text(char *buf, size_t size, double s)
{
    if (!isfinite(s))
        snprintf(buf, size, "forever");
    else if (s < 120)
        snprintf(buf, size, "%.3g s", s);
    else if (s < 7200)
        snprintf(buf, size, "%.3g min", s / 60);
    else if (s < 2 * 86400)
        snprintf(buf, size, "%.3g h", s / 3600);
    else
        snprintf(buf, size, "%.3g days", s / 86400);
    return buf;
}

/* The productive figures beside the expected ones with failures, restarts and checkpoint
 * stalls (models/goodput.h), and what that assumes, each figure given or its source. */
static void print_goodput(FILE *out, const estimate_request *req, const estimate_result *r)
{
    const goodput_inputs *in = &r->goodput_in;
    const goodput_result *g = &r->goodput;
    const goodput_defaults *def = &GOODPUT_DEFAULTS;
    char a[32], b[32], c[32], e[32], x[32], y[32];
    fprintf(out, "  time                %12s %12s\n", "productive", "expected");
    fprintf(out, "    days              %12s %12s\n", number_text(x, sizeof x, r->train_s / 86400),
            number_text(y, sizeof y, g->wall_s / 86400));
    fprintf(out, "    GPU-hours         %12s %12s\n", number_text(x, sizeof x, r->train_gpu_hours),
            number_text(y, sizeof y, g->gpu_hours));
    if (!isfinite(g->wall_s)) {
        fprintf(out, "  goodput             0: a failure every %s on average undoes more than it "
                "gets done; checkpoint more often\n", span_text(a, sizeof a, g->job_mtbf_s));
    } else {
        fprintf(out, "  goodput             %.1f%% (%s failures expected): lost work %s, "
                "restarts %s, checkpoint writes %s", 100 * g->goodput,
                number_text(x, sizeof x, g->failures),
                span_text(a, sizeof a, g->lost_s), span_text(b, sizeof b, g->restart_s),
                span_text(c, sizeof c, g->checkpoint_s));
        if (in->straggler > 0)
            fprintf(out, ", stragglers %s", span_text(e, sizeof e, g->straggler_s));
        fputc('\n', out);
    }
    if (in->mtbf_s > 0)
        fprintf(out, "  failures            a GPU's MTBF %.5g h (%s), the job's %s\n",
                in->mtbf_s / 3600, req->mtbf_given ? "--mtbf" : def->mtbf_source,
                span_text(a, sizeof a, g->job_mtbf_s));
    else
        fprintf(out, "  failures            none (--mtbf)\n");
    if (in->every_s <= 0 && req->every_given)
        fprintf(out, "  checkpoints         none (--checkpoint-every 0)\n");
    else if (in->every_s <= 0)
        fprintf(out, "  checkpoints         none: no failure to recover from\n");
    else if (req->every_given)
        fprintf(out, "  checkpoints         every %s of training (--checkpoint-every), %s "
                "written\n", span_text(a, sizeof a, in->every_s),
                number_text(x, sizeof x, g->checkpoints));
    else
        fprintf(out, "  checkpoints         every %s of training (%.0f step%s: Young's optimum "
                "sqrt(2 x write x the job's MTBF)), %s written\n",
                span_text(a, sizeof a, in->every_s), round(in->every_s / r->train.step_s),
                round(in->every_s / r->train.step_s) == 1 ? "" : "s",
                number_text(x, sizeof x, g->checkpoints));
    if (in->every_s > 0 && req->write_given)
        fprintf(out, "                      each pausing the run %s (--checkpoint-write)\n",
                span_text(a, sizeof a, in->write_s));
    else if (in->every_s > 0 && req->lora)
        fprintf(out, "                      each free: the adapters alone, not counted "
                "(--lora)\n");
    else if (in->every_s > 0)
        fprintf(out, "                      each pausing the run %s: %.4g GB of weights and "
                "optimizer state at %.0f MB/s a GPU (%s)\n", span_text(a, sizeof a, in->write_s),
                r->checkpoint_bytes / GB, def->write_bytes_per_s_per_gpu / 1e6, def->write_source);
    fprintf(out, "  restart             %s after each failure (%s)\n",
            span_text(a, sizeof a, in->restart_s),
            req->restart_given ? "--restart" : def->restart_source);
    if (in->straggler > 0)
        fprintf(out, "  stragglers          training %.3g%% slower (--straggler)\n",
                100 * in->straggler);
    else
        fprintf(out, "  stragglers          none charged (--straggler)\n");
}

/* The serving half: replicas, memory, first token, decode, throughput, the breakdown and
 * speculation; or why no replica fits. */
static void print_serving(FILE *out, const model_spec *m, const estimate_request *req,
                          const estimate_result *r)
{
    if (r->refused & ESTIMATE_SERVING) {
        fprintf(out, "inference: refused\n  %s\n", r->serving_refusal);
        return;
    }
    fprintf(out, "inference, replicas of %u device%s (smallest that fits: %u)\n", r->tp,
            r->tp == 1 ? "" : "s", r->min_tp);
    print_layout(out, req, r);
    fprintf(out, "  memory per device   %.1f GB weights + cache, %.1f GB usable\n",
            r->memory.weights_bytes / GB, r->memory.usable_bytes / GB);
    fprintf(out, "  cache capacity      %.0f tokens: %.0f requests of %.0f + %.0f tokens\n",
            r->memory.kv_capacity_tokens, r->max_batch, req->prompt, req->output);
    fprintf(out, "  time to first token %.4g s (prefill of %.0f tokens, %s-bound)\n",
            r->first_token.total_s, req->prompt, bound(&r->first_token));
    unsigned batch = req->batch < r->max_batch ? req->batch : (unsigned)r->max_batch;
    if (batch < req->batch)
        fprintf(out, "  note                --batch %u does not fit: the cache holds %u requests "
                "of %.0f + %.0f tokens, so the figures below are for batch %u (a larger --tp "
                "holds more)\n", req->batch, batch, req->prompt, req->output, batch);
    fprintf(out, "  prefill, batch %-4u %.4g s\n", batch, r->prefill.total_s);
    fprintf(out, "  decode, batch %-4u  %.4g s per token (%s-bound: compute %.3g s, memory %.3g s,"
            " launches %.3g s, host %.3g s, communication %.3g s)\n", batch, r->decode.total_s,
            bound(&r->decode), r->decode.compute_s, r->decode.memory_s, r->decode.launch_s,
            r->decode.host_s, r->decode.comm_s);
    fprintf(out, "                      %.4g tokens/s per replica\n", r->decode_tokens_per_s);
    if (!isnan(r->decode_w))
        fprintf(out, "  power per device    prefill %.0f W, decode %.0f W (%.3g J per prompt token, "
                "%.3g J per output token)\n", r->prefill_w, r->decode_w, r->prefill_j_per_token,
                r->decode_j_per_token);
    print_spread(out, req, r);
    if (r->throughput.tokens_per_s > 0)
        fprintf(out, "  best throughput     %.4g output tokens/s on %u devices (%u replicas of "
                "tp %u, batch %u)\n", r->throughput.tokens_per_s, req->gpus,
                r->throughput.replicas, r->throughput.tp, r->throughput.batch);
    print_breakdown(out, m, req, r);
    print_speculation(out, req, r);
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
    fprintf(out, "\n  weights             %.2f GB in %s", r->weights_bytes / GB,
            precision_name(req->prec));
    if (precision_unquantized(req->prec) != req->prec) {
        fprintf(out, m->quantize_mlp_only ? " (the feed-forward layers; attention, embeddings "
                                            "and LM head 16-bit"
                                          : " (embeddings and LM head 16-bit");
        if (m->unquantized_edge_layers == 1)
            fprintf(out, "; the first and the last layer whole");
        else if (m->unquantized_edge_layers)
            fprintf(out, "; the first and the last %u layers whole", m->unquantized_edge_layers);
        fprintf(out, ")");
    }
    fprintf(out, "\n");
    fprintf(out, "  key-value cache     %.1f KB per token (%s)\n", r->kv_bytes_per_token / 1e3,
            precision_name(r->kv_prec));
    print_measurements(out, d, req);
    if (req->engine && (r->halves & ESTIMATE_SERVING))
        fprintf(out, "  engine              %s%s: %s; host work %.0f%% run while the GPU computes "
                "(%s)\n", req->engine->name,
                strcmp(req->engine->name, CATALOG_DEFAULT_SERVING_ENGINE) ? "" : " (the default)",
                req->engine->describes, 100 * req->engine->host_overlap,
                req->engine->host_measured ? "measured" : "stated");
    if (req->train_engine && (r->halves & ESTIMATE_TRAINING))
        fprintf(out, "  training engine     %s%s: %s\n", req->train_engine->name,
                strcmp(req->train_engine->name, CATALOG_DEFAULT_TRAINING_ENGINE) ? ""
                                                                                 : " (the default)",
                req->train_engine->describes);
    fprintf(out, "\n");
    if (r->halves & ESTIMATE_SERVING)
        print_serving(out, m, req, r);
    if (!(r->halves & ESTIMATE_TRAINING))
        return;
    if (r->halves & ESTIMATE_SERVING)
        fprintf(out, "\n");
    fprintf(out, "training%s on %u device%s, %.3g tokens (%.3g FLOPs = %d x %.3g x %.3g)\n",
            req->lora ? " low-rank adapters (LoRA; the model frozen)" : "", req->gpus,
            req->gpus == 1 ? "" : "s", r->train_tokens, r->train_flops, req->lora ? 4 : 6,
            r->params_active, r->train_tokens);
    if (*r->train_precision_why)
        fprintf(out, "  precision           %s: %s\n", precision_name(r->train_precision),
                r->train_precision_why);
    const training_estimate *t = &r->train;
    const training_memory *mem = &t->memory;
    if (mem->usable_bytes > 0) /* a setup was timed: the plan's, or the closest miss's */
        fprintf(out, "  memory per device   %.1f GB (weights %.1f, gradients %.1f, optimizer "
                "%.1f, activations %.1f) of %.1f GB usable\n", mem->total_bytes / GB,
                mem->weights_bytes / GB, mem->gradient_bytes / GB, mem->optimizer_bytes / GB,
                mem->activation_bytes / GB, mem->usable_bytes / GB);
    if (!r->train_fits) {
        fprintf(out, "  refused             %s\n", r->train_refusal);
        return;
    }
    const training_setup *s = &t->setup;
    const char *tp_note = s->tp <= 1 ? ""
                          : s->no_sequence_parallel && s->no_tp_overlap
                              ? " (no sequence parallelism, its collectives in series with the "
                                "products)"
                          : s->no_sequence_parallel ? " (no sequence parallelism)"
                          : s->no_tp_overlap ? " (its collectives in series with the products)"
                                             : "";
    fprintf(out, "  parallelism         tp %u%s, pp %u", s->tp, tp_note, s->pp);
    if (s->pp > 1)
        fprintf(out, " (%s)", s->dualpipe ? "DualPipe" : s->zero_bubble ? "zero-bubble ZB-H1"
                              : s->virtual_stages > 1 ? "interleaved" : "1F1B");
    if (s->cp > 1)
        fprintf(out, ", cp %u", s->cp);
    if (s->ep > 1) {
        /* what the plan says of its experts, in one parenthesis */
        const char *said[3];
        char etp[32];
        int n = 0;
        if (s->etp && s->etp != s->tp) {
            snprintf(etp, sizeof etp, "expert tp %u", s->etp);
            said[n++] = etp;
        }
        if (s->dispatcher != TRAINING_DISPATCH_ENGINE)
            said[n++] = s->dispatcher == TRAINING_DISPATCH_ALLTOALL ? "NCCL's all-to-all"
                        : s->dispatcher == TRAINING_DISPATCH_DEEPEP ? "DeepEP's dispatch"
                                                                     : "Hybrid-EP's dispatch";
        if (s->ep_overlap)
            said[n++] = "its all-to-alls under another micro-batch's computation";
        fprintf(out, ", ep %u", s->ep);
        for (int i = 0; i < n; i++)
            fprintf(out, "%s%s", i ? ", " : " (", said[i]);
        if (n)
            fprintf(out, ")");
    }
    fprintf(out, ", dp %u, ZeRO-%u", s->dp, s->zero_stage);
    if (s->zero_stage == 3 && s->shard_ranks)
        fprintf(out, " (HSDP: sharded within groups of %u ranks)", s->shard_ranks);
    else if (s->zero_stage == 3)
        fprintf(out, " (FSDP)");
    if (s->no_dp_overlap)
        fprintf(out, " (its collectives in series with the passes)");
    fprintf(out, ", %u micro-batches of %u x %u tokens\n", s->microbatches, s->micro_batch,
            s->seq_len);
    if (s->pp > 1 && s->virtual_stages > 1)
        fprintf(out, "                      %u model chunks per pipeline stage\n",
                s->virtual_stages);
    unsigned stage_layers = (m->layers + s->pp - 1) / s->pp;
    if (s->recompute_layers)
        fprintf(out, "  recomputation       full, %u of the %u layers per stage%s\n",
                s->recompute_layers, stage_layers,
                s->selective && s->recompute_layers < stage_layers
                    ? "; the others' attention core selectively" : "");
    else if (s->selective)
        fprintf(out, "  recomputation       selective: the attention core of every layer\n");
    else
        fprintf(out, "  recomputation       none (flash attention keeps no scores)\n");
    if (t->why[0])
        fprintf(out, "  why                 %s\n", t->why);
    fprintf(out, "  step                %.4g s: compute %.3g (matrix products %.3g, attention "
            "%.3g, memory passes %.3g), recomputation %.3g, tensor-parallel %.3g, "
            "context-parallel %.3g, expert-parallel %.3g, pipeline bubble %.3g, data-parallel "
            "%.3g, optimizer %.3g\n", t->step_s, t->compute_s, t->matmul_s, t->attention_s,
            t->memory_pass_s, t->recompute_s, t->tp_comm_s, t->cp_comm_s, t->ep_comm_s,
            t->bubble_s, t->dp_comm_s, t->optimizer_s);
    fprintf(out, "  MFU                 %.1f%%\n", 100 * t->mfu);
    print_goodput(out, req, r);
}

static void row(FILE *out, const char *metric, double value, const char *unit)
{
    csv_write_text(out, metric, true);
    csv_write_number(out, value, false);
    csv_write_text(out, unit, false);
    fputc('\n', out);
}

/* The serving half's rows; NaN where it was refused but for fits and min_tp. */
static void csv_serving(FILE *out, const estimate_result *r)
{
    bool ok = !(r->refused & ESTIMATE_SERVING);
    row(out, "fits", r->fits, "1");
    row(out, "min_tp", r->min_tp, "devices");
    row(out, "tp", ok ? r->tp : NAN, "devices");
    row(out, "max_batch", ok ? r->max_batch : NAN, "requests");
    row(out, "kv_capacity_tokens", ok ? r->memory.kv_capacity_tokens : NAN, "tokens");
    row(out, "prefill_s", ok ? r->prefill.total_s : NAN, "s");
    row(out, "ttft_s", ok ? r->first_token.total_s : NAN, "s");
    row(out, "tpot_s", ok ? r->decode.total_s : NAN, "s");
    row(out, "decode_tokens_per_s", ok ? r->decode_tokens_per_s : NAN, "tokens/s");
    row(out, "prefill_power_w", ok ? r->prefill_w : NAN, "W");
    row(out, "decode_power_w", ok ? r->decode_w : NAN, "W");
    row(out, "prefill_j_per_token", ok ? r->prefill_j_per_token : NAN, "J");
    row(out, "decode_j_per_token", ok ? r->decode_j_per_token : NAN, "J");
    row(out, "decode_compute_bound", ok ? r->decode.compute_bound : NAN, "1");
    row(out, "throughput_tokens_per_s", ok ? r->throughput.tokens_per_s : NAN, "tokens/s");
    row(out, "throughput_tp", ok ? r->throughput.tp : NAN, "devices");
    row(out, "throughput_batch", ok ? r->throughput.batch : NAN, "requests");
    if (r->layouts_compared) {
        row(out, "expert_parallel", ok ? r->layout != ESTIMATE_LAYOUT_TP : NAN, "1");
        row(out, "attention_dp", ok ? r->layout == ESTIMATE_LAYOUT_DP : NAN, "1");
    }
    if (r->nspec) {
        row(out, "spec_tokens_per_round", ok ? r->spec_tokens : NAN, "tokens");
        char name[64];
        for (unsigned k = 0; k < r->nspec; k++) {
            snprintf(name, sizeof name, "spec_tpot_batch_%u_s", r->spec[k].batch);
            row(out, name, r->spec[k].speculative_s, "s");
            snprintf(name, sizeof name, "plain_tpot_batch_%u_s", r->spec[k].batch);
            row(out, name, r->spec[k].plain_s, "s");
        }
    }
}

/* The training half's rows; NaN where it was refused but for what does not need a plan. */
static void csv_training(FILE *out, const estimate_request *req, const estimate_result *r)
{
    const training_estimate *t = &r->train;
    row(out, "train_fits", r->train_fits, "1");
    row(out, "train_memory_per_gpu_gb", t->memory.total_bytes / GB, "GB");
    row(out, "train_min_gpus", r->train_fits ? req->gpus : r->train_min_gpus, "devices");
    row(out, "train_tokens", r->train_tokens, "tokens");
    row(out, "train_flops", r->train_flops, "FLOP");
    row(out, "train_tp", r->train_fits ? t->setup.tp : NAN, "devices");
    row(out, "train_pp", r->train_fits ? t->setup.pp : NAN, "devices");
    row(out, "train_dp", r->train_fits ? t->setup.dp : NAN, "devices");
    row(out, "train_dualpipe", r->train_fits ? t->setup.dualpipe : NAN, "1");
    /* the rest of the plan: every dimension a framework states */
    const training_setup *s = &t->setup;
    const struct { const char *name; double value; const char *unit; } plan[] = {
        { "train_cp", s->cp ? s->cp : 1, "devices" },
        { "train_ep", s->ep ? s->ep : 1, "devices" },
        { "train_etp", s->ep > 1 ? (s->etp ? s->etp : s->tp) : NAN, "devices" },
        { "train_vpp", s->virtual_stages ? s->virtual_stages : 1, "chunks" },
        { "train_zero_bubble", s->zero_bubble, "1" },
        { "train_zero", s->zero_stage, "1" },
        { "train_hsdp", s->zero_stage == 3 ? s->shard_ranks : 0, "devices" },
        { "train_micro_batch", s->micro_batch, "sequences" },
        { "train_microbatches", s->microbatches, "micro-batches" },
        { "train_recompute_layers", s->recompute_layers, "layers" },
        { "train_selective", s->selective, "1" },
        { "train_sp", s->tp > 1 && !s->no_sequence_parallel, "1" },
        { "train_dp_overlap", !s->no_dp_overlap, "1" },
        { "train_ep_overlap", s->ep_overlap, "1" },
        { "train_tp_overlap", t->tp_overlap_share, "share" },
        { "train_dispatch_per_node", s->dispatcher == TRAINING_DISPATCH_DEEPEP
                                         || s->dispatcher == TRAINING_DISPATCH_HYBRIDEP, "1" },
    };
    for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++)
        row(out, plan[i].name, r->train_fits ? plan[i].value : NAN, plan[i].unit);
    row(out, "train_lora", r->train_fits ? t->setup.lora : NAN, "1");
    row(out, "train_step_s", r->train_fits ? t->step_s : NAN, "s");
    row(out, "train_days", r->train_fits ? r->train_s / 86400 : NAN, "days");
    row(out, "train_gpu_hours", r->train_fits ? r->train_gpu_hours : NAN, "GPU-hours");
    row(out, "mfu", r->train_fits ? t->mfu : NAN, "1");
    /* where a step's time goes (they add up to train_step_s) */
    const struct { const char *name; double value; } parts[] = {
        { "train_compute_s", t->compute_s }, { "train_recompute_s", t->recompute_s },
        { "train_tp_comm_s", t->tp_comm_s }, { "train_cp_comm_s", t->cp_comm_s },
        { "train_ep_comm_s", t->ep_comm_s }, { "train_bubble_s", t->bubble_s },
        { "train_dp_comm_s", t->dp_comm_s }, { "train_optimizer_s", t->optimizer_s },
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        row(out, parts[i].name, r->train_fits ? parts[i].value : NAN, "s");
    /* with failures, restarts and checkpoint stalls (models/goodput.h) */
    const goodput_inputs *gi = &r->goodput_in;
    const goodput_result *g = &r->goodput;
    bool fits = r->train_fits;
    row(out, "train_expected_days", fits ? g->wall_s / 86400 : NAN, "days");
    row(out, "train_expected_gpu_hours", fits ? g->gpu_hours : NAN, "GPU-hours");
    row(out, "train_goodput", fits ? g->goodput : NAN, "1");
    row(out, "train_failures", fits ? g->failures : NAN, "failures");
    row(out, "train_lost_days", fits ? g->lost_s / 86400 : NAN, "days");
    row(out, "train_restart_days", fits ? g->restart_s / 86400 : NAN, "days");
    row(out, "train_checkpoint_days", fits ? g->checkpoint_s / 86400 : NAN, "days");
    row(out, "train_straggler_days", fits ? g->straggler_s / 86400 : NAN, "days");
    row(out, "train_mtbf_gpu_hours", fits ? gi->mtbf_s / 3600 : NAN, "h");
    row(out, "train_checkpoint_every_s", fits ? gi->every_s : NAN, "s");
    row(out, "train_checkpoint_write_s", fits ? gi->write_s : NAN, "s");
    row(out, "train_checkpoint_gb", fits ? r->checkpoint_bytes / GB : NAN, "GB");
    row(out, "train_restart_s", fits ? gi->restart_s : NAN, "s");
    row(out, "train_straggler", fits ? gi->straggler : NAN, "1");
}

/* The serving half's explanation: each step by bound, then by operator. */
static void csv_explanation(FILE *out, const estimate_result *r)
{
    bool ok = !(r->refused & ESTIMATE_SERVING);
    const struct { const char *name; const perf_time *t; const perf_breakdown *ops; } steps[] = {
        { "ttft", &r->first_token, &r->first_token_ops }, { "tpot", &r->decode, &r->decode_ops },
    };
    char name[96];
    for (int k = 0; k < 2; k++) {
        const perf_time *x = steps[k].t;
        const double parts[] = { x->compute_s, x->memory_s, x->launch_s, x->host_s, x->comm_s };
        const char *const part_names[] = { "compute", "memory", "launch", "host", "comm" };
        for (int i = 0; i < 5; i++) {
            snprintf(name, sizeof name, "%s_%s_s", steps[k].name, part_names[i]);
            row(out, name, ok ? parts[i] : NAN, "s");
        }
        for (int i = 0; i < OP_COUNT; i++) {
            snprintf(name, sizeof name, "%s_op_%s_s", steps[k].name, perf_op_name((perf_op)i));
            row(out, name, ok ? steps[k].ops->op[i].time_s : NAN, "s");
        }
        /* the host work under the GPU's step and beyond it (the engine's overlap) */
        snprintf(name, sizeof name, "%s_host_hidden_s", steps[k].name);
        row(out, name, ok ? fmin(x->host_hidden_s, x->gpu_s) : NAN, "s");
        snprintf(name, sizeof name, "%s_host_exposed_s", steps[k].name);
        row(out, name, ok ? x->total_s - x->gpu_s : NAN, "s");
    }
}

void output_estimate_csv(FILE *out, const model_spec *m, const device_spec *d,
                         const estimate_request *req, const estimate_result *r)
{
    (void)m;
    (void)d;
    fputs("metric,value,unit\n", out);
    row(out, "engine_host_overlap", req->engine ? req->engine->host_overlap : 0, "1");
    row(out, "params", r->params, "parameters");
    row(out, "params_active", r->params_active, "parameters");
    row(out, "weights_gb", r->weights_bytes / GB, "GB");
    row(out, "kv_gb_per_token", r->kv_bytes_per_token / GB, "GB");
    if (r->halves & ESTIMATE_SERVING)
        csv_serving(out, r);
    if (r->halves & ESTIMATE_TRAINING)
        csv_training(out, req, r);
    /* the explanation (rows added in issue 15) */
    if (r->halves & ESTIMATE_SERVING)
        csv_explanation(out, r);
}

/* The figures compared, in both results: each half's only where both answered it. */
typedef struct compared {
    const char *label, *csv, *unit;
    double datasheet, calibrated;
} compared;

static size_t compared_figures(const estimate_result *a, const estimate_result *b, compared *c)
{
    size_t n = 0;
    bool served = (a->halves & b->halves & ESTIMATE_SERVING)
                  && !((a->refused | b->refused) & ESTIMATE_SERVING);
    if (served) {
        c[n++] = (compared){ "time to first token", "ttft_s", "s", a->first_token.total_s,
                             b->first_token.total_s };
        c[n++] = (compared){ "decode step", "tpot_s", "s", a->decode.total_s,
                             b->decode.total_s };
        c[n++] = (compared){ "best throughput", "throughput_tokens_per_s", "tokens/s",
                             a->throughput.tokens_per_s, b->throughput.tokens_per_s };
    }
    if (a->train_fits && b->train_fits) {
        c[n++] = (compared){ "training step", "train_step_s", "s", a->train.step_s,
                             b->train.step_s };
        c[n++] = (compared){ "training GPU-hours", "train_gpu_hours", "GPU-hours",
                             a->train_gpu_hours, b->train_gpu_hours };
    }
    return n;
}

void output_estimate_compare_text(FILE *out, const char *profile, const estimate_result *datasheet,
                                  const estimate_result *calibrated)
{
    compared c[5];
    size_t n = compared_figures(datasheet, calibrated, c);
    fprintf(out, "\ndatasheet against the profile (%s)\n", profile);
    fprintf(out, "  %-22s %14s %14s  %s\n", "", "datasheet", "profile", "profile / datasheet");
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  %-22s %10.4g %-3s %10.4g %-3s  %.3gx\n", c[i].label, c[i].datasheet,
                !strcmp(c[i].unit, "s") ? "s" : "", c[i].calibrated,
                !strcmp(c[i].unit, "s") ? "s" : "", c[i].calibrated / c[i].datasheet);
    fprintf(out, "  (throughput in output tokens/s on the same devices; the decode step at the "
            "batch above)\n");
}

void output_estimate_compare_csv(FILE *out, const estimate_result *datasheet)
{
    compared c[5];
    size_t n = compared_figures(datasheet, datasheet, c);
    char name[96];
    for (size_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "datasheet_%s", c[i].csv);
        row(out, name, c[i].datasheet, c[i].unit);
    }
}
