/* MIG profiles and slices as devices (see mig.h). */
#include "models/mig.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NVIDIA Multi-Instance GPU User Guide, "Supported MIG Profiles"
 * (docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html):
 * fraction of SMs (compute slices of 7), fraction of memory (slices of 8), number of
 * instances available.  The media-extension variants (+me) compute like their base
 * profile and are left out.  SMs per slice as NVML reports them for the GPU instance
 * profiles (14 on A100, 16 on H100 and H200 SXM). */
typedef struct mig_table {
    const char *device;       /* catalog name */
    unsigned sms, sms_per_slice;
    mig_profile profiles[7];  /* ended by a NULL name */
} mig_table;

static const mig_table TABLES[] = {
    { "A100-40GB-SXM", 108, 14, {
        { "1g.5gb", 1, 1, 7, 5 }, { "1g.10gb", 1, 2, 4, 10 }, { "2g.10gb", 2, 2, 3, 10 },
        { "3g.20gb", 3, 4, 2, 20 }, { "4g.20gb", 4, 4, 1, 20 }, { "7g.40gb", 7, 8, 1, 40 },
        { NULL, 0, 0, 0, 0 } } },
    { "A100-80GB-SXM", 108, 14, {
        { "1g.10gb", 1, 1, 7, 10 }, { "1g.20gb", 1, 2, 4, 20 }, { "2g.20gb", 2, 2, 3, 20 },
        { "3g.40gb", 3, 4, 2, 40 }, { "4g.40gb", 4, 4, 1, 40 }, { "7g.80gb", 7, 8, 1, 80 },
        { NULL, 0, 0, 0, 0 } } },
    { "H100-SXM", 132, 16, {
        { "1g.10gb", 1, 1, 7, 10 }, { "1g.20gb", 1, 2, 4, 20 }, { "2g.20gb", 2, 2, 3, 20 },
        { "3g.40gb", 3, 4, 2, 40 }, { "4g.40gb", 4, 4, 1, 40 }, { "7g.80gb", 7, 8, 1, 80 },
        { NULL, 0, 0, 0, 0 } } },
    { "H200-SXM", 132, 16, {
        { "1g.18gb", 1, 1, 7, 18 }, { "1g.35gb", 1, 2, 4, 35 }, { "2g.35gb", 2, 2, 3, 35 },
        { "3g.71gb", 3, 4, 2, 71 }, { "4g.71gb", 4, 4, 1, 71 }, { "7g.141gb", 7, 8, 1, 141 },
        { NULL, 0, 0, 0, 0 } } },
};
#define NTABLES (sizeof TABLES / sizeof TABLES[0])

static const mig_table *find_table(const char *device)
{
    for (size_t i = 0; device && i < NTABLES; i++)
        if (!strcmp(TABLES[i].device, device))
            return &TABLES[i];
    return NULL;
}

const mig_profile *mig_find(const char *device, const char *profile)
{
    const mig_table *t = find_table(device);
    for (const mig_profile *p = t ? t->profiles : NULL; p && p->name; p++)
        if (!strcmp(p->name, profile))
            return p;
    return NULL;
}

const char *mig_profile_names(const char *device, char *buf, size_t size)
{
    const mig_table *t = find_table(device);
    size_t used = 0;
    buf[0] = '\0';
    size_t n = t ? 0 : NTABLES;
    if (t)
        while (t->profiles[n].name)
            n++;
    for (size_t i = 0; i < n && used < size; i++) {
        const char *name = t ? t->profiles[i].name : TABLES[i].device;
        int w = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

int mig_slice_device(const device_spec *whole, const char *profile, device_spec *out,
                     unsigned *slices_per_gpu, char *err, size_t err_size)
{
    char names[256];
    const mig_table *t = find_table(whole->name);
    if (!t) {
        snprintf(err, err_size, "MIG is not available on \"%s\" (devices with MIG profiles: %s)",
                 whole->name, mig_profile_names(NULL, names, sizeof names));
        return -1;
    }
    const mig_profile *p = mig_find(whole->name, profile);
    if (!p) {
        snprintf(err, err_size, "unknown MIG profile \"%s\" for %s (profiles: %s)", profile,
                 whole->name, mig_profile_names(whole->name, names, sizeof names));
        return -1;
    }
    device_spec d = *whole;
    double sm_share = (double)(p->compute_slices * t->sms_per_slice) / t->sms;
    for (int i = 0; i < PREC_COUNT; i++)
        d.peak_flops[i] = whole->peak_flops[i] * sm_share;
    /* the profile's "80gb" as the whole device's datasheet figure is read (device.h) */
    d.memory_bytes = fmin(device_cuda_memory_bytes(p->memory_gb * 1e9), whole->memory_bytes);
    d.bandwidth_bytes_per_s = whole->bandwidth_bytes_per_s * p->memory_slices / MIG_MEMORY_SLICES;
    d.nvlink_bytes_per_s = 0; /* NCCL does not reach across MIG instances */
    d.scale_up_devices = 1;
    /* a GPU's draw and price are shared by the slices it holds */
    d.idle_w = whole->idle_w / p->max_instances;
    d.tdp_w = whole->tdp_w / p->max_instances;
    d.usd_per_hour = whole->usd_per_hour / p->max_instances;
    d.purchase_usd = whole->purchase_usd / p->max_instances;
    char name[128];
    snprintf(name, sizeof name, "%s MIG %s", whole->name, p->name);
    d.name = strdup(name);
    d.price_date = dup_or_null(whole->price_date);
    d.price_source = dup_or_null(whole->price_source);
    if (!d.name || (whole->price_date && !d.price_date)
        || (whole->price_source && !d.price_source)) {
        device_release(&d);
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    *out = d;
    *slices_per_gpu = p->max_instances;
    return 0;
}
