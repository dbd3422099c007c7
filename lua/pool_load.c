/* Pools of a scenario file (see pool_load.h). */
#include "lua/pool_load.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/cost_load.h"
#include "lua/power_load.h"
#include "lua/profile_load.h"
#include "models/profile.h"
#include "lua/scaler.h"
#include "lua/sharing_load.h"
#include "lua/training_load.h"
#include "models/mig.h"

const char *const POOL_KINDS[] = { "dedicated", "cloud", "spot", NULL };

#define COMMON_KEYS "gpu", "site", "mtbf", "repair", "noisy", "mig", "bandwidth_interference", \
    "time_slicing", "scheduler", "cost", "profile", "power"
#define ELASTIC_KEYS COMMON_KEYS, "count", "min", "max", "provision", "unavailable", \
    "ceiling", "retry", "autoscaler"
static const char *const DEDICATED_KEYS[] = { "count", COMMON_KEYS, NULL };
static const char *const CLOUD_KEYS[] = { ELASTIC_KEYS, NULL };
static const char *const SPOT_KEYS[] = { ELASTIC_KEYS, "preemption_rate", "preemption_times",
                                         "notice", NULL };
static const char *const SITE_KEYS[] = { "rtt", "spike_probability", "spike", NULL };
static const char *const AUTOSCALER_KEYS[] = {
    "metric", "target", "interval", "cooldown", "scale_in_delay", "policy", NULL,
};

/* Defaults, stated in README.md ("Pools"). */
#define DEFAULT_PROVISION_S 180.0  /* a GPU instance booting and loading: minutes */
#define DEFAULT_RETRY_S 60.0
#define DEFAULT_NOTICE_S 120.0     /* the two-minute warning of the largest spot market */
#define DEFAULT_REPAIR_S 4 * 3600.0

/* site = fs.site { rtt = dist, spike_probability = p, spike = dist } */
static int convert_site(load_context *c, const fields_object *p, site_spec *out)
{
    out->rtt_s = sim_dist_constant(0);
    out->spike_s = sim_dist_constant(0);
    int top = lua_gettop(c->L);
    fields_object s;
    static const char *const kinds[] = { "site", NULL };
    int found = fields_object_open_field(c, p, "site", kinds, "fs.site { rtt = ... }", &s);
    if (found <= 0)
        return found;
    int status = fields_object_check_keys(c, &s, SITE_KEYS)
                 || fields_read_number(c, &s, "spike_probability", false, 0, 0, 1, true,
                                       &out->spike_probability);
    if (status == 0 && fields_object_get(c, &s, "rtt") != LUA_TNIL) {
        lua_pop(c->L, 1);
        status = fields_read_duration_dist(c, &s, "rtt", &out->rtt_s);
    } else if (status == 0) {
        lua_pop(c->L, 1);
    }
    if (status == 0 && out->spike_probability > 0)
        status = fields_read_duration_dist(c, &s, "spike", &out->spike_s);
    lua_settop(c->L, top);
    return status ? -1 : 0;
}

/* A distribution of durations, or a constant default when the key is absent. */
static int read_dist_or(load_context *c, const fields_object *o, const char *key, double fallback_s,
                        sim_dist *out)
{
    int type = fields_object_get(c, o, key);
    lua_pop(c->L, 1);
    if (type == LUA_TNIL) {
        *out = sim_dist_constant(fallback_s);
        return 0;
    }
    return fields_read_duration_dist(c, o, key, out);
}

/* autoscaler = fs.autoscaler { metric, target, interval, cooldown, scale_in_delay,
 * policy = function(pool) ... end } */
static int convert_autoscaler(load_context *c, const fields_object *p, const char *pool_name,
                              autoscaler_spec *out, bool *calls_lua)
{
    int top = lua_gettop(c->L);
    fields_object a;
    static const char *const kinds[] = { "autoscaler", NULL };
    static const char *const metrics[] = { "utilization", "queue", "kv_cache", NULL };
    int found = fields_object_open_field(c, p, "autoscaler", kinds,
                                         "fs.autoscaler { target = 0.7, ... }", &a);
    if (found <= 0)
        return found;
    int metric = 0;
    int status = fields_object_check_keys(c, &a, AUTOSCALER_KEYS)
                 || fields_read_choice(c, &a, "metric", metrics, AUTOSCALE_UTILIZATION, &metric);
    out->metric = (autoscale_metric)metric;
    bool fraction = out->metric != AUTOSCALE_QUEUE;
    double target_default = fraction ? 0.7 : 16, target_max = fraction ? 1 : 1e9;
    status = status
             || fields_read_number(c, &a, "target", false, target_default, 0, target_max, false,
                                   &out->target)
             || fields_read_duration(c, &a, "interval", false, 30, 1e-3, 1e9, true,
                                     &out->interval_s)
             || fields_read_duration(c, &a, "cooldown", false, 180, 0, 1e9, true, &out->cooldown_s)
             || fields_read_duration(c, &a, "scale_in_delay", false, 300, 0, 1e9, true,
                                     &out->scale_in_delay_s);
    if (status == 0) {
        int type = fields_object_get(c, &a, "policy");
        if (type == LUA_TFUNCTION) {
            out->custom_context = scaler_create(c->L, a.index, "policy", pool_name);
            out->custom = scaler_decide;
            *calls_lua = true;
        } else if (type != LUA_TNIL) {
            char path[FIELD_PATH_MAX], got[64];
            snprintf(path, sizeof path, "%s.policy", a.path);
            status = fields_fail(c, a.where, path, "expected a function(pool) returning the "
                                 "replicas wanted, got %s",
                                 fields_describe(c->L, -1, got, sizeof got));
        }
    }
    out->enabled = status == 0;
    lua_settop(c->L, top);
    return status ? -1 : 0;
}

