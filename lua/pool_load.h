/* Pools of a scenario file: fs.dedicated, fs.cloud and fs.spot, with their site and
 * autoscaler, into models/scenario.h's pool_spec. */
#ifndef FLEETSIM_LUA_POOL_LOAD_H
#define FLEETSIM_LUA_POOL_LOAD_H

#include <stdbool.h>

#include "lua/fields.h"
#include "models/scenario.h"

/* Constructor names a pool may be made by (NULL-ended). */
extern const char *const POOL_KINDS[];

/* Converts the pool object p into out (its name already set).  *calls_lua is set when
 * the pool keeps a Lua function (a scaling policy) that the run will call. */
int pool_load_convert(load_context *c, const fields_object *p, pool_spec *out, bool *calls_lua);

/* After the catalog is loaded: a pool whose GPUs are shared (MIG slices, time-slicing
 * tenants) gets the device one unit is (added to cat) and counts in units. */
int pool_load_resolve_units(load_context *c, const fields_object *p, pool_spec *out, catalog *cat);

#endif
