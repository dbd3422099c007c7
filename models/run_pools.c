/* GPU pools in a run: their accounting, training jobs and costs (see run_part.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/event_order.h"
#include "models/run.h"
#include "models/run_part.h"
#include "models/workload_groups.h"
#include "sim/fatal.h"

bool pool_gpus_needed(const scenario *sc, size_t p)
{
    if (!sc->pools[p].gpu)
        return false;
    for (size_t i = 0; i < sc->nservices; i++)
        if (sc->services[i].pool == p)
            return false;
    return true;
}

static bool serves_inference(const scenario *sc, size_t p)
{
    for (size_t i = 0; i < sc->ninferences; i++)
        if (sc->inferences[i].pool == p || workload_group_on(&sc->inferences[i], p))
            return true;
    return false;
}

static bool has_jobs(const scenario *sc, size_t p)
{
    for (size_t i = 0; i < sc->ntrainings; i++)
        if (sc->trainings[i].pool == p)
            return true;
    for (size_t i = 0; i < sc->njob_streams; i++)
        if (sc->job_streams[i].pool == p)
            return true;
    return false;
}

/* Adds a pool's facility watts over a bucket to the site's, closing the site's previous
 * bucket into its peak. */
static void site_add(site_power *site, double start_s, double watts, bool counted)
{
    if (!(site->start_s == start_s)) {
        if (!isnan(site->start_s) && site->counted)
            site->peak_w = fmax(site->peak_w, site->sum_w);
        site->start_s = start_s;
        site->sum_w = 0;
        site->counted = counted;
    }
    site->sum_w += watts;
}

static void record_bucket(pool_gpus *pg, double end_s)
{
    double span = end_s - pg->bucket_start_s;
    if (!(span > 0))
        return;
    const pool_spec *spec = &pg->sc->pools[pg->pool];
    const gpu_pool_stats *st = gpu_pool_get_stats(pg->gp);
    double held = sim_timeavg_integral(&st->life_held, end_s);
    double busy = sim_timeavg_integral(&st->life_busy, end_s);
    /* GPUs granted hold a model (loaded idle at least); a job's work is stated with its
     * grant, a replica's comes from the replica (pool_gpus_add_work) */
    cost_meter_add_loaded(pg->meter, busy - pg->busy_mark);
    perf_phases work = gpu_pool_work(pg->gp, end_s);
    perf_phases done = perf_phases_add(work, pg->work_mark, -1);
    cost_meter_add_work(pg->meter, &done);
    pg->work_mark = work;
    double per = spec->units_per_gpu;
    size_t bucket = (size_t)floor(pg->bucket_start_s / pg->sc->bucket_s + 0.5);
    double h = (held - pg->held_mark) / span / per, b = (busy - pg->busy_mark) / span / per;
    cost_breakdown now = cost_meter_read(pg->meter, end_s);
    double kwh = now.energy_kwh - pg->energy_mark_kwh, watts = kwh * 3.6e6 / span;
    pg->operational_kg += kwh * carbon_grid_mean(&spec->carbon, pg->bucket_start_s, end_s) / 1e3;
    pg->embodied_kg += carbon_embodied_kg(&spec->carbon, (held - pg->held_mark) / per);
    bool counted = end_s > pg->sc->warmup_s;
    if (counted)
        pg->peak_w = fmax(pg->peak_w, watts);
    site_add(pg->site, pg->bucket_start_s, watts, counted);
    sim_timeseries_add(pg->ts, bucket, pg->subject, COL_GPUS_HELD, h);
    sim_timeseries_add(pg->ts, bucket, pg->subject, COL_GPUS_BUSY, b);
    sim_timeseries_add(pg->ts, bucket, pg->subject, COL_GPUS_IDLE, h - b);
    sim_timeseries_add(pg->ts, bucket, pg->subject, COL_COST, now.total_usd);
    sim_timeseries_add(pg->ts, bucket, pg->subject, COL_POWER, watts / 1e3);
    pg->held_mark = held;
    pg->busy_mark = busy;
    pg->energy_mark_kwh = now.energy_kwh;
    pg->bucket_start_s = end_s;
}

pool_carbon pool_gpus_carbon(const pool_gpus *pg)
{
    return (pool_carbon){ pg->operational_kg - pg->warmup_operational_kg,
                          pg->embodied_kg - pg->warmup_embodied_kg, pg->peak_w };
}

