/* A serving configuration's problems, all of them (see serving.h: serving_config_check). */
#include "models/serving.h"

#include <stdio.h>

/* The distributions a workload draws from. */
static void check_draws(const serving_config *c, config_problems *p)
{
    char why[160];
    const sim_dist *dists[] = { &c->interarrival, &c->prompt_tokens, &c->output_tokens,
                                &c->rtt_s, &c->spike_s };
    const char *names[] = { "inter-arrival time", "prompt tokens", "output tokens", "rtt",
                            "spike" };
    for (int i = 0; i < (c->spike_probability > 0 ? 5 : 4); i++)
        if (sim_dist_check(dists[i], why, sizeof why) != 0)
            config_problem(p, "%s: %s", names[i], why);
    if (c->replica.spec_k && sim_dist_check(&c->spec_acceptance, why, sizeof why) != 0)
        config_problem(p, "acceptance: %s", why);
}

/* Group i's name in messages: "the decode pool", or "the overflow pool 2" where the
 * workload has several of its role. */
static void group_label(const serving_config *c, unsigned i, char *out, size_t size)
{
    serving_role role = c->groups[i].role;
    unsigned same = 0, nth = 0;
    for (unsigned k = 0; k < c->ngroups; k++)
        if (c->groups[k].role == role) {
            same++;
            nth += k <= i;
        }
    serving_role_label(role, nth, same, out, size);
}

/* What the features need of each other. */
static void check_features(const serving_config *c, config_problems *p)
{
    bool slots = c->replica.lora_slots
                 && (!c->lora || c->lora->adapters == c->replica.lora_adapters);
    for (unsigned i = 0; i < c->ngroups; i++) {
        const replica_config *r = &c->groups[i].fleet.replica;
        slots = slots && r->lora_slots && (!c->lora || r->lora_adapters == c->lora->adapters);
    }
    if (c->lora && !slots)
        config_problem(p, "multi-LoRA needs adapter slots on the replicas (on every pool's "
                          "of the workload), and the popularity's adapters");
    if (c->sessions && (c->trace || (c->traffic && c->traffic->kind == TRAFFIC_CLOSED_LOOP)))
        config_problem(p, "sessions arrive from a distribution or a traffic profile, not a "
                          "trace or closed-loop users");
    const trace_options *hashed = c->trace && c->trace->blocks_column ? c->trace : NULL;
    unsigned id_tokens = hashed && hashed->block_tokens ? hashed->block_tokens
                                                        : TRACE_BLOCK_TOKENS;
    if (hashed && (c->nsystem_prompts || (c->prefix_block && c->prefix_block != id_tokens)))
        config_problem(p, "a trace's block ids name whole prompts in blocks of their "
                          "block_tokens: no system prompt, and a prefix cache of those blocks");
    bool tiers = c->replica.prefix_tiers.n;
    for (unsigned i = 0; i < c->ngroups; i++)
        tiers = tiers || c->groups[i].fleet.replica.prefix_tiers.n;
    if (tiers && !c->prefix_block) /* said once for all the groups */
        config_problem(p, "tiers below a prefix cache need the cache (prefix_block)");
}

/* The groups beside the own pool: their count, roles, replicas and routing. */
static void check_groups(const serving_config *c, config_problems *p)
{
    if (c->ngroups > SERVING_GROUPS_MAX - 1 || (c->ngroups && !c->groups)) {
        config_problem(p, "a workload has at most %d groups of replicas beside its own pool",
                       SERVING_GROUPS_MAX - 1);
        return;
    }
    unsigned ndecode = 0;
    bool links = c->link.bandwidth_bytes_per_s > 0 && c->link.latency_s >= 0;
    for (unsigned i = 0; i < c->ngroups; i++) /* every prefilling pool's */
        if (c->groups[i].role == ROLE_SERVE)
            links = links && c->groups[i].link.bandwidth_bytes_per_s > 0
                    && c->groups[i].link.latency_s >= 0;
    for (unsigned i = 0; i < c->ngroups; i++) {
        const serving_group *g = &c->groups[i];
        if (g->role > ROLE_OVERFLOW) {
            config_problem(p, "group %u: no such role", i + 1);
            continue;
        }
        char label[64];
        group_label(c, i, label, sizeof label);
        ndecode += g->role == ROLE_DECODE;
        replica_config_check(&g->fleet.replica, label, p);
        if (g->routing == ROUTE_CUSTOM && !g->custom_route)
            config_problem(p, "%s's custom routing needs its function", label);
    }
    if (ndecode && (!links || !(c->kv_bytes_per_token >= 0)))
        config_problem(p, "disaggregated serving needs links of bandwidth > 0 and latency "
                          ">= 0 from every prefilling pool, and the cache's bytes a token");
}

void serving_config_check(const serving_config *c, config_problems *p)
{
    check_draws(c, p);
    if (c->routing == ROUTE_CUSTOM && !c->custom_route)
        config_problem(p, "a custom routing policy needs its function");
    bool elastic = c->pool && c->autoscaler && c->autoscaler->enabled;
    if (c->scale_to_zero_s > 0 && (!c->pool || elastic || c->ngroups || c->replicas < 1))
        config_problem(p, "scaling to zero needs a pool, no autoscaler, no other group of "
                          "replicas, and replicas to load");
    if (c->replicas < 1 && !elastic)
        config_problem(p, "serving needs replicas");
    replica_config_check(&c->replica, "", p);
    check_groups(c, p);
    check_features(c, p);
}