static int convert_failures(load_context *c, const fields_object *p, pool_spec *out)
{
    if (fields_read_duration(c, p, "mtbf", false, 0, 0, 1e12, true, &out->capacity.mtbf_s) != 0)
        return -1;
    return read_dist_or(c, p, "repair", DEFAULT_REPAIR_S, &out->repair_s);
}

/* fs.cloud and fs.spot: min <= count <= max, provisioning, availability, preemptions. */
static int convert_elastic(load_context *c, const fields_object *p, pool_spec *out, bool *calls_lua)
{
    pool_capacity *cap = &out->capacity;
    int64_t min, max, count, ceiling;
    if (fields_read_integer(c, p, "max", true, 0, 1, SCENARIO_MAX_SERVERS, &max) != 0
        || fields_read_integer(c, p, "min", false, 0, 0, SCENARIO_MAX_SERVERS, &min) != 0)
        return -1;
    if (min > max) { /* "min: 5 is over the limit of 1" did not say which limit */
        char path[FIELD_PATH_MAX];
        snprintf(path, sizeof path, "%s.min", p->path);
        return fields_fail(c, p->where, path, "%lld is over max, %lld", (long long)min,
                           (long long)max);
    }
    if (fields_read_integer(c, p, "count", false, min, min, max, &count) != 0
        || fields_read_integer(c, p, "count", false, min, min, max, &count) != 0
        || fields_read_integer(c, p, "ceiling", false, 0, 0, SCENARIO_MAX_SERVERS, &ceiling) != 0
        || fields_read_number(c, p, "unavailable", false, 0, 0, 1, true,
                              &cap->unavailable_probability) != 0
        || fields_read_duration(c, p, "retry", false, DEFAULT_RETRY_S, 1e-3, 1e9, true,
                                &cap->retry_s) != 0
        || read_dist_or(c, p, "provision", DEFAULT_PROVISION_S, &out->provision_s) != 0
        || convert_autoscaler(c, p, out->name, &out->autoscaler, calls_lua) != 0)
        return -1;
    if (cap->unavailable_probability >= 1) {
        char path[FIELD_PATH_MAX];
        snprintf(path, sizeof path, "%s.unavailable", p->path);
        return fields_fail(c, p->where, path, "a probability of 1 means no GPU is ever "
                           "provisioned; expected less than 1");
    }
    out->min = (unsigned)min;
    out->count = (unsigned)count;
    cap->count = (unsigned)count;
    cap->max = (unsigned)max;
    cap->ceiling = (unsigned)ceiling;
    if (!strcmp(p->kind, "spot")) {
        cap->kind = POOL_SPOT;
        size_t n = 0;
        int type = fields_object_get(c, p, "preemption_rate");
        lua_pop(c->L, 1);
        if ((type != LUA_TNIL && fields_read_rate(c, p, "preemption_rate", 1e6,
                                                  &cap->preemption_rate_per_s) != 0)
            || fields_read_list(c, p, "preemption_times", true, false, &out->preemption_times_s,
                                &n) != 0
            || fields_read_duration(c, p, "notice", false, DEFAULT_NOTICE_S, 0, 1e9, true,
                                    &cap->notice_s) != 0)
            return -1;
        for (size_t i = 1; i < n; i++)
            if (out->preemption_times_s[i] < out->preemption_times_s[i - 1]) {
                char path[FIELD_PATH_MAX];
                snprintf(path, sizeof path, "%s.preemption_times", p->path);
                return fields_fail(c, p->where, path, "entry %zu (%g s) comes before entry %zu "
                                   "(%g s); expected times in order", i + 1,
                                   out->preemption_times_s[i], i, out->preemption_times_s[i - 1]);
            }
        cap->preemption_times_s = out->preemption_times_s;
        cap->npreemption_times = n;
    } else {
        cap->kind = POOL_CLOUD;
    }
    return 0;
}

