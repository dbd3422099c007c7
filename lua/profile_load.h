/* Reading a calibration profile (kernels/calib_profile.h writes them; models/profile.h
 * applies them).  A profile is a Lua file that returns a table; it runs in the sandbox
 * like a scenario (lua/sandbox.h), since profiles are passed around too, and its keys are
 * checked with the scenario readers' messages ("h200.lua: achieved.flops.bf16: expected
 * a number ...").
 */
#ifndef FLEETSIM_LUA_PROFILE_LOAD_H
#define FLEETSIM_LUA_PROFILE_LOAD_H

#include <stddef.h>

#include "lua/fields.h"
#include "models/device.h"
#include "models/perf.h"
#include "models/profile.h"

/* Reads path into *out.  0, or -1 with a message naming the file in err. */
int profile_load_file(const char *path, device_profile *out, char *err, size_t err_size);

/* Reads path and applies it (profile_apply) to *device and *perf, which the caller fills
 * first (a copy of the catalog's device and perf_default_profile of it): `fleetsim
 * estimate --profile FILE`; loaded, where not NULL, gets the profile as read (what an
 * output says it measured).  0, or -1 with a message in err (device and perf untouched). */
int profile_load_apply_file(const char *path, device_spec *device, perf_profile *perf,
                            device_profile *loaded, char *err, size_t err_size);

/* A pool's `profile = "profiles/x.lua"` key: the file, relative to the scenario and
 * inside its folder unless the scenario is trusted (fields_resolve_path), applied to
 * *device and *perf as above.  1 when the pool names a profile, 0 when it does not
 * (device and perf untouched), -1 on a mistake (the message, located at the pool's
 * key, in c->err). */
int profile_load_convert(load_context *c, const fields_object *pool, device_spec *device,
                         perf_profile *perf);

#endif
