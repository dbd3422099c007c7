/* The discrete-event engine: a clock and a list of pending events.
 *
 * An engine is a value (sim_engine *), with no global state: a test or a sweep may hold
 * several at once.  Events run in (time, priority, insertion sequence) order, so a run
 * with the same inputs fires the same events in the same order on any machine.
 *
 * Event list.  A 4-ary implicit min-heap of (time, priority, sequence) entries over a
 * slot table that maps each handle to its action and to the version of its live heap
 * entry.  From the first reschedule or cancel on, and while nothing is spilled (below),
 * each pending slot also holds its entry's place, which the sifts keep: rescheduling
 * moves the entry in place and cancelling removes it.  While spilling, deletion is lazy:
 * cancelling or rescheduling bumps the version, stale entries are dropped when they
 * reach the root (or swept out in O(n) once they outnumber the live ones), and sifts
 * touch the heap array alone, with no back-pointer updates into slots no cache holds.  A
 * simulation that never moves an event writes no places at all.  The arrays keep the
 * size of the largest queue.  While an event runs, its root entry is kept vacant so that
 * the successor it schedules replaces it with one sift.
 *
 * With more than 8,192 entries the heap spills its far future: entries fall in buckets
 * of time (a function of the time that never decreases), the heap keeps the buckets up
 * to the current one, about 512 entries, and the later ones wait unsorted, in chunks of
 * a shared pool, in a ring of buckets (enough for twice the entries) and past it; the
 * ring's next bucket moves into the heap when the heap runs dry, and what is past the
 * ring is bucketed afresh when the ring is spent.  The buckets' width is estimated from
 * the entries' times near the front and narrowed when a bucket comes up far too full;
 * bucketing everything afresh is held to a budget of work per event run, beyond which
 * the heap stays whole (small dense clusters far apart).  The order is the heap's,
 * exact, so nothing observable changes; ties only make one bucket large.  It spares a
 * large queue the sifts through heap levels that no cache holds.
 *
 * Why a heap, by measurement (`make bench`, hold model, docs/performance.md):
 * - at 10 to 10^4 pending events the engine, dispatch and handles included, runs at
 *   40-100% of a bare binary heap of doubles; from 10^4 the spilling keeps it there
 *   (10^5: about 90-110%; 10^6, where its slots no longer fit the cache: 50-60%, from
 *   30-35% as a whole heap);
 * - a calendar queue (Brown 1988, with resizing) beats a whole heap from about 10^3
 *   pending events when times are spread continuously (1.2-2x a bare heap at
 *   10^3-10^5), but is slower at 10-100, and collapses when many events share a time
 *   (whole-second trace timestamps, hourly billing, jobs starting together): insertion
 *   into a bucket becomes linear in the ties: 4% of a bare heap at 10^3 pending, under
 *   1% at 10^4.  The spill tier takes the calendar's buckets without its sorted
 *   insertion: a bucket is sorted only as the heap it becomes;
 * - 4 children per node beat 2 and 8 at 10^6 pending (one cache line holds more of a
 *   node's children and the tree is half as deep as a binary one).
 * The cost is O(log n) whatever the distribution of event times and ties.
 *
 * Failures.  Scheduling into the past, at a NaN time, or from a NULL handler is a bug in
 * the caller and aborts with a message naming it (always checked, not only in debug
 * builds).  Running out of memory while growing the event list aborts with a message:
 * callers bound a run's size before starting it.
 */
#ifndef FLEETSIM_SIM_ENGINE_H
#define FLEETSIM_SIM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sim_engine sim_engine;

/* Handle of a scheduled event.  0 is never a valid handle ("no event").  A handle stays
 * safe to pass after its event fired or was cancelled: calls then report "not pending". */
typedef uint64_t sim_event_id;

/* An event's action.  It may schedule, cancel and reschedule events and stop the run. */
typedef void (*sim_event_fn)(sim_engine *engine, void *data);

/* A new engine at time 0 with no events; NULL if out of memory. */
sim_engine *sim_engine_create(void);

/* Releases the engine and its pending events (their actions are not called).  NULL-safe.
 * The engine never owns the events' data pointers. */
void sim_engine_free(sim_engine *engine);

/* Current simulated time in seconds: the time of the event being run, or the end time
 * of the last run_until. */
double sim_engine_now(const sim_engine *engine);

/* Schedules fn(engine, data) at absolute time time_s >= now.  Among events at the same
 * time, lower priority runs first; at equal priority, the one scheduled first.
 * Priorities lie in [-32768, 32767]; one engine schedules at most 2^48 events. */
sim_event_id sim_event_schedule(sim_engine *engine, double time_s, int priority,
                                sim_event_fn fn, void *data);

/* The same, delay_s >= 0 seconds from now. */
sim_event_id sim_event_schedule_in(sim_engine *engine, double delay_s, int priority,
                                   sim_event_fn fn, void *data);

/* Removes a pending event; false (and nothing done) if it already ran or was cancelled. */
bool sim_event_cancel(sim_engine *engine, sim_event_id id);

/* Moves a pending event to time_s >= now.  It then orders among equal (time, priority)
 * events as if scheduled now.  False (and nothing done) if the event is not pending. */
bool sim_event_reschedule(sim_engine *engine, sim_event_id id, double time_s);

/* Whether the event is still pending, and its time (NaN if not pending). */
bool sim_event_pending(const sim_engine *engine, sim_event_id id);
double sim_event_time(const sim_engine *engine, sim_event_id id);

/* Runs the next event.  False (and nothing run) if there is none or the engine is
 * stopped. */
bool sim_engine_step(sim_engine *engine);

/* Runs events until none is left or sim_engine_stop is called; returns how many ran. */
uint64_t sim_engine_run(sim_engine *engine);

/* Runs the events at times <= end_s (end_s >= now), then advances the clock to end_s
 * unless the run was stopped first (the clock then stays at the last event run).
 * Returns how many events ran. */
uint64_t sim_engine_run_until(sim_engine *engine, double end_s);

/* Makes the current run return after the event being run, and every later run or step
 * return at once, until sim_engine_resume.  Sticky so that a stop requested from a
 * signal handler between two runs is not lost.  Safe to call from a signal handler. */
void sim_engine_stop(sim_engine *engine);
void sim_engine_resume(sim_engine *engine);
bool sim_engine_stopped(const sim_engine *engine);

/* A hint for speed, which changes no result: the action fn reads the first `bytes` of
 * its data.  Before running an event, the engine asks the memory system for those bytes
 * of the event likely to run next, so that when each event touches state no cache holds
 * (one of 80,000 replicas) the fetch overlaps the event before it.  Registering fn again
 * replaces its size; the engine keeps a few such actions and ignores any more, and
 * fetches at most 2 KB an event. */
void sim_engine_hint_reads(sim_engine *engine, sim_event_fn fn, size_t bytes);

/* Number of pending events; events run since creation; bytes held by the event list. */
size_t sim_engine_pending(const sim_engine *engine);
uint64_t sim_engine_events_run(const sim_engine *engine);
size_t sim_engine_memory_bytes(const sim_engine *engine);

#endif
