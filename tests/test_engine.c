/* The event engine: ordering, handles, run control, and the past-scheduling assert. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>

#include "sim/engine.h"
#include "support/fatal_check.h"

static sim_engine *engine;

static void setup(void) { engine = sim_engine_create(); }
static void teardown(void) { sim_engine_free(engine); }

TestSuite(engine, .init = setup, .fini = teardown);

/* Each fired event appends its tag and the time it saw to a log. */
typedef struct fire_log {
    int tags[64];
    double times[64];
    int n;
} fire_log;

typedef struct tagged {
    fire_log *log;
    int tag;
} tagged;

static void record(sim_engine *e, void *data)
{
    tagged *t = data;
    t->log->times[t->log->n] = sim_engine_now(e);
    t->log->tags[t->log->n++] = t->tag;
}

Test(engine, orders_by_time_then_priority_then_insertion)
{
    fire_log log = { .n = 0 };
    tagged ev[6];
    for (int i = 0; i < 6; i++)
        ev[i] = (tagged){ &log, i };
    sim_event_schedule(engine, 2.0, 0, record, &ev[0]);
    sim_event_schedule(engine, 1.0, 5, record, &ev[1]);
    sim_event_schedule(engine, 1.0, -3, record, &ev[2]);
    sim_event_schedule(engine, 1.0, 5, record, &ev[3]);
    sim_event_schedule(engine, 0.5, 9, record, &ev[4]);
    sim_event_schedule(engine, 2.0, 0, record, &ev[5]);
    cr_assert_eq(sim_engine_run(engine), 6);
    int expected[] = { 4, 2, 1, 3, 0, 5 };
    for (int i = 0; i < 6; i++)
        cr_expect_eq(log.tags[i], expected[i], "position %d: got tag %d", i, log.tags[i]);
    cr_expect_float_eq(log.times[0], 0.5, 0);
    cr_expect_float_eq(sim_engine_now(engine), 2.0, 0);
}

Test(engine, cancel_removes_only_that_event_and_handles_go_stale)
{
    fire_log log = { .n = 0 };
    tagged ev[3] = { { &log, 0 }, { &log, 1 }, { &log, 2 } };
    sim_event_id a = sim_event_schedule(engine, 1, 0, record, &ev[0]);
    sim_event_id b = sim_event_schedule(engine, 2, 0, record, &ev[1]);
    sim_event_schedule(engine, 3, 0, record, &ev[2]);
    cr_assert(sim_event_pending(engine, b));
    cr_expect_float_eq(sim_event_time(engine, b), 2.0, 0);
    cr_assert(sim_event_cancel(engine, b));
    cr_expect_not(sim_event_cancel(engine, b), "a second cancel must report not pending");
    cr_expect(isnan(sim_event_time(engine, b)));
    cr_expect_eq(sim_engine_pending(engine), 2);
    sim_engine_run(engine);
    cr_expect_eq(log.n, 2);
    cr_expect_eq(log.tags[0], 0);
    cr_expect_eq(log.tags[1], 2);
    cr_expect_not(sim_event_pending(engine, a), "a fired event is no longer pending");
    cr_expect_not(sim_event_cancel(engine, a));
    cr_expect_not(sim_event_cancel(engine, 0), "0 is never a handle");
}

Test(engine, stale_handle_does_not_touch_the_event_that_reuses_its_slot)
{
    fire_log log = { .n = 0 };
    tagged ev[2] = { { &log, 0 }, { &log, 1 } };
    sim_event_id old = sim_event_schedule(engine, 1, 0, record, &ev[0]);
    cr_assert(sim_event_cancel(engine, old));
    sim_event_id fresh = sim_event_schedule(engine, 1, 0, record, &ev[1]);
    cr_assert_neq(old, fresh);
    cr_expect_not(sim_event_cancel(engine, old));
    cr_expect_not(sim_event_reschedule(engine, old, 5));
    cr_expect(sim_event_pending(engine, fresh));
    sim_engine_run(engine);
    cr_expect_eq(log.n, 1);
    cr_expect_eq(log.tags[0], 1);
}

