/* Interconnect domains (issue 21): a device's scale-up domain and scale-out network in
 * the catalog, the links a group of devices gets from them, and tensor parallelism's
 * all-reduces over 72 GPUs of an NVL72 rack against the same group over the network. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/catalog.h"
#include "lua/sandbox.h"
#include "models/perf.h"
#include "models/perf_training.h"
#include "support/catalog_fixture.h"

TestSuite(domains, .init = test_catalog_setup, .fini = test_catalog_teardown);

Test(domains, an_nvl72_rack_is_one_domain_of_72_and_an_hgx_board_one_of_8)
{
    const device_spec *gb200 = test_device("GB200"), *b200 = test_device("B200");
    cr_expect_eq(gb200->scale_up_devices, 72);
    cr_expect_float_eq(gb200->nvlink_bytes_per_s, 1800e9, 1);
    cr_expect_float_eq(gb200->network_bytes_per_s, 50e9, 1, "400 Gb/s = 50 GB/s");
    perf_profile p = perf_default_profile(gb200);
    cr_expect_eq(p.devices_per_node, 72, "the rack, not the family's 8");
    cr_expect_eq(p.scale_up_devices, 72);
    perf_profile q = perf_default_profile(b200);
    cr_expect_eq(q.devices_per_node, 8);
    /* a PCIe card without NVLink still shares a server of 8 */
    cr_expect_eq(perf_default_profile(test_device("L40S")).devices_per_node, 8);
    cr_expect_eq(perf_default_profile(test_device("L40S")).scale_up_devices, 1);
    /* B300 states its 800 Gb/s ConnectX-8: 100 GB/s */
    cr_expect_float_eq(perf_default_profile(test_device("B300")).network_bytes_per_s, 100e9, 1);
}

Test(domains, a_group_links_at_nvlink_within_the_domain_pcie_within_the_server_then_network)
{
    const device_spec *gb200 = test_device("GB200"), *b200 = test_device("B200");
    const device_spec *pcie = test_device("H100-PCIe");
    perf_profile p = perf_default_profile(gb200), q = perf_default_profile(b200);
    perf_profile r = perf_default_profile(pcie);
    /* one direction: half of NVLink 5's 1.8 TB/s */
    cr_expect_float_eq(perf_group_link_bytes_per_s(gb200, &p, 64), 900e9, 1);
    cr_expect_float_eq(perf_group_link_bytes_per_s(gb200, &p, 72), 900e9, 1);
    /* past the node, the 400 Gb/s NIC at the 0.94 of it a collective reaches (NCCL's
     * maintainers' 46-48 GB/s) */
    cr_expect_float_eq(perf_group_link_bytes_per_s(gb200, &p, 144), 47e9, 1, "two racks");
    cr_expect_float_eq(perf_group_link_bytes_per_s(b200, &q, 8), 900e9, 1);
    cr_expect_float_eq(perf_group_link_bytes_per_s(b200, &q, 16), 47e9, 1, "two boards");
    /* bridged pairs: 300 GB/s a pair, PCIe gen 5 x16 (64 GB/s) across the server */
    cr_expect_float_eq(perf_group_link_bytes_per_s(pcie, &r, 2), 300e9, 1);
    cr_expect_float_eq(perf_group_link_bytes_per_s(pcie, &r, 4), 64e9, 1);
    cr_expect_float_eq(perf_group_link_bytes_per_s(pcie, &r, 16), 47e9, 1);
}

/* A 16-bit model's all-reduces of one iteration of b at tp 16 on d, its default profile. */
static double allreduce_at_tp16(const model_spec *m, const device_spec *d, const perf_batch *b)
{
    perf_profile p = perf_default_profile(d);
    perf_setup s = { .model = m, .device = d, .profile = &p, .weights = PREC_FP16,
                     .kv = PREC_FP16, .tp = 16 };
    perf_breakdown ops;
    perf_iteration(&s, b, &ops);
    return ops.op[OP_ALLREDUCE].time_s;
}

/* Llama-3-70B (hidden 8192, 80 layers) decoding 64 sequences at tp 16: each of the
 * 2 x 80 + 1 = 161 all-reduces carries 64 x 8192 x 2 bytes = 1,048,576.  Inside the rack
 * the 8-GPU row stands for 16 (alpha a, efficiency e): a + 2 x 15/16 x bytes / (e x
 * 900 GB/s).  Between two B200 boards NCCL's hierarchy: each board's 8 reduce at the
 * 8-GPU row, a + 2 x 7/8 x bytes / (e x 900 GB/s), while the two nodes exchange halves
 * over the 8 NICs of each, 2 x 1/2 x bytes / (8 x 47 GB/s) (46-48 GB/s a 400 Gb/s NIC,
 * NCCL's maintainers) after 2 (2 - 1) steps of the network's 10 us latency: the start-ups
 * add, the transfers overlap.  With the table's a = 29.05 us and e = 0.786 that is
 * 31.83 us against 51.84 us an all-reduce. */