/* A dedicated pool given a cloud pool's key: say what to use instead. */
static int refuse_elastic_keys(load_context *c, const fields_object *p)
{
    static const char *const elastic[] = { "min", "max", "provision", "autoscaler", "unavailable",
                                           "ceiling", "retry", NULL };
    for (int i = 0; elastic[i]; i++) {
        int type = fields_object_get(c, p, elastic[i]);
        lua_pop(c->L, 1);
        if (type != LUA_TNIL) {
            char path[FIELD_PATH_MAX];
            snprintf(path, sizeof path, "%s.%s", p->path, elastic[i]);
            return fields_fail(c, p->where, path, "a dedicated pool has a fixed count; GPUs "
                               "that come and go are fs.cloud { min, max, provision, autoscaler } "
                               "or fs.spot");
        }
    }
    return 0;
}

int pool_load_convert(load_context *c, const fields_object *p, pool_spec *out, bool *calls_lua)
{
    bool dedicated = !strcmp(p->kind, "dedicated");
    if (dedicated && refuse_elastic_keys(c, p) != 0)
        return -1;
    const char *const *keys = dedicated ? DEDICATED_KEYS
                              : !strcmp(p->kind, "spot") ? SPOT_KEYS : CLOUD_KEYS;
    if (fields_object_check_keys(c, p, keys) != 0
        || fields_read_string(c, p, "gpu", false, &out->gpu) != 0
        || convert_site(c, p, &out->site) != 0 || convert_failures(c, p, out) != 0)
        return -1;
    if (out->gpu && !*out->gpu)
        return fields_fail(c, p->where, p->path, "gpu is empty (leave it out for plain servers)");
    out->units_per_gpu = 1;
    char *profile = NULL;
    int bad = fields_read_string(c, p, "profile", false, &profile) != 0
              || (profile && fields_resolve_path(c, p, "profile", profile,
                                                 &out->profile_path) != 0);
    free(profile);
    if (bad)
        return -1;
    if (cost_load_convert(c, p, &out->cost, &out->has_cost) != 0
        || power_load_convert(c, p, out) != 0
        || training_load_convert_scheduler(c, p, &out->scheduler) != 0
        || sharing_load_convert_noisy(c, p, &out->noisy, &out->has_noisy) != 0
        || sharing_load_convert(c, p, &out->sharing) != 0)
        return -1;
    if (!out->gpu && (out->has_noisy || out->sharing.mode != SHARE_NONE))
        return fields_fail(c, p->where, p->path, "noisy neighbours, MIG and time-slicing are "
                           "about GPUs: name the pool's gpu");
    if (dedicated) {
        int64_t count;
        if (fields_read_integer(c, p, "count", true, 0, 1, SCENARIO_MAX_SERVERS, &count) != 0)
            return -1;
        out->count = out->min = out->capacity.count = out->capacity.max = (unsigned)count;
        out->capacity.kind = POOL_DEDICATED;
        out->provision_s = sim_dist_constant(0);
    } else if (convert_elastic(c, p, out, calls_lua) != 0) {
        return -1;
    } else if (!out->gpu) {
        return fields_fail(c, p->where, p->path, "a %s pool rents GPUs: name one (gpu = "
                           "\"H100-SXM\")", p->kind);
    }
    out->capacity.provision_s = out->provision_s;
    out->capacity.repair_s = out->repair_s;
    return 0;
}

/* Adds a device to the catalog (taking ownership), keeping it in name order. */
static int catalog_add(catalog *cat, device_spec *d)
{
    device_spec *grown = realloc(cat->devices, (cat->ndevices + 1) * sizeof *grown);
    if (!grown)
        return -1;
    cat->devices = grown;
    size_t i = cat->ndevices;
    while (i > 0 && strcmp(cat->devices[i - 1].name, d->name) > 0) {
        cat->devices[i] = cat->devices[i - 1];
        i--;
    }
    cat->devices[i] = *d;
    cat->ndevices++;
    return 0;
}

/* A copy of a device under a new name, with strings of its own.  0, or -1 (out of
 * memory, nothing to release). */
static int device_renamed(const device_spec *whole, const char *name, device_spec *out)
{
    if (device_copy(out, whole) != 0)
        return -1;
    char *renamed = strdup(name);
    if (!renamed) {
        device_release(out);
        return -1;
    }
    free(out->name);
    out->name = renamed;
    return 0;
}

/* A tenant's view of a time-sliced GPU: the whole device's speed, 1/tenants of its
 * memory (each tenant's process holds its own weights and cache). */
