/* How a replica's sequences decode (replica_internal.h's replica_step): a token a step
 * (the plain case, the hot one), a token a step over sliding windows, or a speculative
 * round of the draft's k tokens and the target's k + 1 verified (models/replica_spec.h),
 * over whole contexts or sliding windows (the target's and the draft's each its own). */
#include <math.h>

#include "models/replica_internal.h"
#include "models/replica_spec.h"

/* ---- plain: a token a step, the whole context read ----------------------------------- */

/* The decoding sequences' cache, in tokens, from the clock's sums (exact: integers). */
static uint64_t decoding_cached(const replica *r)
{
    return (uint64_t)(r->cached_less_synced + (int64_t)r->ndecoding * (int64_t)r->clock);
}

/* from the clock's sums: no request is read (a sequence's chunk is 0 but while a prefill
 * iteration computes it: on_iteration_end clears it) */
static void plain_decoders(replica *r, perf_batch *b, double *budget, replica_decoders *d)
{
    (void)d;
    b->decode_seqs = r->ndecoding;
    b->decode_context = (double)decoding_cached(r) + b->decode_seqs; /* the input token
                                                                         attends to itself */
    *budget -= b->decode_seqs;
}

static double no_draft_prefill(replica *r, perf_batch *b, const replica_decoders *d)
{
    (void)r, (void)b, (void)d;
    return 0;
}

/* Every term is a whole number, so the sums and the least in integers are the doubles'
 * own, bit for bit (exact below 2^53); every running sequence decodes here. */
static void plain_run(replica *r, replica_run_sums *s)
{
    uint64_t least = UINT64_MAX;
    for (unsigned i = 0; i < r->nrunning; i++)
        least = r->finish[i] < least ? r->finish[i] : least;
    s->context = (double)decoding_cached(r) + r->nrunning; /* each input token too */
    s->growth = r->nrunning;
    s->fewest = r->nrunning ? (double)(least - r->clock) : INFINITY;
}

static void no_run_draft(replica *r, const replica_run_sums *s) { (void)r, (void)s; }

static void token_advance(replica *r, llm_request *q, unsigned n)
{
    (void)r;
    q->generated += n;
    q->cached += n;
}

static bool token_advance_run(replica *r, unsigned n)
{
    bool finished = false;
    for (unsigned i = 0; i < r->nrunning; i++) {
        llm_request *q = r->running[i];
        q->generated += n;
        q->cached += n;
        finished |= q->generated >= q->output;
    }
    return finished;
}

/* the plain step: the clock moves, the requests are left alone */
static bool clock_advance_run(replica *r, unsigned n)
{
    r->clock += n;
    for (unsigned i = 0; i < r->nrunning; i++)
        if (r->finish[i] <= r->clock)
            return true;
    return false;
}

/* A prefill iteration's decoders: the plain step moves the clock by their step and
 * counts them, for the cache policy at each flush; the others advance each in turn. */
static void clock_prefill_ended(replica *r)
{
    r->clock++;
    r->decoded_pending = 0;
}

static void clock_decoded(replica *r, unsigned from, unsigned to)
{
    r->decoded_pending += to - from;
}

static void clock_flushed(replica *r)
{
    if (r->decoded_pending)
        r->policy->decoded_tokens(r, r->decoded_pending);
    r->decoded_pending = 0;
}

/* (a prompting sequence's PROMPTING is past any clock) */
static unsigned clock_next_finished(const replica *r, unsigned from)
{
    unsigned i = from;
    while (i < r->nrunning && r->finish[i] > r->clock)
        i++;
    return i;
}

static double clock_left(const replica *r, unsigned i)
{
    return (double)(r->finish[i] - r->clock);
}

static void no_prefill_ended(replica *r) { (void)r; }

static void each_decoded(replica *r, unsigned from, unsigned to)
{
    for (unsigned i = from; i < to; i++) {
        llm_request *q = r->running[i];
        unsigned before = q->cached;
        r->step->advance(r, q, 1);
        r->policy->decoded(r, q, before);
    }
}