Test(domains, tensor_parallel_all_reduces_within_the_rack_run_at_nvlink_rate)
{
    const model_spec *m = test_model("llama-3-70b");
    const perf_node *node = perf_nodes[PERF_NODE_H100_DGX];
    const perf_allreduce_constants *row = &node->allreduce[2];
    cr_assert_eq(row->n, 8);
    double bytes = 64.0 * 8192 * 2;
    double in_rack = row->alpha_s + 2.0 * 15 / 16 * bytes / (row->efficiency * 900e9);
    double over_network = row->alpha_s + 2 * 10e-6
                          + fmax(2.0 * 7 / 8 * bytes / (row->efficiency * 900e9),
                                 bytes / (8 * 47e9));
    perf_batch b = { .decode_seqs = 64, .decode_context = 64 * 1024 };
    const char *names[2] = { "GB200", "B200" };
    double expected[2] = { 161 * in_rack, 161 * over_network }, got[2];
    for (int i = 0; i < 2; i++) {
        got[i] = allreduce_at_tp16(m, test_device(names[i]), &b);
        cr_expect_float_eq(got[i], expected[i], 1e-12 * expected[i] + 1e-15, "%s: %g vs %g",
                           names[i], got[i], expected[i]);
    }
    if (fabs(row->alpha_s - 2.905e-05) < 1e-9 && fabs(row->efficiency - 0.786) < 1e-6) {
        cr_expect(fabs(got[0] / 161 / 31.83e-6 - 1) < 1e-3, "%g", got[0] / 161);
        cr_expect(fabs(got[1] / 161 / 51.84e-6 - 1) < 1e-3, "%g", got[1] / 161);
    }
}

Test(domains, training_data_parallelism_inside_the_rack_beats_the_same_group_over_the_network)
{
    /* Llama-3-8B on 64 GPUs, tp 1, pp 1: 64 data-parallel ranks all inside one NVL72 rack,
     * or the same GB200 with its domain cut to 8 (eight boards over the network) */
    const model_spec *m = test_model("llama-3-8b");
    device_spec rack = *test_device("GB200"), boards = rack;
    boards.scale_up_devices = 8;
    perf_profile p = perf_default_profile(&rack), q = perf_default_profile(&boards);
    cr_assert_eq(q.devices_per_node, 8);
    training_setup s = { .tp = 1, .pp = 1, .zero_stage = 1, .micro_batch = 1, .seq_len = 4096 };
    training_estimate in_rack = perf_training_step(m, &rack, &p, PREC_BF16, s, 64, 512);
    training_estimate over = perf_training_step(m, &boards, &q, PREC_BF16, s, 64, 512);
    /* the exposed reduce-scatter and all-gather: the ring's 2 x 63/64 of 2 bytes a
     * parameter, each half of it, at 900 GB/s against the 8 boards' NICs of a node
     * together, 8 x 47 GB/s (46-48 GB/s a 400 Gb/s NIC, NCCL's maintainers): 2.4 times
     * as long, less what hides behind the backward pass, and the latency terms alike */
    cr_expect_lt(in_rack.dp_comm_s, over.dp_comm_s);
    cr_expect_float_eq(in_rack.compute_s, over.compute_s, 1e-9 * over.compute_s,
                       "the links change communication only");
    double half_over = perf_allreduce_s(2 * model_params(m), 64, 8 * 47e9,
                                        q.link_latency_s) / 2;
    double half_rack = perf_allreduce_s(2 * model_params(m), 64, 900e9, p.link_latency_s) / 2;
    cr_expect_leq(over.dp_comm_s, 2 * half_over * (1 + 1e-9));
    cr_expect_leq(in_rack.dp_comm_s, 2 * half_rack * (1 + 1e-9));
}

static int load_edit(const char *code, char *err, size_t size)
{
    sandbox *sb = sandbox_create(false);
    cr_assert_not_null(sb);
    lua_State *L = sandbox_state(sb);
    cr_assert_eq(luaL_dostring(L, code), LUA_OK, "%s", lua_tostring(L, -1));
    catalog cat;
    int status = catalog_load_from(L, "edit.lua", &cat, err, size);
    if (status == 0)
        catalog_release(&cat);
    sandbox_free(sb);
    return status;
}