Test(engine, reschedule_moves_both_ways_and_orders_as_newly_scheduled)
{
    fire_log log = { .n = 0 };
    tagged ev[4] = { { &log, 0 }, { &log, 1 }, { &log, 2 }, { &log, 3 } };
    sim_event_id a = sim_event_schedule(engine, 1, 0, record, &ev[0]);
    sim_event_schedule(engine, 2, 0, record, &ev[1]);
    sim_event_id c = sim_event_schedule(engine, 3, 0, record, &ev[2]);
    sim_event_schedule(engine, 4, 0, record, &ev[3]);
    cr_assert(sim_event_reschedule(engine, a, 2));   /* later; ties with 1, now after it */
    cr_assert(sim_event_reschedule(engine, c, 0.5)); /* earlier */
    sim_engine_run(engine);
    int expected[] = { 2, 1, 0, 3 };
    for (int i = 0; i < 4; i++)
        cr_expect_eq(log.tags[i], expected[i], "position %d: got tag %d", i, log.tags[i]);
}

Test(engine, run_until_stops_at_the_horizon_and_advances_the_clock)
{
    fire_log log = { .n = 0 };
    tagged ev[3] = { { &log, 0 }, { &log, 1 }, { &log, 2 } };
    sim_event_schedule(engine, 1, 0, record, &ev[0]);
    sim_event_schedule(engine, 5, 0, record, &ev[1]);
    sim_event_schedule(engine, 5.5, 0, record, &ev[2]);
    cr_expect_eq(sim_engine_run_until(engine, 5), 2, "events at the horizon itself run");
    cr_expect_float_eq(sim_engine_now(engine), 5, 0);
    cr_expect_eq(sim_engine_run_until(engine, 5.25), 0);
    cr_expect_float_eq(sim_engine_now(engine), 5.25, 0);
    cr_expect_eq(sim_engine_pending(engine), 1);
    cr_expect(sim_engine_step(engine));
    cr_expect_float_eq(sim_engine_now(engine), 5.5, 0);
    cr_expect_not(sim_engine_step(engine), "no event left");
}

static void stop_here(sim_engine *e, void *data)
{
    int *count = data;
    (*count)++;
    sim_engine_stop(e);
}

Test(engine, stop_is_sticky_until_resume)
{
    int count = 0;
    sim_event_schedule(engine, 1, 0, stop_here, &count);
    sim_event_schedule(engine, 2, 0, stop_here, &count);
    cr_expect_eq(sim_engine_run(engine), 1);
    cr_expect_eq(count, 1);
    cr_expect(sim_engine_stopped(engine));
    cr_expect_eq(sim_engine_run_until(engine, 10), 0, "a stopped engine runs nothing");
    cr_expect_float_eq(sim_engine_now(engine), 1, 0, "and does not advance its clock");
    sim_engine_resume(engine);
    cr_expect_eq(sim_engine_run(engine), 1);
    cr_expect_eq(count, 2);
}

/* An event that schedules its successor: the self-scheduling chain of the hold model. */
static void chain(sim_engine *e, void *data)
{
    int *left = data;
    if (--*left > 0)
        sim_event_schedule_in(e, 0.25, 0, chain, left);
}

Test(engine, events_scheduled_by_events_run_in_the_same_run)
{
    int left = 1000;
    sim_event_schedule(engine, 0, 0, chain, &left);
    cr_expect_eq(sim_engine_run(engine), 1000);
    cr_expect_float_eq(sim_engine_now(engine), 999 * 0.25, 1e-12);
    cr_expect_eq(sim_engine_events_run(engine), 1000);
}

/* Random schedules, cancels and reschedules against a brute-force reference. */
typedef struct ref_event {
    double time;
    int priority;
    uint64_t sequence;
    sim_event_id id;
    bool live;
} ref_event;

