/* Bills computed by hand: per-second against per-hour billing, a reservation partly
 * used, tiered egress crossing a tier and a month, power at idle and at full load,
 * bought and rented-by-the-month hardware. */
#include <criterion/criterion.h>
#include <math.h>

#include "models/cost.h"

TestSuite(cost);

static const double HOUR = 3600;

Test(cost, per_second_and_per_hour_billing_of_one_rental)
{
    cost_spec s = { .kind = COST_ON_DEMAND, .usd_per_hour = 4 };
    cost_meter *m = cost_meter_create(&s, 0, NULL, 1, 0);
    cost_meter_rent(m, 0, 0);
    cost_meter_return(m, 0, 1.5 * HOUR);
    cr_expect_float_eq(cost_meter_read(m, 2 * HOUR).compute_usd, 6.00, 1e-9, "90 min at $4/h");
    cost_meter_free(m);
    s.per_hour = true;
    m = cost_meter_create(&s, 0, NULL, 1, 0);
    cost_meter_rent(m, 0, 0);
    cr_expect_float_eq(cost_meter_read(m, 60).compute_usd, 4.00, 1e-9, "a started hour is due");
    cost_meter_return(m, 0, 1.5 * HOUR);
    cr_expect_float_eq(cost_meter_read(m, 2 * HOUR).compute_usd, 8.00, 1e-9, "two started hours");
    cost_meter_free(m);
}

Test(cost, a_short_rental_pays_its_minimum)
{
    cost_spec s = { .kind = COST_ON_DEMAND, .usd_per_hour = 3.6, .minimum_s = 60 };
    cost_meter *m = cost_meter_create(&s, 0, NULL, 1, 0);
    cost_meter_rent(m, 7, 100);
    cost_meter_return(m, 7, 130);
    cr_expect_float_eq(cost_meter_read(m, 200).compute_usd, 0.06, 1e-12, "60 s at $0.001/s");
    cost_meter_free(m);
}

Test(cost, a_reservation_is_paid_whether_used_or_not_and_on_demand_above_it)
{
    /* 4 reserved at $2.50 for 10 h = $100; 6 held for 2 h: 2 above it at $4 = $16 */
    cost_spec s = { .kind = COST_RESERVED, .usd_per_hour = 2.5, .reserved_gpus = 4,
                    .above_usd_per_hour = 4 };
    cost_meter *m = cost_meter_create(&s, 0, NULL, 1, 0);
    for (unsigned g = 0; g < 6; g++)
        cost_meter_rent(m, g, 0);
    for (unsigned g = 2; g < 6; g++)
        cost_meter_return(m, g, 2 * HOUR);
    cr_expect_float_eq(cost_meter_read(m, 10 * HOUR).compute_usd, 116, 1e-9);
    cost_meter_free(m);
}

Test(cost, egress_tiers_are_crossed_and_restart_each_month)
{
    egress_tier aws[] = { { 0, 0 }, { 100, 0.09 }, { 10240, 0.085 }, { 51200, 0.07 } };
    cr_expect_float_eq(egress_tier_cost(aws, 4, 150), 4.50, 1e-9, "50 GB past the free 100");
    /* (10240 - 100) x 0.09 + 60 x 0.085 */
    cr_expect_float_eq(egress_tier_cost(aws, 4, 10300), 912.6 + 5.1, 1e-9);
    cost_spec s = { .kind = COST_ON_DEMAND, .usd_per_hour = 0, .egress = aws, .negress = 4 };
    cost_meter *m = cost_meter_create(&s, 0, NULL, 1, 0);
    cost_meter_egress(m, 80e9, 10);
    cost_meter_egress(m, 70e9, 20);          /* crosses 100 GB: 50 GB at $0.09 */
    cr_expect_float_eq(cost_meter_read(m, 30).egress_usd, 4.50, 1e-9);
    cost_meter_egress(m, 150e9, COST_MONTH_S + 5); /* a new month: 100 GB free again */
    cost_breakdown b = cost_meter_read(m, COST_MONTH_S + 10);
    cr_expect_float_eq(b.egress_usd, 9.00, 1e-9);
    cr_expect_float_eq(b.egress_gb, 300, 1e-9);
    s.egress = NULL; /* the tiers are the test's */
    cost_meter_free(m);
}

