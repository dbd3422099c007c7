/* A replica configuration's problems (see replica.h: replica_config_check). */
#include "models/replica.h"

void replica_config_check(const replica_config *c, const char *group, config_problems *p)
{
    const char *sep = *group ? ": " : "";
    if (c->max_batch < 1 || c->max_tokens < 1 || !(c->kv_capacity_tokens >= 1))
        config_problem(p, "%s%sreplicas need a batch, a token budget and cache space", group,
                       sep);
    if (c->spec_k && !(c->spec_tokens >= 1))
        config_problem(p, "%s%sspeculative decoding needs spec_tokens >= 1", group, sep);
    if (c->lora_slots && !c->lora_adapters)
        config_problem(p, "%s%smulti-LoRA needs adapters", group, sep);
    for (unsigned i = 0; i < c->prefix_tiers.n; i++) {
        const prefix_tier *t = &c->prefix_tiers.tier[i];
        if (!(t->bandwidth_bytes_per_s > 0) || !(t->latency_s >= 0) || !t->capacity_blocks)
            config_problem(p, "%s%sthe prefix cache's %s tier needs blocks, a bandwidth > 0 "
                              "and a latency >= 0", group, sep,
                           prefix_tier_kind_name(t->kind));
    }
}
