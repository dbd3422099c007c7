/* A pool's sharing keys, from the scenario's tables into models/ values:
 *
 *   noisy = fs.noisy { calm = "20m", contended = "5m", slowdown = 1.5,
 *                      compute_sensitivity = 0.2 }
 *   mig = "1g.10gb", bandwidth_interference = 0.15
 *   time_slicing = fs.time_slicing { tenants = 2, slice = "2ms", switch = "50us" }
 *
 * Dwell times (calm, contended): a plain duration is the mean of an exponential
 * distribution (spells that begin and end at random, memoryless, as neighbours come
 * and go), 0 meaning no such spells; a distribution constructor (fs.lognormal { ... },
 * fs.constant { value = "5m" }, ...) gives any other shape.  slowdown: a factor >= 1 or a
 * distribution of factors (draws under 1 count as 1).  Errors read
 * "file.lua:12: pools.cloud.noisy.calm: ...".
 */
#ifndef FLEETSIM_LUA_SHARING_LOAD_H
#define FLEETSIM_LUA_SHARING_LOAD_H

#include <stdbool.h>

#include "lua/fields.h"
#include "models/device.h"
#include "models/gpu_share.h"
#include "models/noisy.h"

/* pool.noisy, if present (*present then true, and *out to release with
 * noisy_spec_release); absent: *present false, *out untouched.  0 or -1. */
int sharing_load_convert_noisy(load_context *c, const fields_object *pool, noisy_spec *out,
                               bool *present);

/* pool.mig (with pool.bandwidth_interference) or pool.time_slicing; neither: SHARE_NONE.
 * *out is to be released with sharing_spec_release (also after an error).  The MIG
 * profile is checked against the pool's device by sharing_load_check_mig_profile. */
int sharing_load_convert(load_context *c, const fields_object *pool, sharing_spec *out);

/* For a SHARE_MIG spec, that the profile exists for the pool's device (its catalog
 * entry), reported at pool.mig with the valid profiles; 0 for other modes. */
int sharing_load_check_mig_profile(load_context *c, const fields_object *pool,
                                   const sharing_spec *spec, const device_spec *whole);

#endif