/* A run of one day (24 of a month's 730 hours) pays a day's share of the bill of a month
 * sent at its rate.  2 TB in the day: a month of 60,833.3 GB, $912.60 + $3,481.60 +
 * 9,633.3 GB x $0.07 = $5,068.53, times 24/730 = $166.64 (the first tiers alone would say
 * $171).  10 GB in the day: 304.2 GB a month, past the free 100: $0.60, not $0. */
Test(cost, a_run_shorter_than_a_month_pays_the_tiers_of_its_monthly_volume)
{
    egress_tier aws[] = { { 0, 0 }, { 100, 0.09 }, { 10240, 0.085 }, { 51200, 0.07 } };
    cost_spec s = { .kind = COST_ON_DEMAND, .usd_per_hour = 0, .egress = aws, .negress = 4 };
    const struct { double gb, usd; } days[] = { { 2000, 166.63671232876715 },
                                                { 10, 0.6041095890410958 } };
    for (size_t i = 0; i < 2; i++) {
        cost_meter *m = cost_meter_create(&s, 0, NULL, 1, 0);
        cost_meter_set_end(m, 86400);
        cost_meter_egress(m, days[i].gb * 1e9 / 2, 3600);
        double half = cost_meter_read(m, 7200).egress_usd;
        cost_meter_egress(m, days[i].gb * 1e9 / 2, 80000);
        cr_expect_float_eq(cost_meter_read(m, 86400).egress_usd, days[i].usd, 1e-9 * days[i].usd,
                           "%g GB", days[i].gb);
        /* the bill grows with the bytes, not with the reading's time */
        cr_expect_float_eq(cost_meter_read(m, 80000).egress_usd, days[i].usd, 1e-9 * days[i].usd);
        cr_expect_lt(half, days[i].usd);
        cost_meter_free(m);
    }
    s.egress = NULL; /* the tiers are the test's */
}

/* A site's transit (issue 39, 2), billed as carriers bill it: per Mbps a month at the
 * 95th percentile of its 5-minute rates.  1 Gbps all month at $0.50: $500.  Bursts in 4%
 * of the windows (under the 5% a 95th percentile drops) cost nothing more; in 6%, the
 * burst's 10 Gbps is the month's figure, $5,000.  Half a month read: half the bill. */
Test(cost, transit_is_billed_at_the_95th_percentile_of_a_months_rates)
{
    cost_spec s = { .kind = COST_OWNED, .transit_usd_per_mbps = 0.5,
                    .transit_percentile = 0.95 };
    const double window = 300, windows = COST_MONTH_S / window; /* 8,760 */
    const double gbps = 1e9 / 8 * window;                       /* bytes of a 1 Gbps window */
    const struct { double share, usd; } bursts[] = { { 0, 500 }, { 0.04, 500 },
                                                     { 0.06, 5000 } };
    for (size_t b = 0; b < 3; b++) {
        cost_meter *m = cost_meter_create(&s, 8, NULL, 1, 0);
        cost_meter_set_window(m, window);
        for (size_t w = 0; w < (size_t)windows; w++)
            cost_meter_egress(m, (w % 100 < bursts[b].share * 100 ? 10 : 1) * gbps,
                              (double)(w + 1) * window);
        cr_expect_float_eq(cost_meter_read(m, COST_MONTH_S).egress_usd, bursts[b].usd,
                           1e-6 * bursts[b].usd, "bursts in %g of the windows", bursts[b].share);
        cost_meter_free(m);
    }
    cost_meter *m = cost_meter_create(&s, 8, NULL, 1, 0);
    cost_meter_set_window(m, window);
    for (size_t w = 0; w < (size_t)windows / 2; w++)
        cost_meter_egress(m, gbps, (double)(w + 1) * window);
    cr_expect_float_eq(cost_meter_read(m, COST_MONTH_S / 2).egress_usd, 250, 1e-6 * 250);
    /* windows that sent nothing count as 0 Mbps: 1 Gbps in 4% of a month's windows is
     * under its 95th percentile, and the month costs nothing */
    cost_meter_egress(m, 0, COST_MONTH_S);
    cost_meter_free(m);
    m = cost_meter_create(&s, 8, NULL, 1, 0);
    cost_meter_set_window(m, window);
    for (size_t w = 0; w < (size_t)(0.04 * windows); w++)
        cost_meter_egress(m, gbps, (double)(w + 1) * window);
    cost_meter_egress(m, 0, COST_MONTH_S);
    cr_expect_float_eq(cost_meter_read(m, COST_MONTH_S).egress_usd, 0, 1e-9);
    cost_meter_egress(m, gbps, COST_MONTH_S + window); /* a new month begins */
    cr_expect_float_eq(cost_meter_read(m, COST_MONTH_S + window).egress_usd,
                       500 * window / COST_MONTH_S, 1e-9, "its one window at 1 Gbps so far");
    cost_meter_free(m);
}

