/* Training steps from the operators and the planner (models/perf_training.h): each part
 * of a step against its hand-derived value, from the same operator times the inference
 * model gives, and the planner's choices where the answer is known. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "models/memory.h"
#include "models/perf.h"
#include "models/kernel_constants.h"
#include "models/perf_training.h"
#include "support/catalog_fixture.h"

TestSuite(training_plan, .init = test_catalog_setup, .fini = test_catalog_teardown);

/* The forward pass of one micro-batch of `tokens` tokens, its operators as a prefill
 * with logits for every token and no host work. */
static void forward_ops(const model_spec *m, const device_spec *d, precision prec,
                        unsigned tp, double seqs, double seq, perf_breakdown *ops)
{
    perf_profile p = perf_default_profile(d);
    p.host_s = p.host_per_seq_s = p.host_tp_s = p.host_tp_per_seq_s = 0;
    perf_setup s = { .model = m, .device = d, .profile = &p, .weights = prec, .kv = PREC_BF16, .tp = tp };
    perf_batch b = { .prefill_tokens = seqs * seq, .prefill_seqs = seqs,
                     .prefill_last = seqs * seq, .prefill_new_pairs = seqs * seq * seq / 2 };
    perf_iteration(&s, &b, ops);
}

Test(training_plan, a_step_is_the_operators_at_their_backward_multiples)
{
    /* llama-3-8b on one H100 in bf16, 8 sequences of 4096 a step, micro-batches of 1:
     * 8 x (forward + backward): products x 3, attention x 3.5, passes x 3 */
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 1, .pp = 1, .zero_stage = 1, .micro_batch = 1, .seq_len = 4096 };
    training_estimate e = perf_training_step(m, d, &p, PREC_BF16, s, 1, 8);
    perf_breakdown ops;
    forward_ops(m, d, PREC_BF16, 1, 1, 4096, &ops);
    const perf_op_time *o = ops.op;
    double mm = o[OP_QKV].time_s + o[OP_OUT_PROJ].time_s + o[OP_MLP_UP].time_s
                + o[OP_MLP_DOWN].time_s + o[OP_LM_HEAD].time_s;
    double attn = o[OP_ATTN_PREFILL].time_s;
    double pass = o[OP_EMBED].time_s + o[OP_NORM].time_s + o[OP_ROPE].time_s
                  + o[OP_ACT].time_s + o[OP_ADD].time_s + o[OP_FINAL_NORM].time_s;
    cr_expect_eq(e.setup.microbatches, 8);
    cr_expect_float_eq(e.matmul_s, 8 * 3 * mm, 1e-9 * e.matmul_s);
    cr_expect_float_eq(e.attention_s, 8 * 3.5 * attn, 1e-9 * e.attention_s);
    cr_expect_float_eq(e.memory_pass_s, 8 * 3 * pass, 1e-9 * e.memory_pass_s);
    cr_expect_float_eq(e.compute_s, e.matmul_s + e.attention_s + e.memory_pass_s, 1e-12);
    /* one device: no communication, no bubble; Adam over 8.03e9 parameters, 28 bytes
     * each, at the elementwise pass's rate */
    cr_expect_eq(e.tp_comm_s, 0);
    cr_expect_eq(e.bubble_s, 0);
    cr_expect_eq(e.dp_comm_s, 0);
    const perf_pass_constants *act = &p.family->pass[PASS_ACT];
    double tokens = model_params(m) / m->hidden;
    double opt = 28 * model_params(m) / (d->bandwidth_bytes_per_s * act->efficiency
                                         * tokens / (tokens + act->tokens_half));
    cr_expect_float_eq(e.optimizer_s, opt, 1e-9 * opt);
    cr_expect_float_eq(e.step_s, e.compute_s + e.optimizer_s, 1e-12);
    /* MFU: 6 N per token over the bf16 peak */
    double mfu = 6 * model_params_active(m) * 8 * 4096 / (e.step_s * d->peak_flops[PREC_BF16]);
    cr_expect_float_eq(e.mfu, mfu, 1e-12);
}

Test(training_plan, recomputed_layers_run_their_forward_again)
{
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 1, .pp = 1, .zero_stage = 1, .micro_batch = 1, .seq_len = 4096 };
    training_estimate none = perf_training_step(m, d, &p, PREC_BF16, s, 1, 4);
    s.recompute_layers = 32;
    training_estimate all = perf_training_step(m, d, &p, PREC_BF16, s, 1, 4);
    s.recompute_layers = 8;
    training_estimate quarter = perf_training_step(m, d, &p, PREC_BF16, s, 1, 4);
    /* all layers: the forward once more apart from embedding, final norm and LM head */
    perf_breakdown ops;
    forward_ops(m, d, PREC_BF16, 1, 1, 4096, &ops);
    double forward = 0;
    for (int i = 0; i < OP_COUNT; i++)
        if (i != OP_HOST && i != OP_ATTN_COPY && i != OP_EMBED && i != OP_FINAL_NORM
            && i != OP_LM_HEAD)
            forward += ops.op[i].time_s;
    cr_expect_float_eq(all.recompute_s, 4 * forward, 1e-9 * forward);
    cr_expect_float_eq(quarter.recompute_s, all.recompute_s / 4, 1e-9 * forward);
    cr_expect_eq(none.recompute_s, 0);
    /* and keep 2 s b h bytes a layer instead of 34 s b h (tp 1): 32 x 32 s b h less */
    double sbh = 4096.0 * m->hidden;
    cr_expect_float_eq(none.memory.activation_bytes - all.memory.activation_bytes,
                       32 * 32 * sbh, 1);
}

Test(training_plan, the_interleaved_schedule_divides_the_bubble_by_its_chunks)
{
    /* llama-2-70b, tp 8, pp 4 on 32 H100s (dp 1): 16 micro-batches; the bubble is
     * (pp - 1) / v micro-batch slots plus the fill and drain sends, which v leaves */
    const model_spec *m = test_model("llama-2-70b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 8, .pp = 4, .zero_stage = 1, .micro_batch = 1,
                         .recompute_layers = 20, .seq_len = 4096 };
    training_estimate one = perf_training_step(m, d, &p, PREC_BF16, s, 32, 16);
    s.virtual_stages = 4;
    training_estimate four = perf_training_step(m, d, &p, PREC_BF16, s, 32, 16);
    cr_expect_eq(one.setup.microbatches, 16);
    double slot = (one.compute_s + one.recompute_s + one.tp_comm_s) / 16;
    double sends = one.bubble_s - 3 * slot;
    cr_expect_gt(sends, 0);
    cr_expect_lt(sends, 0.01 * one.bubble_s, "the sends are a small part");
    cr_expect_float_eq(four.bubble_s, 3 * slot / 4 + sends, 1e-9 * one.bubble_s);
    /* the interleaved schedule keeps more micro-batches in flight: 1 + 3 / 16 times */
    training_setup k = four.setup;
    double per_mb = 20 * memory_training_layer_activations(m, &k, true);
    cr_expect_float_eq(four.memory.activation_bytes, per_mb * 4 * (1 + 3.0 / 16), 1);
}

Test(training_plan, the_planner_recomputes_the_fewest_layers_that_fit)
{
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_constraints c = TRAINING_FREE;
    c.tp = 1;
    c.pp = 1;
    c.micro_batch = 2;
    training_estimate e;
    /* 8 GPUs, 2 sequences of 8192 a micro-batch: the activations do not fit whole */
    cr_assert(perf_training_plan_within(m, d, &p, PREC_BF16, 8, 8192, 64, c, &e));
    unsigned k = e.setup.recompute_layers;
    cr_expect(k > 0 && k < 32, "%u layers", k);
    training_setup fewer = e.setup;
    fewer.recompute_layers = k - 1;
    cr_expect_not(memory_training(m, d, &fewer).fits, "%u layers would have fitted", k - 1);
    cr_expect(strstr(e.why, "nothing fits without recomputing layers"), "%s", e.why);
}