typedef struct fired {
    int *order;
    int n;
} fired;

typedef struct stress_item {
    fired *out;
    int index;
} stress_item;

static void note_fired(sim_engine *e, void *data)
{
    stress_item *it = data;
    it->out->order[it->out->n++] = it->index;
}

static int ref_cmp(const ref_event *a, const ref_event *b)
{
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    if (a->priority != b->priority)
        return a->priority < b->priority ? -1 : 1;
    return a->sequence < b->sequence ? -1 : a->sequence > b->sequence;
}

/* Runs the engine and checks that exactly the live reference events fired, in order. */
static void expect_reference_order(const ref_event *ref, int n, fired *out)
{
    sim_engine_run(engine);
    int expected_n = 0;
    for (int i = 0; i < n; i++)
        expected_n += ref[i].live;
    cr_assert_eq(out->n, expected_n);
    for (int k = 1; k < out->n; k++)
        cr_assert_lt(ref_cmp(&ref[out->order[k - 1]], &ref[out->order[k]]), 0,
                     "events %d and %d fired out of order", out->order[k - 1], out->order[k]);
}

/* n events at whole times in [0, times), a quarter cancelled and a fifth moved as they
 * are scheduled, run against the brute-force reference. */
static void random_operations(int n, int times, unsigned seed)
{
    ref_event *ref = calloc(n, sizeof *ref);
    stress_item *items = calloc(n, sizeof *items);
    fired out = { calloc(n, sizeof(int)), 0 };
    uint64_t seq = 0;
    srand(seed);
    for (int i = 0; i < n; i++) {
        /* coarse times and few priorities, so ties are common */
        ref[i] = (ref_event){ (double)(rand() % times), rand() % 3 - 1, seq++, 0, true };
        items[i] = (stress_item){ &out, i };
        ref[i].id = sim_event_schedule(engine, ref[i].time, ref[i].priority, note_fired, &items[i]);
        if (i > 10 && rand() % 4 == 0) {
            int j = rand() % i;
            cr_assert_eq(sim_event_cancel(engine, ref[j].id), ref[j].live);
            ref[j].live = false;
        }
        if (i > 10 && rand() % 5 == 0) {
            int j = rand() % i;
            double t = (double)(rand() % times);
            cr_assert_eq(sim_event_reschedule(engine, ref[j].id, t), ref[j].live);
            if (ref[j].live) {
                ref[j].time = t;
                ref[j].sequence = seq++;
            }
        }
    }
    expect_reference_order(ref, n, &out);
    free(ref);
    free(items);
    free(out.order);
}

Test(engine, random_operations_match_a_sorted_reference)
{
    random_operations(5000, 200, 12345);
}

static void other_action(sim_engine *e, void *data) {}
static void nothing_at_all(sim_engine *e, void *data) {}

/* Fetching ahead is a hint: with it, a queue large enough to use it (more than a few
 * thousand entries) fires exactly the reference's events in their order, with the hint
 * given twice and beside hints for actions that never run. */
Test(engine, a_hint_of_reads_changes_no_order)
{
    sim_engine_hint_reads(engine, note_fired, 256);
    sim_engine_hint_reads(engine, note_fired, 64);
    for (int i = 0; i < 8; i++)
        sim_engine_hint_reads(engine, i % 2 ? other_action : nothing_at_all, (size_t)i * 64);
    random_operations(40000, 5000, 777);
}

