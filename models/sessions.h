/* Sessions: conversations or agent runs, each a run of turns (llm requests) by one
 * user.  A session arrives (from the workload's arrival process), draws its number of
 * turns and a system prompt, and sends its first turn: the system prompt plus new
 * tokens.  A think time after each answer it sends the next, whose prompt is the whole
 * history (every earlier prompt and answer) plus new tokens: a closed loop per
 * session.  A turn that is dropped ends its session (its user gives up).
 *
 * A session's prompt chain (models/prefix_cache.h) is its system prompt, shared by
 * every session that drew it, then its own tokens, so that the next turn's prompt
 * starts with the blocks of the last.  Sessions live in a pool with a free list:
 * memory follows the sessions in progress, never the number that ended.
 */
#ifndef FLEETSIM_MODELS_SESSIONS_H
#define FLEETSIM_MODELS_SESSIONS_H

#include <stdbool.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "models/prefix_cache.h"
#include "sim/dist.h"
#include "sim/engine.h"

/* A system prompt a workload's requests begin with, drawn with its weight: or `groups`
 * distinct prompts of that length sharing the weight evenly (groups of requests on
 * their own shared prefix, as SGLang's generated-shared-prefix benchmark makes them). */
typedef struct system_prompt {
    unsigned tokens;
    double weight;
    unsigned groups;           /* 0 or 1: one prompt */
} system_prompt;

enum { SYSTEM_PROMPTS_MAX = 16, SYSTEM_PROMPT_GROUPS_MAX = 1000000 };

/* The shared key of group `group` of system prompt i of a workload
 * (prefix_chain.shared; i < SYSTEM_PROMPTS_MAX). */
uint64_t system_prompt_key(unsigned i, unsigned group);

/* Draws one of the n (>= 1) system prompts by weight (total: the weights' sum), then
 * one of its groups, from rng: the prompt's index, and in *key its shared key.  Draws
 * nothing when there is one prompt of one group (rng may then be NULL). */
unsigned system_prompt_draw(const system_prompt *prompts, unsigned n, double total,
                            gsl_rng *rng, uint64_t *key);
/* Whether drawing among the n prompts takes random numbers. */
bool system_prompt_drawn(const system_prompt *prompts, unsigned n);

typedef struct session_spec {
    sim_dist turns;            /* turns a session, drawn, rounded, at least 1 */
    sim_dist think_s;          /* from an answer to the next turn */
    sim_dist new_tokens;       /* each turn's new tokens, drawn, rounded, at least 1 */
} session_spec;

typedef struct session session;

/* One turn to send now: prompt (history included) and output tokens, and its chain. */
typedef struct session_turn {
    session *session;
    unsigned prompt, output;
    prefix_chain chain;
} session_turn;

typedef struct sessions_config {
    const session_spec *spec;
    const system_prompt *system; /* NULL or nsystem prompts, weights > 0 */
    unsigned nsystem;
    sim_dist output_tokens;    /* each turn's answer, drawn, rounded, at least 1 */
    const char *name;          /* the random stream "<name>.sessions" */
    uint64_t seed, replication;
    double warmup_s;           /* sessions that begin before it are not counted */
    void (*turn)(void *owner, const session_turn *turn);
    void *owner;
} sessions_config;

typedef struct sessions sessions;

/* Never NULL (out of memory is fatal); config's pointers must outlive it. */
sessions *sessions_create(sim_engine *engine, const sessions_config *config);
/* NULL is fine. */
void sessions_free(sessions *ss);

/* A session begins now: its first turn goes to config.turn at once. */
void sessions_begin(sessions *ss);

/* A turn of session s ended now: answered with `output` tokens, or not (dropped).  The
 * session thinks and sends its next turn, or ends and its memory is reused. */
void sessions_turn_ended(sessions *ss, session *s, bool answered, unsigned output);

typedef struct sessions_stats {
    uint64_t begun, ended;     /* of sessions that began after the warm-up */
    uint64_t turns;            /* turns those that ended sent */
    uint64_t in_progress;      /* now, warm-up included */
} sessions_stats;
sessions_stats sessions_get_stats(const sessions *ss);
size_t sessions_memory_bytes(const sessions *ss);

#endif