Test(training_plan, a_model_that_must_shard_takes_fsdp_over_deep_pipelines)
{
    /* llama-2-13b on one node of 8 H100s: 13B x 16 bytes = 208 GB of states; only the
     * optimizer sharded (ZeRO-1), a replica needs a 4-deep pipeline, whose bubble and
     * fill cost more than FSDP's gathers, which hide behind the layers over NVLink */
    const model_spec *m = test_model("llama-2-13b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_estimate e;
    cr_assert(perf_training_plan(m, d, &p, PREC_BF16, 8, 4096, 256, &e));
    cr_expect_eq(e.setup.zero_stage, 3, "ZeRO-%u", e.setup.zero_stage);
    cr_expect_eq(e.setup.pp, 1);
    cr_expect_eq(e.setup.tp, 1);
    cr_expect(strstr(e.why, "sharding only the optimizer: ") != NULL, "%s", e.why);
    cr_expect(strstr(e.why, "the runner-up (tp ") != NULL, "%s", e.why);
    training_constraints low = TRAINING_FREE;
    low.zero_stage = 1;
    training_estimate z1;
    cr_assert(perf_training_plan_within(m, d, &p, PREC_BF16, 8, 4096, 256, low, &z1));
    cr_expect_gt(z1.setup.tp * z1.setup.pp, 1, "ZeRO-1 alone needs model parallelism");
    cr_expect_gt(z1.step_s, e.step_s);
    /* FSDP's gathers (weights twice) and reduce-scatter per micro-batch, 3 x 7/8 of the
     * 16-bit weights over the node, mostly hidden: exposed under a tenth of the step */
    cr_expect_gt(e.dp_comm_s, 0);
    cr_expect_lt(e.dp_comm_s, 0.1 * e.step_s);
}

/* ZeRO-1 of llama-3-8b at tp `tp` on `gpus` H100s: the reduce-scatter and the all-gather,
 * each half of an all-reduce of the 16-bit gradients (of a tp rank's share) over the dp
 * ranks at `rate`, hidden but for one layer's bucket when the backward (forward) pass is
 * longer. */
static void expect_reduction_hidden_but_a_bucket(unsigned tp, unsigned gpus, double rate)
{
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    cr_assert_float_eq(p.network_bytes_per_s * p.network_efficiency, 47e9, 1);
    training_setup s = { .tp = tp, .pp = 1, .zero_stage = 1, .micro_batch = 1,
                         .seq_len = 4096, .recompute_layers = 32 };
    training_estimate e = perf_training_step(m, d, &p, PREC_BF16, s, gpus, 64);
    unsigned dp = gpus / tp;
    double half = perf_allreduce_s(2 * model_params(m) / tp, dp, rate, p.link_latency_s) / 2;
    double n = e.setup.microbatches;
    double backward = (e.matmul_s * 2 / 3 + e.attention_s * 2.5 / 3.5 + e.memory_pass_s * 2 / 3
                       + e.tp_comm_s / 2) / n;
    double forward = (e.matmul_s / 3 + e.attention_s / 3.5 + e.memory_pass_s / 3
                      + e.tp_comm_s / 2) / n;
    double expect = fmax(half - backward * 31 / 32, half / 32) + fmax(half - forward * 31 / 32, half / 32);
    cr_expect_float_eq(e.dp_comm_s, expect, 1e-9 * half, "tp %u: dp %g, expected %g", tp,
                       e.dp_comm_s, expect);
    cr_expect_lt(e.dp_comm_s, 2 * half, "some of it hidden");
    cr_expect_geq(e.dp_comm_s, 2 * half / 32 - 1e-12, "a layer's bucket never hidden");
    /* in series with the passes (Megatron-LM without --overlap-grad-reduce): both halves
     * whole, nothing else moved */
    s.no_dp_overlap = true;
    training_estimate serial = perf_training_step(m, d, &p, PREC_BF16, s, gpus, 64);
    cr_expect_float_eq(serial.dp_comm_s, 2 * half, 1e-9 * half, "tp %u", tp);
    cr_expect_float_eq(serial.step_s - e.step_s, 2 * half - e.dp_comm_s, 1e-9 * half);
}

Test(training_plan, gradient_reduction_hides_behind_the_backward_pass)
{
    /* over 2 nodes at tp 1 (dp 16): the ring between the nodes runs over the 8 NICs of
     * each node at once, 8 x 47 GB/s (NCCL's maintainers' 46-48 GB/s a 400 Gb/s NIC),
     * under H100's 450 GB/s NVLink within */
    expect_reduction_hidden_but_a_bucket(1, 16, 8 * 47e9);
    /* tp 2 over 4 nodes (dp 16): 4 ranks of a group a node, over their 4 NICs */
    expect_reduction_hidden_but_a_bucket(2, 32, 4 * 47e9);
    /* tp 8 over 16 nodes (dp 16): one a node, a ring over one NIC each */
    expect_reduction_hidden_but_a_bucket(8, 128, 47e9);
    /* tp 1 on 10 GPUs: 8 of the ring on one node and 2 on the next, whose 2 NICs carry
     * what the first node's 8 do */
    expect_reduction_hidden_but_a_bucket(1, 10, 2 * 47e9);
}

Test(training_plan, fp8_training_is_faster_than_bf16_but_under_twice)
{
    /* the products at the fp8 share of the fp8 peak; attention and the passes stay 16-bit
     * and the casts are added, so the step shortens by less than the peak doubles */
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 1, .pp = 1, .zero_stage = 1, .micro_batch = 1, .seq_len = 4096 };
    training_estimate bf = perf_training_step(m, d, &p, PREC_BF16, s, 1, 8);
    training_estimate f8 = perf_training_step(m, d, &p, PREC_FP8, s, 1, 8);
    double speedup = bf.step_s / f8.step_s;
    cr_expect(speedup > 1.1 && speedup < 2, "fp8 speed-up %g", speedup);
    cr_expect_float_eq(f8.attention_s, bf.attention_s, 1e-9 * bf.attention_s);
    cr_expect_gt(f8.memory_pass_s, bf.memory_pass_s, "the casts");
}

Test(training_plan, fp8_casts_each_routed_copy_at_its_experts_width)
{
    /* qwen3-30b-a3b on one H100, a micro-batch of 4096 tokens: Transformer Engine casts
     * each product's input forward and its output gradient backward, 3 bytes an element.
     * A layer's inputs a token: the hidden state into q, k, v (2048), the heads' values
     * into the output projection (32 x 128), and each of the 8 routed copies into its
     * expert (2048) and through its down projection (768); its outputs: q, k, v
     * ((32 + 2 x 4) x 128), the output projection's 2048, and each copy's gate and up
     * (2 x 768) and down (2048).  The router and the LM head stay 16-bit. */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 1, .pp = 1, .zero_stage = 1, .micro_batch = 1, .seq_len = 4096 };
    training_estimate bf = perf_training_step(m, d, &p, PREC_BF16, s, 1, 4);
    training_estimate f8 = perf_training_step(m, d, &p, PREC_FP8, s, 1, 4);
    double T = 4096, L = 48;
    double in = L * T * (2048 + 32 * 128 + 8 * (2048 + 768));
    double out = L * T * ((32 + 2 * 4) * 128 + 2048 + 8 * (2 * 768 + 2048));
    const perf_pass_constants *act = &p.family->pass[PASS_ACT];
    double rate = d->bandwidth_bytes_per_s * act->efficiency * T / (T + act->tokens_half);
    double casts = 4 * 3 * (in + out) / rate; /* four micro-batches */
    cr_expect_float_eq(f8.memory_pass_s - bf.memory_pass_s, casts, 1e-9 * casts);
}

Test(training_plan, expert_parallelism_splits_the_experts_and_pays_its_all_to_alls)
{
    /* qwen3-30b-a3b on 8 H100s, ep 8, ZeRO-1: the routed experts (48 layers x 128 x 3 x
     * 2048 x 768) split 8 ways, their optimizer states sharded over dp / ep = 1 rank */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 1, .pp = 1, .ep = 8, .zero_stage = 1, .micro_batch = 1,
                         .seq_len = 4096, .recompute_layers = 48 };
    training_estimate e = perf_training_step(m, d, &p, PREC_BF16, s, 8, 64);
    double routed = 48.0 * 128 * 3 * 2048 * 768, dense = model_params(m) - routed;
    cr_expect_float_eq(e.memory.weights_bytes, 2 * (dense + routed / 8), 1);
    cr_expect_float_eq(e.memory.optimizer_bytes, 12 * (dense / 8 + routed / 8), 1);
    /* two all-to-alls a mixture layer each way: 4096 tokens x 8 experts x 2048 x 2 bytes
     * x 7/8 over NVLink at the node's measured send/recv rate, plus its start-up; 8
     * micro-batches */
    double bytes = 4096.0 * 8 * 2048 * 2 * 7 / 8;
    double a2a = 2 * 48 * perf_node_p2p_s(p.node, bytes, device_link_bytes_per_s(d));
    cr_expect_eq(e.setup.microbatches, 8);
    cr_expect_float_eq(e.ep_comm_s, 8 * 2 * a2a, 1e-9 * e.ep_comm_s);
    /* without expert parallelism there is none, and every device holds every expert */
    s.ep = 1;
    training_estimate none = perf_training_step(m, d, &p, PREC_BF16, s, 8, 64);
    cr_expect_eq(none.ep_comm_s, 0);
    cr_expect_float_eq(none.memory.weights_bytes, 2 * model_params(m), 1);
}

/* ZeRO-1's reduce-scatter and all-gather (each `half`) with one micro-batch a step: each
 * hidden behind all but a layer's share of its pass (the backward, the forward), a layer's
 * bucket at least. */
