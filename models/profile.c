/* Applying a calibration profile (see profile.h). */
#include "models/profile.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void profile_init(device_profile *p)
{
    memset(p, 0, sizeof *p);
    /* NAN: not measured (the device's figures stand); named, so a new field is zero */
    perf_profile absent = { .compute_efficiency = NAN, .tokens_half = NAN, .width_half = NAN,
                            .bandwidth_efficiency = NAN, .kernel_launch_s = NAN,
                            .kernels_per_layer = NAN, .link_latency_s = NAN,
                            .network_bytes_per_s = NAN, .dp_overlap = NAN, .host_s = NAN,
                            .host_per_seq_s = NAN, .host_tp_s = NAN, .host_tp_per_seq_s = NAN };
    p->perf = absent;
}

static void take(double *to, double from)
{
    if (!isnan(from))
        *to = from;
}

/* The operator table in place of the family (see profile.h). */
static void apply_operators(const device_profile *p, device_spec *d, perf_profile *perf)
{
    const perf_family *base = perf->family ? perf->family : perf_family_of(d);
    perf->operators = p->perf.operators;
    perf->operators.precision = base->precision;
    perf->operators.cluster = base->cluster;
    perf->has_operators = true;
    const perf_family *ops = &perf->operators;
    double at = d->peak_flops[p->operators_precision];
    if (at > 0 && ops->peak_flops > 0)
        for (int i = 0; i < PREC_COUNT; i++)
            d->peak_flops[i] *= ops->peak_flops / at;
    else if (ops->peak_flops > 0)
        d->peak_flops[p->operators_precision] = ops->peak_flops;
    if (ops->bandwidth_bytes_per_s > 0)
        d->bandwidth_bytes_per_s = ops->bandwidth_bytes_per_s;
    perf->compute_efficiency = ops->gemm.efficiency;
    perf->bandwidth_efficiency = ops->gemm.bandwidth_efficiency;
    perf->kernel_launch_s = ops->gemm.floor_s;
    if (isnan(p->perf.host_s)) {
        perf->host_s = ops->host.base_s;
        perf->host_per_seq_s = ops->host.per_seq_s;
        perf->host_tp_s = ops->host.tp_base_s;
        perf->host_tp_per_seq_s = ops->host.tp_per_seq_s;
    }
}

const char *const profile_spread_names[SPREAD_CLASSES] = {
    [SPREAD_GEMM] = "gemm", [SPREAD_ATTN_DECODE] = "attention_decode",
    [SPREAD_ATTN_PREFILL] = "attention_prefill", [SPREAD_PASSES] = "passes",
};

double profile_step_spread(const device_profile *p, const perf_breakdown *ops, double total_s)
{
    if (!(total_s > 0))
        return 0;
    double sum = 0;
    for (int i = 0; i < OP_COUNT; i++) {
        profile_spread_class c;
        switch ((perf_op)i) {
        case OP_QKV: case OP_OUT_PROJ: case OP_MLP_UP: case OP_MLP_DOWN: case OP_LM_HEAD:
        case OP_ROUTER:
            c = SPREAD_GEMM;
            break;
        case OP_ATTN_DECODE:
            c = SPREAD_ATTN_DECODE;
            break;
        case OP_ATTN_PREFILL:
            c = SPREAD_ATTN_PREFILL;
            break;
        case OP_HOST: case OP_ALLREDUCE: case OP_ALLTOALL:
            continue; /* not operator measurements */
        default:
            c = SPREAD_PASSES;
        }
        sum += ops->op[i].time_s * p->spread[c];
    }
    return sum / total_s;
}

int profile_check_kind(const device_profile *p, const device_spec *d, char *msg,
                       size_t msg_size)
{
    const char *kind = d->is_cpu ? "cpu" : "gpu";
    if (!*p->kind || !strcmp(p->kind, kind))
        return 0;
    snprintf(msg, msg_size, "measured on a %s ('%s'), not a %s like '%s': a profile applies "
             "only to the kind of device it was measured on (calibrate on a %s)", p->kind,
             p->device, kind, d->name ? d->name : "?", kind);
    return -1;
}

void profile_apply(const device_profile *p, device_spec *d, perf_profile *perf)
{
    bool measured = false;
    for (int i = 0; i < PREC_COUNT; i++)
        measured |= p->flops[i] > 0;
    for (int i = 0; i < PREC_COUNT; i++) {
        if (p->flops[i] > 0)
            d->peak_flops[i] = p->flops[i];
        else if (measured && !isnan(p->perf.compute_efficiency))
            d->peak_flops[i] *= p->perf.compute_efficiency;
    }
    if (measured)
        perf->compute_efficiency = 1;
    else
        take(&perf->compute_efficiency, p->perf.compute_efficiency);
    if (p->bandwidth_bytes_per_s > 0) {
        d->bandwidth_bytes_per_s = p->bandwidth_bytes_per_s;
        perf->bandwidth_efficiency = 1;
    } else {
        take(&perf->bandwidth_efficiency, p->perf.bandwidth_efficiency);
    }
    if (p->link_bytes_per_s > 0)
        d->nvlink_bytes_per_s = 2 * p->link_bytes_per_s;
    if (p->host_link_bytes_per_s > 0)
        d->pcie_bytes_per_s = p->host_link_bytes_per_s;
    if (p->memory_bytes > 0)
        d->memory_bytes = p->memory_bytes;
    take(&perf->tokens_half, p->perf.tokens_half);
    take(&perf->width_half, p->perf.width_half);
    take(&perf->kernel_launch_s, p->perf.kernel_launch_s);
    take(&perf->kernels_per_layer, p->perf.kernels_per_layer);
    take(&perf->link_latency_s, p->perf.link_latency_s);
    take(&perf->network_bytes_per_s, p->perf.network_bytes_per_s);
    if (p->perf.devices_per_node > 0)
        perf->devices_per_node = p->perf.devices_per_node;
    take(&perf->dp_overlap, p->perf.dp_overlap);
    take(&perf->host_s, p->perf.host_s);
    take(&perf->host_per_seq_s, p->perf.host_per_seq_s);
    take(&perf->host_tp_s, p->perf.host_tp_s);
    take(&perf->host_tp_per_seq_s, p->perf.host_tp_per_seq_s);
    if (p->perf.has_operators)
        apply_operators(p, d, perf);
}
