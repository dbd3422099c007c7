/* Reading a file of measured steps (docs/calibration.md, "Measured steps"): one row per
 * step of a real engine, for `fleetsim calibrate --steps` and `fleetsim validate --steps`.
 *
 *     model,device,precision,tp,batch,prefill_tokens,decode_tokens,mean_context,seconds
 *
 * and optionally the model's shape (layers,hidden,heads,kv_heads,ffn,vocab: a model the
 * catalog does not have, or one measured at other widths); other columns are ignored,
 * lines starting with '#' are comments.  One device per file. */
#ifndef FLEETSIM_LUA_STEPS_LOAD_H
#define FLEETSIM_LUA_STEPS_LOAD_H

#include <stddef.h>

#include "kernels/calib_steps.h"
#include "models/catalog.h"
#include "models/profile.h"

typedef struct steps_file {
    calib_step *rows;
    size_t count;
    model_spec *models;          /* owned: the models the rows name */
    size_t nmodels;
    device_spec device;          /* the catalog's, with the profile applied (borrows names) */
    perf_profile perf;           /* with an operator table: the profile's, else the family's */
    char device_name[128];       /* as the file names it */
} steps_file;

/* Reads path.  profile (NULL: none) is applied to the rows' device; a device the catalog
 * lacks is taken to be the profile's catalog entry.  0, or -1 with "path:line: column:
 * expected ..., got 'value'" in err; release out in every case. */
int steps_load(const char *path, const catalog *cat, const device_profile *profile,
               steps_file *out, char *err, size_t err_size);
void steps_release(steps_file *f);

/* "name:layers=4,hidden=1024,heads=16,kv_heads=4,ffn=2816,vocab=16000" into *m (a gated,
 * rotary, untied decoder; the name is allocated).  0, or -1 with a message. */
int steps_parse_shape(const char *text, model_spec *m, char *err, size_t err_size);

#endif