Test(domains, a_domain_without_its_link_or_with_two_links_is_refused)
{
    char err[512];
    cr_expect_eq(load_edit("local fs = require 'fleetsim'\n"
                           "fs.devices.x = { kind = 'gpu', tflops = { fp32 = 1 }, memory = '1GB',"
                           " bandwidth_gbs = 1, idle_w = 1, tdp_w = 2,"
                           " scale_up = { devices = 8 } }", err, sizeof err), -1);
    cr_expect(strstr(err, "devices.x.scale_up: a domain of 8 devices needs its link") != NULL,
              "%s", err);
    cr_expect_eq(load_edit("local fs = require 'fleetsim'\n"
                           "fs.devices['H100-SXM'].nvlink_gbs = 600", err, sizeof err), -1);
    cr_expect(strstr(err, "gbs (900) and nvlink_gbs (600) disagree") != NULL, "%s", err);
    cr_expect_eq(load_edit("local fs = require 'fleetsim'\n"
                           "fs.devices['B200'].network = { gbit = 800 }", err, sizeof err), -1);
    cr_expect(strstr(err, "devices.B200.network") != NULL, "%s", err);
    cr_expect(strstr(err, "gbit_per_s") != NULL, "a hint: %s", err);
    /* a device edited to the older spelling alone still reads */
    cr_expect_eq(load_edit("local fs = require 'fleetsim'\n"
                           "fs.devices['B200'].scale_up = nil\n"
                           "fs.devices['B200'].nvlink_gbs = 1800", err, sizeof err), 0, "%s", err);
}

