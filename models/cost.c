/* Cost accrual (see cost.h). */
#include "models/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/array.h"
#include "sim/fatal.h"

struct cost_meter {
    const cost_spec *spec;
    double per;              /* units per GPU */
    unsigned owned_gpus;
    const power_spec *power; /* NULL: draws nothing */
    double start_s, last_s;
    unsigned held;           /* units */
    double held_area;        /* unit-seconds held */
    double excess_area;      /* reserved: unit-seconds beyond the reservation */
    double loaded_area;      /* unit-seconds holding a model */
    double work_j;           /* joules of work above loaded idle, whole GPUs' */
    double closed_usd;       /* rentals returned (per-hour billing, minimums) */
    double *open_since;      /* by unit: rental start, or NaN */
    size_t nopen;
    unsigned month;          /* egress: the month of simulated time in progress */
    double month_gb, egress_gb;
    double months_usd;       /* egress of the months ended */
    double end_s;            /* the run's end (INFINITY: not stated) */
    /* transit: the month's closed windows' rates (Mbps), and the open window */
    double window_s;
    double *rates;
    size_t nrates, rates_cap;
    double window_end_s, window_bytes;
};

void cost_spec_release(cost_spec *spec)
{
    if (!spec)
        return;
    free(spec->egress);
    spec->egress = NULL;
    spec->negress = 0;
}

const char *cost_kind_name(cost_kind kind)
{
    static const char *const names[] = { "none", "on_demand", "spot", "reserved", "monthly",
                                         "owned" };
    return names[kind];
}

double egress_tier_cost(const egress_tier *tiers, size_t n, double gb)
{
    double usd = 0;
    for (size_t i = 0; i < n && gb > tiers[i].from_gb; i++) {
        double top = i + 1 < n ? fmin(gb, tiers[i + 1].from_gb) : gb;
        usd += (top - tiers[i].from_gb) * tiers[i].usd_per_gb;
    }
    return usd;
}

cost_meter *cost_meter_create(const cost_spec *spec, unsigned owned_gpus, const power_spec *power,
                              unsigned units_per_gpu, double now_s)
{
    cost_meter *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->spec = spec;
    m->per = units_per_gpu ? units_per_gpu : 1;
    m->owned_gpus = owned_gpus;
    m->power = power;
    m->start_s = m->last_s = now_s;
    m->end_s = INFINITY;
    m->window_s = COST_MONTH_S;
    m->window_end_s = now_s + m->window_s;
    return m;
}

void cost_meter_free(cost_meter *m)
{
    if (!m)
        return;
    free(m->open_since);
    free(m->rates);
    free(m);
}

static double rate_per_unit_s(double usd_per_hour, double per) { return usd_per_hour / 3600 / per; }

/* Brings the areas to t_s. */
static void advance(cost_meter *m, double t_s)
{
    double dt = t_s - m->last_s;
    if (dt > 0) {
        m->held_area += m->held * dt;
        double reserved = m->spec->reserved_gpus * m->per;
        if (m->held > reserved)
            m->excess_area += (m->held - reserved) * dt;
    }
    m->last_s = t_s;
}

void cost_meter_rent(cost_meter *m, unsigned unit, double t_s)
{
    advance(m, t_s);
    m->held++;
    if (unit >= m->nopen) {
        size_t old = m->nopen;
        m->open_since = sim_array_grow(m->open_since, &m->nopen, (size_t)unit + 1,
                                       sizeof *m->open_since, "a cost meter");
        for (size_t i = old; i < m->nopen; i++)
            m->open_since[i] = NAN;
    }
    m->open_since[unit] = t_s;
}

/* What a rental of d seconds is billed beyond its seconds at the per-second rate: the
 * rest of its last started hour, or of its minimum. */
static double rental_extra_usd(const cost_spec *s, double per, double d)
{
    double rate = rate_per_unit_s(s->usd_per_hour, per);
    if (s->kind != COST_ON_DEMAND && s->kind != COST_SPOT)
        return 0;
    if (s->per_hour) {
        double hours = fmax(1, ceil(d / 3600 - 1e-9));
        return (hours * 3600 - d) * rate;
    }
    return d < s->minimum_s ? (s->minimum_s - d) * rate : 0;
}

void cost_meter_return(cost_meter *m, unsigned unit, double t_s)
{
    advance(m, t_s);
    if (m->held > 0)
        m->held--;
    if (unit < m->nopen && !isnan(m->open_since[unit])) {
        m->closed_usd += rental_extra_usd(m->spec, m->per, t_s - m->open_since[unit]);
        m->open_since[unit] = NAN;
    }
}

void cost_meter_add_loaded(cost_meter *m, double unit_seconds)
{
    if (unit_seconds > 0)
        m->loaded_area += unit_seconds;
}