static double exposed_of_one_microbatch(const training_estimate *e, double half,
                                        double layers)
{
    double backward = e->matmul_s * 2 / 3 + e->attention_s * 2.5 / 3.5 + e->memory_pass_s * 2 / 3;
    double forward = e->matmul_s / 3 + e->attention_s / 3.5 + e->memory_pass_s / 3;
    double reach = 1 - 1 / layers;
    return fmax(half - backward * reach, half / layers) + fmax(half - forward * reach, half / layers);
}

Test(training_plan, expert_data_parallelism_reduces_each_expert_over_its_own_replicas)
{
    /* qwen3-30b-a3b on 64 H100s, pp 1, ep 8, ZeRO-1: dp 64.  A device holds the dense
     * weights (whole) and 1/8 of the routed experts; the dense gradients reduce over the
     * 64 ranks, an expert's over the 8 that hold it.  Each half of the reduction (the
     * reduce-scatter, then the all-gather) is that volume's ring share; with a one-layer
     * micro-batch time far below it nothing hides but the fraction the backward covers.
     * The dense ring crosses the 8 nodes over all 8 NICs of each (8 x 47 GB/s, NCCL's
     * maintainers' 46-48 GB/s a 400 Gb/s NIC); an expert's 8 holders are one a node,
     * their ring over one NIC each.  Compared with no expert parallelism, the experts'
     * share goes from 64 ranks of the whole over 8 NICs a node to 8 ranks of an eighth
     * over one: a device sends an eighth as much, each NIC carries as much, and the ring
     * takes 7 steps, not 63. */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 1, .pp = 1, .ep = 8, .zero_stage = 1, .micro_batch = 1,
                         .seq_len = 4096, .recompute_layers = 48 };
    training_estimate e = perf_training_step(m, d, &p, PREC_BF16, s, 64, 64);
    double routed = 48.0 * 128 * 3 * 2048 * 768, dense = model_params(m) - routed;
    double nic = 47e9, lat = p.link_latency_s;
    cr_assert_float_eq(p.network_bytes_per_s * p.network_efficiency, nic, 1);
    double half = perf_allreduce_s(2 * dense, 64, 8 * nic, lat) / 2
                  + perf_allreduce_s(2 * routed / 8, 8, nic, lat) / 2;
    s.ep = 1;
    training_estimate whole = perf_training_step(m, d, &p, PREC_BF16, s, 64, 64);
    double half_whole = perf_allreduce_s(2 * (dense + routed), 64, 8 * nic, lat) / 2;
    /* the exposed part is the same function of the volume in both: their difference
     * is the difference of the volumes' times when neither hides more than a layer's
     * share (1 micro-batch: no later chunks) */
    cr_expect_lt(e.dp_comm_s, whole.dp_comm_s, "%g vs %g", e.dp_comm_s, whole.dp_comm_s);
    /* one micro-batch: each half hidden behind 47/48 of its pass (the backward for the
     * reduce-scatter, the forward for the all-gather), a layer's bucket at least */
    cr_assert_eq(e.setup.microbatches, 1);
    double expect = exposed_of_one_microbatch(&e, half, 48);
    cr_expect_float_eq(e.dp_comm_s, expect, 1e-9 * expect, "%g, by hand %g", e.dp_comm_s, expect);
    expect = exposed_of_one_microbatch(&whole, half_whole, 48);
    cr_expect_float_eq(whole.dp_comm_s, expect, 1e-9 * expect, "%g, by hand %g",
                       whole.dp_comm_s, expect);
    /* Adam: the same states per rank either way (dense / 64 + an eighth of the experts
     * over 8 ranks = all over 64) */
    cr_expect_float_eq(e.optimizer_s, whole.optimizer_s, 1e-9 * e.optimizer_s);
}

/* DualPipe's data-parallel groups: a stage's dp ranks, packed in their nodes, and its
 * mirror's in theirs; at tp 1 each node holds 8 of a group, whatever the pipeline between
 * the two.  As pp doubles at dp 8 a rank holds half the layers and reduces half the
 * bytes over the same 16 ranks on the same NICs: what shows (a stage's layer's bucket,
 * its share of the ring's 15 latency steps) stays within 2% (until 2026-12-07 the group
 * was spread over the whole pipeline's span, one rank a node at pp 8: 5.0, 14.1, 34.6 ms
 * exposed at pp 2, 4, 8; now 5.02, 5.04, 5.08). */
Test(training_plan, dualpipe_reduces_over_the_nodes_its_stages_fill)
{
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    double first = 0;
    for (unsigned pp = 2; pp <= 8; pp *= 2) {
        training_setup s = { .tp = 1, .pp = pp, .dualpipe = true, .zero_stage = 1,
                             .micro_batch = 1, .seq_len = 4096 };
        training_estimate e = perf_training_step(m, d, &p, PREC_BF16, s, 8 * pp, 8 * 4 * pp);
        cr_assert(e.setup.dualpipe, "pp %u", pp);
        if (!first)
            first = e.dp_comm_s;
        cr_expect_leq(e.dp_comm_s, 1.02 * first, "pp %u: %g, pp 2 %g", pp, e.dp_comm_s, first);
    }
}

Test(training_plan, dualpipe_halves_the_stages_in_the_bubble_and_hides_the_all_to_alls)
{
    /* qwen3-30b-a3b, pp 4, ep 8, dp 8 on 32 H100s, 16 micro-batches of one sequence.
     * DualPipe's bubble is (pp / 2 - 1)(F&B + B - 3W) = 1 x (F + 2B - 3W), with F a
     * micro-batch's forward on a stage, B its backward (with the recomputation) and W
     * the weights' half of the backward products; the all-to-alls show only past the
     * paired chunk's computation (here they do not); each device holds two stages'
     * parameters (each stage held by it and its mirror pipeline rank, so the optimizer's
     * shards spread over twice the ranks), and pp + 1 micro-batches' activations. */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 1, .pp = 4, .ep = 8, .zero_stage = 1, .micro_batch = 1,
                         .seq_len = 4096, .recompute_layers = 12 };
    training_estimate one = perf_training_step(m, d, &p, PREC_BF16, s, 32, 128);
    s.dualpipe = true;
    training_estimate dual = perf_training_step(m, d, &p, PREC_BF16, s, 32, 128);
    cr_assert_eq(dual.setup.microbatches, 16);
    cr_expect_gt(one.ep_comm_s, 0);
    /* the paired chunk's computation covers them; what shows is the SMs they take from
     * it, DeepSeek-V3's 20 of 132 */
    cr_expect_float_eq(dual.ep_comm_s, 20.0 / 132 * one.ep_comm_s, 1e-9 * one.ep_comm_s,
                       "under the paired chunk");
    cr_expect_float_eq(dual.compute_s, one.compute_s, 1e-12);
    /* F and B from the step's parts: forward products are a third of all products,
     * forward attention 1 / 3.5 of attention; W half the backward products.  The
     * forward's all-to-alls (half of what shows, each direction covered alike) are F's */
    double n = 16;
    double pass_f = one.memory_pass_s / n / 3; /* bf16: no casts, backward passes x 2 */
    double f = one.matmul_s / n / 3 + one.attention_s / n / 3.5 + pass_f
               + one.tp_comm_s / n / 2 + dual.ep_comm_s / n / 2;
    double b = (one.compute_s + one.recompute_s + one.tp_comm_s + dual.ep_comm_s) / n - f;
    double w = one.matmul_s / n / 3;
    cr_expect_float_eq(dual.bubble_s, f + 2 * b - 3 * w, 1e-9 * dual.bubble_s);
    cr_expect_lt(dual.bubble_s, one.bubble_s);
    /* memory: weights and (ZeRO-1) gradients twice over, the optimizer's shard the same;
     * so is the optimizer step's time */
    cr_expect_float_eq(dual.memory.weights_bytes, 2 * one.memory.weights_bytes, 1);
    cr_expect_float_eq(dual.memory.gradient_bytes, 2 * one.memory.gradient_bytes, 1);
    cr_expect_float_eq(dual.memory.optimizer_bytes, one.memory.optimizer_bytes, 1);
    cr_expect_float_eq(dual.optimizer_s, one.optimizer_s, 1e-9 * one.optimizer_s);
    /* the gradients' reduction: twice the bytes a device over twice the ranks, across
     * the pipeline's span (the network here, NVLink for 1F1B's 8 ranks in a node) */
    cr_expect_gt(dual.dp_comm_s, one.dp_comm_s);
    /* without recomputation the first stage's 5 micro-batches in flight (4 in 1F1B)
     * outweigh the last stage's one and its logits */
    s.recompute_layers = 0;
    training_estimate kept = perf_training_step(m, d, &p, PREC_BF16, s, 32, 128);
    training_setup k = kept.setup;
    double per_mb = 12 * memory_training_layer_activations(m, &k, false);
    cr_expect_float_eq(kept.memory.activation_bytes, per_mb * 5, 1);
    s.dualpipe = false;
    cr_expect_float_eq(perf_training_step(m, d, &p, PREC_BF16, s, 32, 128).memory.activation_bytes,
                       per_mb * 4, 1);
    /* an odd pp cannot pair its stages: read as 1F1B */
    training_setup odd = { .tp = 1, .pp = 3, .ep = 8, .zero_stage = 1, .micro_batch = 1,
                           .seq_len = 4096, .recompute_layers = 16, .dualpipe = true };
    training_estimate three = perf_training_step(m, d, &p, PREC_BF16, odd, 24, 96);
    cr_expect_not(three.setup.dualpipe);
    odd.dualpipe = false;
    cr_expect_float_eq(three.step_s, perf_training_step(m, d, &p, PREC_BF16, odd, 24, 96).step_s,
                       1e-12);
    /* the planner takes it only when imposed, with pp and the micro-batches even and at
     * least 2 pp micro-batches, one chunk a stage, the weights not sharded */
    training_constraints c = TRAINING_FREE;
    c.tp = 1;
    c.pp = 4;
    c.ep = 8;
    c.micro_batch = 1;
    c.dualpipe = true;
    training_estimate planned;
    cr_assert(perf_training_plan_within(m, d, &p, PREC_BF16, 32, 4096, 128, c, &planned));
    cr_expect(planned.setup.dualpipe);
    cr_expect_not(perf_training_plan_within(m, d, &p, PREC_BF16, 32, 4096, 120, c, &planned),
                  "15 micro-batches: odd");
    cr_assert(perf_training_plan_within(m, d, &p, PREC_BF16, 32, 4096, 64, c, &planned),
              "8 micro-batches: 2 pp");
    cr_expect_not(perf_training_plan_within(m, d, &p, PREC_BF16, 32, 4096, 48, c, &planned),
                  "6 micro-batches: fewer than 2 pp");
    c.virtual_stages = 2;
    cr_expect_not(perf_training_plan_within(m, d, &p, PREC_BF16, 32, 4096, 128, c, &planned),
                  "interleaved");
    c.virtual_stages = 0;
    c.zero_stage = 3;
    cr_expect_not(perf_training_plan_within(m, d, &p, PREC_BF16, 32, 4096, 128, c, &planned),
                  "ZeRO-3");
}

