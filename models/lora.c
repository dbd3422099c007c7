/* Adapters' sizes, popularity and slots (see lora.h). */
#include "models/lora.h"

#include <math.h>
#include <stdlib.h>

#include "sim/fatal.h"

double lora_layer_width(const model_spec *m, unsigned projections)
{
    double hidden = m->hidden, q = model_query_width(m), o = model_value_width(m);
    double kv = (double)(m->kv_heads ? m->kv_heads : m->heads) * model_head_dim(m);
    double ffn = m->ffn;
    struct { unsigned bit; double in, out; } rows[] = {
        { LORA_Q, hidden, q }, { LORA_K, hidden, kv }, { LORA_V, hidden, kv },
        { LORA_O, o, hidden }, { LORA_GATE, hidden, ffn }, { LORA_UP, hidden, ffn },
        { LORA_DOWN, ffn, hidden },
    };
    double width = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (projections & rows[i].bit && !(rows[i].bit == LORA_GATE && !m->gated))
            width += rows[i].in + rows[i].out;
    return width;
}

double lora_adapter_bytes(const model_spec *m, unsigned rank, unsigned projections,
                          double bytes_per_value)
{
    return (double)m->layers * rank * lora_layer_width(m, projections) * bytes_per_value;
}

double lora_flops_per_token(const model_spec *m, unsigned rank, unsigned projections)
{
    return 2.0 * m->layers * rank * lora_layer_width(m, projections);
}

double lora_load_s(double bytes, double bytes_per_s) { return bytes / bytes_per_s; }

static int popularity_from(lora_popularity *p, unsigned n, double (*weight)(unsigned, const void *),
                           const void *arg)
{
    p->adapters = 0;
    p->cumulative = malloc((n ? n : 1) * sizeof *p->cumulative);
    if (!p->cumulative || n == 0) {
        free(p->cumulative);
        p->cumulative = NULL;
        return -1;
    }
    double sum = 0;
    for (unsigned i = 0; i < n; i++) {
        double w = weight(i, arg);
        if (!(w >= 0 && isfinite(w))) {
            lora_popularity_release(p);
            return -1;
        }
        sum += w;
        p->cumulative[i] = sum;
    }
    if (!(sum > 0 && isfinite(sum))) {
        lora_popularity_release(p);
        return -1;
    }
    for (unsigned i = 0; i < n; i++)
        p->cumulative[i] /= sum;
    p->cumulative[n - 1] = 1;
    p->adapters = n;
    return 0;
}

static double zipf_weight(unsigned i, const void *arg)
{
    return pow(i + 1.0, -*(const double *)arg);
}

static double table_weight(unsigned i, const void *arg) { return ((const double *)arg)[i]; }

int lora_popularity_zipf(lora_popularity *p, unsigned adapters, double s)
{
    return popularity_from(p, adapters, zipf_weight, &s);
}

int lora_popularity_weights(lora_popularity *p, const double *weights, unsigned n)
{
    return popularity_from(p, n, table_weight, weights);
}

void lora_popularity_release(lora_popularity *p)
{
    free(p->cumulative);
    p->cumulative = NULL;
    p->adapters = 0;
}

unsigned lora_popularity_draw(const lora_popularity *p, gsl_rng *rng)
{
    double u = gsl_rng_uniform(rng);
    unsigned lo = 0, hi = p->adapters - 1; /* the first whose cumulative exceeds u */
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (p->cumulative[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

struct lora_slots {
    unsigned nslots, adapters, in_use;
    uint64_t clock;         /* last-use stamps, for LRU */
    unsigned *adapter_of;   /* per slot: its adapter, or UINT32_MAX when free */
    unsigned *users;        /* per slot: running sequences using it */
    uint64_t *used_at;      /* per slot: when it was last acquired or released */
    unsigned *slot_of;      /* per adapter: its slot, or UINT32_MAX */
};

lora_slots *lora_slots_create(unsigned slots, unsigned adapters)
{
    if (slots == 0 || adapters == 0)
        sim_fatal("lora_slots_create: slots and adapters must be >= 1");
    lora_slots *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->nslots = slots;
    s->adapters = adapters;
    s->adapter_of = malloc(slots * sizeof *s->adapter_of);
    s->users = malloc(slots * sizeof *s->users);
    s->used_at = malloc(slots * sizeof *s->used_at);
    s->slot_of = malloc(adapters * sizeof *s->slot_of);
    if (!s->adapter_of || !s->users || !s->used_at || !s->slot_of) {
        lora_slots_free(s);
        return NULL;
    }
    lora_slots_clear(s);
    return s;
}

void lora_slots_free(lora_slots *s)
{
    if (!s)
        return;
    free(s->adapter_of);
    free(s->users);
    free(s->used_at);
    free(s->slot_of);
    free(s);
}

void lora_slots_clear(lora_slots *s)
{
    for (unsigned i = 0; i < s->nslots; i++) {
        s->adapter_of[i] = UINT32_MAX;
        s->users[i] = 0;
        s->used_at[i] = 0;
    }
    for (unsigned a = 0; a < s->adapters; a++)
        s->slot_of[a] = UINT32_MAX;
    s->in_use = 0;
}

/* A free slot, else the least recently used one that no sequence uses (UINT32_MAX:
 * none).  A scan: it runs only on a load, and slots are tens to hundreds. */
static unsigned victim(const lora_slots *s)
{
    unsigned best = UINT32_MAX;
    for (unsigned i = 0; i < s->nslots; i++) {
        if (s->adapter_of[i] == UINT32_MAX)
            return i;
        if (s->users[i] == 0 && (best == UINT32_MAX || s->used_at[i] < s->used_at[best]))
            best = i;
    }
    return best;
}

bool lora_slots_resident(const lora_slots *s, unsigned adapter)
{
    return s->slot_of[adapter] != UINT32_MAX;
}

bool lora_slots_can_acquire(const lora_slots *s, unsigned adapter)
{
    return lora_slots_resident(s, adapter) || s->in_use < s->nslots;
}

lora_acquire_result lora_slots_acquire(lora_slots *s, unsigned adapter, unsigned *evicted)
{
    unsigned slot = s->slot_of[adapter];
    lora_acquire_result result = LORA_HIT;
    if (slot == UINT32_MAX) {
        slot = victim(s);
        if (slot == UINT32_MAX)
            return LORA_NO_SLOT;
        if (evicted)
            *evicted = s->adapter_of[slot];
        if (s->adapter_of[slot] != UINT32_MAX)
            s->slot_of[s->adapter_of[slot]] = UINT32_MAX;
        s->adapter_of[slot] = adapter;
        s->slot_of[adapter] = slot;
        result = LORA_LOADED;
    }
    if (s->users[slot]++ == 0)
        s->in_use++;
    s->used_at[slot] = ++s->clock;
    return result;
}

void lora_slots_release(lora_slots *s, unsigned adapter)
{
    unsigned slot = s->slot_of[adapter];
    if (slot == UINT32_MAX || s->users[slot] == 0)
        sim_fatal("lora_slots_release: adapter %u is not in use", adapter);
    if (--s->users[slot] == 0)
        s->in_use--;
    s->used_at[slot] = ++s->clock;
}

unsigned lora_slots_in_use(const lora_slots *s) { return s->in_use; }
