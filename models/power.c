/* Device power by phase, caps and clocks (see power.h).
 *
 * The constants come from ../shared/reference/power (the fit half), each derived below
 * from the figures as published; none is set against a check row.
 *
 * Loaded-idle power (a model resident, no requests, clocks up; device_power.csv):
 * H100 SXM 140-145 W of 700 (8x H100 server, driver 550), H200 SXM 115 W of 700 (SGLang
 * between requests), B200 192-196 W of 1000 (TensorRT-LLM), MI300X 191 W of 750
 * (rocm-smi), L4 35-36 W of 72 (a model resident, P0).  The catalog states these (the
 * range's midpoint); another device is taken at the median share, 142.5 / 700 = 0.2036
 * (shares 0.164, 0.194, 0.204, 0.255, 0.493).
 *
 * Shares of the dynamic range by phase (inference_training_power.csv), each the
 * geometric mean of two devices' readings:
 *   - memory-bound: 2x V100 SXM2 (TDP 300 W) under vLLM drew 180-200 W a card in full
 *     decode batches (1CatAI/1Cat-vLLM issue 535); with its loaded idle at the median
 *     share (0.2036 x 300 = 61.1 W) the midpoint 190 W is 0.540 of the range above it,
 *     decode taken as memory-bound whole.  8x H100 under vLLM V1 serving gpt-oss-120b at
 *     1k/8k tokens, 8 at a time, drew 2,027 W (253.4 W a GPU; SemiAnalysisAI/InferenceX
 *     issue 828), a steady decode; this model splits that step (tp 8, batch 8, fp4) into
 *     55.1% memory-bound operators and collectives and the rest kernel floors and
 *     hidden host work, so (253.4 - 142.5) / (557.5 x 0.551) = 0.361.  Mean: 0.441;
 *   - compute-bound: the V100s drew 270-300 W in full prefill batches, 0.937 of the
 *     range; 4x MI300X (TDP 750 W, loaded idle 191 W) spiked to 662-671 W a GPU in large
 *     prefill batches (same InferenceX issue), 0.850.  Mean: 0.892.  Prefill is taken
 *     as compute-bound whole, which its memory-bound operators (norms, attention's reads)
 *     make a slight underestimate.
 * Collectives are priced as memory-bound work (NCCL's kernels stream memory and links;
 * no published split found), kernel floors and host work at nothing above loaded idle.
 *
 * Clock and voltage (power_caps.csv): B200's datasheet peaks, 2,250 dense BF16 TFLOPS at
 * 1,000 W (HGX) and 2,500 at 1,200 W (GB200): a clock of 0.9 for a dynamic power of
 * (1000 - 194) / (1200 - 194) = 0.8012, so f^(1 + 2 beta) = 0.8012 and beta = 0.552.
 * GB300's cuBLAS GEMM (Meta's triton PR 2023): 617 TFLOPS under a 500 W cap against
 * 1,600-2,174 (midpoint 1,887) at its 1,400 W default: a clock of 0.327 at a dynamic
 * share of (500 - 285) / (0.892 x (1400 - 285)) = 0.216 (loaded idle at the median
 * share, the GEMM drawing the compute share of the range), below the voltage's knee, so
 * 0.327 V0^2 = 0.216 and V0 = 0.813 (0.73-0.84 over the published range). */
#include "models/power.h"

#include <math.h>
#include <stdio.h>

/* loaded idle over TDP: the median of the five readings above */
#define LOADED_H100 142.5
const double POWER_LOADED_SHARE = LOADED_H100 / 700.0;

/* the V100's readings (W) and its TDP */
#define V100_TDP 300.0
#define V100_PREFILL ((270.0 + 300.0) / 2)
#define V100_DECODE ((180.0 + 200.0) / 2)
#define V100_LOADED (POWER_LOADED_SHARE * V100_TDP)
#define V100_SHARE(w) (((w) - V100_LOADED) / (V100_TDP - V100_LOADED))
/* the H100s' decode: per GPU, and the model's memory-bound share of that step */
#define H100_DECODE (2027.0 / 8)
#define H100_DECODE_MEMORY 0.551
#define H100_SHARE ((H100_DECODE - LOADED_H100) / ((700.0 - LOADED_H100) * H100_DECODE_MEMORY))
/* the MI300Xs' prefill spikes, loaded idle 191 W of 750 */
#define MI300X_PREFILL ((662.0 + 671.0) / 2)
#define MI300X_SHARE ((MI300X_PREFILL - 191.0) / (750.0 - 191.0))
double power_share(perf_bound phase)
{
    switch (phase) {
    case BOUND_COMPUTE:
        return sqrt(V100_SHARE(V100_PREFILL) * MI300X_SHARE);
    case BOUND_MEMORY:
    case BOUND_COMMUNICATION: /* as memory-bound work */
        return sqrt(V100_SHARE(V100_DECODE) * H100_SHARE);
    case BOUND_LAUNCH:
    case BOUND_HOST:
        break;
    }
    return 0;
}