Test(training_plan, lora_trains_adapters_on_a_frozen_base)
{
    /* llama-3-8b on 8 H100s, ZeRO-1, 64 sequences of 4096: with a frozen base the
     * backward pass runs the products once (data gradients) instead of twice, so the
     * products take 2/3 of the full run's time; attention, memory passes and the
     * tensor-parallel all-reduces are the same; no gradients or optimizer states in
     * memory, no optimizer step, no gradient reduction; MFU counts 4 N a token */
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 2, .pp = 1, .zero_stage = 1, .micro_batch = 1, .seq_len = 4096,
                         .recompute_layers = 32 };
    training_estimate full = perf_training_step(m, d, &p, PREC_BF16, s, 8, 64);
    s.lora = true;
    training_estimate lora = perf_training_step(m, d, &p, PREC_BF16, s, 8, 64);
    cr_expect_float_eq(lora.matmul_s, full.matmul_s * 2 / 3, 1e-9 * full.matmul_s);
    cr_expect_float_eq(lora.attention_s, full.attention_s, 1e-12);
    cr_expect_float_eq(lora.memory_pass_s, full.memory_pass_s, 1e-12);
    cr_expect_float_eq(lora.tp_comm_s, full.tp_comm_s, 1e-12);
    cr_expect_float_eq(lora.recompute_s, full.recompute_s, 1e-12);
    cr_expect_gt(full.dp_comm_s, 0);
    cr_expect_eq(lora.dp_comm_s, 0);
    cr_expect_gt(full.optimizer_s, 0);
    cr_expect_eq(lora.optimizer_s, 0);
    cr_expect_eq(lora.memory.gradient_bytes, 0);
    cr_expect_eq(lora.memory.optimizer_bytes, 0);
    cr_expect_float_eq(lora.memory.weights_bytes, full.memory.weights_bytes, 1);
    cr_expect_float_eq(lora.mfu, 4 * model_params_active(m) * lora.tokens_per_step
                                 / (lora.step_s * 8 * d->peak_flops[PREC_BF16]), 1e-12);
    /* under FSDP the frozen weights are still gathered, forward and backward, but no
     * gradient is reduce-scattered: less traffic than full training's (16 ranks over two
     * nodes and short sequences, so the network's transfers show) */
    training_setup f = { .tp = 1, .pp = 1, .zero_stage = 3, .micro_batch = 1, .seq_len = 512,
                         .lora = true };
    training_estimate fsdp = perf_training_step(m, d, &p, PREC_BF16, f, 16, 16);
    f.lora = false;
    training_estimate fsdp_full = perf_training_step(m, d, &p, PREC_BF16, f, 16, 16);
    cr_expect_gt(fsdp.dp_comm_s, 0);
    cr_expect_lt(fsdp.dp_comm_s, fsdp_full.dp_comm_s);
    /* under DualPipe a frozen base has no weight-gradient work to fill the bubble with:
     * (pp / 2 - 1)(F&B + B - 3W) with W = 0, at pp 4 F + 2B */
    training_setup dp4 = { .tp = 1, .pp = 4, .zero_stage = 1, .micro_batch = 1,
                           .seq_len = 4096, .lora = true };
    training_estimate one = perf_training_step(m, d, &p, PREC_BF16, dp4, 32, 128);
    dp4.dualpipe = true;
    training_estimate dual = perf_training_step(m, d, &p, PREC_BF16, dp4, 32, 128);
    double n = one.setup.microbatches;
    double fwd = one.matmul_s / n / 2 + one.attention_s / n / 3.5 + one.memory_pass_s / n / 3
                 + one.tp_comm_s / n / 2;
    double bwd = (one.compute_s + one.recompute_s + one.tp_comm_s) / n - fwd;
    cr_expect_float_eq(dual.bubble_s, fwd + 2 * bwd, 1e-9 * dual.bubble_s);
    /* the planner keeps it */
    training_constraints c = TRAINING_FREE;
    c.lora = true;
    training_estimate planned;
    cr_assert(perf_training_plan_within(m, d, &p, PREC_BF16, 8, 4096, 64, c, &planned));
    cr_expect(planned.setup.lora);
}

Test(training_plan, zero3_gathers_show_where_the_layer_does_not_cover_them)
{
    /* llama-2-7b, ZeRO-3 (FSDP) over 8 H100s of one node: a layer's gather is its
     * 202 M parameters in 16 bits over NVLink, 7/8 of them in, (n - 1) start-ups; it
     * hides behind the previous layer's work at any micro-batch here, so what shows is
     * each pass's first gather and the backward pass's last reduce-scatter (as large),
     * every micro-batch: n x 3 ag */
    const model_spec *m = test_model("llama-2-7b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 1, .pp = 1, .zero_stage = 3, .micro_batch = 4,
                         .seq_len = 4096 };
    training_estimate e = perf_training_step(m, d, &p, PREC_BF16, s, 8, 64);
    double ag = perf_allreduce_s(2 * model_params_layer(m), 8, device_link_bytes_per_s(d),
                                 p.link_latency_s) / 2;
    cr_expect_eq(e.setup.microbatches, 2);
    cr_expect_float_eq(e.dp_comm_s, 2 * 3 * ag, 1e-9 * e.dp_comm_s);
    /* without prefetching every layer waits for its gather, forward and backward, and
     * for its gradients' reduce-scatter: 32 layers x 3 ag, every micro-batch */
    s.no_dp_overlap = true;
    training_estimate serial = perf_training_step(m, d, &p, PREC_BF16, s, 8, 64);
    cr_expect_float_eq(serial.dp_comm_s, 2 * 32 * 3 * ag, 1e-9 * serial.dp_comm_s);
    s.no_dp_overlap = false;
    /* the same over 1,024 GPUs (the gathers cross the network) at micro-batches of 8
     * down to 1 sequence, 1,024 sequences a step: the exposed gather time a sequence
     * grows as the micro-batch shrinks, as a layer's work falls below its transfer */
    double last = 0;
    for (unsigned mbs = 8; mbs >= 1; mbs /= 2) {
        s.micro_batch = mbs;
        training_estimate big = perf_training_step(m, d, &p, PREC_BF16, s, 1024, 1024 * 8 / 8);
        double per_seq = big.dp_comm_s / (big.setup.microbatches * mbs);
        cr_expect_gt(per_seq, last, "micro-batch %u: %g s a sequence", mbs, per_seq);
        last = per_seq;
        if (mbs == 1) /* most of the step is spent gathering */
            cr_expect_gt(big.dp_comm_s, 0.5 * big.step_s, "%g of %g", big.dp_comm_s,
                         big.step_s);
        /* in series never costs less than overlapped, however little the work covers */
        s.no_dp_overlap = true;
        training_estimate in_series = perf_training_step(m, d, &p, PREC_BF16, s, 1024, 1024);
        s.no_dp_overlap = false;
        cr_expect_geq(in_series.dp_comm_s, big.dp_comm_s, "micro-batch %u", mbs);
    }
}

