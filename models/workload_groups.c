/* An inference workload's groups of replicas (see workload_groups.h). */
#include "models/workload_groups.h"

unsigned workload_role_count(const inference_spec *w, serving_role role)
{
    unsigned n = 0;
    for (unsigned i = 0; i < w->ngroups; i++)
        n += w->groups[i].role == role;
    return n;
}

bool workload_decodes(const inference_spec *w) { return workload_role_count(w, ROLE_DECODE); }

const workload_group *workload_group_on(const inference_spec *w, size_t pool)
{
    for (unsigned i = 0; i < w->ngroups; i++)
        if (w->groups[i].pool == pool)
            return &w->groups[i];
    return NULL;
}

size_t workload_group_pool(const inference_spec *w, unsigned g)
{
    return g == 0 ? w->pool : w->groups[g - 1].pool;
}

size_t workload_group_device(const inference_spec *w, unsigned g)
{
    return g == 0 ? w->device : w->groups[g - 1].device;
}

unsigned workload_group_tp(const inference_spec *w, unsigned g)
{
    return g == 0 ? w->tp : w->groups[g - 1].tp;
}

void workload_group_label(const inference_spec *w, unsigned i, char *out, size_t size)
{
    serving_role role = w->groups[i].role;
    unsigned nth = 0;
    for (unsigned k = 0; k <= i; k++)
        nth += w->groups[k].role == role;
    serving_role_label(role, nth, workload_role_count(w, role), out, size);
}