static void no_flush(replica *r) { (void)r; }

static unsigned each_next_finished(const replica *r, unsigned from)
{
    unsigned i = from;
    for (; i < r->nrunning; i++) {
        const llm_request *q = r->running[i];
        if (r->finish[i] != PROMPTING && q->generated >= q->output)
            break;
    }
    return i;
}

static double each_left(const replica *r, unsigned i)
{
    const llm_request *q = r->running[i];
    return (double)(q->output - q->generated);
}

static void no_draft_ended(replica *r, double n) { (void)r, (void)n; }

static void token_commit_run(replica *r, unsigned n) { r->kv_committed += (double)n * r->nrunning; }

/* exact, whichever side of the window each sequence is */
static void window_commit_run(replica *r, unsigned n)
{
    for (unsigned i = 0; i < r->nrunning; i++) {
        const llm_request *q = r->running[i];
        r->kv_committed += replica_held_growth(r, q->cached, q->cached + n);
    }
}

static double one_token(const replica_config *c)
{
    (void)c;
    return 1;
}

/* ---- sliding windows: local layers read and keep their window only ------------------- */

static void window_decoders(replica *r, perf_batch *b, double *budget, replica_decoders *d)
{
    (void)d;
    for (unsigned i = 0; i < r->nrunning; i++) {
        llm_request *q = r->running[i];
        q->chunk = 0;
        if (replica_decoding(q)) {
            b->decode_seqs++;
            b->decode_context += replica_held(r, q->cached + 1.0); /* its input token too */
            (*budget)--;
        }
    }
}

/* The reads (from cached + 1) and the cache (from cached) grow at one rate each while no
 * sequence crosses its window: the run ends before one does. */
static void window_run(replica *r, replica_run_sums *s)
{
    const model_spec *m = r->config.model;
    unsigned window = m->window;
    for (unsigned i = 0; i < r->nrunning; i++) {
        const llm_request *q = r->running[i];
        double at = q->cached + 1.0;
        s->context += replica_held(r, at);
        s->fewest = fmin(s->fewest, q->output - q->generated);
        s->growth += model_attended_growth(m, at);
        s->cache_growth += model_attended_growth(m, q->cached);
        s->least_cache_growth += model_attended_growth(m, q->cached);
        if (q->cached < window)
            s->fewest = fmin(s->fewest, fmax(1, window - at));
    }
}

/* ---- speculative rounds ------------------------------------------------------------------ */

perf_speculation replica_speculation(const replica *r, perf_setup *draft)
{
    const replica_config *c = &r->config;
    perf_setup target = replica_setup(r);
    *draft = perf_draft_setup(&target, c->draft);
    return (perf_speculation){ c->draft ? draft : NULL, c->spec_k, 0, c->spec_step_s };
}

/* The draft's part of a round of n sequences, computed once per n. */
static const perf_decode_shape *draft_shape(replica *r, unsigned n)
{
    perf_decode_shape *shape = &r->shapes->draft[n];
    if (isnan(shape->fixed_s)) {
        perf_setup draft;
        perf_speculation sp = replica_speculation(r, &draft);
        *shape = perf_speculative_draft_shape_of(&sp, n);
    }
    return shape;
}

/* The context a draft reads (and caches) of `tokens`: past its own sliding window, its
 * local layers keep the window only. */
static double draft_held(const replica *r, double tokens)
{
    const model_spec *draft = r->config.draft;
    return draft && draft->window ? model_attended_tokens(draft, tokens) : tokens;
}

static double spec_tokens_of(const replica *r, const llm_request *q)
{
    return q->spec_tokens > 0 ? q->spec_tokens : r->config.spec_tokens;
}

double replica_cached_expected(const replica *r, const llm_request *q)
{
    if (!r->config.spec_k)
        return q->cached;
    return q->cached + replica_spec_fraction(q->spec_rounds, spec_tokens_of(r, q));
}