static void on_bucket(sim_engine *e, void *data)
{
    pool_gpus *pg = data;
    double now = sim_engine_now(e);
    record_bucket(pg, now);
    sim_event_schedule(e, now + pg->sc->bucket_s, EVENT_POOL_BUCKET, on_bucket, pg);
}

static void on_warmup(sim_engine *e, void *data)
{
    pool_gpus *pg = data;
    double now = sim_engine_now(e);
    record_bucket(pg, now); /* the work so far counts before the meter is read */
    gpu_pool_restart_stats(pg->gp, now);
    pg->at_warmup = cost_meter_read(pg->meter, now);
    pg->warmup_operational_kg = pg->operational_kg;
    pg->warmup_embodied_kg = pg->embodied_kg;
}

/* The job scheduler of the pool with its jobs and streams, started. */
static int start_jobs(pool_gpus *pg, sim_engine *e, unsigned r, const run_options *options,
                      char *err, size_t err_size)
{
    const scenario *sc = pg->sc;
    size_t p = pg->pool;
    pg->jobs = job_scheduler_create(e, pg->gp, &sc->pools[p].scheduler, sc->pools[p].name,
                                    sc->seed, r, err, err_size);
    if (!pg->jobs)
        return -1;
    if (options && options->on_job)
        job_scheduler_set_recorder(pg->jobs, options->on_job, options->job_context);
    if (sc->pools[p].has_noisy)
        job_scheduler_set_noisy(pg->jobs, &sc->pools[p].noisy);
    for (size_t i = 0; i < sc->ntrainings; i++)
        if (sc->trainings[i].pool == p
            && job_scheduler_add_job(pg->jobs, &sc->trainings[i], err, err_size) != 0)
            return -1;
    for (size_t i = 0; i < sc->njob_streams; i++)
        if (sc->job_streams[i].pool == p
            && job_scheduler_add_stream(pg->jobs, &sc->job_streams[i], err, err_size) != 0)
            return -1;
    return 0;
}

int pool_gpus_start(pool_gpus *pg, sim_engine *e, unsigned r, const run_options *options,
                    char *err, size_t err_size)
{
    const scenario *sc = pg->sc;
    const pool_spec *p = &sc->pools[pg->pool];
    pg->held_mark = pg->busy_mark = pg->bucket_start_s = pg->energy_mark_kwh = 0;
    pg->work_mark = (perf_phases){ 0 };
    pg->operational_kg = pg->embodied_kg = pg->peak_w = 0;
    pg->warmup_operational_kg = pg->warmup_embodied_kg = 0;
    memset(&pg->at_warmup, 0, sizeof pg->at_warmup);
    pg->serves_inference = serves_inference(sc, pg->pool);
    pg->gp = gpu_pool_create(e, &p->capacity, p->name, sc->seed, r, err, err_size);
    if (!pg->gp)
        return -1;
    const device_spec *d = catalog_device(&sc->catalog, p->gpu);
    static const cost_spec no_price = { .kind = COST_NONE };
    pg->meter = cost_meter_create(p->has_cost ? &p->cost : &no_price,
                                  p->count / p->units_per_gpu, d ? &p->power : NULL,
                                  p->units_per_gpu, sim_engine_now(e));
    if (!pg->meter)
        sim_out_of_memory("out of memory creating a cost meter");
    cost_meter_set_end(pg->meter, sc->duration_s);
    cost_meter_set_window(pg->meter, sc->bucket_s); /* transit's rates, a bucket's each */
    gpu_pool_set_meter(pg->gp, pg->meter);
    if (sc->warmup_s > 0)
        sim_event_schedule(e, sc->warmup_s, EVENT_WARMUP, on_warmup, pg);
    sim_event_schedule(e, sc->bucket_s, EVENT_POOL_BUCKET, on_bucket, pg);
    return has_jobs(sc, pg->pool) ? start_jobs(pg, e, r, options, err, err_size) : 0;
}

void pool_gpus_add_work(pool_gpus *pg, const perf_phases *work_unit_s, double egress_bytes,
                        double now)
{
    cost_meter_add_work(pg->meter, work_unit_s);
    cost_meter_egress(pg->meter, egress_bytes, now);
}

