/* The order of a run's events that fall on the same instant (sim/engine.h runs them by
 * time, then by this priority, lower first, then in the order they were scheduled).
 * Every model schedules with one of these; the reasons are the tie-breaks. */
#ifndef FLEETSIM_MODELS_EVENT_ORDER_H
#define FLEETSIM_MODELS_EVENT_ORDER_H

typedef enum event_order {
    /* A time bucket closes before anything else at its boundary, so an event at the
     * boundary counts in the next bucket (as [start, end) buckets say). */
    EVENT_BUCKET = -3,
    /* A pool's bucket closes after its workloads' buckets, which hand it their replicas'
     * work of the bucket (its energy). */
    EVENT_POOL_BUCKET = -2,
    /* At the warm-up's end a workload closes its bucket early, as its pools do, handing
     * them the work done so far before they read their meters. */
    EVENT_WORKLOAD_WARMUP = -2,
    /* The warm-up ends next: what happens at its instant is measured. */
    EVENT_WARMUP = -1,
    /* Resources freed at an instant serve the arrivals of that instant: a GPU task's
     * departure, a job's evacuation ahead of the pool's preemption. */
    EVENT_RELEASE = -1,
    /* The models' own events: arrivals, iterations, services, losses, repairs. */
    EVENT_MODEL = 0,
    /* A serving fleet's bookkeeping after the model's events of the instant: a
     * drained replica gives its GPUs back, an order is retried, the autoscaler
     * evaluates (it sees the instant's arrivals and departures). */
    EVENT_FLEET = 5,
    /* A pool tells its holders about grants after every release of the instant, so
     * that one grant round sees all the GPUs freed then; a job scheduler dispatches
     * in the same round. */
    EVENT_POOL_NOTIFY = 10,
    /* The progress line reads the state once the instant is over. */
    EVENT_PROGRESS = 32767,
} event_order;

#endif