/* The context a speculating sequence's round reads: its cache as expected and the
 * position it verifies from, growing by exactly E a round in both modes. */
static double spec_context(const replica *r, const llm_request *q)
{
    return replica_cached_expected(r, q) + 1.0;
}

/* a round beside the chunks (its verification added by spec_draft_prefill) */
static void spec_decoders(replica *r, perf_batch *b, double *budget, replica_decoders *d)
{
    (void)b;
    for (unsigned i = 0; i < r->nrunning; i++) {
        llm_request *q = r->running[i];
        q->chunk = 0;
        if (replica_decoding(q)) {
            d->verified++;
            double at = spec_context(r, q);
            d->verified_context += replica_held(r, at);
            d->draft_context += draft_held(r, at);
            *budget -= r->config.spec_k + 1.0;
        }
    }
}

/* the draft prefills the chunks too, and drafts for the decoders */
static double spec_draft_prefill(replica *r, perf_batch *b, const replica_decoders *d)
{
    perf_setup draft;
    perf_speculation sp = replica_speculation(r, &draft);
    double draft_s = perf_speculative_draft_prefill_s(&sp, b);
    if (d->verified > 0) {
        perf_speculative_verify_add(b, r->config.model, r->config.spec_k, d->verified,
                                    d->verified_context / d->verified);
        const perf_decode_shape *shape = draft_shape(r, (unsigned)d->verified);
        draft_s += shape->fixed_s + shape->attention_s_per_token * d->draft_context;
    }
    return draft_s;
}

/* rounds until each has made its output; a round's tokens, expected */
static void spec_run(replica *r, replica_run_sums *s)
{
    for (unsigned i = 0; i < r->nrunning; i++) {
        const llm_request *q = r->running[i];
        s->context += spec_context(r, q);
        unsigned left = q->output - q->generated;
        s->fewest = fmin(s->fewest, replica_spec_rounds_for(q->spec_rounds,
                                                            spec_tokens_of(r, q), left));
        s->growth += spec_tokens_of(r, q);
    }
    s->draft_context = s->context;
    s->draft_growth = s->growth;
}

/* The rounds before q's context (its reads at cached + 1, its cache at cached) reaches
 * a window of w it is short of, past which the local layers stop growing: a run ends
 * there, as a token run ends at the crossing (INFINITY: no window ahead). */
static double rounds_to_window(const replica *r, const llm_request *q, unsigned w)
{
    if (!w || q->cached >= w)
        return INFINITY;
    double to = fmax(1, w - (q->cached + 1.0));
    return replica_spec_rounds_for(q->spec_rounds, spec_tokens_of(r, q), (unsigned)to);
}

/* As spec_run over sliding windows (the target's, the draft's, or both): reads and the
 * cache grow by a round's tokens times the share of layers still growing, each at its
 * own rate, and the run ends before any sequence crosses a window. */
static void spec_window_run(replica *r, replica_run_sums *s)
{
    const model_spec *m = r->config.model, *draft = r->config.draft;
    unsigned draft_window = draft ? draft->window : 0;
    for (unsigned i = 0; i < r->nrunning; i++) {
        const llm_request *q = r->running[i];
        double at = spec_context(r, q), e = spec_tokens_of(r, q);
        s->context += replica_held(r, at);
        s->draft_context += draft_held(r, at);
        unsigned left = q->output - q->generated;
        double fewest = replica_spec_rounds_for(q->spec_rounds, e, left);
        fewest = fmin(fewest, rounds_to_window(r, q, m->window));
        s->fewest = fmin(s->fewest, fmin(fewest, rounds_to_window(r, q, draft_window)));
        s->growth += e * model_attended_growth(m, at);
        s->cache_growth += e * model_attended_growth(m, q->cached);
        s->least_cache_growth += floor(e) * model_attended_growth(m, q->cached);
        s->draft_growth += e * (draft ? model_attended_growth(draft, at) : 1);
    }
}