Test(domains, the_catalog_holds_the_2026_devices_with_their_datasheet_figures)
{
    /* name, dense 16-bit TFLOPS, fp4 TFLOPS (0: none), memory GB, bandwidth GB/s, TDP W,
     * domain; from the sources in lua/fleetsim/devices.lua */
    const struct { const char *name; double bf16, fp4, mem, bw, tdp; unsigned domain; } rows[] = {
        { "L40S", 362, 0, 48, 864, 350, 1 }, { "H20", 148, 0, 96, 4000, 400, 8 },
        { "H800", 989.5, 0, 80, 3350, 700, 8 }, { "H100-NVL", 835.5, 0, 94, 3900, 400, 2 },
        { "GH200", 989.5, 0, 96, 4000, 700, 0 }, { "GB200", 2500, 10000, 186, 8000, 1200, 72 },
        { "B300", 2250, 14000, 270, 7700, 1100, 8 }, { "GB300", 2500, 15000, 279, 8000, 1400, 72 },
        { "MI300X", 1307.4, 0, 192, 5300, 750, 8 }, { "MI325X", 1307.4, 0, 256, 6000, 1000, 8 },
        { "MI355X", 2500, 10000, 288, 8000, 1400, 8 }, { "Gaudi3", 1835, 0, 128, 3670, 900, 8 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const device_spec *d = test_device(rows[i].name);
        cr_assert_not_null(d, "%s", rows[i].name);
        cr_expect_not(d->is_cpu);
        cr_expect_float_eq(d->peak_flops[PREC_BF16], rows[i].bf16 * 1e12, 1, "%s", rows[i].name);
        cr_expect_float_eq(d->peak_flops[PREC_FP4], rows[i].fp4 * 1e12, 1, "%s", rows[i].name);
        cr_expect_float_eq(d->memory_datasheet_bytes, rows[i].mem * 1e9, 1, "%s", rows[i].name);
        cr_expect_float_eq(d->bandwidth_bytes_per_s, rows[i].bw * 1e9, 1, "%s", rows[i].name);
        cr_expect_float_eq(d->tdp_w, rows[i].tdp, 0, "%s", rows[i].name);
        cr_expect_eq(d->scale_up_devices, rows[i].domain, "%s", rows[i].name);
    }
    /* prices where a public page gave one, absent where none did */
    cr_expect_float_eq(test_device("MI300X")->usd_per_hour, 1.85, 1e-9);
    cr_expect_float_eq(test_device("GB200")->usd_per_hour, 9.08 / 2, 1e-9, "half a superchip");
    cr_expect(isnan(test_device("H20")->usd_per_hour), "no public price outside China");
    cr_expect(isnan(test_device("MI355X")->purchase_usd));
    cr_expect_float_eq(test_device("Gaudi3")->purchase_usd, 125000.0 / 8, 1e-6);
    /* the CPUs: fp32 at base clock, cores x GHz x FLOP a cycle */
    cr_expect_float_eq(test_device("Xeon-6980P")->peak_flops[PREC_FP32], 16.4e12, 1e10,
                       "128 x 2.0 x 64");
    cr_expect_float_eq(test_device("EPYC-9965")->peak_flops[PREC_FP32], 27.6e12, 1e10,
                       "192 x 2.25 x 64");
    cr_expect_float_eq(test_device("Grace")->peak_flops[PREC_FP32], 14.2e12, 1e10,
                       "twice the 7.1 TFLOPS fp64");
    cr_expect(test_device("Grace")->is_cpu);
    cr_expect_eq(test_catalog.ndevices, 26, "11 before issue 21, 15 added");
}

Test(domains, every_new_device_is_placed_by_name_with_a_reason)
{
    const char *names[] = { "L40S", "H20", "H800", "H100-NVL", "GB200", "B300", "GB300",
                            "MI300X", "MI325X", "MI355X", "Gaudi3" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *why = perf_family_reason(test_device(names[i]));
        cr_expect(strncmp(why, "a device the table does not name", 32) != 0, "%s: %s", names[i],
                  why);
    }
    cr_expect(strstr(perf_family_reason(test_device("MI300X")), "no AMD measurements") != NULL);
    cr_expect_eq(perf_node_of(test_device("H100-NVL")), perf_nodes[PERF_NODE_H100_PAIRS]);
    cr_expect_eq(perf_node_of(test_device("H20")), perf_nodes[PERF_NODE_H100_DGX],
                 "H20 is not taken for H200 nor H200 for H20");
    cr_expect_eq(perf_family_of(test_device("L40S")), perf_families[PERF_FAMILY_A40]);
}

/* A fabric slower than InfiniBand states its share of the line rate: EFA v4 reaches 0.74
 * (4 x 8 B200, 16 GiB, kernels/collectives_scale.csv lines 64-96), the default 0.94. */
Test(domains, a_network_states_the_share_of_its_line_rate_collectives_reach)
{
    char err[512];
    /* read from a scenario's catalog into the device, and from there into a priced step:
     * tp 16 over two boards waits on the network stage at 0.74 */
    sandbox *sb = sandbox_create(false);
    cr_assert_not_null(sb);
    lua_State *L = sandbox_state(sb);
    cr_assert_eq(luaL_dostring(L, "local fs = require 'fleetsim'\n"
                                  "fs.devices['B200'].network = { gbit_per_s = 400, "
                                  "efficiency = 0.74 }"), LUA_OK, "%s", lua_tostring(L, -1));
    catalog cat;
    cr_assert_eq(catalog_load_from(L, "edit.lua", &cat, err, sizeof err), 0, "%s", err);
    const device_spec *loaded = catalog_device(&cat, "B200");
    cr_assert_not_null(loaded);
    cr_expect_float_eq(loaded->network_efficiency, 0.74, 1e-12);
    const model_spec *m = test_model("llama-3-70b");
    perf_batch b = { .decode_seqs = 4096, .decode_context = 4096 * 1024 };
    double ar[2] = { allreduce_at_tp16(m, test_device("B200"), &b),
                     allreduce_at_tp16(m, loaded, &b) };
    /* 4,096 sequences: 64 MiB an all-reduce (161 a step), the network stage the slower
     * (2 x 1/2 of it over 8 NICs: 178 us at 0.94, 227 at 0.74, against 166 us within the
     * board; the start-ups, 49 us, add) */
    double step = 4096.0 * 8192 * 2, diff = step / 400e9 * (1 / 0.74 - 1 / 0.94);
    cr_expect_float_eq(ar[1] - ar[0], 161 * diff, 1e-9 * ar[1], "%g against %g", ar[1], ar[0]);
    catalog_release(&cat);
    sandbox_free(sb);
    cr_expect_eq(load_edit("local fs = require 'fleetsim'\n"
                           "fs.devices['B200'].network = { gbit_per_s = 400, efficiency = 1.5 }",
                           err, sizeof err), -1);
    cr_expect(strstr(err, "devices.B200.network.efficiency") != NULL, "%s", err);
    device_spec efa = *test_device("B200");
    cr_expect_float_eq(perf_default_profile(&efa).network_efficiency, 0.94, 1e-12);
    efa.network_efficiency = 0.74;
    perf_profile p = perf_default_profile(&efa);
    cr_expect_float_eq(p.network_efficiency, 0.74, 1e-12);
    /* the ring between 4 nodes of 8: 2 x 3/4 of 16 GiB over 8 NICs of 50 GB/s at 0.74,
     * after 6 steps of 10 us: 382 GB/s of bus bandwidth (2 x 31/32 of the bytes over the
     * time), as measured */
    double bytes = 16.0 * (1u << 30);
    double t = perf_network_allreduce_s(&p, bytes, 4, 8);
    cr_expect_float_eq(t, 1.5 * bytes / (8 * 50e9 * 0.74) + 6 * 10e-6, 1e-12 * t);
    cr_expect(fabs(2.0 * 31 / 32 * bytes / t / 381.8e9 - 1) < 0.01, "%g", 2.0 * 31 / 32 * bytes / t);
}
