/* Multi-Instance GPU: a GPU cut into isolated slices, each with its own streaming
 * multiprocessors, L2 cache, memory controllers and memory.
 *
 * A profile "<c>g.<m>gb" holds c of the GPU's 7 compute slices and a share of its 8
 * memory slices (with their DRAM channels and L2), and at most `max_instances` of it fit
 * on one GPU when all slices have that profile.  The table holds the profiles NVIDIA's
 * MIG user guide ("Supported MIG Profiles") lists for the A100 (40 and 80 GB), H100 80GB
 * (SXM) and H200 141GB, under the catalog's names for those devices.
 *
 * A slice as a device: its compute peaks are the whole GPU's scaled by the SMs it gets,
 * which is less than c/7 of the datasheet because MIG mode leaves some SMs unused (A100:
 * 7 slices of 14 SMs = 98 of 108; H100 and H200 SXM: 7 of 16 = 112 of 132); its memory is
 * the profile's; its bandwidth the whole GPU's times its memory slices / 8.
 */
#ifndef FLEETSIM_MODELS_MIG_H
#define FLEETSIM_MODELS_MIG_H

#include <stddef.h>

#include "models/device.h"

#define MIG_COMPUTE_SLICES 7u
#define MIG_MEMORY_SLICES 8u

typedef struct mig_profile {
    const char *name;        /* "1g.10gb" */
    unsigned compute_slices; /* of 7 */
    unsigned memory_slices;  /* of 8 */
    unsigned max_instances;  /* of this profile on one GPU */
    double memory_gb;        /* 10^9 bytes, as the profile's name counts */
} mig_profile;

/* The profile of a catalog device (by its catalog name, e.g. "A100-80GB-SXM"), or NULL
 * when the device has no MIG table or the profile is not in it. */
const mig_profile *mig_find(const char *device, const char *profile);

/* The names of a device's profiles, "1g.10gb, 1g.20gb, ..." (into buf, NULL-ended text),
 * or of the devices with a table when device is NULL or unknown. */
const char *mig_profile_names(const char *device, char *buf, size_t size);

/* The slice of `whole` (a catalog device) that `profile` describes, into *out (a new
 * device the caller releases with device_release), and how many such slices one GPU
 * holds.  Its name is "<device> MIG <profile>"; its power and price are the whole GPU's
 * divided among its slices (*slices_per_gpu of them); it has no NVLink (tensor
 * parallelism across slices goes over PCIe, if at all).  Returns 0, or -1 with a
 * message in err for an unknown device or profile, listing the valid ones (nothing to
 * release then). */
int mig_slice_device(const device_spec *whole, const char *profile, device_spec *out,
                     unsigned *slices_per_gpu, char *err, size_t err_size);

#endif
