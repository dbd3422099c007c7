/* A serving configuration's problems, all of them (see serving.h: serving_config_check). */
#include "models/serving.h"

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

/* What the features need of each other. */
static void check_features(const serving_config *c, config_problems *p)
{
    const serving_group_config *decode = c->decode;
    if (c->lora && (!c->replica.lora_slots || c->lora->adapters != c->replica.lora_adapters
                    || (decode && (!decode->replica.lora_slots
                                   || decode->replica.lora_adapters != c->lora->adapters))))
        config_problem(p, "multi-LoRA needs adapter slots on the replicas (on the decode "
                          "pool's too), and the popularity's adapters");
    if (c->sessions && (c->trace || (c->traffic && c->traffic->kind == TRAFFIC_CLOSED_LOOP)))
        config_problem(p, "sessions arrive from a distribution or a traffic profile, not a "
                          "trace or closed-loop users");
    const trace_options *hashed = c->trace && c->trace->blocks_column ? c->trace : NULL;
    unsigned id_tokens = hashed && hashed->block_tokens ? hashed->block_tokens
                                                        : TRACE_BLOCK_TOKENS;
    if (hashed && (c->nsystem_prompts || (c->prefix_block && c->prefix_block != id_tokens)))
        config_problem(p, "a trace's block ids name whole prompts in blocks of their "
                          "block_tokens: no system prompt, and a prefix cache of those blocks");
    const replica_config *groups[] = { &c->replica, decode ? &decode->replica : NULL,
                                       c->overflow ? &c->overflow->replica : NULL };
    for (unsigned g = 0; g < 3; g++) {
        if (groups[g] && groups[g]->prefix_tiers.n && !c->prefix_block) {
            config_problem(p, "tiers below a prefix cache need the cache (prefix_block)");
            break; /* said once for all the groups */
        }
    }
}

void serving_config_check(const serving_config *c, config_problems *p)
{
    check_draws(c, p);
    if (c->routing == ROUTE_CUSTOM && !c->custom_route)
        config_problem(p, "a custom routing policy needs its function");
    bool elastic = c->pool && c->autoscaler && c->autoscaler->enabled;
    if (c->scale_to_zero_s > 0 && (!c->pool || elastic || c->decode || c->overflow
                                   || c->replicas < 1))
        config_problem(p, "scaling to zero needs a pool, no autoscaler, no overflow or "
                          "decode pool, and replicas to load");
    if (c->replicas < 1 && !elastic)
        config_problem(p, "serving needs replicas");
    replica_config_check(&c->replica, "", p);
    if (c->overflow)
        replica_config_check(&c->overflow->replica, "the overflow pool", p);
    if (c->decode) {
        replica_config_check(&c->decode->replica, "the decode pool", p);
        if (c->decode_routing == ROUTE_CUSTOM && !c->decode_custom_route)
            config_problem(p, "the decode pool's custom routing needs its function");
        if (!(c->link.bandwidth_bytes_per_s > 0) || !(c->link.latency_s >= 0)
            || !(c->kv_bytes_per_token >= 0))
            config_problem(p, "disaggregated serving needs a link of bandwidth > 0 and "
                              "latency >= 0, and the cache's bytes a token");
    }
    check_features(c, p);
}