Test(engine, mass_cancellation_sweeps_stale_entries_and_keeps_order)
{
    /* 20,000 events, 90% cancelled or moved: enough stale entries to trigger sweeps */
    enum { N = 20000 };
    ref_event *ref = calloc(N, sizeof *ref);
    stress_item *items = calloc(N, sizeof *items);
    fired out = { calloc(N, sizeof(int)), 0 };
    uint64_t seq = 0;
    for (int i = 0; i < N; i++) {
        ref[i] = (ref_event){ (double)((i * 7919) % 1000), 0, seq++, 0, true };
        items[i] = (stress_item){ &out, i };
        ref[i].id = sim_event_schedule(engine, ref[i].time, 0, note_fired, &items[i]);
    }
    size_t bytes_before = sim_engine_memory_bytes(engine);
    for (int round = 0; round < 5; round++) {
        for (int i = round; i < N; i += 10) {
            if (round % 2 == 0) {
                cr_assert(sim_event_cancel(engine, ref[i].id));
                ref[i].live = false;
            } else {
                ref[i].time += 0.5;
                ref[i].sequence = seq++;
                cr_assert(sim_event_reschedule(engine, ref[i].id, ref[i].time));
            }
        }
    }
    cr_expect_eq(sim_engine_pending(engine), N - 3 * N / 10);
    cr_expect_leq(sim_engine_memory_bytes(engine), 2 * bytes_before,
                  "stale entries must be swept, not accumulated");
    expect_reference_order(ref, N, &out);
    cr_expect_eq(out.n, N - 3 * N / 10);
    free(ref);
    free(items);
    free(out.order);
}

static void nothing(sim_engine *e, void *data) {}

static void schedule_into_the_past(void *context)
{
    sim_event_schedule(engine, 10, 0, nothing, NULL);
    sim_engine_run(engine);
    sim_event_schedule(engine, 9.5, 0, nothing, NULL);
}

Test(engine, scheduling_into_the_past_is_a_bug)
{
    expect_fatal(schedule_into_the_past, NULL, "fleetsim: fatal: sim_event_schedule: time "
                 "9.5 s is before now (10 s): scheduling into the past is a bug\n");
}

static void schedule_at_nan(void *context)
{
    sim_event_schedule(engine, NAN, 0, nothing, NULL);
}

Test(engine, scheduling_at_nan_is_a_bug)
{
    expect_fatal(schedule_at_nan, NULL, "fleetsim: fatal: sim_event_schedule: time nan s is "
                 "not comparable with now (0 s): scheduling into the past is a bug\n");
}

static void reschedule_into_the_past(void *context)
{
    sim_event_id id = sim_event_schedule(engine, 10, 0, nothing, NULL);
    sim_engine_run_until(engine, 5);
    sim_event_reschedule(engine, id, 4);
}

Test(engine, rescheduling_into_the_past_is_a_bug)
{
    expect_fatal(reschedule_into_the_past, NULL, "fleetsim: fatal: sim_event_reschedule: time "
                 "4 s is before now (5 s): scheduling into the past is a bug\n");
}

Test(engine, free_is_null_safe_and_drops_pending_events)
{
    sim_engine_free(NULL);
    sim_engine *other = sim_engine_create();
    for (int i = 0; i < 100; i++)
        sim_event_schedule(other, i, 0, nothing, NULL);
    cr_expect_eq(sim_engine_pending(other), 100);
    cr_expect_gt(sim_engine_memory_bytes(other), 100 * (24 + 24));
    sim_engine_free(other); /* the sanitizer run checks nothing leaks */
}

/* ---- many pending events: the heap spills its far future (sim/engine.c) ------------- */

/* A hold model against the reference: n events pending, each fired one schedules a
 * successor (until `successors` are made) at now plus an increment drawn by `draw`; on
 * the way, events are cancelled and moved, and bursts arrive.  Every event must fire at
 * its time, once, in (time, priority, sequence) order, or have been cancelled.  (An
 * event scheduled at the current time runs after the one running, so it takes that
 * one's priority here: the order checked is then the reference's.) */
typedef struct hold_model {
    ref_event *ref;
    int n, cap;
    uint64_t seq;
    int last; /* the event fired last, -1 before the first */
    int fired, cancelled, successors, bursts_left;
    int purge_at; /* when so many have fired, four in five pending events are cancelled */
    uint64_t rng;
    double (*draw)(struct hold_model *h);
} hold_model;

static hold_model hold;

