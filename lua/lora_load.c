/* A workload's multi-LoRA adapters (see lora_load.h). */
#include "lua/lora_load.h"

#include <stdio.h>
#include <stdlib.h>

#include <lua.h>

#include "models/lora.h"

static const char *const LORA_KEYS[] = {
    "adapters", "popularity", "rank", "slots", "projections", "load", NULL,
};
static const char *const PROJECTIONS[] = { "attention", "qv", "all", NULL };
static const unsigned PROJECTION_MASKS[] = { LORA_ATTENTION, LORA_Q | LORA_V, LORA_ALL };

/* popularity: a Zipf exponent or a list of weights, into out->lora_popularity. */
static int read_popularity(load_context *c, const fields_object *lo, inference_spec *out)
{
    char path[FIELD_PATH_MAX];
    snprintf(path, sizeof path, "%s.popularity", lo->path);
    int type = fields_object_get(c, lo, "popularity");
    lua_pop(c->L, 1);
    int64_t adapters = 0;
    if (type != LUA_TTABLE) {
        double s = 1;
        if (fields_read_integer(c, lo, "adapters", true, 0, 1, 1000000, &adapters) != 0
            || fields_read_number(c, lo, "popularity", false, 1, 0, 10, true, &s) != 0)
            return -1;
        if (lora_popularity_zipf(&out->lora_popularity, (unsigned)adapters, s) != 0)
            return fields_fail(c, lo->where, path, "out of memory for %lld adapters",
                               (long long)adapters);
        return 0;
    }
    double *weights = NULL;
    size_t n = 0;
    if (fields_read_list(c, lo, "popularity", false, true, &weights, &n) != 0)
        return -1;
    int status = n > 1000000 ? fields_fail(c, lo->where, path, "expected at most 1000000 "
                                           "weights, got %zu", n)
                             : fields_read_integer(c, lo, "adapters", false, (int64_t)n, 1,
                                                   1000000, &adapters);
    if (status == 0 && (size_t)adapters != n) {
        snprintf(path, sizeof path, "%s.adapters", lo->path);
        status = fields_fail(c, lo->where, path, "%lld adapters but popularity lists %zu "
                             "weights: give one weight an adapter, or leave adapters out",
                             (long long)adapters, n);
    }
    if (status == 0 && lora_popularity_weights(&out->lora_popularity, weights, (unsigned)n) != 0)
        status = fields_fail(c, lo->where, path, "expected weights >= 0, not all 0, such as "
                             "{ 50, 20, 10 }");
    free(weights);
    return status;
}

/* The cache the slots leave a replica must still hold a mean request. */
static int check_fit(load_context *c, const fields_object *w, const scenario *sc,
                     inference_spec *out)
{
    char path[FIELD_PATH_MAX];
    snprintf(path, sizeof path, "%s.lora", w->path);
    const model_spec *m = &sc->catalog.models[out->model];
    double bytes = lora_adapter_bytes(m, out->lora_rank, out->lora_projections,
                                      LORA_BYTES_PER_VALUE);
    double taken = out->lora_slots * bytes / model_kv_bytes_per_token(m, out->kv_prec);
    double left = out->kv_capacity_tokens - taken;
    double context = sim_dist_mean(&out->prompt_tokens) + sim_dist_mean(&out->output_tokens);
    if (left < context) {
        snprintf(path, sizeof path, "%s.lora.slots", w->path);
        return fields_fail(c, w->where, path, "%u slots of %.0f MB adapters leave %.0f tokens "
                           "of cache, under a mean request's %.0f; fewer slots, a lower rank "
                           "or a larger tp", out->lora_slots, bytes / 1e6, left, context);
    }
    out->kv_capacity_tokens = left;
    return 0;
}

int lora_load(load_context *c, const fields_object *w, scenario *sc, inference_spec *out)
{
    int top = lua_gettop(c->L);
    fields_object lo = { 0 };
    int found = fields_object_open_field(c, w, "lora", NULL, "a table such as { adapters = "
                                         "500, rank = 16, slots = 32 }", &lo);
    if (found <= 0)
        return found;
    int64_t rank = 0, slots = 0;
    int projections = 0;
    double load_s = 0;
    int status = fields_object_check_keys(c, &lo, LORA_KEYS)
                 || read_popularity(c, &lo, out)
                 || fields_read_integer(c, &lo, "rank", false, 16, 1, 1024, &rank)
                 || fields_read_integer(c, &lo, "slots", false, 8, 1, 100000, &slots)
                 || fields_read_choice(c, &lo, "projections", PROJECTIONS, 0, &projections)
                 || fields_read_duration(c, &lo, "load", false, 0, 0, 3600, false, &load_s);
    lua_settop(c->L, top);
    if (status != 0)
        return -1;
    out->lora_slots = (unsigned)slots;
    out->lora_rank = (unsigned)rank;
    out->lora_projections = PROJECTION_MASKS[projections];
    out->lora_load_s = load_s;
    return check_fit(c, w, sc, out);
}
