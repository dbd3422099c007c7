/* A pool's cost (see cost_load.h). */
#include "lua/cost_load.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const COST_KINDS[] = { "on_demand", "spot", "reserved", "monthly", "owned",
                                          NULL };
static const char *const ON_DEMAND_KEYS[] = { "usd_per_hour", "billing", "minimum", "egress",
                                              NULL };
static const char *const RESERVED_KEYS[] = { "gpus", "usd_per_hour", "term",
                                             "on_demand_usd_per_hour", "egress", NULL };
static const char *const MONTHLY_KEYS[] = { "usd_per_gpu", "usd_per_server", "gpus_per_server",
                                            "pue", "usd_per_kwh", "egress", "transit", NULL };
static const char *const OWNED_KEYS[] = { "purchase_usd", "years", "residual",
                                          "hosting_usd_per_month", "gpus_per_server", "pue",
                                          "usd_per_kwh", "egress", "transit", NULL };
static const char *const TIER_KEYS[] = { "from", "usd_per_gb", NULL };
static const char *const TRANSIT_KEYS[] = { "usd_per_mbps", "percentile", NULL };

#define MAX_USD 1e12

static int present(load_context *c, const fields_object *o, const char *key)
{
    int type = fields_object_get(c, o, key);
    lua_pop(c->L, 1);
    return type != LUA_TNIL;
}

/* The tiers of a named provider in fs.egress, pushed (nil if none). */
static void push_provider(lua_State *L, const char *name)
{
    int top = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, "fleetsim.loaded");
    if (lua_istable(L, -1) && lua_getfield(L, -1, "fleetsim.egress") == LUA_TTABLE)
        lua_getfield(L, -1, name);
    else
        lua_pushnil(L);
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
}

/* A list of { from, usd_per_gb } tables at the top of the stack, into out. */
static int read_tiers(load_context *c, const fields_object *o, const char *path, cost_spec *out)
{
    lua_State *L = c->L;
    int list = lua_gettop(L);
    size_t n = (size_t)lua_rawlen(L, list);
    if (n == 0 || n > 64)
        return fields_fail(c, o->where, path, "expected 1 to 64 tiers such as { { from = 0, "
                           "usd_per_gb = 0.09 } }");
    out->egress = calloc(n, sizeof *out->egress);
    if (!out->egress)
        return fields_fail(c, o->where, path, "out of memory");
    out->negress = n;
    for (size_t i = 0; i < n; i++) {
        char at[FIELD_PATH_MAX];
        snprintf(at, sizeof at, "%s[%zu]", path, i + 1);
        lua_rawgeti(L, list, (lua_Integer)i + 1);
        fields_object tier = { .index = lua_gettop(L) };
        snprintf(tier.where, sizeof tier.where, "%s", o->where);
        snprintf(tier.path, sizeof tier.path, "%s", at);
        if (!lua_istable(L, -1))
            return fields_fail(c, o->where, at, "expected { from = GB, usd_per_gb = price }");
        if (fields_object_check_keys(c, &tier, TIER_KEYS) != 0
            || fields_read_number(c, &tier, "from", true, 0, 0, 1e15, true,
                                  &out->egress[i].from_gb) != 0
            || fields_read_number(c, &tier, "usd_per_gb", true, 0, 0, 1e6, true,
                                  &out->egress[i].usd_per_gb) != 0)
            return -1;
        lua_pop(L, 1);
        if (i == 0 && out->egress[0].from_gb != 0)
            return fields_fail(c, o->where, at, "the first tier starts at from = 0, got %g",
                               out->egress[0].from_gb);
        if (i > 0 && out->egress[i].from_gb <= out->egress[i - 1].from_gb)
            return fields_fail(c, o->where, at, "tiers go up: from = %g after %g",
                               out->egress[i].from_gb, out->egress[i - 1].from_gb);
    }
    return 0;
}

/* egress = "AWS" | 0.09 | { tiers }; absent: fallback (a provider name, or NULL). */
static int read_egress(load_context *c, const fields_object *o, const char *fallback,
                       cost_spec *out)
{
    lua_State *L = c->L;
    int top = lua_gettop(L);
    char path[FIELD_PATH_MAX], got[96];
    snprintf(path, sizeof path, "%s.egress", o->path);
    int type = fields_object_get(c, o, "egress");
    int status = 0;
    if (type == LUA_TNIL && !fallback) {
        status = 0;
    } else if (type == LUA_TNUMBER) {
        double price = lua_tonumber(L, -1);
        if (!(price >= 0 && price <= 1e6))
            status = fields_fail(c, o->where, path, "expected a price per GB >= 0, got %s",
                                 fields_describe(L, -1, got, sizeof got));
        else if (!(out->egress = calloc(1, sizeof *out->egress)))
            status = fields_fail(c, o->where, path, "out of memory");
        else {
            out->negress = 1;
            out->egress[0].usd_per_gb = price;
        }
    } else if (type == LUA_TSTRING || type == LUA_TNIL) {
        const char *name = type == LUA_TNIL ? fallback : lua_tostring(L, -1);
        push_provider(L, name);
        if (!lua_istable(L, -1))
            status = fields_fail(c, o->where, path, "no egress prices for \"%s\" in fs.egress "
                                 "(known: AWS, GCP premium, GCP standard, Azure)", name);
        else
            status = read_tiers(c, o, path, out);
    } else if (type == LUA_TTABLE) {
        status = read_tiers(c, o, path, out);
    } else {
        status = fields_fail(c, o->where, path, "expected a provider such as \"AWS\", a price "
                             "per GB, or a list of tiers, got %s",
                             fields_describe(L, -1, got, sizeof got));
    }
    lua_settop(L, top);
    return status;
}