static cost_breakdown minus(cost_breakdown a, cost_breakdown b)
{
    return (cost_breakdown){
        .compute_usd = a.compute_usd - b.compute_usd, .power_usd = a.power_usd - b.power_usd,
        .egress_usd = a.egress_usd - b.egress_usd, .total_usd = a.total_usd - b.total_usd,
        .energy_kwh = a.energy_kwh - b.energy_kwh, .gpu_kwh = a.gpu_kwh - b.gpu_kwh,
        .host_kwh = a.host_kwh - b.host_kwh, .egress_gb = a.egress_gb - b.egress_gb,
    };
}

/* Energy, power and carbon after the warm-up (measured_s long), of a pool or the run. */
static void add_energy(sim_metrics *m, const char *scope, const char *subject,
                       const cost_breakdown *c, const pool_carbon *k, double measured_s)
{
    sim_metrics_add(m, scope, subject, "energy_gpu_kwh", "kWh", c->gpu_kwh);
    sim_metrics_add(m, scope, subject, "energy_host_kwh", "kWh", c->host_kwh);
    sim_metrics_add(m, scope, subject, "power_mean_kw", "kW",
                    measured_s > 0 ? c->energy_kwh * 3600 / measured_s : NAN);
    sim_metrics_add(m, scope, subject, "power_peak_kw", "kW", k->peak_w / 1e3);
    sim_metrics_add(m, scope, subject, "carbon_kg", "kgCO2e", k->operational_kg + k->embodied_kg);
    sim_metrics_add(m, scope, subject, "carbon_operational_kg", "kgCO2e", k->operational_kg);
    sim_metrics_add(m, scope, subject, "carbon_embodied_kg", "kgCO2e", k->embodied_kg);
}

static void add_cost(sim_metrics *m, const char *scope, const char *subject,
                     const cost_breakdown *c, bool priced)
{
    if (priced) {
        sim_metrics_add(m, scope, subject, "cost_usd", "USD", c->total_usd);
        sim_metrics_add(m, scope, subject, "cost_compute_usd", "USD", c->compute_usd);
        sim_metrics_add(m, scope, subject, "cost_power_usd", "USD", c->power_usd);
        sim_metrics_add(m, scope, subject, "cost_egress_usd", "USD", c->egress_usd);
    }
    sim_metrics_add(m, scope, subject, "energy_kwh", "kWh", c->energy_kwh);
}

void pool_gpus_finish(pool_gpus *pg, double end_s, sim_metrics *m)
{
    const pool_spec *p = &pg->sc->pools[pg->pool];
    record_bucket(pg, end_s);
    if (pg->jobs) {
        job_scheduler_finish(pg->jobs, end_s);
        training_record_metrics(pg->jobs, end_s,
                                p->has_cost ? cost_gpu_hour_usd(&p->cost) : NAN, m);
    }
    gpu_pool_record_metrics(pg->gp, p->name, end_s, p->units_per_gpu, !pg->serves_inference, m);
    pg->measured = minus(cost_meter_read(pg->meter, end_s), pg->at_warmup);
    pg->carbon = pool_gpus_carbon(pg);
    add_cost(m, "pool", p->name, &pg->measured, p->has_cost);
    add_energy(m, "pool", p->name, &pg->measured, &pg->carbon, end_s - pg->sc->warmup_s);
}

void pool_gpus_stop(pool_gpus *pg)
{
    job_scheduler_free(pg->jobs);
    pg->jobs = NULL;
    gpu_pool_free(pg->gp);
    pg->gp = NULL;
    cost_meter_free(pg->meter);
    pg->meter = NULL;
}

/* What a bought pool paid up front: its purchase, for the GPUs (or servers) it owns. */
static double purchase_usd(const pool_spec *p)
{
    double gpus = (double)p->count / p->units_per_gpu; /* owned, powered or not */
    double units = p->cost.gpus_per_server ? ceil(gpus / p->cost.gpus_per_server) : gpus;
    return p->cost.purchase_usd * units;
}

/* Present value of a flow of `per_month` USD a month over `months` months, discounted
 * continuously at the rate equivalent to `annual` a year (0: the plain sum).  A month's
 * costs paid as they accrue, not at its end: within 0.4% of monthly payments at 10% a
 * year. */