static void spec_run_draft(replica *r, const replica_run_sums *s)
{
    r->run_draft = perf_decode_cost_of(draft_shape(r, r->nrunning), s->draft_growth,
                                       s->draft_context);
}

/* The tokens n rounds make for q, no more than its output has left. */
static unsigned spec_made(const replica *r, const llm_request *q, unsigned n)
{
    unsigned left = q->output - q->generated;
    unsigned made = replica_spec_tokens(q->spec_rounds, spec_tokens_of(r, q), n);
    return made < left ? made : left;
}

double replica_run_made(const replica *r, unsigned n)
{
    if (!r->config.spec_k)
        return (double)n * r->nrunning; /* a token a sequence, none finishing within */
    double made = 0;
    for (unsigned i = 0; i < r->nrunning; i++)
        made += spec_made(r, r->running[i], n);
    return made;
}

static void spec_advance(replica *r, llm_request *q, unsigned n)
{
    unsigned made = spec_made(r, q, n);
    q->spec_rounds += n;
    r->stats.spec_rounds += n;
    r->stats.spec_tokens += made;
    q->generated += made;
    q->cached += made;
}

static bool spec_advance_run(replica *r, unsigned n)
{
    bool finished = false;
    for (unsigned i = 0; i < r->nrunning; i++) {
        llm_request *q = r->running[i];
        spec_advance(r, q, n);
        finished |= q->generated >= q->output;
    }
    return finished;
}

static void spec_ended(replica *r, double n)
{
    r->stats.draft_s += decode_cost_sum(&r->run_draft, n);
}

/* the tokens n rounds will make, each sequence's as spec_advance makes them */
static void spec_commit_run(replica *r, unsigned n)
{
    double grown = 0;
    for (unsigned i = 0; i < r->nrunning; i++)
        grown += spec_made(r, r->running[i], n);
    r->kv_committed += grown;
}

/* ... what each keeps of them past the target's window */
static void spec_window_commit_run(replica *r, unsigned n)
{
    for (unsigned i = 0; i < r->nrunning; i++) {
        const llm_request *q = r->running[i];
        r->kv_committed += replica_held_growth(r, q->cached, q->cached + spec_made(r, q, n));
    }
}

/* a round writes the k + 1 positions it verifies (the rejected ones freed after) */
static double round_tokens(const replica_config *c) { return c->spec_k + 1.0; }

static const replica_step PLAIN = {
    plain_decoders, no_draft_prefill, plain_run, no_run_draft, token_advance,
    clock_prefill_ended, clock_decoded, clock_flushed, clock_next_finished, clock_left,
    clock_advance_run, no_draft_ended, token_commit_run, one_token,
};
static const replica_step WINDOW = {
    window_decoders, no_draft_prefill, window_run, no_run_draft, token_advance,
    no_prefill_ended, each_decoded, no_flush, each_next_finished, each_left,
    token_advance_run, no_draft_ended, window_commit_run, one_token,
};
static const replica_step SPECULATIVE = {
    spec_decoders, spec_draft_prefill, spec_run, spec_run_draft, spec_advance,
    no_prefill_ended, each_decoded, no_flush, each_next_finished, each_left,
    spec_advance_run, spec_ended, spec_commit_run, round_tokens,
};
static const replica_step SPECULATIVE_WINDOW = {
    spec_decoders, spec_draft_prefill, spec_window_run, spec_run_draft, spec_advance,
    no_prefill_ended, each_decoded, no_flush, each_next_finished, each_left,
    spec_advance_run, spec_ended, spec_window_commit_run, round_tokens,
};

const replica_step *replica_step_of(const replica_config *c)
{
    if (c->spec_k)
        return c->model->window || (c->draft && c->draft->window) ? &SPECULATIVE_WINDOW
                                                                  : &SPECULATIVE;
    return c->model->window ? &WINDOW : &PLAIN;
}
