/* An inference workload's groups of replicas beside its own pool (inference_spec.groups):
 * the questions the loader, the run and the outputs ask of them. */
#ifndef FLEETSIM_MODELS_WORKLOAD_GROUPS_H
#define FLEETSIM_MODELS_WORKLOAD_GROUPS_H

#include <stdbool.h>
#include <stddef.h>

#include "models/scenario.h"

/* Its groups of that role. */
unsigned workload_role_count(const inference_spec *w, serving_role role);

/* Whether it is disaggregated (it has a decode group). */
bool workload_decodes(const inference_spec *w);

/* The first of its groups on pool p, or NULL (its own pool is not a group). */
const workload_group *workload_group_on(const inference_spec *w, size_t pool);

/* Group g of the serving's order (0: the own pool, then groups): its pool, its device,
 * a replica's GPUs. */
size_t workload_group_pool(const inference_spec *w, unsigned g);
size_t workload_group_device(const inference_spec *w, unsigned g);
unsigned workload_group_tp(const inference_spec *w, unsigned g);

/* "the decode pool", or "the overflow pool 2" where it has several of that role: group
 * i of groups (0-based), for messages. */
void workload_group_label(const inference_spec *w, unsigned i, char *out, size_t size);

#endif