Test(training_plan, hsdp_gathers_within_its_shard_group)
{
    /* llama-2-7b on 64 H100s, ZeRO-3 sharded within groups of 8 (a node): the gathers
     * run over NVLink, the states are 8 ways instead of 64, and the gradients all-reduce
     * once a step across the 8 groups */
    const model_spec *m = test_model("llama-2-7b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 1, .pp = 1, .zero_stage = 3, .micro_batch = 1,
                         .seq_len = 4096 };
    training_estimate full = perf_training_step(m, d, &p, PREC_BF16, s, 64, 256);
    s.shard_ranks = 8;
    training_estimate hsdp = perf_training_step(m, d, &p, PREC_BF16, s, 64, 256);
    double N = model_params(m);
    cr_expect_float_eq(full.memory.optimizer_bytes, 12 * N / 64, 1);
    cr_expect_float_eq(hsdp.memory.optimizer_bytes, 12 * N / 8, 1);
    cr_expect_lt(hsdp.dp_comm_s, full.dp_comm_s);
}

Test(training_plan, zero_bubble_fills_the_drain_with_the_weight_gradients)
{
    /* llama-2-70b, tp 8, pp 4 on 32 H100s: ZB-H1's bubble is 1F1B's less (pp - 1) x 2 W,
     * W a micro-batch's weight-gradient products: half its backward products, which
     * are twice its forward products, so W = matmul_s / (3 n) */
    const model_spec *m = test_model("llama-2-70b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 8, .pp = 4, .zero_stage = 1, .micro_batch = 1,
                         .recompute_layers = 20, .seq_len = 4096 };
    training_estimate one = perf_training_step(m, d, &p, PREC_BF16, s, 32, 16);
    s.zero_bubble = true;
    training_estimate zb = perf_training_step(m, d, &p, PREC_BF16, s, 32, 16);
    double w = one.matmul_s / (3 * 16);
    cr_expect_float_eq(one.bubble_s - zb.bubble_s, 3 * 2 * w, 1e-9 * one.bubble_s);
    cr_expect(zb.setup.zero_bubble);
    cr_expect_float_eq(zb.memory.total_bytes, one.memory.total_bytes, 1, "1F1B's memory");
    /* with interleaving it is not ZB-H1 */
    s.virtual_stages = 2;
    cr_expect(!perf_training_step(m, d, &p, PREC_BF16, s, 32, 16).setup.zero_bubble);
}

Test(training_plan, selective_and_full_recomputation_memory_and_flops)
{
    /* llama-2-13b, tp 4 (sequence parallel), pp 1 on 8 H100s, micro-batch 1 of 4096:
     * a layer keeps 34 s b h / t kept whole, 2 s b h / t recomputed in full (its input,
     * split along the sequence); selective recomputation keeps as much as none with
     * flash attention and runs each layer's attention forward again: n x attention_f,
     * attention_s / 3.5 */
    const model_spec *m = test_model("llama-2-13b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 4, .pp = 1, .zero_stage = 1, .micro_batch = 1,
                         .seq_len = 4096 };
    double sbh = 4096.0 * m->hidden;
    cr_expect_float_eq(memory_training_layer_activations(m, &s, false), 34 * sbh / 4, 1);
    cr_expect_float_eq(memory_training_layer_activations(m, &s, true), 2 * sbh / 4, 1);
    training_estimate none = perf_training_step(m, d, &p, PREC_BF16, s, 8, 16);
    s.selective = true;
    training_estimate sel = perf_training_step(m, d, &p, PREC_BF16, s, 8, 16);
    cr_expect_float_eq(sel.memory.activation_bytes, none.memory.activation_bytes, 1);
    cr_expect_eq(none.recompute_s, 0);
    cr_expect_float_eq(sel.recompute_s, none.attention_s / 3.5, 1e-9 * sel.recompute_s);
    /* full recomputation of every layer: a forward pass of each layer again, and 40
     * layers x 2 s b h / t of activations for the one micro-batch in flight + logits */
    s.selective = false;
    s.recompute_layers = 40;
    training_estimate full = perf_training_step(m, d, &p, PREC_BF16, s, 8, 16);
    perf_breakdown ops;
    forward_ops(m, d, PREC_BF16, 4, 1, 4096, &ops);
    /* a layer's operators of a training step: no paged-cache copy, no LM head or
     * embedding (those run once, not per layer) */
    static const perf_op layer_ops[] = { OP_QKV, OP_OUT_PROJ, OP_MLP_UP, OP_MLP_DOWN,
                                         OP_ATTN_PREFILL, OP_NORM, OP_ROPE, OP_ACT, OP_ADD,
                                         OP_ALLREDUCE };
    double fwd = 0;
    for (size_t i = 0; i < sizeof layer_ops / sizeof layer_ops[0]; i++)
        fwd += ops.op[layer_ops[i]].time_s;
    /* sequence parallelism: the norms and residual adds on a quarter of the tokens (tp 4) */
    fwd -= (ops.op[OP_NORM].time_s + ops.op[OP_ADD].time_s) * (1 - 1.0 / 4);
    cr_expect_float_eq(full.recompute_s, full.setup.microbatches * fwd, 1e-9 * fwd);
    cr_expect_float_eq(full.memory.activation_bytes,
                       40 * 2 * sbh / 4 + full.memory.logits_bytes, 1);
}

Test(training_plan, expert_groups_fold_over_tensor_parallel_ranks_within_a_node)
{
    /* qwen3-30b-a3b, tp 2 on 16 H100s (two nodes), ep 8: with expert tp 1 the expert
     * group is 8 consecutive ranks, one node, its all-to-alls over NVLink at the node's
     * send/recv rate, each device dispatching its sequence-parallel half of the 4096
     * tokens (2048 tokens x 8 experts x 2048 x 2 bytes x 7/8 each way, 48 layers,
     * forward and backward); with expert tp 2 (Megatron's default, tp) it spans 16
     * ranks, two nodes, each device sending all 4096 (the expert's two halves both need
     * every token), and crosses the network */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 2, .pp = 1, .ep = 8, .etp = 1, .zero_stage = 1,
                         .micro_batch = 1, .seq_len = 4096, .recompute_layers = 48 };
    training_estimate in = perf_training_step(m, d, &p, PREC_BF16, s, 16, 64);
    double bytes = 2048.0 * 8 * 2048 * 2 * 7 / 8;
    double a2a = 2 * 48 * perf_node_p2p_s(p.node, bytes, device_link_bytes_per_s(d));
    cr_expect_float_eq(in.ep_comm_s, in.setup.microbatches * 2 * a2a, 1e-9 * in.ep_comm_s);
    s.etp = 2;
    training_estimate across = perf_training_step(m, d, &p, PREC_BF16, s, 16, 64);
    cr_expect_gt(across.ep_comm_s, 2 * in.ep_comm_s);
    /* each device's experts: 1/8 of them whole (etp 1) or half of 1/8 (etp 2) */
    double routed = 48.0 * 128 * 3 * 2048 * 768, dense = model_params(m) - routed;
    cr_expect_float_eq(in.memory.weights_bytes, 2 * (dense / 2 + routed / 8), 1);
    cr_expect_float_eq(across.memory.weights_bytes, 2 * (dense / 2 + routed / 16), 1);
}

