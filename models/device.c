#include "models/device.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const NAMES[PREC_COUNT] = { "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4", "fp4" };
/* fp4 is NVFP4 as Blackwell runs it: 4-bit values in blocks of 16 sharing an fp8 (E4M3)
 * scale, 4.5 bits a value (NVIDIA, "Introducing NVFP4 for Efficient and Accurate
 * Low-Precision Inference", 2025; the per-tensor fp32 scale is negligible).  MXFP4's
 * blocks of 32 with an 8-bit scale (OCP Microscaling Formats v1.0, 2023) would be 4.25. */
static const double BYTES[PREC_COUNT] = { 4, 4, 2, 2, 1, 1, 0.5, 4.5 / 8 };

const char *precision_name(precision p) { return (unsigned)p < PREC_COUNT ? NAMES[p] : "?"; }
double precision_bytes(precision p) { return BYTES[p]; }

precision precision_cache(precision p)
{
    return p == PREC_FP32 || p == PREC_TF32 ? PREC_FP32 : PREC_FP16;
}

precision precision_unquantized(precision p)
{
    return p == PREC_FP8 || p == PREC_INT8 || p == PREC_INT4 || p == PREC_FP4 ? PREC_FP16 : p;
}

int precision_parse_cache(const char *name, precision *out)
{
    precision p;
    if (precision_parse(name, &p) != 0 || p == PREC_TF32 || p == PREC_INT8 || p == PREC_INT4
        || p == PREC_FP4)
        return -1;
    *out = p;
    return 0;
}

int precision_parse(const char *name, precision *out)
{
    for (int i = 0; i < PREC_COUNT; i++) {
        if (!strcmp(name, NAMES[i])) {
            *out = (precision)i;
            return 0;
        }
    }
    return -1;
}

double device_peak_flops(const device_spec *d, precision p, precision *used)
{
    /* what each precision falls back to when the device lacks it */
    static const precision wider[PREC_COUNT] = {
        [PREC_FP32] = PREC_FP32, [PREC_TF32] = PREC_FP32, [PREC_FP16] = PREC_BF16,
        [PREC_BF16] = PREC_FP32, [PREC_FP8] = PREC_FP16, [PREC_INT8] = PREC_FP16,
        [PREC_INT4] = PREC_INT8, [PREC_FP4] = PREC_FP8,
    };
    precision q = p;
    for (int hops = 0; hops < PREC_COUNT + 1; hops++) {
        if (d->peak_flops[q] > 0) {
            if (used)
                *used = q;
            return d->peak_flops[q];
        }
        q = wider[q];
    }
    if (used)
        *used = PREC_FP32;
    return d->peak_flops[PREC_FP32];
}

double device_link_bytes_per_s(const device_spec *d)
{
    return d->nvlink_bytes_per_s > 0 ? d->nvlink_bytes_per_s / 2 : d->pcie_bytes_per_s;
}

void device_release(device_spec *d)
{
    if (!d)
        return;
    free(d->name);
    free(d->price_date);
    free(d->price_source);
    memset(d, 0, sizeof *d);
}

/* A string of its own (NULL stays NULL); false when out of memory. */
static bool copy_text(char **to, const char *from)
{
    *to = from ? strdup(from) : NULL;
    return !from || *to;
}

int device_copy(device_spec *to, const device_spec *from)
{
    *to = *from; /* the strings are the only things a spec owns */
    bool ok = copy_text(&to->name, from->name);
    ok = copy_text(&to->price_date, from->price_date) && ok;
    ok = copy_text(&to->price_source, from->price_source) && ok;
    if (!ok)
        device_release(to);
    return ok ? 0 : -1;
}

double device_cuda_memory_bytes(double datasheet_bytes)
{
    const double gib = 1073741824.0;
    return datasheet_bytes / 1e9 * gib * (79.22 / 80);
}