Test(cost, power_from_idle_through_loaded_to_work_with_hosts_times_pue)
{
    /* 8 GPUs of 75 W idle, 150 W loaded, 600 W above it computing and 300 W reading
     * memory; 125 W of host each; PUE 1.5, $0.10/kWh, for 10 h */
    cost_spec s = { .kind = COST_OWNED, .years = 3, .pays_power = true, .pue = 1.5,
                    .usd_per_kwh = 0.10 };
    power_spec p = { .host_w = 125, .pue = 1.5,
                     .model = { .idle_w = 75, .loaded_w = 150, .tdp_w = 750,
                                .compute_w = 600, .memory_w = 300 } };
    cost_meter *m = cost_meter_create(&s, 8, &p, 1, 0);
    for (unsigned g = 0; g < 8; g++)
        cost_meter_rent(m, g, 0);
    cost_breakdown idle = cost_meter_read(m, 10 * HOUR);
    /* 8 x 75 W x 10 h = 6 kWh of GPUs, 8 x 125 W x 10 h = 10 kWh of hosts; x 1.5 */
    cr_expect_float_eq(idle.gpu_kwh, 6, 1e-9);
    cr_expect_float_eq(idle.host_kwh, 10, 1e-9);
    cr_expect_float_eq(idle.energy_kwh, 24, 1e-9);
    cr_expect_float_eq(idle.power_usd, 2.40, 1e-9);
    /* all 8 hold a model for 10 h: + 8 x 75 W x 10 h = 6 kWh; they compute 2 h and read
     * memory 4 h each: + 8 x (600 x 2 + 300 x 4) Wh = 19.2 kWh */
    cost_meter_add_loaded(m, 8 * 10 * HOUR);
    perf_phases work = { .compute_s = 8 * 2 * HOUR, .memory_s = 8 * 4 * HOUR };
    cost_meter_add_work(m, &work);
    cost_breakdown full = cost_meter_read(m, 10 * HOUR);
    cr_expect_float_eq(full.gpu_kwh, 6 + 6 + 19.2, 1e-9);
    cr_expect_float_eq(full.energy_kwh, (31.2 + 10) * 1.5, 1e-9);
    cr_expect_float_eq(full.power_usd, 6.18, 1e-9);
    cost_meter_free(m);
}

Test(cost, bought_gpus_depreciate_and_pay_hosting)
{
    /* $30,000 a GPU over 3 years, 10% left: $750 a month each; hosting $150; 8 GPUs */
    cost_spec s = { .kind = COST_OWNED, .purchase_usd = 30000, .years = 3, .residual = 0.1,
                    .hosting_usd_per_month = 150 };
    cost_meter *m = cost_meter_create(&s, 8, NULL, 1, 0);
    cr_expect_float_eq(cost_meter_read(m, COST_MONTH_S).compute_usd, 8 * (750 + 150), 1e-6);
    cr_expect_float_eq(cost_gpu_hour_usd(&s), 900 / 730.0, 1e-12);
    cost_meter_free(m);
}

Test(cost, monthly_rent_per_server_rounds_servers_up)
{
    /* 12 GPUs in servers of 8: two servers at $12,000 a month, for half a month */
    cost_spec s = { .kind = COST_MONTHLY, .usd_per_server_month = 12000, .gpus_per_server = 8 };
    cost_meter *m = cost_meter_create(&s, 12, NULL, 1, 0);
    cr_expect_float_eq(cost_meter_read(m, COST_MONTH_S / 2).compute_usd, 12000, 1e-6);
    cost_meter_free(m);
}

Test(cost, mig_slices_are_billed_as_fractions_of_their_gpu)
{
    /* 7 slices held for an hour at $3.50 per GPU-hour: one GPU-hour */
    cost_spec s = { .kind = COST_ON_DEMAND, .usd_per_hour = 3.5 };
    cost_meter *m = cost_meter_create(&s, 0, NULL, 7, 0);
    for (unsigned u = 0; u < 7; u++)
        cost_meter_rent(m, u, 0);
    cr_expect_float_eq(cost_meter_read(m, HOUR).compute_usd, 3.5, 1e-9);
    cost_meter_free(m);
}