void cost_meter_add_work(cost_meter *m, const perf_phases *unit_seconds)
{
    if (m->power)
        m->work_j += power_work_joules(&m->power->model, unit_seconds);
}

/* The month of simulated time t_s falls in, from the meter's start. */
static unsigned month_of(const cost_meter *m, double t_s)
{
    return (unsigned)floor((t_s - m->start_s) / COST_MONTH_S);
}

/* The share of a month the run covers of `month` (1 but for the month it ends in). */
static double month_covered(const cost_meter *m, unsigned month)
{
    double from = m->start_s + month * COST_MONTH_S;
    double to = fmin(from + COST_MONTH_S, m->end_s);
    return to > from ? (to - from) / COST_MONTH_S : 1;
}

/* A month's egress of gb GB: at the tiers of a whole month sent at its rate (gb over the
 * share of it the run covers), for that share. */
static double month_egress_usd(const cost_meter *m, unsigned month, double gb)
{
    double covered = month_covered(m, month);
    return covered * egress_tier_cost(m->spec->egress, m->spec->negress, gb / covered);
}

void cost_meter_set_end(cost_meter *m, double end_s)
{
    m->end_s = end_s;
}

void cost_meter_set_window(cost_meter *m, double window_s)
{
    if (window_s > 0 && window_s < COST_MONTH_S) {
        m->window_s = window_s;
        m->window_end_s = m->start_s + window_s;
    }
}

static bool pays_transit(const cost_meter *m) { return m->spec->transit_usd_per_mbps > 0; }