static double uniform01(hold_model *h)
{
    h->rng = h->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(h->rng >> 11) * 0x1p-53;
}

static double draw_exponential(hold_model *h) { return -log(1 - uniform01(h)); }
static double draw_whole_seconds(hold_model *h) { return floor(uniform01(h) * 3); }
static double draw_far_outliers(hold_model *h)
{
    return uniform01(h) < 0.99 ? 1e-3 * uniform01(h) : 1e4 * uniform01(h);
}
/* all at one time, or some never (an infinite time) */
static double draw_nothing(hold_model *h) { return 0; }
static double draw_some_never(hold_model *h)
{
    return uniform01(h) < 0.3 ? INFINITY : draw_exponential(h);
}
/* dense clusters far apart: nanoseconds, now and then a jump of up to 100 s */
static double draw_clusters(hold_model *h)
{
    return uniform01(h) < 0.999 ? 1e-9 * uniform01(h) : 100 * uniform01(h);
}
/* increments that shrink a hundredfold as the run goes on: the events grow denser */
static double draw_denser(hold_model *h)
{
    return uniform01(h) / (1 + h->fired / 2000.0);
}

static void hold_fire(sim_engine *e, void *data);

static void hold_schedule(sim_engine *e, double time_s)
{
    cr_assert_lt(hold.n, hold.cap);
    int i = hold.n++;
    int priority = (int)(uniform01(&hold) * 3) - 1;
    /* at the current time an event cannot come before the one running: it runs next */
    if (hold.last >= 0 && time_s == sim_engine_now(e))
        priority = hold.ref[hold.last].priority;
    hold.ref[i] = (ref_event){ time_s, priority, hold.seq++, 0, true };
    hold.ref[i].id = sim_event_schedule(e, time_s, hold.ref[i].priority, hold_fire,
                                        (void *)(intptr_t)i);
}

static void hold_fire(sim_engine *e, void *data)
{
    int i = (int)(intptr_t)data;
    cr_assert(hold.ref[i].live, "event %d fired but was not pending", i);
    cr_assert_eq(sim_engine_now(e), hold.ref[i].time);
    if (hold.last >= 0)
        cr_assert_lt(ref_cmp(&hold.ref[hold.last], &hold.ref[i]), 0,
                     "events %d and %d fired out of order", hold.last, i);
    hold.ref[i].live = false;
    hold.last = i;
    hold.fired++;
    double now = sim_engine_now(e);
    if (hold.successors > 0) {
        hold.successors--;
        hold_schedule(e, now + hold.draw(&hold));
    }
    double u = uniform01(&hold);
    int j = (int)(uniform01(&hold) * hold.n);
    if (u < 0.05 && hold.ref[j].live) { /* cancel one */
        cr_assert(sim_event_cancel(e, hold.ref[j].id));
        hold.ref[j].live = false;
        hold.cancelled++;
    } else if (u < 0.15 && hold.ref[j].live) { /* move one, either way */
        double t = now + hold.draw(&hold);
        if (t == now && hold.ref[j].priority < hold.ref[i].priority)
            t = nextafter(now, INFINITY); /* (it would run next, after this one) */
        cr_assert(sim_event_reschedule(e, hold.ref[j].id, t));
        hold.ref[j].time = t;
        hold.ref[j].sequence = hold.seq++;
    }
    if (hold.fired == hold.purge_at)
        for (int k = 0; k < hold.n; k++)
            if (hold.ref[k].live && k % 5) {
                cr_assert(sim_event_cancel(e, hold.ref[k].id));
                hold.ref[k].live = false;
                hold.cancelled++;
            }
    if (hold.bursts_left > 0 && hold.fired % 40000 == 0) { /* a burst: the queue regrows */
        hold.bursts_left--;
        for (int k = 0; k < 10000 && hold.n < hold.cap; k++)
            hold_schedule(e, now + 10 * hold.draw(&hold));
    }
}

