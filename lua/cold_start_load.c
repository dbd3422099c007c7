/* replicas, scale_to_zero and cold_start of an fs.inference workload (see
 * cold_start_load.h). */
#include "lua/cold_start_load.h"

#include <stdio.h>

#include <lua.h>

static const char *const COLD_START_KEYS[] = { "bandwidth", "fixed", NULL };

static int read_cold_start(load_context *c, const fields_object *w, double weights_bytes,
                           inference_spec *out)
{
    int type = fields_object_get(c, w, "cold_start");
    lua_pop(c->L, 1);
    if (type == LUA_TNIL) {
        out->cold_start_s = weights_bytes / COLD_START_BANDWIDTH;
        return 0;
    }
    out->has_cold_start = true;
    if (type != LUA_TTABLE)
        return fields_read_duration(c, w, "cold_start", true, 0, 0, 1e7, true,
                                    &out->cold_start_s);
    fields_object o = { 0 };
    int top = lua_gettop(c->L);
    if (fields_object_open_field(c, w, "cold_start", NULL, "a duration such as \"40s\", or "
                                 "{ bandwidth = \"2GB/s\", fixed = \"10s\" }", &o) < 0)
        return -1;
    double bandwidth = COLD_START_BANDWIDTH, fixed = 0;
    int status = fields_object_check_keys(c, &o, COLD_START_KEYS)
                 || fields_read_bandwidth(c, &o, "bandwidth", false, COLD_START_BANDWIDTH, 1e15,
                                          &bandwidth)
                 || fields_read_duration(c, &o, "fixed", false, 0, 0, 1e7, true, &fixed);
    lua_settop(c->L, top);
    out->cold_start_s = fixed + weights_bytes / bandwidth;
    return status ? -1 : 0;
}

int cold_start_load(load_context *c, const fields_object *w, const pool_spec *p,
                    double weights_bytes, inference_spec *out)
{
    unsigned most = (p->capacity.kind == POOL_DEDICATED ? p->count : p->capacity.max) / out->tp;
    int64_t replicas = 0;
    char path[FIELD_PATH_MAX];
    int type = fields_object_get(c, w, "replicas");
    lua_pop(c->L, 1);
    out->replicas_given = type != LUA_TNIL;
    if (out->replicas_given) {
        if (most < 1) {
            snprintf(path, sizeof path, "%s.replicas", w->path);
            return fields_fail(c, w->where, path, "pool \"%s\" has too few GPUs for one "
                               "replica of tp %u", p->name, out->tp);
        }
        if (fields_read_integer(c, w, "replicas", true, 0, 1, most, &replicas) != 0)
            return -1;
        out->replicas = (unsigned)replicas;
    }
    return fields_read_duration(c, w, "scale_to_zero", false, 0, 0, 1e9, true,
                                &out->scale_to_zero_s)
           || read_cold_start(c, w, weights_bytes, out) ? -1 : 0;
}
