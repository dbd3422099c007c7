/* The ranking (sim/ranking.h): the least by (value, tie) after any mix of insertions,
 * updates and removals, against a scan of a plain array. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "sim/ranking.h"
#include "sim/rng.h"

Test(ranking, a_hand_worked_case)
{
    sim_ranking r = { 0 };
    cr_expect_eq(sim_ranking_least(&r), SIM_RANKING_NONE);
    sim_ranking_insert(&r, 0, 3, 0);
    sim_ranking_insert(&r, 1, 2, 1);
    sim_ranking_insert(&r, 2, 2, 2);
    cr_expect_eq(sim_ranking_least(&r), 1, "2 < 3; of the two at 2 the lower tie");
    sim_ranking_update(&r, 1, 4);
    cr_expect_eq(sim_ranking_least(&r), 2, "1 went up to 4: 2 is least");
    sim_ranking_update(&r, 0, 2);
    cr_expect_eq(sim_ranking_least(&r), 0, "0 at 2 with tie 0 goes before 2 at 2 (tie 2)");
    sim_ranking_remove(&r, 0);
    cr_expect_eq(sim_ranking_least(&r), 2);
    cr_expect(!sim_ranking_contains(&r, 0));
    sim_ranking_insert(&r, 0, 1, 9); /* an id comes back with a new tie */
    cr_expect_eq(sim_ranking_least(&r), 0);
    sim_ranking_release(&r);
}

/* The first index (lowest tie = index here) holding the least value among live ones. */
static uint32_t scan_least(const double *value, const int *live, uint32_t n)
{
    uint32_t best = SIM_RANKING_NONE;
    for (uint32_t i = 0; i < n; i++)
        if (live[i] && (best == SIM_RANKING_NONE || value[i] < value[best]))
            best = i;
    return best;
}

Test(ranking, matches_a_scan_through_random_changes)
{
    enum { N = 300, STEPS = 200000 };
    double value[N];
    int live[N] = { 0 };
    sim_ranking r = { 0 };
    gsl_rng *g = sim_rng_stream(7, 0, "ranking test");
    for (int step = 0; step < STEPS; step++) {
        uint32_t id = (uint32_t)gsl_rng_uniform_int(g, N);
        double v = (double)gsl_rng_uniform_int(g, 12); /* few values: many ties */
        if (!live[id]) {
            sim_ranking_insert(&r, id, v, id);
            live[id] = 1;
        } else if (gsl_rng_uniform(g) < 0.2) {
            sim_ranking_remove(&r, id);
            live[id] = 0;
        } else {
            sim_ranking_update(&r, id, v);
        }
        value[id] = v;
        uint32_t want = scan_least(value, live, N);
        cr_assert_eq(sim_ranking_least(&r), want, "step %d: ranking %u, scan %u", step,
                     sim_ranking_least(&r), want);
    }
    gsl_rng_free(g);
    sim_ranking_release(&r);
}

typedef struct walked {
    uint32_t ids[400];
    size_t n, stop_after;
} walked;

static bool note(void *context, uint32_t id, double value)
{
    walked *w = context;
    w->ids[w->n++] = id;
    return w->n < w->stop_after;
}

Test(ranking, walks_in_order_and_stops_when_told)
{
    enum { N = 400 };
    double value[N];
    sim_ranking r = { 0 };
    gsl_rng *g = sim_rng_stream(11, 0, "ranking walk test");
    for (uint32_t id = 0; id < N; id++) {
        value[id] = (double)gsl_rng_uniform_int(g, 50);
        sim_ranking_insert(&r, id, value[id], id);
    }
    for (uint32_t id = 0; id < N; id += 3) { /* some move, so the heap is not as built */
        value[id] = (double)gsl_rng_uniform_int(g, 50);
        sim_ranking_update(&r, id, value[id]);
    }
    walked w = { .stop_after = N };
    sim_ranking_walk(&r, note, &w);
    cr_assert_eq(w.n, N);
    for (size_t k = 1; k < N; k++) {
        uint32_t a = w.ids[k - 1], b = w.ids[k];
        cr_assert(value[a] < value[b] || (value[a] == value[b] && a < b),
                  "place %zu: id %u (%g) before id %u (%g)", k, a, value[a], b, value[b]);
    }
    walked first = { .stop_after = 7 };
    sim_ranking_walk(&r, note, &first);
    cr_expect_eq(first.n, 7, "the walk stops when visit says so");
    cr_expect_arr_eq(first.ids, w.ids, 7 * sizeof *w.ids);
    cr_expect_eq(sim_ranking_least(&r), w.ids[0], "and leaves the ranking as it was");
    gsl_rng_free(g);
    sim_ranking_release(&r);
}

/* The tie is kept above the id in one word: the tie decides between equal values,
 * whatever the ids, up to the largest tie and id the header allows. */
Test(ranking, ties_decide_before_ids_up_to_their_limits)
{
    sim_ranking r = { 0 };
    uint32_t big_id = SIM_RANKING_MAX_IDS - 1;
    sim_ranking_insert(&r, big_id, 5, 1);
    sim_ranking_insert(&r, 0, 5, 2);
    cr_expect_eq(sim_ranking_least(&r), big_id, "tie 1 before tie 2, though its id is larger");
    sim_ranking_insert(&r, 1, 5, SIM_RANKING_MAX_TIE);
    sim_ranking_insert(&r, 2, 5, SIM_RANKING_MAX_TIE - 1);
    sim_ranking_remove(&r, big_id);
    sim_ranking_remove(&r, 0);
    cr_expect_eq(sim_ranking_least(&r), 2, "the largest two ties still order");
    sim_ranking_update(&r, 1, 4);
    cr_expect_eq(sim_ranking_least(&r), 1, "and the value comes first");
    /* a pass over the array reads each id with its value and tie */
    cr_assert_eq(sim_ranking_count(&r), 2);
    int seen = 0;
    for (size_t i = 0; i < sim_ranking_count(&r); i++) {
        sim_ranking_entry e = sim_ranking_entry_at(&r, i);
        uint32_t id = sim_ranking_entry_id(e);
        cr_expect_eq(e.value, sim_ranking_value(&r, id));
        if (id == 1)
            cr_expect(e.value == 4 && sim_ranking_entry_tie(e) == SIM_RANKING_MAX_TIE);
        else
            cr_expect(id == 2 && e.value == 5 && sim_ranking_entry_tie(e) == SIM_RANKING_MAX_TIE - 1);
        seen |= 1 << id;
    }
    cr_expect_eq(seen, 6);
    sim_ranking_release(&r);
}

/* The four children of a place share one cache line (the reason for the 4-ary heap and
 * its 16-byte entries), however the array grew. */
Test(ranking, children_share_a_line)
{
    sim_ranking r = { 0 };
    for (uint32_t id = 0; id < 5000; id++) {
        sim_ranking_insert(&r, id, (double)(id % 7), id);
        cr_assert_eq(sizeof r.heap[0] * 4, 64);
        cr_assert_eq((uintptr_t)&r.heap[1] % 64, 0, "after %u insertions", id + 1);
    }
    sim_ranking_release(&r);
}

Test(ranking, ids_come_back)
{
    sim_ids ids = { 0 };
    cr_expect_eq(sim_ids_take(&ids), 0);
    cr_expect_eq(sim_ids_take(&ids), 1);
    cr_expect_eq(sim_ids_take(&ids), 2);
    sim_ids_give(&ids, 1);
    cr_expect_eq(sim_ids_take(&ids), 1, "the one given back first");
    cr_expect_eq(sim_ids_take(&ids), 3);
    sim_ids_release(&ids);
}
