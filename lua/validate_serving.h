/* The serving simulation behind `fleetsim validate`'s rows measured under a closed loop:
 * a benchmark client that keeps `users` requests in flight (AIPerf's and GenAI-Perf's
 * "concurrency"), each user asking again as soon as its answer ends.  What such a row
 * reports (mean time to first token, mean inter-token latency, output tokens per second)
 * depends on how the engine interleaves the users' prefills with the others' decoding and
 * on how many of them its cache holds at once, which one analytic step cannot say: the
 * continuous-batching replica (models/replica.h) runs them instead.  So does a throughput
 * benchmark that queues every request at once (validate_all_at_once). */
#ifndef FLEETSIM_LUA_VALIDATE_SERVING_H
#define FLEETSIM_LUA_VALIDATE_SERVING_H

#include <stdbool.h>
#include <stddef.h>

#include "models/perf.h"

/* The most users a row may state: a bound on the simulation's size and time. */
#define VALIDATE_CLOSED_LOOP_MAX_USERS 65536u
/* The most prompt chunks a row's requests may need at the engine's token budget (each an
 * iteration of its own): the same kind of bound. */
#define VALIDATE_MAX_PREFILL_ITERATIONS 1000000u
/* Bounds on a row's time, not only its sizes: one row of 65,536 users on 65,536 GPUs was
 * within the sizes and ran for about an hour (each request routed over every replica),
 * or out of memory all at once.  Replicas a row simulates (published serving rows are of
 * a few hundred GPUs at most); iterations of all replicas together, estimated from the
 * analytic step times before the run; and routing steps (requests x replicas). */
#define VALIDATE_MAX_REPLICAS 4096u
#define VALIDATE_MAX_ITERATIONS 2e8
#define VALIDATE_MAX_ROUTING_STEPS 2e9

typedef struct closed_loop_result {
    double ttft_s;          /* mean over the requests measured */
    double tpot_s;          /* mean over them of (finish - first token) / (output - 1) */
    double e2e_s;           /* mean response time, arrival to last token */
    double tokens_per_s;    /* output tokens a second, all replicas: by the response time
                               law of a closed system with no think time, users / e2e_s
                               requests a second (a count of the requests finished in
                               the window would miss the wave still running at its end) */
    double requests;        /* measured */
    double makespan_s;      /* the last measured answer's end, from its arrival */
    /* the replicas' GPU work by phase over the measured window (seconds of one device
     * a replica, summed over the replicas) and the window's length, for power */
    perf_phases work;
    double window_s;
} closed_loop_result;

/* The batch limits of a closed loop that states none: the scenario defaults. */
#define VALIDATE_DEFAULT_MAX_BATCH 256u
#define VALIDATE_DEFAULT_MAX_TOKENS 8192u

/* `users` closed-loop users with no think time, each request `prompt` tokens in and
 * `output` out, over `replicas` replicas set up as s (batches of up to max_batch
 * sequences and max_tokens tokens, 0 for the defaults above; chunked prefill, a request's
 * whole cache reserved on admission, least-outstanding routing), with a cache of
 * kv_capacity_tokens each.  It
 * runs two of a user's cycles to warm up and measures the next ten (a cycle: the
 * analytic time of a user's request, its batch's waves included).  False with a message
 * when the simulation cannot be set up, there are no users or replicas, the users are
 * more than VALIDATE_CLOSED_LOOP_MAX_USERS, the replicas, the iterations or the routing
 * steps are past the bounds above, a request does not fit the model's context
 * (an engine would refuse it or cut it short), or no request completed. */
bool validate_closed_loop(const perf_setup *s, double kv_capacity_tokens, unsigned replicas,
                          unsigned users, unsigned prompt, unsigned output, unsigned max_batch,
                          unsigned max_tokens, closed_loop_result *out, char *err,
                          size_t err_size);

/* `requests` requests all queued at 0 (a throughput benchmark at an infinite rate, as
 * `trtllm-bench throughput` runs them), each `prompt` tokens in and `output` out, over
 * `replicas` replicas set up as s with batches of at most max_batch sequences and
 * max_tokens tokens an iteration (chunked prefill, a request's cache reserved on
 * admission, least-outstanding routing), a cache of kv_capacity_tokens each, run until
 * the last answer ends.  out->tokens_per_s is all the output over that makespan (the
 * benchmark's total output throughput: its end includes the tail of the last batch);
 * the means are over every request.  False with a message as validate_closed_loop, or
 * when a request does not fit the cache, the prompts need more than
 * VALIDATE_MAX_PREFILL_ITERATIONS chunks, or some request did not complete. */
bool validate_all_at_once(const perf_setup *s, double kv_capacity_tokens, unsigned replicas,
                          unsigned requests, unsigned prompt, unsigned output,
                          unsigned max_batch, unsigned max_tokens, closed_loop_result *out,
                          char *err, size_t err_size);

#endif