static void run_hold_model(int pending, int successors, double (*draw)(hold_model *))
{
    hold = (hold_model){ .cap = pending + successors + 30000, .last = -1,
                         .successors = successors, .bursts_left = 3, .purge_at = 50000,
                         .rng = 2024, .draw = draw };
    hold.ref = calloc(hold.cap, sizeof *hold.ref);
    for (int i = 0; i < pending; i++)
        hold_schedule(engine, draw(&hold));
    sim_engine_run(engine);
    for (int i = 0; i < hold.n; i++)
        cr_assert(!hold.ref[i].live, "event %d never fired", i);
    cr_expect_eq(hold.fired + hold.cancelled, hold.n);
    cr_expect_eq(sim_engine_pending(engine), 0);
    free(hold.ref);
}

Test(engine, a_large_queue_of_spread_times_fires_in_order)
{
    run_hold_model(20000, 200000, draw_exponential);
    /* the spilled entries share chunks: memory follows what is pending (20,000 to
     * 50,000 events here, 64 bytes each in the slots and the heap), not each bucket's
     * largest size (256 buckets of up to 2,048 entries would be 12 MB) */
    cr_expect_lt(sim_engine_memory_bytes(engine), 8u << 20);
}

Test(engine, a_large_queue_of_tied_times_fires_in_order)
{
    run_hold_model(20000, 200000, draw_whole_seconds);
}

Test(engine, a_large_queue_with_far_outliers_fires_in_order)
{
    run_hold_model(20000, 200000, draw_far_outliers);
}

Test(engine, a_large_queue_that_grows_denser_fires_in_order)
{
    run_hold_model(20000, 200000, draw_denser);
}

Test(engine, a_large_queue_at_one_time_fires_in_order)
{
    run_hold_model(20000, 50000, draw_nothing);
}

Test(engine, a_large_queue_with_events_at_an_infinite_time_fires_in_order)
{
    run_hold_model(20000, 100000, draw_some_never);
}

Test(engine, a_large_queue_of_clusters_far_apart_fires_in_order)
{
    run_hold_model(20000, 200000, draw_clusters);
}

/* A small queue keeps its entries' places: events cancelled and moved from within
 * events, in either direction and among ties, fire in the reference's order; the bursts
 * make the queue spill and drain back, so the places are taken up again after it. */
Test(engine, a_small_queue_moves_and_removes_entries_in_place_in_order)
{
    run_hold_model(200, 150000, draw_exponential);
}

Test(engine, a_small_queue_of_tied_times_moves_entries_in_place_in_order)
{
    run_hold_model(200, 150000, draw_whole_seconds);
}

/* Moved in place, a rescheduled event leaves nothing behind: a hundred events moved a
 * thousand times each hold the event list at the size it had (a stale entry each time
 * would have grown the heap to about 1,100 entries before a sweep). */
Test(engine, rescheduling_a_small_queue_leaves_no_stale_entries)
{
    sim_event_id ids[100];
    for (int i = 0; i < 100; i++)
        ids[i] = sim_event_schedule(engine, 1000 + i, 0, nothing, NULL);
    size_t bytes = sim_engine_memory_bytes(engine);
    for (int round = 0; round < 1000; round++)
        for (int i = 0; i < 100; i++)
            cr_assert(sim_event_reschedule(engine, ids[i], 1000 - round + (i * 37) % 100));
    cr_expect_eq(sim_engine_memory_bytes(engine), bytes);
    cr_expect_eq(sim_engine_pending(engine), 100);
    double last = -1;
    for (int k = 0; k < 100; k++) {
        double at = NAN;
        for (int i = 0; i < 100; i++) {
            double t = sim_event_time(engine, ids[i]); /* NaN once it ran */
            if (!isnan(t) && (isnan(at) || t < at))
                at = t;
        }
        cr_assert(sim_engine_step(engine));
        cr_assert_eq(sim_engine_now(engine), at);
        cr_assert_gt(at, last);
        last = at;
    }
    cr_expect_eq(sim_engine_pending(engine), 0);
}