static double present_value(double per_month, double months, double annual)
{
    if (!(annual > 0))
        return per_month * months;
    double delta = log1p(annual) / 12; /* a month */
    return per_month * -expm1(-delta * months) / delta;
}

/* The streams pool p's work draws, one at a time: the k-th workload (a served model, a
 * group of one on p, or a job stream) on p that names its streams, NULL past the last. */
static const char *pool_streams(const scenario *sc, size_t p, size_t k)
{
    for (size_t i = 0; i < sc->ninferences; i++) {
        const inference_spec *w = &sc->inferences[i];
        bool on = w->pool == p;
        for (unsigned g = 0; g < w->ngroups && !on; g++)
            on = w->groups[g].pool == p;
        if (on && w->streams && k-- == 0)
            return w->streams;
    }
    for (size_t i = 0; i < sc->njob_streams; i++)
        if (sc->job_streams[i].pool == p && sc->job_streams[i].streams && k-- == 0)
            return sc->job_streams[i].streams;
    return NULL;
}

/* Whether pools a and b do the same work, so that one's monthly cost may stand against
 * the other's: some workload on each draws the same streams (the same requests or jobs,
 * as compared options are stated).  Where either names no streams the scenario does not
 * say which pools are alternatives, and any two are compared. */
static bool same_work(const scenario *sc, size_t a, size_t b)
{
    if (!pool_streams(sc, a, 0) || !pool_streams(sc, b, 0))
        return true;
    for (size_t i = 0; pool_streams(sc, a, i); i++)
        for (size_t j = 0; pool_streams(sc, b, j); j++)
            if (!strcmp(pool_streams(sc, a, i), pool_streams(sc, b, j)))
                return true;
    return false;
}

/* A steady run's costs projected to the scenario's horizon (issue 18, 11; issue 39, 2),
 * instead of a verdict scaling cost_usd by hand.  Each priced pool runs on at its
 * measured rate per month.  A bought pool is counted as a buyer pays it
 * (cost_horizon_usd, cash): its purchase up front, its running costs (hosting, power,
 * egress) monthly; and as its books carry it (cost_horizon_book_usd): the purchase less
 * its residual straight over its years, which stop once it is paid off, and the running
 * costs; the value its books still hold at the horizon's end is
 * hardware_value_left_usd.  With a discount rate, cost_horizon_npv_usd is the cash
 * flows' present value.  The run's sum is left out where its pools are options compared
 * on the same requests. */
static void horizon_metrics(const scenario *sc, const pool_gpus *pools, double months,
                            sim_metrics *m)
{
    if (!(sc->horizon_s > 0) || !(months > 0))
        return;
    double horizon = sc->horizon_s / COST_MONTH_S, cash = 0, book = 0, npv = 0;
    bool priced = false, discounted = sc->discount_rate > 0;
    for (size_t p = 0; p < sc->npools; p++) {
        const pool_spec *spec = &sc->pools[p];
        if (!pools[p].gp || !spec->has_cost)
            continue;
        double rate = pools[p].measured.total_usd / months;
        double pool_cash = rate * horizon, pool_book = pool_cash;
        double pool_npv = present_value(rate, horizon, sc->discount_rate);
        if (spec->cost.kind == COST_OWNED) {
            double paid_months = spec->cost.years * 12, purchase = purchase_usd(spec);
            double depreciation = purchase * (1 - spec->cost.residual) / paid_months;
            double running = rate - depreciation;
            double written_off = depreciation * fmin(horizon, paid_months);
            pool_cash = purchase + running * horizon;
            pool_book = running * horizon + written_off;
            pool_npv = purchase + present_value(running, horizon, sc->discount_rate);
            sim_metrics_add(m, "pool", spec->name, "cost_horizon_book_usd", "USD", pool_book);
            sim_metrics_add(m, "pool", spec->name, "hardware_value_left_usd", "USD",
                            purchase - written_off);
        }
        sim_metrics_add(m, "pool", spec->name, "cost_horizon_usd", "USD", pool_cash);
        if (discounted)
            sim_metrics_add(m, "pool", spec->name, "cost_horizon_npv_usd", "USD", pool_npv);
        cash += pool_cash;
        book += pool_book;
        npv += pool_npv;
        priced = true;
    }
    if (!priced)
        return;
    sim_metrics_add(m, "run", sc->name, "horizon_months", "months", horizon);
    if (scenario_compares_pools(sc))
        return;
    sim_metrics_add(m, "run", sc->name, "cost_horizon_usd", "USD", cash);
    sim_metrics_add(m, "run", sc->name, "cost_horizon_book_usd", "USD", book);
    if (discounted)
        sim_metrics_add(m, "run", sc->name, "cost_horizon_npv_usd", "USD", npv);
}

