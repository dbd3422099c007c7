/* A serving configuration is refused for every problem it has at once, each named, not
 * for the first one met; a replica's own problems are named with their group. */
#include <criterion/criterion.h>
#include <string.h>

#include "lua/catalog.h"
#include "models/serving.h"

static catalog cat;

static void setup(void)
{
    char err[512];
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
}
static void teardown(void) { catalog_release(&cat); }

TestSuite(serving_check, .init = setup, .fini = teardown);

static serving_config sound(void)
{
    const model_spec *llama = catalog_model(&cat, "llama-3-8b");
    const device_spec *h100 = catalog_device(&cat, "H100-SXM");
    serving_config c = {
        .name = "w", .replicas = 2, .routing = ROUTE_LEAST_OUTSTANDING,
        .interarrival = sim_dist_constant(1), .prompt_tokens = sim_dist_constant(100),
        .output_tokens = sim_dist_constant(10), .rtt_s = sim_dist_constant(0), .seed = 1,
    };
    c.replica = (replica_config){
        .model = llama, .device = h100, .profile = perf_default_profile(h100),
        .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 8, .max_tokens = 512,
        .kv_capacity_tokens = 10000,
    };
    return c;
}

Test(serving_check, a_sound_configuration_has_no_problem)
{
    serving_config c = sound();
    config_problems p = { 0 };
    serving_config_check(&c, &p);
    cr_expect_eq(p.n, 0, "%s", p.text[0]);
}

Test(serving_check, every_problem_is_named_at_once)
{
    serving_config c = sound();
    c.routing = ROUTE_CUSTOM;                /* no function */
    c.replica.lora_slots = 4;                /* no adapters */
    c.replica.prefix_tiers = (prefix_tiers){ 1, { { PREFIX_TIER_HOST, NULL, 100, 0, 1e-5 } } };
    serving_group decode = { .role = ROLE_DECODE, .fleet = { .replica = c.replica } };
    decode.fleet.replica.lora_slots = 0;
    decode.fleet.replica.prefix_tiers.n = 0;
    decode.fleet.replica.max_batch = 0;      /* no batch */
    c.groups = &decode;                      /* and no link */
    c.ngroups = 1;
    config_problems p = { 0 };
    serving_config_check(&c, &p);
    cr_assert_eq(p.n, 6);
    cr_expect_str_eq(p.text[0], "a custom routing policy needs its function");
    cr_expect_str_eq(p.text[1], "multi-LoRA needs adapters");
    cr_expect_str_eq(p.text[2], "the prefix cache's host tier needs blocks, a bandwidth > 0 "
                                "and a latency >= 0");
    cr_expect_str_eq(p.text[3], "the decode pool: replicas need a batch, a token budget and "
                                "cache space");
    cr_expect_str_eq(p.text[4], "disaggregated serving needs links of bandwidth > 0 and "
                                "latency >= 0 from every prefilling pool, and the cache's "
                                "bytes a token");
    cr_expect_str_eq(p.text[5], "tiers below a prefix cache need the cache (prefix_block)");
    /* serving_create says them all, in one line */
    sim_engine *e = sim_engine_create();
    char err[2048];
    cr_expect_null(serving_create(e, &c, err, sizeof err));
    cr_expect(strstr(err, "a custom routing policy needs its function; multi-LoRA needs "
                          "adapters; the prefix cache's host tier") == err, "%s", err);
    cr_expect(strstr(err, "; tiers below a prefix cache need the cache (prefix_block)") != NULL,
              "%s", err);
    sim_engine_free(e);
}

Test(serving_check, past_the_kept_problems_the_rest_are_counted)
{
    config_problems p = { 0 };
    for (unsigned i = 0; i < CONFIG_PROBLEMS_MAX + 3; i++)
        config_problem(&p, "problem %u", i);
    cr_expect_eq(p.n, CONFIG_PROBLEMS_MAX + 3);
    char line[4096];
    config_problems_join(&p, line, sizeof line);
    cr_expect(strstr(line, "problem 0; problem 1; ") == line, "%s", line);
    cr_expect(strstr(line, "; and 3 more") != NULL, "%s", line);
    char short_line[10]; /* cut to fit, never past its end */
    config_problems_join(&p, short_line, sizeof short_line);
    cr_expect_str_eq(short_line, "problem 0");
}