Test(training_plan, a_plan_that_cannot_be_taken_says_why_with_its_numbers)
{
    const model_spec *m = test_model("llama-2-70b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_estimate e;
    /* memory: the closest setup's needs against what a GPU holds */
    cr_assert(!perf_training_plan(m, d, &p, PREC_BF16, 2, 4096, 64, &e));
    cr_expect(strstr(e.refusal, "needs ") && strstr(e.refusal, "GB usable"), "%s", e.refusal);
    /* tp past the heads: 64 heads split 48 ways */
    training_constraints c = TRAINING_FREE;
    c.tp = 48;
    cr_assert(!perf_training_plan_within(m, d, &p, PREC_BF16, 96, 4096, 96, c, &e));
    cr_expect(strstr(e.refusal, "tp 48 does not divide the 64 attention heads"), "%s",
              e.refusal);
    /* ep on a dense model; ep x etp not dividing a stage's ranks */
    c = TRAINING_FREE;
    c.ep = 8;
    cr_assert(!perf_training_plan_within(m, d, &p, PREC_BF16, 64, 4096, 64, c, &e));
    cr_expect(strstr(e.refusal, "has no experts"), "%s", e.refusal);
    const model_spec *q = test_model("qwen3-30b-a3b");
    c.tp = 1;
    c.pp = 1;
    c.ep = 16;
    cr_assert(!perf_training_plan_within(q, d, &p, PREC_BF16, 8, 4096, 64, c, &e));
    cr_expect(strstr(e.refusal, "ep x etp = 16 x 1 does not divide the tp x cp x dp = 8"),
              "%s", e.refusal);
    /* DualPipe short of micro-batches: pp 8 needs 16 a rank; 64 over 8 ranks give 8 */
    c = TRAINING_FREE;
    c.dualpipe = true;
    c.pp = 8;
    c.tp = 1;
    c.micro_batch = 1;
    cr_assert(!perf_training_plan_within(q, d, &p, PREC_BF16, 64, 4096, 64, c, &e));
    cr_expect(strstr(e.refusal, "at least 2 pp = 16 micro-batches"), "%s", e.refusal);
    /* a stated dp that the GPUs do not leave */
    c = TRAINING_FREE;
    c.tp = 8;
    c.pp = 1;
    c.dp = 4;
    cr_assert(!perf_training_plan_within(m, d, &p, PREC_BF16, 64, 4096, 64, c, &e));
    cr_expect(strstr(e.refusal, "dp 4 stated, but 64 GPUs over tp x pp x cp = 8 x 1 x 1 "
                     "leave 8"), "%s", e.refusal);
}

Test(training_plan, hsdp_shards_experts_over_no_fewer_than_one_rank)
{
    /* qwen3-30b-a3b on 64 H100s, tp 1, ep 8, etp 1, ZeRO-3 within groups of 4 ranks:
     * a device's 1/8 of the routed experts is held by 64 / 8 = 8 ranks, and a group of 4
     * cannot shard it finer than whole (one rank): its optimizer states are those of its
     * experts whole, 12 x routed / 8, and the dense part's over the 4 */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 1, .pp = 1, .ep = 8, .etp = 1, .zero_stage = 3,
                         .shard_ranks = 4, .micro_batch = 1, .seq_len = 4096,
                         .recompute_layers = 48 };
    training_estimate e = perf_training_step(m, d, &p, PREC_BF16, s, 64, 64);
    double routed = 48.0 * 128 * 3 * 2048 * 768, dense = model_params(m) - routed;
    cr_expect_float_eq(e.memory.optimizer_bytes, 12 * (dense / 4 + routed / 8 / 1), 1);
}

Test(training_plan, attention_backward_runs_at_its_fitted_kernel)
{
    /* llama-3-8b on one H100, one sequence of 8192: with the FA3 backward family the
     * attention's backward is, a layer, 2.5 x the forward's FLOPs (4 d h pairs, pairs =
     * s^2 / 2 causal) at e sat(s, s_half) of the 16-bit peak; without it, 2.5 times the
     * forward's time */
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    const perf_kernel_family *bwd = perf_kernel_family_named("fa3_bwd_bf16_h100");
    cr_assert_not_null(bwd);
    perf_profile p = perf_default_profile(d);
    p.prefill_family = perf_kernel_family_named("fa3_bf16_h100");
    training_setup s = { .tp = 1, .pp = 1, .zero_stage = 1, .micro_batch = 1, .seq_len = 8192 };
    training_estimate plain = perf_training_step(m, d, &p, PREC_BF16, s, 1, 1);
    p.attn_backward_family = bwd;
    training_estimate fitted = perf_training_step(m, d, &p, PREC_BF16, s, 1, 1);
    double forward = plain.attention_s / 3.5;
    double flops = 4.0 * 128 * 32 * 8192.0 * 8192 / 2;
    double e = bwd->attn_backward.efficiency * 8192 / (8192 + bwd->attn_backward.tokens_half);
    double backward = 32 * 2.5 * flops / (d->peak_flops[PREC_BF16] * e);
    cr_expect_float_eq(fitted.attention_s, forward + backward, 1e-6 * fitted.attention_s);
    /* the backward kernel runs at a lower share than the forward (0.78 sat(8192) = 0.56
     * of the peak against FA3's forward at 0.71): slower than 2.5 forwards */
    cr_expect_gt(fitted.attention_s, plain.attention_s);
}