static void swap_rates(double *a, size_t i, size_t j)
{
    double t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/* The percentile p of n rates (reordered), the nearest-rank rule; 0 when none.  A
 * selection in linear time, not a sort: a month's bill is read at every bucket. */
static double rate_percentile(double *a, size_t n, double p)
{
    if (!n)
        return 0;
    size_t k = (size_t)fmax(1, ceil(p * (double)n - 1e-9)) - 1, lo = 0, hi = n - 1;
    while (lo < hi) {
        /* three ways: [lo, lt) below the pivot, [lt, gt] equal, (gt, hi] above */
        double pivot = a[lo + (hi - lo) / 2];
        size_t lt = lo, i = lo, gt = hi;
        while (i <= gt) {
            if (a[i] < pivot)
                swap_rates(a, lt++, i++);
            else if (a[i] > pivot) {
                swap_rates(a, i, gt);
                if (gt == 0)
                    break;
                gt--;
            } else
                i++;
        }
        if (k < lt)
            hi = lt - 1;
        else if (k > gt)
            lo = gt + 1;
        else
            return a[k];
    }
    return a[k];
}

/* A month's transit bill from its windows' rates: the percentile at a month's price,
 * for `share` of the month (1 for a month ended; the part elapsed of the one in
 * progress, so that a bill read at the warm-up and at the end differ by the measured
 * part's). */
static double month_transit_usd(const cost_meter *m, double share, double *rates, size_t n)
{
    double mbps = rate_percentile(rates, n, m->spec->transit_percentile);
    return share * mbps * m->spec->transit_usd_per_mbps;
}

/* Closes the open window (its rate one of its month's), opening the next. */
static void close_window(cost_meter *m)
{
    unsigned month = month_of(m, m->window_end_s - m->window_s / 2);
    if (month != m->month) {
        m->months_usd += month_transit_usd(m, 1, m->rates, m->nrates);
        m->month = month;
        m->nrates = 0;
    }
    m->rates = sim_array_grow(m->rates, &m->rates_cap, m->nrates + 1, sizeof *m->rates,
                              "a transit meter");
    m->rates[m->nrates++] = m->window_bytes * 8 / m->window_s / 1e6;
    m->window_bytes = 0;
    m->window_end_s += m->window_s;
}

void cost_meter_egress(cost_meter *m, double bytes, double t_s)
{
    if (pays_transit(m)) {
        /* bytes stated at t_s are the window's that ends there */
        while (t_s > m->window_end_s + 1e-9 * m->window_s)
            close_window(m);
        m->window_bytes += bytes > 0 ? bytes : 0;
        m->egress_gb += bytes > 0 ? bytes / 1e9 : 0;
        return;
    }
    if (!(bytes > 0))
        return;
    unsigned month = month_of(m, t_s);
    if (month != m->month) {
        m->months_usd += month_egress_usd(m, m->month, m->month_gb);
        m->month = month;
        m->month_gb = 0;
    }
    m->month_gb += bytes / 1e9;
    m->egress_gb += bytes / 1e9;
}

/* The bill at t_s of the months not yet billed: the month of the closed windows, and
 * the open window if it has begun by t_s (one cut short by the run's end a window of
 * its own length), the month in progress for the share of it elapsed.  The open window
 * may be the first of a month after the closed ones', which then is billed whole. */
static double transit_so_far_usd(const cost_meter *m, double t_s)
{
    size_t n = m->nrates;
    double *rates = malloc((n + 1) * sizeof *rates);
    if (!rates)
        sim_out_of_memory("out of memory pricing transit");
    if (n)
        memcpy(rates, m->rates, n * sizeof *rates);
    double usd = 0, open_from = m->window_end_s - m->window_s;
    unsigned month = m->month;
    if (t_s > open_from + 1e-9 * m->window_s) {
        double open = m->window_bytes * 8 / (fmin(t_s, m->window_end_s) - open_from) / 1e6;
        unsigned open_month = month_of(m, m->window_end_s - m->window_s / 2);
        if (open_month != month) {
            usd += month_transit_usd(m, 1, rates, n);
            month = open_month;
            n = 0;
        }
        rates[n++] = open;
    }
    double month_start = m->start_s + month * COST_MONTH_S;
    usd += month_transit_usd(m, fmax(0, t_s - month_start) / COST_MONTH_S, rates, n);
    free(rates);
    return usd;
}

/* The compute bill of a pool that pays for what it owns, from start to t. */
static double owned_usd(const cost_meter *m, double elapsed_s)
{
    const cost_spec *s = m->spec;
    double gpus = m->owned_gpus;
    double per_server = s->gpus_per_server ? s->gpus_per_server : 1;
    double units = s->gpus_per_server ? ceil(gpus / per_server) : gpus;
    if (s->kind == COST_MONTHLY) {
        double monthly = s->usd_per_server_month > 0 ? s->usd_per_server_month * ceil(gpus / per_server)
                                                      : s->usd_per_gpu_month * gpus;
        return monthly * elapsed_s / COST_MONTH_S;
    }
    double depreciation = s->years > 0 ? s->purchase_usd * (1 - s->residual) / (s->years * COST_YEAR_S)
                                       : 0;
    return units * (depreciation + s->hosting_usd_per_month / COST_MONTH_S) * elapsed_s;
}

cost_breakdown cost_meter_read(const cost_meter *m, double t_s)
{
    const cost_spec *s = m->spec;
    double held_area = m->held_area, excess_area = m->excess_area;
    double dt = t_s - m->last_s;
    if (dt > 0) {
        held_area += m->held * dt;
        double reserved = s->reserved_gpus * m->per;
        if (m->held > reserved)
            excess_area += (m->held - reserved) * dt;
    }
    cost_breakdown b = { 0 };
    double elapsed = t_s - m->start_s;
    switch (s->kind) {
    case COST_NONE:
        break;
    case COST_ON_DEMAND:
    case COST_SPOT:
        b.compute_usd = held_area * rate_per_unit_s(s->usd_per_hour, m->per) + m->closed_usd;
        for (size_t i = 0; i < m->nopen; i++)
            if (!isnan(m->open_since[i]) && s->per_hour)
                b.compute_usd += rental_extra_usd(s, m->per, t_s - m->open_since[i]);
        break;
    case COST_RESERVED:
        b.compute_usd = s->reserved_gpus * s->usd_per_hour / 3600 * elapsed
                        + excess_area * rate_per_unit_s(s->above_usd_per_hour, m->per);
        break;
    case COST_MONTHLY:
    case COST_OWNED:
        b.compute_usd = owned_usd(m, elapsed);
        break;
    }
    const power_spec *p = m->power;
    if (p) {
        const power_model *d = &p->model;
        double gpu_j = d->idle_w * held_area + (d->loaded_w - d->idle_w) * m->loaded_area + m->work_j;
        b.gpu_kwh = gpu_j / m->per / 3.6e6;
        b.host_kwh = p->host_w * held_area / m->per / 3.6e6;
        b.energy_kwh = (b.gpu_kwh + b.host_kwh) * p->pue;
    }
    if (s->pays_power)
        b.power_usd = b.energy_kwh * s->usd_per_kwh;
    b.egress_usd = m->months_usd + (pays_transit(m) ? transit_so_far_usd(m, t_s)
                                                     : month_egress_usd(m, m->month, m->month_gb));
    b.egress_gb = m->egress_gb;
    b.total_usd = b.compute_usd + b.power_usd + b.egress_usd;
    return b;
}

double cost_gpu_hour_usd(const cost_spec *s)
{
    double per_server = s->gpus_per_server ? s->gpus_per_server : 1;
    switch (s->kind) {
    case COST_ON_DEMAND:
    case COST_SPOT:
    case COST_RESERVED:
        return s->usd_per_hour;
    case COST_MONTHLY:
        return (s->usd_per_server_month > 0 ? s->usd_per_server_month / per_server
                                            : s->usd_per_gpu_month) / 730;
    case COST_OWNED:
        return ((s->years > 0 ? s->purchase_usd * (1 - s->residual) / (s->years * 8760) : 0)
                + s->hosting_usd_per_month / 730) / per_server;
    case COST_NONE:
        break;
    }
    return 0;
}
