/* What a pool costs, accrued in simulated time: the compute bill by its pricing, the
 * power its GPUs draw where the scenario pays for it, and egress by the GB in monthly
 * tiers.  A cost meter follows one pool through one replication and can be read at any
 * instant, so the cumulative cost curve is exact at every bucket's end.
 *
 * Pricing kinds (per GPU unless said otherwise; a month is 730 hours, a year 8,760):
 *   - COST_ON_DEMAND, COST_SPOT: usd_per_hour for each GPU held, billed per second (each
 *     rental at least minimum_s) or per started hour of each rental;
 *   - COST_RESERVED: reserved_gpus paid at usd_per_hour whether used or not, GPUs held
 *     beyond them at above_usd_per_hour, per second;
 *   - COST_MONTHLY: a flat rent per GPU (or per server of gpus_per_server GPUs, rounded
 *     up) for the GPUs the pool owns, per second of the month;
 *   - COST_OWNED: bought hardware, depreciated straight-line: (purchase - residual) over
 *     `years`, plus hosting per month (space, cooling, network, staff).
 * Power (models/power.h): a GPU held draws its idle power, one holding a model (a
 * replica's, a job's) its loaded-idle power, and above it what its work by phase draws;
 * each GPU held adds its share of the server's host power; the facility multiplies the
 * sum by its PUE.  The energy is reported for every pool, and billed (facility kWh x
 * usd_per_kwh) only where the scenario pays for power (monthly and owned pools; a cloud
 * price already includes it).
 * Egress: bytes sent to users, priced by monthly tiers of GB (the first tier from 0),
 * restarting at each month of simulated time.  The month a run ends in, which it covers
 * only in part, is priced at the tiers of a whole month sent at its rate, for the share
 * it covers: a one-day run pays a day's share of a month's bill at that day's rate, not
 * the first (dearest, or free) GB of a month.
 */
#ifndef FLEETSIM_MODELS_COST_H
#define FLEETSIM_MODELS_COST_H

#include <stdbool.h>
#include <stddef.h>

#include "models/perf.h"
#include "models/power.h"

#define COST_MONTH_S (730.0 * 3600)
#define COST_YEAR_S (8760.0 * 3600)

typedef enum cost_kind {
    COST_NONE, COST_ON_DEMAND, COST_SPOT, COST_RESERVED, COST_MONTHLY, COST_OWNED,
} cost_kind;

typedef struct egress_tier {
    double from_gb;      /* per month; ascending, the first 0 */
    double usd_per_gb;
} egress_tier;

typedef struct cost_spec {
    cost_kind kind;
    double usd_per_hour;          /* on demand, spot, reserved: per GPU-hour */
    bool per_hour;                /* on demand, spot: each started hour of a rental */
    double minimum_s;             /* on demand, spot, per second: least billed a rental */
    unsigned reserved_gpus;       /* reserved */
    double term_s;                /* reserved: the commitment's length (for reading) */
    double above_usd_per_hour;    /* reserved: GPUs beyond the reservation */
    double usd_per_gpu_month;     /* monthly, per GPU ... */
    double usd_per_server_month;  /* ... or per server of gpus_per_server GPUs */
    unsigned gpus_per_server;
    double purchase_usd;          /* owned: per GPU, or per server with gpus_per_server */
    bool purchase_from_catalog;   /* owned: the device's catalog price (its GPUs alone) */
    double years, residual;       /* owned: depreciation period; value left, fraction */
    double hosting_usd_per_month; /* owned: per GPU, or per server with gpus_per_server */
    bool pays_power;
    double pue, usd_per_kwh;      /* pue: the default of the pool's power.pue */
    egress_tier *egress;          /* owned; NULL: egress is free */
    size_t negress;
    /* monthly, owned: a site's internet transit instead of egress by the GB, billed as
     * carriers bill it, per Mbps a month at a percentile (0.95) of the month's rates over
     * windows of the meter's (cost_meter_set_window); 0: none */
    double transit_usd_per_mbps, transit_percentile;
} cost_spec;

/* Frees the egress tiers; NULL is fine. */
void cost_spec_release(cost_spec *spec);

/* "on_demand", "spot", ... */
const char *cost_kind_name(cost_kind kind);

/* The price of `gb` GB sent in one month under the tiers. */
double egress_tier_cost(const egress_tier *tiers, size_t n, double gb);

/* What a pool has cost so far. */
typedef struct cost_breakdown {
    double compute_usd, power_usd, egress_usd, total_usd;
    double energy_kwh;       /* at the facility: (GPUs + hosts) x PUE */
    double gpu_kwh, host_kwh;/* the IT energy's two parts */
    double egress_gb;
} cost_breakdown;

typedef struct cost_meter cost_meter;

/* A meter from time now_s for a pool that owns owned_gpus GPUs (monthly, owned: what is
 * paid for; others: ignored) whose power is `power` (NULL: none drawn), counting in
 * units of 1 / units_per_gpu GPU (MIG slices, time-slicing tenants).  spec and power
 * are borrowed.  NULL if out of memory. */
cost_meter *cost_meter_create(const cost_spec *spec, unsigned owned_gpus, const power_spec *power,
                              unsigned units_per_gpu, double now_s);
/* NULL is fine. */
void cost_meter_free(cost_meter *m);

/* A unit joins the GPUs held (rented, repaired) or leaves them (returned, failed),
 * at t_s (never before the last call). */
void cost_meter_rent(cost_meter *m, unsigned unit, double t_s);
void cost_meter_return(cost_meter *m, unsigned unit, double t_s);

/* Adds unit-seconds of units holding a model (granted to a replica or a job: loaded
 * idle at least), and unit-seconds of work by phase (replicas' iterations, jobs' steps). */
void cost_meter_add_loaded(cost_meter *m, double unit_seconds);
void cost_meter_add_work(cost_meter *m, const perf_phases *unit_seconds);

/* The run ends at end_s (from the meter's creation: never, plain monthly tiers): the
 * month it ends in is billed as a whole month at its rate, for the share it covers. */
void cost_meter_set_end(cost_meter *m, double end_s);

/* bytes sent to users at t_s: those of the window that ends at t_s (or the last
 * before it), as the run states them at its buckets' ends. */
void cost_meter_egress(cost_meter *m, double bytes, double t_s);

/* The windows over which transit's rates are taken (the run's bucket; carriers sample
 * every 5 minutes): each month's bill is the percentile of its windows' rates, a
 * window that sent nothing counting as 0 Mbps.  Without it, one window a month. */
void cost_meter_set_window(cost_meter *m, double window_s);

/* Everything accrued from creation to t_s (>= the last call); open rentals count as
 * billed so far (a started hour in full). */
cost_breakdown cost_meter_read(const cost_meter *m, double t_s);

/* Compute cost of one GPU-hour at this pricing (jobs are charged their GPU-hours at it):
 * the on-demand, spot or reserved rate, a month's rent / 730, or an owned GPU's
 * depreciation and hosting per hour. */
double cost_gpu_hour_usd(const cost_spec *spec);

#endif