Test(training_plan, sequence_parallelism_splits_the_norms_and_adds)
{
    /* llama-2-13b at tp 4 on 4 H100s, one sequence of 4096: the forward's norms and
     * residual adds run on 1024 tokens of each device, a quarter of the iteration's
     * (which times every token on every device, as serving does) */
    const model_spec *m = test_model("llama-2-13b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 4, .pp = 1, .zero_stage = 1, .micro_batch = 1, .seq_len = 4096 };
    training_estimate e = perf_training_step(m, d, &p, PREC_BF16, s, 4, 1);
    perf_breakdown ops;
    forward_ops(m, d, PREC_BF16, 4, 1, 4096, &ops);
    const perf_op_time *o = ops.op;
    double split = (o[OP_NORM].time_s + o[OP_ADD].time_s + o[OP_FINAL_NORM].time_s) / 4;
    double whole = o[OP_EMBED].time_s + o[OP_ROPE].time_s + o[OP_ACT].time_s;
    cr_expect_float_eq(e.memory_pass_s, 3 * (split + whole), 1e-9 * e.memory_pass_s);
}

Test(training_plan, tensor_parallel_overlap_hides_its_share_under_the_products)
{
    /* llama-2-13b at tp 4: with a framework that runs 48% of its tensor-parallel
     * communication under the products (far longer here), 52% of it is left */
    const model_spec *m = test_model("llama-2-13b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 4, .pp = 1, .zero_stage = 1, .micro_batch = 1, .seq_len = 4096 };
    training_estimate serial = perf_training_step(m, d, &p, PREC_BF16, s, 4, 1);
    p.train_tp_overlap = 0.48;
    training_estimate hidden = perf_training_step(m, d, &p, PREC_BF16, s, 4, 1);
    cr_assert_gt(serial.tp_comm_s, 0);
    cr_assert_gt(serial.matmul_s, serial.tp_comm_s);
    cr_expect_float_eq(hidden.tp_comm_s, 0.52 * serial.tp_comm_s, 1e-9 * serial.tp_comm_s);
    cr_expect_float_eq(serial.step_s - hidden.step_s, 0.48 * serial.tp_comm_s,
                       1e-9 * serial.step_s);
    /* all of it: no more than the products last */
    p.train_tp_overlap = 1;
    cr_expect_float_eq(perf_training_step(m, d, &p, PREC_BF16, s, 4, 1).tp_comm_s, 0, 1e-12);
}

Test(training_plan, without_sequence_parallelism_each_device_keeps_the_whole_sequence)
{
    /* llama-2-13b at tp 4, one sequence of 4096 (Korthikanti et al. 2022): without
     * sequence parallelism a layer keeps s b h (10 + 24 / t), a layer recomputed in full
     * its whole input, 2 s b h, and the norms and adds run on every token */
    const model_spec *m = test_model("llama-2-13b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 4, .pp = 1, .zero_stage = 1, .micro_batch = 1, .seq_len = 4096,
                         .no_sequence_parallel = true };
    double sbh = 4096.0 * m->hidden;
    cr_expect_float_eq(memory_training_layer_activations(m, &s, false), sbh * (10 + 24 / 4.0),
                       1);
    cr_expect_float_eq(memory_training_layer_activations(m, &s, true), 2 * sbh, 1);
    training_estimate e = perf_training_step(m, d, &p, PREC_BF16, s, 4, 1);
    perf_breakdown ops;
    forward_ops(m, d, PREC_BF16, 4, 1, 4096, &ops);
    const perf_op_time *o = ops.op;
    double pass = o[OP_EMBED].time_s + o[OP_NORM].time_s + o[OP_ADD].time_s
                  + o[OP_FINAL_NORM].time_s + o[OP_ROPE].time_s + o[OP_ACT].time_s;
    cr_expect_float_eq(e.memory_pass_s, 3 * pass, 1e-9 * e.memory_pass_s);
    /* at tp 1 it changes nothing */
    s.tp = 1;
    training_setup with = s;
    with.no_sequence_parallel = false;
    cr_expect_float_eq(perf_training_step(m, d, &p, PREC_BF16, s, 1, 1).step_s,
                       perf_training_step(m, d, &p, PREC_BF16, with, 1, 1).step_s, 1e-12);
}

Test(training_plan, the_all_to_alls_overlap_another_micro_batch_up_to_its_computation)
{
    /* Megatron's batch-level overlap: a micro-batch's forward runs beside another's
     * backward, so the forward's dispatch and combine hide under that backward's
     * computation B and the backward's under that forward's F, each losing the 20 of 132
     * SMs it takes (DeepSeek-V3's figure): max(a2a - B, 20/132 a2a) + max(a2a - F,
     * 20/132 a2a), a micro-batch at a time.  Within a node (ep 8) the computation covers
     * them; across 8 nodes with NCCL's copy an expert (ep 64) they outlast it.  Of a
     * rank's n micro-batches n - 1 pairs overlap, the first forward and the last backward
     * run alone.  F and B
     * from the step's parts (bf16, no recomputation: forward products a third of the
     * products, forward attention 1 / 3.5 of attention, forward passes a third). */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    const unsigned eps[] = { 8, 64 };
    for (int i = 0; i < 2; i++) {
        training_setup s = { .tp = 1, .pp = 1, .ep = eps[i], .zero_stage = 1,
                             .micro_batch = 1, .seq_len = 4096,
                             .dispatcher = TRAINING_DISPATCH_ALLTOALL };
        training_estimate in_series = perf_training_step(m, d, &p, PREC_BF16, s, 64, 256);
        s.ep_overlap = true;
        training_estimate overlapped = perf_training_step(m, d, &p, PREC_BF16, s, 64, 256);
        double n = in_series.setup.microbatches, a2a = in_series.ep_comm_s / n / 2;
        cr_assert_gt(a2a, 0);
        double f = in_series.matmul_s / n / 3 + in_series.attention_s / n / 3.5
                   + in_series.memory_pass_s / n / 3 + in_series.tp_comm_s / n / 2;
        double b = (in_series.compute_s + in_series.tp_comm_s) / n - f;
        /* n micro-batches make n - 1 pairs; the first forward and the last backward run
         * alone, their all-to-alls in series */
        double shows = (n - 1) * (fmax(a2a - b, 20.0 / 132 * a2a)
                                  + fmax(a2a - f, 20.0 / 132 * a2a)) + 2 * a2a;
        cr_assert_eq(n, 4);
        cr_expect_float_eq(overlapped.ep_comm_s, shows, 1e-9 * shows, "ep %u", eps[i]);
        cr_expect_float_eq(overlapped.step_s - in_series.step_s, shows - 2 * n * a2a,
                           1e-9 * shows);
        if (i == 0)
            cr_expect_lt(a2a, f, "within a node the computation covers them");
        else
            cr_expect_gt(a2a, b, "across nodes they outlast it");
    }
}

Test(training_plan, deepep_sends_a_token_once_to_each_node_its_experts_lie_on)
{
    /* qwen3-30b-a3b (48 mixture layers, 8 of 128 experts a token, hidden 2048) with ep 64
     * over 8 nodes, one micro-batch of 4096 tokens: NCCL's all-to-all sends a copy for
     * each remote expert, 8 x 7/8 = 7 a token; DeepEP and Hybrid-EP one for each remote
     * node, the distinct nodes of 8 picks of 8, 8 (1 - (7/8)^8), 7/8 of them remote.
     * Each way of each mixture layer, forward and backward (the gradients go back the
     * same way): the node's 8-device start-up and the 16-bit copies at the network's
     * rate. */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 1, .pp = 1, .ep = 64, .zero_stage = 1, .micro_batch = 1,
                         .seq_len = 4096, .dispatcher = TRAINING_DISPATCH_ALLTOALL };
    double alpha = perf_node_of(d)->allreduce[2].alpha_s;
    double net = p.network_bytes_per_s * p.network_efficiency, n = 4; /* 256 / 64 */
    double copies[] = { 8 * 7.0 / 8, 8 * (1 - pow(7.0 / 8, 8)) * 7.0 / 8 };
    training_dispatcher ways[] = { TRAINING_DISPATCH_ALLTOALL, TRAINING_DISPATCH_DEEPEP,
                                   TRAINING_DISPATCH_HYBRIDEP };
    for (int i = 0; i < 3; i++) {
        s.dispatcher = ways[i];
        training_estimate e = perf_training_step(m, d, &p, PREC_BF16, s, 64, 256);
        double one_way = alpha + 4096 * copies[i > 0] * 2048 * 2 / net;
        double expected = n * 2 /* forward, backward */ * 48 * 2 /* dispatch, combine */
                          * one_way;
        cr_expect_float_eq(e.ep_comm_s, expected, 1e-9 * expected, "%s",
                           training_dispatcher_name(ways[i]));
    }
    /* the engine's way, for a training engine: NCCL's */
    s.dispatcher = TRAINING_DISPATCH_ENGINE;
    s.ep_overlap = false;
    training_estimate engine = perf_training_step(m, d, &p, PREC_BF16, s, 64, 256);
    s.dispatcher = TRAINING_DISPATCH_ALLTOALL;
    cr_expect_eq(engine.ep_comm_s, perf_training_step(m, d, &p, PREC_BF16, s, 64, 256).ep_comm_s);
}

Test(training_plan, a_dense_model_refuses_a_dispatcher_or_an_all_to_all_overlap)
{
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_constraints c = TRAINING_FREE;
    c.dispatcher = TRAINING_DISPATCH_DEEPEP;
    training_estimate e;
    cr_expect_not(perf_training_plan_within(m, d, &p, PREC_BF16, 8, 4096, 64, c, &e));
    cr_expect(strstr(e.refusal, "dispatcher deepep: llama-3-8b is dense (no experts, no all-to-all)"),
              "%s", e.refusal);
    c.dispatcher = TRAINING_DISPATCH_ALLTOALL; /* the default: nothing to refuse */
    cr_expect(perf_training_plan_within(m, d, &p, PREC_BF16, 8, 4096, 64, c, &e), "%s",
              e.refusal);
    c = TRAINING_FREE;
    c.ep_overlap = 1;
    cr_expect_not(perf_training_plan_within(m, d, &p, PREC_BF16, 8, 4096, 64, c, &e));
    cr_expect(strstr(e.refusal, "ep_overlap on: llama-3-8b is dense"), "%s", e.refusal);
}

Test(training_plan, nccls_dispatcher_sorts_the_tokens_by_local_expert_each_way)
{
    /* qwen3-30b-a3b (k = 8) with ep 8 in one node, 16 experts a rank: on NCCL's
     * all-to-all the tokens are sorted by local expert after the dispatch and back before
     * the combine, a read and a write of the busiest rank's copies each, 4 busiest to the
     * permutation's 3 busiest + busiest / 8; once forward and twice backward, as every
     * memory pass.  Inside one node DeepEP's copies are the same bytes, so the all-to-all
     * does not differ. */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_setup s = { .tp = 1, .pp = 1, .ep = 8, .zero_stage = 1, .micro_batch = 1,
                         .seq_len = 4096, .dispatcher = TRAINING_DISPATCH_DEEPEP };
    training_estimate deepep = perf_training_step(m, d, &p, PREC_BF16, s, 8, 64);
    s.dispatcher = TRAINING_DISPATCH_ALLTOALL;
    training_estimate nccl = perf_training_step(m, d, &p, PREC_BF16, s, 8, 64);
    cr_expect_float_eq(nccl.ep_comm_s, deepep.ep_comm_s, 1e-12 * deepep.ep_comm_s);
    /* the permutation of one micro-batch's forward pass, as the step prices it: every
     * layer, the host's work left out, 4096 tokens of which the rank's experts take the
     * busiest share of the group's */
    perf_profile np = p;
    np.host_s = np.host_per_seq_s = np.host_tp_s = np.host_tp_per_seq_s = 0;
    perf_setup ps = { .model = m, .device = d, .profile = &np, .weights = PREC_BF16,
                      .kv = PREC_BF16, .tp = 1 };
    double ring, own;
    model_attention_pairs(m, 0, 4096, &ring, &own);
    perf_batch b = { .prefill_tokens = 4096, .prefill_seqs = 1, .prefill_last = 4096,
                     .prefill_new_pairs = own, .prefill_cached_pairs = ring / 2 };
    perf_breakdown ops;
    perf_iteration_expert_group(&ps, &b, 8, 1, 8, &ops);
    double permute = ops.op[OP_MOE_PERMUTE].time_s;
    cr_assert_gt(permute, 0);
    double n = 8; /* 64 sequences over 8 ranks, one a micro-batch */
    cr_expect_float_eq(nccl.memory_pass_s - deepep.memory_pass_s,
                       n * 3 * permute * 4 * 8 / (3 * 8 + 1), 1e-9 * nccl.memory_pass_s);
    /* one expert a rank has nothing to sort */
    s.ep = 128;
    training_estimate whole = perf_training_step(m, d, &p, PREC_BF16, s, 128, 128);
    s.dispatcher = TRAINING_DISPATCH_DEEPEP;
    cr_expect_float_eq(whole.memory_pass_s,
                       perf_training_step(m, d, &p, PREC_BF16, s, 128, 128).memory_pass_s,
                       1e-12 * whole.memory_pass_s);
}

Test(training_plan, the_experts_weight_gradients_run_at_their_own_kernels_rate)
{
    /* qwen3-30b-a3b (hidden 2048, experts 768 wide, gated), one micro-batch of 4096 tokens
     * a rank, ep 8 on one H100 node: the group's 32,768 tokens reach about all 128 experts,
     * 16 a rank, each taking the busiest rank's share of the routed copies.  Each mixture
     * layer runs two grouped GEMMs (up: K 2048, N 1536; down: K 768, N 2048) in bf16:
     * forward at DeepGEMM's m-grouped family's shares of the device's bf16 peak, the
     * weights' gradients at its k-grouped family's: the same products, then each
     * expert's fp32 gradient written once (no floor). */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    const perf_kernel_family *fwd = perf_kernel_family_named("deepgemm_grouped_fp8_h800");
    const perf_kernel_family *wgrad = perf_kernel_family_named("deepgemm_wgrad_fp8_h200");
    cr_assert(fwd && wgrad);
    p.moe_family = fwd;
    p.moe_wgrad_family = wgrad;
    perf_setup ps = { .model = m, .device = d, .profile = &p, .weights = PREC_BF16,
                      .kv = PREC_BF16, .tp = 1 };
    perf_batch b = { .prefill_tokens = 4096, .prefill_seqs = 1, .prefill_last = 4096 };
    perf_breakdown ops;
    perf_iteration_expert_group(&ps, &b, 8, 1, 8, &ops);
    double g = model_experts_touched(m, 8 * 4096.0) / 8;
    double t = perf_expert_busiest_tokens(m, 8 * 4096.0, 8, 1) / g;
    double layers = model_moe_layers(m), peak = d->peak_flops[PREC_BF16];
    double bw = d->bandwidth_bytes_per_s * fwd->grouped_gemm.bandwidth_efficiency;
    double floor = fwd->grouped_gemm.floor_s * p.kernel_launch_s / perf_family_of(d)->gemm.floor_s;
    const double shape[2][2] = { { 2048, 1536 }, { 768, 2048 } }; /* K, N */
    double f = 0, w = 0;
    for (int i = 0; i < 2; i++) {
        double K = shape[i][0], N = shape[i][1], flops = 2 * g * t * K * N;
        double memory = (g * K * N * 2 + 2 * g * t * (K + N)) / bw;
        const perf_grouped_gemm_constants *cf = &fwd->grouped_gemm, *cw = &wgrad->grouped_gemm;
        f += floor + fmax(flops / (peak * cf->efficiency * t / (t + cf->tokens_half)), memory);
        w += flops / (peak * cw->efficiency) + 4 * g * K * N
                                                    / (d->bandwidth_bytes_per_s * cw->bandwidth_efficiency);
    }
    f *= layers;
    w *= layers;
    cr_expect_float_eq(ops.grouped_s, f, 1e-9 * f, "%.9g vs %.9g", ops.grouped_s, f);
    cr_expect_float_eq(ops.grouped_wgrad_s, w, 1e-9 * w, "%.9g vs %.9g", ops.grouped_wgrad_s, w);
    /* 0.47 of the peak at about 2,000 tokens a group against 0.66 */
    cr_expect(w > 1.5 * f && w < 1.8 * f, "%g against %g", w, f);
    /* a training step adds the difference to its backward products, once a micro-batch */
    training_setup s = { .tp = 1, .pp = 1, .ep = 8, .zero_stage = 1, .micro_batch = 1,
                         .seq_len = 4096 };
    training_estimate with = perf_training_step(m, d, &p, PREC_BF16, s, 8, 8);
    p.moe_wgrad_family = NULL;
    training_estimate without = perf_training_step(m, d, &p, PREC_BF16, s, 8, 8);
    cr_expect_float_eq(with.matmul_s - without.matmul_s, w - f, 1e-9 * w);
}

Test(training_plan, zero_bubble_fills_the_drain_with_the_experts_own_weight_gradients)
{
    /* ZB-H1's bubble is (pp - 1)(F + B - 2W), W the backward products' weight-gradient
     * part.  With the experts' weight gradients at their own kernel's rate, W grows by
     * the same D (a micro-batch's extra) as F + B does, so the bubble shrinks by
     * (pp - 1) D: it would not move if W were half the backward products. */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    p.moe_family = perf_kernel_family_named("deepgemm_grouped_fp8_h800");
    p.moe_wgrad_family = perf_kernel_family_named("deepgemm_wgrad_fp8_h200");
    training_setup s = { .tp = 1, .pp = 4, .ep = 8, .zero_stage = 1, .micro_batch = 1,
                         .seq_len = 4096, .zero_bubble = true,
                         .dispatcher = TRAINING_DISPATCH_DEEPEP };
    training_estimate with = perf_training_step(m, d, &p, PREC_BF16, s, 32, 128);
    p.moe_wgrad_family = NULL;
    training_estimate without = perf_training_step(m, d, &p, PREC_BF16, s, 32, 128);
    double n = with.setup.microbatches, extra = (with.matmul_s - without.matmul_s) / n;
    cr_assert_gt(extra, 0);
    cr_assert(with.setup.zero_bubble);
    cr_expect_float_eq(with.bubble_s - without.bubble_s, -3 * extra, 1e-9 * with.bubble_s);
}

Test(training_plan, tensor_parallelism_in_series_shows_its_collectives_whole)
{
    /* the engine's share of the tensor-parallel collectives hidden under the products,
     * or none of it: the same as a profile without the share */
    const model_spec *m = test_model("llama-3-8b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    p.train_tp_overlap = 0.48;
    training_setup s = { .tp = 4, .pp = 1, .zero_stage = 1, .micro_batch = 1, .seq_len = 4096 };
    training_estimate hidden = perf_training_step(m, d, &p, PREC_BF16, s, 8, 64);
    s.no_tp_overlap = true;
    training_estimate serial = perf_training_step(m, d, &p, PREC_BF16, s, 8, 64);
    p.train_tp_overlap = 0;
    s.no_tp_overlap = false;
    training_estimate none = perf_training_step(m, d, &p, PREC_BF16, s, 8, 64);
    cr_expect_float_eq(serial.tp_comm_s, none.tp_comm_s, 1e-12 * none.tp_comm_s);
    cr_expect_float_eq(serial.tp_comm_s * (1 - 0.48), hidden.tp_comm_s,
                       1e-9 * serial.tp_comm_s, "the products cover the share");
}

Test(training_plan, megatrons_overlap_keeps_to_its_conditions)
{
    /* Megatron-Bridge's comm_overlap.py: ep > 1, the interleaved schedule where pp > 1,
     * no full or per-layer recomputation; a stated plan otherwise is refused, a free one
     * is kept to them; DualPipe and ZB-H1 are refused beside it.  One micro-batch a rank
     * has nothing to pair with: its all-to-alls show whole. */
    const model_spec *m = test_model("qwen3-30b-a3b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    training_constraints c = TRAINING_FREE;
    c.ep_overlap = 1;
    training_estimate e;
    cr_assert(perf_training_plan_within(m, d, &p, PREC_BF16, 64, 4096, 512, c, &e), "%s",
              e.refusal);
    cr_expect(e.setup.ep_overlap);
    cr_expect_geq(e.setup.ep, 2);
    cr_expect_eq(e.setup.recompute_layers, 0);
    cr_expect(e.setup.pp == 1 || e.setup.virtual_stages > 1, "pp %u v %u", e.setup.pp,
              e.setup.virtual_stages);
    const struct {
        const char *why;
        unsigned ep, pp, v;
        int layers;
        bool dualpipe, zero_bubble;
    } refused[] = {
        { "ep_overlap on needs expert parallelism (ep > 1), ep 1 stated", 1, 0, 0, -1,
          false, false },
        { "ep_overlap on runs without per-layer recomputation (as Megatron does), 4 layers",
          8, 0, 0, 4, false, false },
        { "ep_overlap on with pp 2 needs the interleaved schedule", 8, 2, 1, -1, false,
          false },
        { "ep_overlap on: DualPipe overlaps the all-to-alls itself", 8, 2, 0, -1, true,
          false },
        { "ep_overlap on: ZB-H1 runs one chunk a stage", 8, 2, 0, -1, false, true },
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        c = TRAINING_FREE;
        c.ep_overlap = 1;
        c.ep = refused[i].ep;
        c.pp = refused[i].pp;
        c.virtual_stages = refused[i].v;
        c.recompute_layers = refused[i].layers;
        c.dualpipe = refused[i].dualpipe;
        c.zero_bubble = refused[i].zero_bubble;
        cr_expect_not(perf_training_plan_within(m, d, &p, PREC_BF16, 64, 4096, 512, c, &e),
                      "%s", refused[i].why);
        cr_expect(strstr(e.refusal, refused[i].why), "%s: %s", refused[i].why, e.refusal);
    }
    /* one micro-batch a rank: in series */
    training_setup s = { .tp = 1, .pp = 1, .ep = 8, .zero_stage = 1, .micro_batch = 1,
                         .seq_len = 4096 };
    training_estimate serial = perf_training_step(m, d, &p, PREC_BF16, s, 64, 64);
    s.ep_overlap = true;
    training_estimate alone = perf_training_step(m, d, &p, PREC_BF16, s, 64, 64);
    cr_assert_eq(alone.setup.microbatches, 1);
    cr_expect_float_eq(alone.ep_comm_s, serial.ep_comm_s, 1e-12 * serial.ep_comm_s);
}
