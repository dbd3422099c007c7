/* A pool's `cost` in a scenario file, into models/cost.h's cost_spec:
 *
 *   cost = fs.on_demand { usd_per_hour = 3.99, billing = "per_second", minimum = "1m",
 *                         egress = "AWS" }
 *   cost = fs.spot { usd_per_hour = 2.10 }                -- fs.spot inside `cost`
 *   cost = fs.reserved { gpus = 8, usd_per_hour = 2.50, term = "1y",
 *                        on_demand_usd_per_hour = 3.99 }
 *   cost = fs.monthly { usd_per_gpu = 1500 }  or  { usd_per_server = 12000, gpus_per_server = 8 }
 *   cost = fs.owned { purchase_usd = 30000, years = 4, residual = 0.1,
 *                     hosting_usd_per_month = 150, pue = 1.58, usd_per_kwh = 0.08 }
 *
 * egress: a provider of fs.egress ("AWS", "GCP premium", ...), a flat price per GB, or
 * a list of tiers { { from = GB, usd_per_gb = p }, ... }; default: "AWS" for rented
 * GPUs (on demand, spot, reserved), free for monthly and owned ones.  Monthly and owned
 * pools pay for power (pue, usd_per_kwh); cloud prices include it.
 */
#ifndef FLEETSIM_LUA_COST_LOAD_H
#define FLEETSIM_LUA_COST_LOAD_H

#include <stdbool.h>

#include "lua/fields.h"
#include "models/cost.h"
#include "models/device.h"

/* Defaults of the power bill, with their sources in README.md ("Costs"). */
#define COST_DEFAULT_PUE 1.58          /* Uptime Institute's 2023 survey, average */
#define COST_DEFAULT_USD_PER_KWH 0.08  /* US industrial average, EIA, 2024 */

/* pool.cost, if present (*present true); NaN usd_per_hour means "the device's catalog
 * price", resolved by cost_load_resolve_price.  Release *out with cost_spec_release. */
int cost_load_convert(load_context *c, const fields_object *pool, cost_spec *out, bool *present);

/* Fills a price left to the catalog from the pool's device (an hourly rate; an owned
 * pool's purchase, the device's purchase_usd per GPU), or refuses when it has none. */
int cost_load_resolve_price(load_context *c, const fields_object *pool, cost_spec *spec,
                            const device_spec *device);

#endif