static int tenant_device(const device_spec *whole, unsigned tenants, device_spec *out)
{
    char name[160];
    snprintf(name, sizeof name, "%s shared by %u", whole->name, tenants);
    if (device_renamed(whole, name, out) != 0)
        return -1;
    out->memory_bytes = whole->memory_bytes / tenants;
    out->usd_per_hour = whole->usd_per_hour / tenants;
    return 0;
}

/* profile = "file.lua": the pool's GPUs become a device of their own with the measured
 * peaks (named after the file), modelled with the profile's efficiencies.  The file
 * was located when the pool was read (its table is gone from the stack by now). */
static int resolve_profile(load_context *c, const fields_object *p, pool_spec *out, catalog *cat,
                           const device_spec *whole)
{
    if (!out->profile_path)
        return 0;
    char key[FIELD_PATH_MAX], name[512], why[1024];
    snprintf(key, sizeof key, "%s.profile", p->path);
    if (out->sharing.mode != SHARE_NONE)
        return fields_fail(c, p->where, key, "a calibration profile and MIG or time-slicing "
                           "on one pool are not supported yet");
    const char *base = strrchr(out->profile_path, '/');
    snprintf(name, sizeof name, "%s calibrated by %s", whole->name,
             base ? base + 1 : out->profile_path);
    device_spec calibrated;
    if (device_renamed(whole, name, &calibrated) != 0)
        return fields_fail(c, p->where, key, "out of memory");
    out->profile = perf_default_profile(whole);
    if (profile_load_apply_file(out->profile_path, &calibrated, &out->profile, NULL, why,
                                sizeof why) != 0) {
        device_release(&calibrated);
        return fields_fail(c, p->where, key, "%s", why);
    }
    out->has_profile = true;
    if (catalog_device(cat, name)) { /* another pool with the same GPU and profile */
        device_release(&calibrated);
    } else if (catalog_add(cat, &calibrated) != 0) {
        device_release(&calibrated);
        return fields_fail(c, p->where, key, "out of memory");
    }
    if (!(out->unit_device = strdup(name)))
        return fields_fail(c, p->where, key, "out of memory");
    return 0;
}

static int resolve_units(load_context *c, const fields_object *p, pool_spec *out, catalog *cat)
{
    const device_spec *whole = out->gpu ? catalog_device(cat, out->gpu) : NULL;
    if (out->has_cost && cost_load_resolve_price(c, p, &out->cost, whole) != 0)
        return -1;
    if (power_load_resolve(c, p, out, whole) != 0)
        return -1;
    if (whole && resolve_profile(c, p, out, cat, whole) != 0)
        return -1;
    if (out->sharing.mode == SHARE_NONE)
        return 0;
    if (out->capacity.kind != POOL_DEDICATED)
        return fields_fail(c, p->where, p->path, "MIG and time-slicing partition GPUs a pool "
                           "owns: use fs.dedicated (a cloud's GPUs come and go whole)");
    if (!whole) /* reported by the device check */
        return 0;
    device_spec unit;
    unsigned units;
    if (out->sharing.mode == SHARE_MIG) {
        char why[512];
        if (sharing_load_check_mig_profile(c, p, &out->sharing, whole) != 0)
            return -1;
        if (mig_slice_device(whole, out->sharing.mig_profile, &unit, &units, why, sizeof why) != 0)
            return fields_fail(c, p->where, p->path, "%s", why);
    } else {
        units = out->sharing.tenants;
        if (tenant_device(whole, units, &unit) != 0)
            return fields_fail(c, p->where, p->path, "out of memory");
    }
    if (catalog_device(cat, unit.name)) { /* a second pool with the same sharing */
        out->unit_device = strdup(unit.name);
        device_release(&unit);
    } else {
        out->unit_device = strdup(unit.name);
        if (!out->unit_device || catalog_add(cat, &unit) != 0) {
            device_release(&unit);
            return fields_fail(c, p->where, p->path, "out of memory");
        }
    }
    if (!out->unit_device)
        return fields_fail(c, p->where, p->path, "out of memory");
    if ((double)out->capacity.max * units > SCENARIO_MAX_SERVERS)
        return fields_fail(c, p->where, p->path, "%u GPUs of %u units each pass the limit of "
                           "%u units in a pool", out->capacity.max, units, SCENARIO_MAX_SERVERS);
    out->units_per_gpu = units;
    out->capacity.mtbf_s *= units; /* each unit fails at its GPU's rate / units */
    out->count *= units;
    out->min *= units;
    out->capacity.count *= units;
    out->capacity.max *= units;
    out->capacity.ceiling *= units;
    return 0;
}

int pool_load_resolve_units(load_context *c, const fields_object *p, pool_spec *out, catalog *cat)
{
    return resolve_units(c, p, out, cat) != 0 ? -1 : power_load_apply_budget(c, p, out);
}