/* transit = USD per Mbps a month | { usd_per_mbps, percentile = 0.95 }: a site's
 * internet transit, billed at a percentile of its rates (models/cost.h); not with egress,
 * which prices the same bytes by the GB. */
static int read_transit(load_context *c, const fields_object *o, cost_spec *out)
{
    lua_State *L = c->L;
    int top = lua_gettop(L);
    char path[FIELD_PATH_MAX], got[96];
    snprintf(path, sizeof path, "%s.transit", o->path);
    int type = fields_object_get(c, o, "transit");
    int status = 0;
    out->transit_percentile = 0.95;
    if (type == LUA_TNUMBER) {
        out->transit_usd_per_mbps = lua_tonumber(L, -1);
        if (!(out->transit_usd_per_mbps > 0 && out->transit_usd_per_mbps <= 1e6))
            status = fields_fail(c, o->where, path, "expected a price per Mbps a month > 0, "
                                 "got %s", fields_describe(L, -1, got, sizeof got));
    } else if (type == LUA_TTABLE) {
        fields_object t = { 0 };
        int found = fields_object_open_field(c, o, "transit", NULL, "a table such as { "
                                             "usd_per_mbps = 0.5, percentile = 0.95 }", &t);
        status = found < 0
                 || fields_object_check_keys(c, &t, TRANSIT_KEYS)
                 || fields_read_number(c, &t, "usd_per_mbps", true, 0, 1e-9, 1e6, true,
                                       &out->transit_usd_per_mbps)
                 || fields_read_number(c, &t, "percentile", false, 0.95, 0.01, 1, true,
                                       &out->transit_percentile) ? -1 : 0;
    } else if (type != LUA_TNIL) {
        status = fields_fail(c, o->where, path, "expected a price per Mbps a month (at the "
                             "95th percentile) or { usd_per_mbps, percentile }, got %s",
                             fields_describe(L, -1, got, sizeof got));
    }
    if (status == 0 && out->transit_usd_per_mbps > 0 && out->negress)
        status = fields_fail(c, o->where, path, "egress prices the same bytes by the GB: give "
                             "one of egress and transit");
    lua_settop(L, top);
    return status;
}

static int read_power(load_context *c, const fields_object *o, cost_spec *out)
{
    out->pays_power = true;
    return fields_read_number(c, o, "pue", false, COST_DEFAULT_PUE, 1, 5, true, &out->pue)
           || fields_read_number(c, o, "usd_per_kwh", false, COST_DEFAULT_USD_PER_KWH, 0, 100, true,
                                 &out->usd_per_kwh);
}

static int read_rented(load_context *c, const fields_object *o, cost_spec *out)
{
    static const char *const billings[] = { "per_second", "per_hour", NULL };
    int billing = 0;
    out->usd_per_hour = NAN;
    if (fields_object_check_keys(c, o, ON_DEMAND_KEYS) != 0
        || (present(c, o, "usd_per_hour")
            && fields_read_number(c, o, "usd_per_hour", true, 0, 0, 1e6, true,
                                  &out->usd_per_hour) != 0)
        || fields_read_choice(c, o, "billing", billings, 0, &billing) != 0
        || fields_read_duration(c, o, "minimum", false, 60, 0, 1e7, true, &out->minimum_s) != 0
        || read_egress(c, o, "AWS", out) != 0)
        return -1;
    out->per_hour = billing == 1;
    if (out->kind == COST_SPOT && isnan(out->usd_per_hour)) {
        char path[FIELD_PATH_MAX];
        snprintf(path, sizeof path, "%s.usd_per_hour", o->path);
        return fields_fail(c, o->where, path, "a spot price has no catalog default: give it");
    }
    return 0;
}

static int read_reserved(load_context *c, const fields_object *o, cost_spec *out)
{
    int64_t gpus;
    out->above_usd_per_hour = NAN;
    if (fields_object_check_keys(c, o, RESERVED_KEYS) != 0
        || fields_read_integer(c, o, "gpus", true, 0, 0, 1000000, &gpus) != 0
        || fields_read_number(c, o, "usd_per_hour", true, 0, 0, 1e6, true, &out->usd_per_hour) != 0
        || fields_read_duration(c, o, "term", false, 365 * 86400.0, 0, 1e10, true,
                                &out->term_s) != 0
        || (present(c, o, "on_demand_usd_per_hour")
            && fields_read_number(c, o, "on_demand_usd_per_hour", true, 0, 0, 1e6, true,
                                  &out->above_usd_per_hour) != 0)
        || read_egress(c, o, "AWS", out) != 0)
        return -1;
    out->reserved_gpus = (unsigned)gpus;
    return 0;
}

