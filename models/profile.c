/* Applying a calibration profile (see profile.h). */
#include "models/profile.h"

#include <math.h>
#include <string.h>

void profile_init(device_profile *p)
{
    memset(p, 0, sizeof *p);
    p->perf = (perf_profile){ NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0, NAN,
                              NAN, NAN, NAN, NAN, NULL, NULL };
}

static void take(double *to, double from)
{
    if (!isnan(from))
        *to = from;
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
}
