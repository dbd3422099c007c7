/* Sessions of turns (see sessions.h): a pool of session records, one stream of draws. */
#include "models/sessions.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/event_order.h"
#include "sim/fatal.h"
#include "sim/rng.h"

struct session {
    sessions *owner;
    session *next;             /* the free list */
    uint64_t id;
    unsigned turns_left, turns;
    unsigned history;          /* tokens of every earlier prompt and answer */
    unsigned system;           /* index of its system prompt, with one */
    uint64_t system_key;       /* its system prompt's shared key */
    bool counted;              /* began after the warm-up */
};

typedef struct session_block {
    struct session_block *next;
    session items[256];
} session_block;

struct sessions {
    sim_engine *engine;
    sessions_config config;
    gsl_rng *rng;
    double system_weight;      /* sum of the weights */
    session *free_list;
    session_block *blocks;
    size_t nblocks;
    uint64_t next_id;
    sessions_stats stats;
};

enum { TOKENS_MAX = 10000000 };

uint64_t system_prompt_key(unsigned i, unsigned group)
{
    return 0x5359535445ULL + i + (uint64_t)SYSTEM_PROMPTS_MAX * group;
}

bool system_prompt_drawn(const system_prompt *prompts, unsigned n)
{
    return n > 1 || (n == 1 && prompts[0].groups > 1);
}

unsigned system_prompt_draw(const system_prompt *prompts, unsigned n, double total,
                            gsl_rng *rng, uint64_t *key)
{
    unsigned k = 0;
    if (n > 1) {
        double u = gsl_rng_uniform(rng) * total;
        while (k + 1 < n && u >= prompts[k].weight)
            u -= prompts[k++].weight;
    }
    unsigned group = 0;
    if (prompts[k].groups > 1) {
        group = (unsigned)(gsl_rng_uniform(rng) * prompts[k].groups);
        if (group >= prompts[k].groups) /* rounding */
            group = prompts[k].groups - 1;
    }
    *key = system_prompt_key(k, group);
    return k;
}

static unsigned draw_tokens(const sim_dist *d, gsl_rng *rng)
{
    double x = nearbyint(sim_dist_sample(d, rng));
    return x < 1 ? 1 : x > TOKENS_MAX ? TOKENS_MAX : (unsigned)x;
}

sessions *sessions_create(sim_engine *engine, const sessions_config *config)
{
    sessions *ss = calloc(1, sizeof *ss);
    if (!ss)
        sim_out_of_memory("out of memory for sessions");
    ss->engine = engine;
    ss->config = *config;
    char stream[256];
    snprintf(stream, sizeof stream, "%s.sessions", config->name ? config->name : "inference");
    ss->rng = sim_rng_stream(config->seed, config->replication, stream);
    for (unsigned i = 0; i < config->nsystem; i++)
        ss->system_weight += config->system[i].weight;
    return ss;
}

void sessions_free(sessions *ss)
{
    if (!ss)
        return;
    while (ss->blocks) {
        session_block *next = ss->blocks->next;
        free(ss->blocks);
        ss->blocks = next;
    }
    gsl_rng_free(ss->rng);
    free(ss);
}

static session *session_take(sessions *ss)
{
    if (!ss->free_list) {
        session_block *b = calloc(1, sizeof *b);
        if (!b)
            sim_out_of_memory("out of memory for sessions");
        b->next = ss->blocks;
        ss->blocks = b;
        ss->nblocks++;
        for (size_t i = 0; i < 256; i++) {
            b->items[i].next = ss->free_list;
            ss->free_list = &b->items[i];
        }
    }
    session *s = ss->free_list;
    ss->free_list = s->next;
    memset(s, 0, sizeof *s);
    s->owner = ss;
    return s;
}

/* Draws and sends session s's next turn. */
static void send_turn(sessions *ss, session *s)
{
    unsigned fresh = draw_tokens(&ss->config.spec->new_tokens, ss->rng);
    unsigned output = draw_tokens(&ss->config.output_tokens, ss->rng);
    uint64_t prompt = (uint64_t)s->history + fresh;
    session_turn t = {
        .session = s, .prompt = prompt > TOKENS_MAX ? TOKENS_MAX : (unsigned)prompt,
        .output = output,
        .chain = { .own = s->id },
    };
    if (ss->config.nsystem) {
        t.chain.shared = s->system_key;
        t.chain.shared_tokens = ss->config.system[s->system].tokens;
    }
    s->history = t.prompt;
    s->turns++;
    s->turns_left--;
    ss->config.turn(ss->config.owner, &t);
}

void sessions_begin(sessions *ss)
{
    session *s = session_take(ss);
    s->id = ++ss->next_id;
    double turns = nearbyint(sim_dist_sample(&ss->config.spec->turns, ss->rng));
    s->turns_left = turns < 1 ? 1 : turns > 1e6 ? 1000000 : (unsigned)turns;
    s->system = ss->config.nsystem ? system_prompt_draw(ss->config.system, ss->config.nsystem,
                                                        ss->system_weight, ss->rng,
                                                        &s->system_key)
                                   : 0;
    s->history = ss->config.nsystem ? ss->config.system[s->system].tokens : 0;
    s->counted = sim_engine_now(ss->engine) >= ss->config.warmup_s;
    ss->stats.begun += s->counted;
    ss->stats.in_progress++;
    send_turn(ss, s);
}

static void on_think_end(sim_engine *e, void *data)
{
    session *s = data;
    send_turn(s->owner, s);
}

void sessions_turn_ended(sessions *ss, session *s, bool answered, unsigned output)
{
    if (answered && s->turns_left > 0) {
        /* the next prompt resends this one and its answer */
        s->history = s->history + output > TOKENS_MAX ? TOKENS_MAX : s->history + output;
        sim_event_schedule(ss->engine, sim_engine_now(ss->engine)
                           + fmax(0, sim_dist_sample(&ss->config.spec->think_s, ss->rng)),
                           EVENT_MODEL, on_think_end, s);
        return;
    }
    if (s->counted) {
        ss->stats.ended++;
        ss->stats.turns += s->turns;
    }
    ss->stats.in_progress--;
    s->next = ss->free_list;
    ss->free_list = s;
}

sessions_stats sessions_get_stats(const sessions *ss) { return ss->stats; }

size_t sessions_memory_bytes(const sessions *ss)
{
    return sizeof *ss + ss->nblocks * sizeof(session_block);
}
