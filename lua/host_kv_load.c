/* A workload's host tier (see host_kv_load.h). */
#include "lua/host_kv_load.h"

#include <stdio.h>

static const char *const HOST_KV_KEYS[] = { "size", "bandwidth", "latency", "offload", NULL };

/* Sizes and rates past these are typing mistakes, not machines. */
#define HOST_KV_MAX_BYTES 1e15
#define HOST_KV_MAX_BYTES_PER_S 1e13

int host_kv_load(load_context *c, const fields_object *w, bool swap, host_kv_spec *out)
{
    int top = lua_gettop(c->L);
    *out = (host_kv_spec){ .size_bytes = 0, .bandwidth_bytes_per_s = 0, .latency_s = -1 };
    char path[FIELD_PATH_MAX];
    fields_object o;
    int found = fields_object_open_field(c, w, "host_kv", NULL, "a table such as { size = "
                                         "\"512GB\", bandwidth = \"50GB/s\" }", &o);
    if (found < 0)
        return -1;
    snprintf(path, sizeof path, "%s.%s", w->path, found ? "host_kv" : "when_full");
    if (!found && swap)
        return fields_fail(c, w->where, path, "\"swap\" moves a preempted sequence's cache to "
                           "host memory: give its size, as in host_kv = { size = \"512GB\" } "
                           "(bandwidth: the GPUs' PCIe unless given)");
    if (!found)
        return 0;
    /* checked under every policy, used by "swap" only: a sweep over when_full keeps it */
    int status = fields_object_check_keys(c, &o, HOST_KV_KEYS)
                 || fields_read_size(c, &o, "size", HOST_KV_MAX_BYTES, &out->size_bytes);
    if (status == 0 && fields_object_get(c, &o, "bandwidth") != LUA_TNIL) {
        lua_pop(c->L, 1);
        status = fields_read_bandwidth(c, &o, "bandwidth", true, 0, HOST_KV_MAX_BYTES_PER_S,
                                       &out->bandwidth_bytes_per_s);
    } else if (status == 0) {
        lua_pop(c->L, 1);
    }
    if (status == 0)
        status = fields_read_duration(c, &o, "latency", false, -1, 0, 1, true, &out->latency_s);
    if (status == 0)
        status = fields_read_flag(c, &o, "offload", false, &out->offload);
    if (status == 0 && out->offload && swap) {
        snprintf(path, sizeof path, "%s.host_kv.offload", w->path);
        status = fields_fail(c, w->where, path, "the host tier is swap's (when_full = \"swap\") "
                             "or an offload tier that extends the cache (offload = true), not "
                             "both");
    }
    lua_settop(c->L, top);
    return status ? -1 : 0;
}
