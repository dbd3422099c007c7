/* Factors of the members of a shared GPU (see gpu_share.h). */
#include "models/gpu_share.h"

#include <stdlib.h>

#include "sim/fatal.h"

struct gpu_share_member {
    gpu_share *group;
    unsigned index;
    void *context;
    bool busy;
    double compute_factor, memory_factor; /* as last pushed */
};

struct gpu_share {
    sharing_spec spec;
    gpu_share_apply_fn apply;
    double noise_compute, noise_memory;
    unsigned nmembers, busy;
    gpu_share_member *members;
};

void sharing_spec_release(sharing_spec *spec)
{
    if (!spec)
        return;
    free(spec->mig_profile);
    spec->mig_profile = NULL;
}

gpu_share *gpu_share_create(const sharing_spec *spec, unsigned members, gpu_share_apply_fn apply)
{
    if (members == 0)
        sim_fatal("gpu_share_create: a group needs a member");
    gpu_share *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->members = calloc(members, sizeof *g->members);
    if (!g->members) {
        free(g);
        return NULL;
    }
    g->spec = *spec;
    g->spec.mig_profile = NULL; /* not ours */
    g->apply = apply;
    g->noise_compute = g->noise_memory = 1;
    g->nmembers = members;
    for (unsigned i = 0; i < members; i++)
        g->members[i] = (gpu_share_member){ g, i, NULL, false, 1, 1 };
    return g;
}

void gpu_share_free(gpu_share *g)
{
    if (!g)
        return;
    free(g->members);
    free(g);
}

/* What sharing alone does to member m, on each side. */
static void sharing_factors(const gpu_share *g, const gpu_share_member *m, double *compute,
                            double *memory)
{
    *compute = *memory = 1;
    if (g->spec.mode == SHARE_MIG && g->nmembers > 1) {
        unsigned others = g->busy - (m->busy ? 1 : 0);
        *memory = 1 + g->spec.bandwidth_interference * others / (g->nmembers - 1);
    } else if (g->spec.mode == SHARE_TIME_SLICING) {
        /* an idle member gets the factor it will have once it joins the turns */
        unsigned k = g->busy + (m->busy ? 0 : 1);
        if (k > 1)
            *compute = *memory = k * (1 + g->spec.switch_s / g->spec.slice_s);
    }
}

static void push(gpu_share *g, gpu_share_member *m)
{
    double compute, memory;
    sharing_factors(g, m, &compute, &memory);
    compute *= g->noise_compute;
    memory *= g->noise_memory;
    if (compute == m->compute_factor && memory == m->memory_factor)
        return;
    m->compute_factor = compute;
    m->memory_factor = memory;
    if (m->context)
        g->apply(m->context, compute, memory);
}

static void push_all(gpu_share *g)
{
    for (unsigned i = 0; i < g->nmembers; i++)
        push(g, &g->members[i]);
}

void gpu_share_attach(gpu_share *g, unsigned member, void *member_context)
{
    if (member >= g->nmembers)
        sim_fatal("gpu_share_attach: member %u of %u", member, g->nmembers);
    gpu_share_member *m = &g->members[member];
    m->context = member_context;
    if (m->compute_factor != 1 || m->memory_factor != 1)
        g->apply(m->context, m->compute_factor, m->memory_factor);
}

void gpu_share_set_busy(gpu_share *g, unsigned member, bool busy)
{
    if (member >= g->nmembers)
        sim_fatal("gpu_share_set_busy: member %u of %u", member, g->nmembers);
    gpu_share_member *m = &g->members[member];
    if (m->busy == busy)
        return;
    m->busy = busy;
    g->busy += busy ? 1 : -1;
    /* the member that changed first, so that its own next iteration sees its factor
     * before the others' runs are cut */
    push(g, m);
    push_all(g);
}

void gpu_share_set_noise(gpu_share *g, double compute_factor, double memory_factor)
{
    if (!(compute_factor >= 1 && memory_factor >= 1))
        sim_fatal("gpu_share_set_noise: factors must be >= 1, got %g and %g", compute_factor,
                  memory_factor);
    g->noise_compute = compute_factor;
    g->noise_memory = memory_factor;
    push_all(g);
}

gpu_share_member *gpu_share_member_of(gpu_share *g, unsigned member)
{
    if (member >= g->nmembers)
        sim_fatal("gpu_share_member_of: member %u of %u", member, g->nmembers);
    return &g->members[member];
}

void gpu_share_busy_changed(void *member, bool busy)
{
    gpu_share_member *m = member;
    gpu_share_set_busy(m->group, m->index, busy);
}

void gpu_share_noise_changed(void *group, double compute_factor, double memory_factor)
{
    gpu_share_set_noise(group, compute_factor, memory_factor);
}

void gpu_share_factors(const gpu_share *g, unsigned member, double *compute_factor,
                       double *memory_factor)
{
    *compute_factor = g->members[member].compute_factor;
    *memory_factor = g->members[member].memory_factor;
}

unsigned gpu_share_busy_count(const gpu_share *g) { return g->busy; }
