/* Where a serving workload's requests come from: a renewal process (inter-arrival
 * times from a distribution), a traffic process (a rate profile, MMPP bursts), a trace
 * replayed (looped and sampled if asked), or closed-loop users who ask again a think
 * time after each answer.  Each arrival, with its prompt and output lengths, is handed
 * to the owner from an engine event. */
#ifndef FLEETSIM_MODELS_ARRIVALS_H
#define FLEETSIM_MODELS_ARRIVALS_H

#include <stdbool.h>
#include <stdint.h>

#include "models/trace.h"
#include "models/traffic.h"
#include "sim/dist.h"
#include "sim/engine.h"

typedef struct arrivals_config {
    const char *name;          /* names the random streams "<name>.arrivals", "<name>.lengths",
                                  "<name>.sample" */
    uint64_t seed, replication;
    sim_dist interarrival;     /* seconds; unused with a trace or a traffic process */
    sim_dist prompt_tokens;    /* drawn, rounded, from 1 to 10^7 */
    sim_dist output_tokens;
    const trace_options *trace; /* NULL: no trace */
    bool lengths_from_trace;   /* else drawn as above */
    bool loop;                 /* the trace starts again after its last row */
    double sample;             /* each row kept with this probability (0 or 1: every row) */
    const traffic_spec *traffic; /* NULL: none */
    uint64_t max_arrivals;     /* 0 = no limit */
    /* Called for every arrival, at its instant; session: a trace row's session
     * (trace_record.session), else 0; blocks: its nblocks block ids (trace_record.blocks,
     * valid during the call; not NULL whenever the trace has a block-id
     * column, even for a row of none), else NULL. */
    void (*arrive)(void *owner, unsigned prompt, unsigned output, uint64_t session,
                   const uint64_t *blocks, unsigned nblocks);
    void *owner;
    /* Optional (NULL: none): called at each arrival's instant before anything else, so
     * that the owner can ask the memory system for what arrive will read (in a large
     * fleet, the replica it will route to) while the request is drawn.  A hint for
     * speed: it must change nothing. */
    void (*ahead)(const void *owner);
} arrivals_config;

typedef struct arrivals arrivals;

/* Never NULL (out of memory is fatal).  The configuration's pointers must outlive it. */
arrivals *arrivals_create(sim_engine *engine, const arrivals_config *config);

/* Schedules the first arrivals at the engine's now (every closed-loop user thinks
 * first).  A trace that cannot be opened stops the engine (arrivals_error). */
void arrivals_start(arrivals *a);

/* A request ended: a closed-loop user thinks, then asks again (nothing otherwise). */
void arrivals_request_ended(arrivals *a);

/* A trace or traffic failure during the run ("file:row N: ..."), or NULL. */
const char *arrivals_error(const arrivals *a);

/* NULL is fine. */
void arrivals_free(arrivals *a);

#endif