static int read_monthly(load_context *c, const fields_object *o, cost_spec *out)
{
    int64_t per_server;
    if (fields_object_check_keys(c, o, MONTHLY_KEYS) != 0
        || fields_read_number(c, o, "usd_per_gpu", false, 0, 0, MAX_USD, true,
                              &out->usd_per_gpu_month) != 0
        || fields_read_number(c, o, "usd_per_server", false, 0, 0, MAX_USD, true,
                              &out->usd_per_server_month) != 0
        || fields_read_integer(c, o, "gpus_per_server", false, 8, 1, 1024, &per_server) != 0
        || read_power(c, o, out) != 0 || read_egress(c, o, NULL, out) != 0
        || read_transit(c, o, out) != 0)
        return -1;
    out->gpus_per_server = out->usd_per_server_month > 0 ? (unsigned)per_server : 0;
    if ((out->usd_per_gpu_month > 0) == (out->usd_per_server_month > 0))
        return fields_fail(c, o->where, o->path, "give one of usd_per_gpu and usd_per_server");
    return 0;
}

static int read_owned(load_context *c, const fields_object *o, cost_spec *out)
{
    int64_t per_server;
    if (fields_object_check_keys(c, o, OWNED_KEYS) != 0
        || fields_read_number(c, o, "purchase_usd", false, NAN, 0, MAX_USD, true,
                              &out->purchase_usd) != 0
        || fields_read_number(c, o, "years", false, 4, 0.1, 50, true, &out->years) != 0
        || fields_read_number(c, o, "residual", false, 0, 0, 1, true, &out->residual) != 0
        || fields_read_number(c, o, "hosting_usd_per_month", false, 0, 0, MAX_USD, true,
                              &out->hosting_usd_per_month) != 0
        || fields_read_integer(c, o, "gpus_per_server", false, 0, 0, 1024, &per_server) != 0
        || read_power(c, o, out) != 0 || read_egress(c, o, NULL, out) != 0
        || read_transit(c, o, out) != 0)
        return -1;
    out->gpus_per_server = (unsigned)per_server;
    return 0;
}

int cost_load_convert(load_context *c, const fields_object *pool, cost_spec *out, bool *found)
{
    int top = lua_gettop(c->L);
    fields_object o;
    *found = false;
    int got = fields_object_open_field(c, pool, "cost", COST_KINDS,
                                       "a price such as fs.on_demand { usd_per_hour = 3.99 }", &o);
    if (got <= 0)
        return got;
    *found = true;
    int status;
    if (!strcmp(o.kind, "on_demand") || !strcmp(o.kind, "spot")) {
        out->kind = !strcmp(o.kind, "spot") ? COST_SPOT : COST_ON_DEMAND;
        status = read_rented(c, &o, out);
    } else if (!strcmp(o.kind, "reserved")) {
        out->kind = COST_RESERVED;
        status = read_reserved(c, &o, out);
    } else if (!strcmp(o.kind, "monthly")) {
        out->kind = COST_MONTHLY;
        status = read_monthly(c, &o, out);
    } else {
        out->kind = COST_OWNED;
        status = read_owned(c, &o, out);
    }
    lua_settop(c->L, top);
    return status ? -1 : 0;
}

int cost_load_resolve_price(load_context *c, const fields_object *pool, cost_spec *spec,
                            const device_spec *device)
{
    double *slots[] = { &spec->usd_per_hour, &spec->above_usd_per_hour };
    for (int i = 0; i < 2; i++) {
        if (!isnan(*slots[i]))
            continue;
        if (!device || isnan(device->usd_per_hour)) {
            char path[FIELD_PATH_MAX];
            snprintf(path, sizeof path, "%s.cost", pool->path);
            return fields_fail(c, pool->where, path, "the catalog has no price for %s: give "
                               "usd_per_hour", device ? device->name : "this pool's servers");
        }
        *slots[i] = device->usd_per_hour;
    }
    /* a purchase left to the catalog: the device's typical price, per GPU, or per server
     * of gpus_per_server GPUs (the GPUs alone: a server's chassis, CPUs and network are
     * the scenario's to add) */
    if (spec->kind == COST_OWNED && isnan(spec->purchase_usd)) {
        if (!device || isnan(device->purchase_usd)) {
            char path[FIELD_PATH_MAX];
            snprintf(path, sizeof path, "%s.cost.purchase_usd", pool->path);
            return fields_fail(c, pool->where, path, "the catalog has no purchase price for %s: "
                               "give purchase_usd", device ? device->name : "this pool's servers");
        }
        spec->purchase_usd = device->purchase_usd
                             * (spec->gpus_per_server ? spec->gpus_per_server : 1);
        spec->purchase_from_catalog = true;
    }
    return 0;
}
