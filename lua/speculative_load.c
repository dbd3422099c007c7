/* A workload's speculative decoding (see speculative_load.h). */
#include "lua/speculative_load.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <lua.h>

#include "models/catalog.h"
#include "models/memory.h"
#include "models/workload_groups.h"

static const char *const SPECULATIVE_KEYS[] = { "k", "acceptance", "draft", "draft_cost", NULL };

/* acceptance: a number in [0, 1], or a distribution that draws only such values. */
static int read_acceptance(load_context *c, const fields_object *sp, sim_dist *out)
{
    char path[FIELD_PATH_MAX];
    snprintf(path, sizeof path, "%s.acceptance", sp->path);
    int type = fields_object_get(c, sp, "acceptance");
    lua_pop(c->L, 1);
    if (type != LUA_TTABLE) {
        double a;
        if (fields_read_number(c, sp, "acceptance", true, 0, 0, 1, true, &a) != 0)
            return -1;
        *out = sim_dist_constant(a);
        return 0;
    }
    if (fields_read_count_dist(c, sp, "acceptance", out) != 0)
        return -1;
    double most = sim_dist_max(out);
    if (!(most <= 1)) {
        sim_dist_release(out);
        *out = sim_dist_constant(0);
        return fields_fail(c, sp->where, path, "expected a probability in [0, 1] a request: a "
                           "distribution whose draws stay within it, such as fs.uniform { low = "
                           "0.5, high = 0.9 } or fs.empirical { ... }, got draws up to %g", most);
    }
    return 0;
}

int speculative_load(load_context *c, const fields_object *w, scenario *sc, inference_spec *out)
{
    int top = lua_gettop(c->L);
    fields_object sp = { 0 };
    int found = fields_object_open_field(c, w, "speculative", NULL, "a table such as { k = 4, "
                                         "acceptance = 0.7, draft = \"llama-3.2-1b\" }", &sp);
    if (found <= 0)
        return found;
    char path[FIELD_PATH_MAX], *name = NULL;
    int64_t k = 0;
    double step_s = 0;
    int status = fields_object_check_keys(c, &sp, SPECULATIVE_KEYS)
                 || fields_read_integer(c, &sp, "k", true, 0, 1, 16, &k)
                 || read_acceptance(c, &sp, &out->spec_acceptance)
                 || fields_read_string(c, &sp, "draft", false, &name)
                 || fields_read_duration(c, &sp, "draft_cost", false, 0, 0, 1, true, &step_s);
    bool has_cost = status == 0 && fields_object_get(c, &sp, "draft_cost") != LUA_TNIL;
    if (status == 0)
        lua_pop(c->L, 1);
    const model_spec *draft = NULL;
    snprintf(path, sizeof path, "%s.draft", sp.path);
    if (status == 0 && name && has_cost)
        status = fields_fail(c, sp.where, path, "give draft (a model) or draft_cost (a lookup's "
                             "cost a step), not both");
    else if (status == 0 && !name && !has_cost)
        status = fields_fail(c, sp.where, path, "missing: give draft = \"llama-3.2-1b\" (a "
                             "catalog model) or draft_cost = \"0.2ms\" (n-gram or "
                             "self-speculation, a step)");
    if (status == 0 && name) {
        draft = catalog_model(&sc->catalog, name);
        char names[1024], hints[512];
        const char *hint = draft ? NULL : catalog_model_hint(&sc->catalog, name, '"', hints,
                                                             sizeof hints);
        if (!draft)
            status = hint ? fields_fail(c, sp.where, path, "unknown model \"%s\" (did you mean "
                                        "%s?)", name, hint)
                          : fields_fail(c, sp.where, path, "unknown model \"%s\" (known: %s)",
                                        name, catalog_model_names(&sc->catalog, names,
                                                                  sizeof names));
    }
    free(name);
    lua_settop(c->L, top);
    if (status != 0)
        return -1;
    out->spec_k = (unsigned)k;
    out->spec_step_s = step_s;
    out->has_spec_draft = draft != NULL;
    out->spec_draft = draft ? (size_t)(draft - sc->catalog.models) : 0;
    if (!draft)
        return 0;
    /* the draft's weights and cache share the replica's memory */
    const model_spec *m = &sc->catalog.models[out->model];
    const device_spec *d = &sc->catalog.devices[out->device];
    inference_memory mem = memory_inference_with_draft_for(m, draft, d, out->prec, out->kv_prec,
                                                           out->tp, out->attention_dp,
                                                           inference_reserve(out));
    out->kv_capacity_tokens = mem.kv_capacity_tokens;
    for (unsigned i = 0; i < out->ngroups; i++) {
        workload_group *g = &out->groups[i];
        g->kv_capacity_tokens =
            memory_inference_with_draft_for(m, draft, &sc->catalog.devices[g->device],
                                            out->prec, out->kv_prec, g->tp, out->attention_dp,
                                            inference_reserve(out)).kv_capacity_tokens;
    }
    double context = sim_dist_mean(&out->prompt_tokens) + sim_dist_mean(&out->output_tokens);
    if (mem.kv_capacity_tokens < context) {
        snprintf(path, sizeof path, "%s.draft", sp.path);
        return fields_fail(c, sp.where, path, "%s beside %s on %u x %s leaves %.0f tokens of "
                           "cache, under a mean request's %.0f; a larger tp or a smaller draft",
                           draft->name, m->name, out->tp, d->name, mem.kv_capacity_tokens, context);
    }
    return 0;
}