/* B200 at 1,000 W and 1,200 W, loaded idle 192-196 W */
#define B200_CLOCK (2250.0 / 2500.0)
#define B200_DYNAMIC ((1000.0 - 194.0) / (1200.0 - 194.0))
/* GB300 at a 500 W cap and at its 1,400 W default */
#define GB300_CLOCK (617.0 / ((1600.0 + 2174.0) / 2))
#define GB300_LOADED (POWER_LOADED_SHARE * 1400.0)

/* beta: V(f) = f^beta above the knee */
static double beta(void) { return (log(B200_DYNAMIC) / log(B200_CLOCK) - 1) / 2; }

/* V0^2: the voltage floor, squared */
static double floor_v2(void)
{
    double share = (500.0 - GB300_LOADED) / (power_share(BOUND_COMPUTE) * (1400.0 - GB300_LOADED));
    return share / GB300_CLOCK;
}

/* the clock below which the voltage stays at its floor */
static double knee(void) { return pow(floor_v2(), 1 / (2 * beta())); }

double power_dynamic_share(double clock)
{
    if (!(clock > 0))
        return 0;
    if (clock >= 1)
        return 1;
    return clock >= knee() ? pow(clock, 1 + 2 * beta()) : clock * floor_v2();
}

double power_clock_for(double share)
{
    if (share >= 1)
        return 1;
    if (!(share > 0))
        return 0;
    double k = knee();
    return share >= k * floor_v2() ? pow(share, 1 / (1 + 2 * beta())) : share / floor_v2();
}

double power_loaded_w(const device_spec *d)
{
    double w = d->loaded_w > 0 ? d->loaded_w : POWER_LOADED_SHARE * d->tdp_w;
    return fmax(w, d->idle_w);
}

/* The clock at which a phase drawing `share` of the range at full clock meets the cap. */
static double capped_clock(const power_model *m, double share)
{
    double range = m->tdp_w - m->loaded_w;
    if (!(share > 0) || m->loaded_w + range * share <= m->cap_w)
        return 1;
    return power_clock_for((m->cap_w - m->loaded_w) / (range * share));
}

int power_model_of(const device_spec *d, const power_setting *s, power_model *out, char *err,
                   size_t err_size)
{
    static const power_setting none = { 0 };
    if (!s)
        s = &none;
    *out = (power_model){ .idle_w = d->idle_w, .loaded_w = power_loaded_w(d), .tdp_w = d->tdp_w };
    if (!(d->tdp_w > 0)) {
        snprintf(err, err_size, "%s has no tdp_w: its power cannot be modelled", d->name);
        return -1;
    }
    double cap = s->cap_w > 0 ? s->cap_w : s->cap_share > 0 ? s->cap_share * d->tdp_w : d->tdp_w;
    if (cap > d->tdp_w * (1 + 1e-12)) {
        snprintf(err, err_size, "a power cap of %.6g W is above %s's TDP of %.6g W", cap,
                 d->name, d->tdp_w);
        return -1;
    }
    if (cap <= out->loaded_w) {
        snprintf(err, err_size, "a power cap of %.6g W is at or below %s's loaded-idle power "
                 "of %.6g W: the device could not hold a model", cap, d->name, out->loaded_w);
        return -1;
    }
    if (s->clock != 0 && !(s->clock > 0 && s->clock <= 1)) {
        snprintf(err, err_size, "a clock of %.6g is outside (0, 1] (a share of the maximum)",
                 s->clock);
        return -1;
    }
    out->cap_w = cap;
    double range = d->tdp_w - out->loaded_w;
    double compute = capped_clock(out, power_share(BOUND_COMPUTE));
    if (s->clock > 0)
        compute = fmin(compute, s->clock);
    double memory = capped_clock(out, power_share(BOUND_MEMORY));
    double comm = capped_clock(out, power_share(BOUND_COMMUNICATION));
    out->compute_speed = compute;
    out->memory_speed = memory;
    out->compute_w = range * power_share(BOUND_COMPUTE) * power_dynamic_share(compute);
    out->memory_w = range * power_share(BOUND_MEMORY) * power_dynamic_share(memory);
    out->comm_w = range * power_share(BOUND_COMMUNICATION) * power_dynamic_share(comm);
    out->launch_w = range * power_share(BOUND_LAUNCH);
    return 0;
}

double power_work_joules(const power_model *m, const perf_phases *w)
{
    return m->compute_w * w->compute_s + m->memory_w * w->memory_s + m->comm_w * w->comm_s
           + m->launch_w * w->launch_s;
}

double power_step_w(const power_model *m, const perf_time *t)
{
    if (!(t->total_s > 0))
        return m->loaded_w;
    perf_phases w = perf_time_phases(t);
    return m->loaded_w + power_work_joules(m, &w) / t->total_s;
}
