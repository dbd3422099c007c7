/* A pool's sharing keys (see sharing_load.h). */
#include "lua/sharing_load.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/mig.h"

static const char *const NOISY_KEYS[] = { "calm", "contended", "slowdown",
                                          "compute_sensitivity", NULL };
static const char *const TIME_SLICING_KEYS[] = { "tenants", "slice", "switch", NULL };

#define MAX_TENANTS 64
#define MAX_SLOWDOWN 100

/* A dwell time: a plain duration is an exponential's mean (0: no spells), else a
 * distribution of durations. */
static int read_dwell(load_context *c, const fields_object *o, const char *key, sim_dist *out)
{
    int type = fields_object_get(c, o, key);
    lua_pop(c->L, 1);
    if (type != LUA_TNUMBER && type != LUA_TSTRING)
        return fields_read_duration_dist(c, o, key, out);
    double mean;
    if (fields_read_duration(c, o, key, true, 0, 0, INFINITY, true, &mean) != 0)
        return -1;
    *out = mean > 0 ? sim_dist_exponential(mean) : sim_dist_constant(0);
    return 0;
}

/* A slowdown factor >= 1, or a distribution of them. */
static int read_slowdown(load_context *c, const fields_object *o, sim_dist *out)
{
    int type = fields_object_get(c, o, "slowdown");
    char got[96], path[FIELD_PATH_MAX];
    fields_describe(c->L, -1, got, sizeof got);
    lua_pop(c->L, 1);
    if (type == LUA_TTABLE)
        return fields_read_count_dist(c, o, "slowdown", out);
    if (type != LUA_TNUMBER) {
        snprintf(path, sizeof path, "%s.slowdown", o->path);
        return fields_fail(c, o->where, path, "expected a slowdown factor >= 1 such as 1.5, or a "
                           "distribution such as fs.uniform { low = 1.2, high = 2 }, got %s", got);
    }
    double factor;
    if (fields_read_number(c, o, "slowdown", true, 1, 1, MAX_SLOWDOWN, true, &factor) != 0)
        return -1;
    *out = sim_dist_constant(factor);
    return 0;
}

int sharing_load_convert_noisy(load_context *c, const fields_object *pool, noisy_spec *out,
                               bool *present)
{
    static const char *const kinds[] = { "noisy", NULL };
    int top = lua_gettop(c->L);
    fields_object o;
    *present = false;
    int found = fields_object_open_field(c, pool, "noisy", kinds, "noisy neighbours such as "
                                         "fs.noisy { calm = \"20m\", contended = \"5m\", "
                                         "slowdown = 1.5 }", &o);
    if (found <= 0)
        return found;
    noisy_spec s = { sim_dist_constant(0), sim_dist_constant(0), sim_dist_constant(1),
                     NOISY_DEFAULT_COMPUTE_SENSITIVITY };
    int status = fields_object_check_keys(c, &o, NOISY_KEYS)
                 || read_dwell(c, &o, "calm", &s.calm_s)
                 || read_dwell(c, &o, "contended", &s.contended_s)
                 || read_slowdown(c, &o, &s.slowdown)
                 || fields_read_number(c, &o, "compute_sensitivity", false,
                                       NOISY_DEFAULT_COMPUTE_SENSITIVITY, 0, 1, true,
                                       &s.compute_sensitivity);
    char why[256];
    if (status == 0 && noisy_spec_check(&s, why, sizeof why) != 0)
        status = fields_fail(c, o.where, o.path, "%s", why);
    lua_settop(c->L, top);
    if (status != 0) {
        noisy_spec_release(&s);
        return -1;
    }
    *out = s;
    *present = true;
    return 0;
}

static int convert_time_slicing(load_context *c, const fields_object *pool, sharing_spec *out)
{
    static const char *const kinds[] = { "time_slicing", NULL };
    int top = lua_gettop(c->L);
    fields_object t;
    int64_t tenants = 0;
    int status = fields_object_open_field(c, pool, "time_slicing", kinds,
                                          "fs.time_slicing { tenants = 2 }", &t) != 1
                 || fields_object_check_keys(c, &t, TIME_SLICING_KEYS)
                 || fields_read_integer(c, &t, "tenants", true, 0, 2, MAX_TENANTS, &tenants)
                 || fields_read_duration(c, &t, "slice", false, GPU_SHARE_DEFAULT_SLICE_S, 0, 10,
                                         false,
                                         &out->slice_s)
                 || fields_read_duration(c, &t, "switch", false, GPU_SHARE_DEFAULT_SWITCH_S, 0, 10,
                                         true,
                                         &out->switch_s);
    out->mode = SHARE_TIME_SLICING;
    out->tenants = (unsigned)tenants;
    lua_settop(c->L, top);
    return status ? -1 : 0;
}

int sharing_load_convert(load_context *c, const fields_object *pool, sharing_spec *out)
{
    memset(out, 0, sizeof *out);
    out->mode = SHARE_NONE;
    out->bandwidth_interference = GPU_SHARE_DEFAULT_BANDWIDTH_INTERFERENCE;
    bool has_mig = fields_object_get(c, pool, "mig") != LUA_TNIL;
    bool has_slicing = fields_object_get(c, pool, "time_slicing") != LUA_TNIL;
    bool has_interference = fields_object_get(c, pool, "bandwidth_interference") != LUA_TNIL;
    lua_pop(c->L, 3);
    char path[FIELD_PATH_MAX];
    if (has_mig && has_slicing) {
        snprintf(path, sizeof path, "%s.time_slicing", pool->path);
        return fields_fail(c, pool->where, path, "a pool's GPUs are either cut into MIG slices or "
                           "time-sliced, not both: drop mig or time_slicing");
    }
    if (has_interference && !has_mig) {
        snprintf(path, sizeof path, "%s.bandwidth_interference", pool->path);
        return fields_fail(c, pool->where, path, "applies to MIG slices: name a profile too, "
                           "such as mig = \"1g.10gb\"");
    }
    if (has_slicing)
        return convert_time_slicing(c, pool, out);
    if (!has_mig)
        return 0;
    out->mode = SHARE_MIG;
    return fields_read_string(c, pool, "mig", true, &out->mig_profile)
           || fields_read_number(c, pool, "bandwidth_interference", false,
                                 GPU_SHARE_DEFAULT_BANDWIDTH_INTERFERENCE, 0, 10, true,
                                 &out->bandwidth_interference) ? -1 : 0;
}

int sharing_load_check_mig_profile(load_context *c, const fields_object *pool,
                                   const sharing_spec *spec, const device_spec *whole)
{
    if (spec->mode != SHARE_MIG)
        return 0;
    device_spec slice;
    unsigned n;
    char why[512], path[FIELD_PATH_MAX];
    if (mig_slice_device(whole, spec->mig_profile, &slice, &n, why, sizeof why) == 0) {
        device_release(&slice);
        return 0;
    }
    snprintf(path, sizeof path, "%s.mig", pool->path);
    return fields_fail(c, pool->where, path, "%s", why);
}
