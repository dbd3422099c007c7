/* A pool's `power` in a scenario file, into models/power.h's power_spec and
 * models/carbon.h's carbon_spec:
 *
 *   power = fs.power { cap_w = 500 } | { cap = 0.7 } (of the TDP) | { clock = 0.8 },
 *                      host_w = 125, pue = 1.2,
 *                      grid = 350 | { hourly = { 24 or more g/kWh } }
 *                           | { file = "grid.csv", column = "g_per_kwh" },
 *                      embodied_kg = 462.5, life_years = 6,
 *                      budget_kw = 1000 }
 *
 * Every key may be left out; the defaults and their sources are in power_load.c. */
#ifndef FLEETSIM_LUA_POWER_LOAD_H
#define FLEETSIM_LUA_POWER_LOAD_H

#include "lua/fields.h"
#include "models/scenario.h"

/* pool.power, read into out->power and out->carbon (defaults where absent); the device
 * model is set by power_load_resolve.  0, or -1 with the message. */
int power_load_convert(load_context *c, const fields_object *pool, pool_spec *out);

/* The pool's device under its setting (whole: the physical GPU; NULL for plain servers,
 * which draw nothing here).  0, or -1 with the message at the pool's power key. */
int power_load_resolve(load_context *c, const fields_object *pool, pool_spec *out,
                       const device_spec *whole);

/* A power budget: the GPUs (units) the pool may power at once, each at its cap (its TDP
 * without one) and its host share, times the PUE, within budget_kw: a dedicated pool
 * powers at most that many of those it owns, a cloud one holds at most that many.  After
 * the units are resolved.  0, or -1 with the message (a budget that powers no GPU). */
int power_load_apply_budget(load_context *c, const fields_object *pool, pool_spec *out);

#endif