void run_cost_metrics(const scenario *sc, const pool_gpus *pools, site_power *site,
                      double end_s, sim_metrics *m)
{
    cost_breakdown total = { 0 };
    pool_carbon carbon = { 0 };
    bool priced = false, drawn = false;
    for (size_t p = 0; p < sc->npools; p++) {
        if (!pools[p].gp)
            continue;
        const cost_breakdown *c = &pools[p].measured;
        total.compute_usd += c->compute_usd;
        total.power_usd += c->power_usd;
        total.egress_usd += c->egress_usd;
        total.total_usd += c->total_usd;
        total.energy_kwh += c->energy_kwh;
        total.gpu_kwh += c->gpu_kwh;
        total.host_kwh += c->host_kwh;
        carbon.operational_kg += pools[p].carbon.operational_kg;
        carbon.embodied_kg += pools[p].carbon.embodied_kg;
        priced |= sc->pools[p].has_cost;
        drawn = true;
    }
    add_cost(m, "run", sc->name, &total, priced);
    site_add(site, INFINITY, 0, false); /* closes the last bucket */
    carbon.peak_w = site->peak_w;
    if (drawn)
        add_energy(m, "run", sc->name, &total, &carbon, end_s - sc->warmup_s);
    /* Break-even: buying pays its purchase up front and then runs at its measured rate
     * (hosting, power, egress); another option doing the same work runs at its own
     * measured rate.  Months until the purchase is paid back by the difference (none if
     * it never is). */
    double months = (end_s - sc->warmup_s) / COST_MONTH_S;
    for (size_t a = 0; a < sc->npools && months > 0; a++) {
        const pool_spec *bought = &sc->pools[a];
        if (!pools[a].gp || !bought->has_cost || bought->cost.kind != COST_OWNED)
            continue;
        double depreciation = purchase_usd(bought) * (1 - bought->cost.residual)
                              / (bought->cost.years * 12); /* per month */
        double running = (pools[a].measured.total_usd - depreciation * months) / months;
        for (size_t b = 0; b < sc->npools; b++) {
            if (b == a || !pools[b].gp || !sc->pools[b].has_cost
                || sc->pools[b].cost.kind == COST_OWNED || !same_work(sc, a, b))
                continue;
            double other = pools[b].measured.total_usd / months;
            char subject[512];
            snprintf(subject, sizeof subject, "%s_vs_%s", bought->name, sc->pools[b].name);
            sim_metrics_add(m, "run", subject, "break_even_months", "months",
                            other > running ? purchase_usd(bought) / (other - running) : NAN);
        }
    }
    horizon_metrics(sc, pools, months, m);
}

/* ---- the part kind (run_part.h): the run owns the pool_gpus array in rs->gpus ---- */

static void *plan(run_shared *rs) { return rs->gpus; }

static int start(void *parts, run_shared *rs, char *err, size_t err_size)
{
    pool_gpus *gpus = parts;
    for (size_t p = 0; p < rs->sc->npools; p++)
        if (pool_gpus_needed(rs->sc, p)
            && pool_gpus_start(&gpus[p], rs->engine, rs->replication, rs->options, err,
                               err_size) != 0)
            return -1;
    return 0;
}

static void record_pools(void *parts, run_shared *rs, double end_s, sim_metrics *m)
{
    pool_gpus *gpus = parts;
    for (size_t p = 0; p < rs->sc->npools; p++)
        if (gpus[p].gp)
            pool_gpus_finish(&gpus[p], end_s, m);
}

static void stop(void *parts, run_shared *rs)
{
    pool_gpus *gpus = parts;
    for (size_t p = 0; p < rs->sc->npools; p++)
        pool_gpus_stop(&gpus[p]);
}

static void release(void *parts) {}

const run_part_kind run_pool_gpus = {
    .what = "pools", .plan = plan, .start = start,
    .record = { [RUN_STAGE_POOLS] = record_pools }, .stop = stop, .release = release,
};
